"""The record of dream's runs as the store keeps it (`dream_runs`; docs/dream.md, "Runs and undo")."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

MODES = ("interactive", "auto", "apply")  # how a run was started; None for runs recorded before modes were
RUN_COLUMNS = (
    "run_id",
    "user_id",
    "app_id",
    "started_at",
    "finished_at",
    "status",
    "mode",
    "merged",
    "superseded",
    "pruned",
    "resolved",
    "not_applied",
    "undone_at",
)
# syntheses are counted from the journal when read (no column of their own: no migration, and
# every run, older ones included, counts them the same way)
SYNTHESIZED_COUNT = (
    "(SELECT count(*) FROM dream_steps s WHERE s.run_id = dream_runs.run_id "
    "AND s.kind = 'synthesize' AND s.outcome = 'applied') AS synthesized"
)
# the count a run left in the reminder of conflicts (its `remind` step, `dream.apply.REMIND`), or
# NULL when the run did not write the reminder; read from the journal like the syntheses
REMINDER_LEFT = (
    "(SELECT max(s.detail) FROM dream_steps s WHERE s.run_id = dream_runs.run_id AND s.kind = 'remind') AS reminder"
)
SELECT_RUN_COLUMNS = ", ".join(RUN_COLUMNS) + ", " + SYNTHESIZED_COUNT + ", " + REMINDER_LEFT
# each count: which of the run's journal steps it counts
RUN_COUNTS = {
    "merged": "s.kind = 'merge' AND s.outcome = 'applied'",
    "superseded": "s.kind = 'supersede' AND s.outcome = 'applied'",
    "pruned": "s.kind = 'prune' AND s.outcome = 'applied'",
    "resolved": "s.kind = 'resolve' AND s.outcome = 'applied'",
    "not_applied": "s.outcome <> 'applied'",
}


@dataclass(frozen=True)
class DreamRun:
    run_id: str
    user_id: str
    app_id: str | None
    started_at: str
    finished_at: str | None
    status: str  # "applying" (interrupted, or under way), "done"
    mode: str | None
    merged: int
    superseded: int
    pruned: int
    resolved: int
    not_applied: int
    undone_at: str | None
    synthesized: int = 0
    reminder: int | None = None  # the conflicts it left the reminder counting (0: it retired it); None: untouched

    @property
    def state(self) -> str:
        """What `--runs` shows: "undone", "done", or "interrupted" for a run still applying."""
        if self.undone_at is not None:
            return "undone"
        return "done" if self.status == "done" else "interrupted"

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "mode": self.mode,
            "status": self.state,
            "merged": self.merged,
            "superseded": self.superseded,
            "pruned": self.pruned,
            "resolved": self.resolved,
            "synthesized": self.synthesized,
            "not_applied": self.not_applied,
            "reminder": self.reminder,
            "undone_at": self.undone_at,
        }


def run_of_row(row: tuple) -> DreamRun:
    *counts, reminder = row
    left = str(reminder) if reminder is not None else ""
    return replace(DreamRun(*counts), reminder=int(left) if left.isascii() and left.isdigit() else None)
