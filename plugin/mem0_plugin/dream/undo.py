"""Take a dream run back (docs/dream.md, "Runs and undo").

A run names itself in every history row it writes (`Writer.dream_run_id`), so its rows say
exactly what it did: each memory's record before the run (none for the memory a merge made)
and as the run left it (none for a pruned one). Undo puts each memory back to its record
before the run — a merged or superseded one is made active again, a pruned one is inserted
again, the memory a merge made is deleted — each only if it is still exactly as the run
left it: its latest history row is still the run's, and its version is the one the run
wrote. A merge is taken back whole or not at all: if the merged memory or one of its sources
changed since, all of them are left alone (restoring the sources beside an edited merge
would bring the duplicates back).

Everything is computed first, then written in one transaction that computes it again under
the store's write lock (and the apply lock, so no dream run interleaves): what changed in
between is left alone too. Every write is history event `UNDO`, actor `mem0-dream`, and
names the run; the run is then marked undone. The restored records are the old ones with a
higher version, so a plan made before the undo no longer applies to them.

A conflict the run settled whose loser the undo makes active again is a conflict for a person
once more: in the same transaction the reminder of conflicts (`reminder.remind`) counts it,
added to what it counted (a reminder is left when there was none).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields, replace

from ..errors import InvalidInputError
from ..identity import Identity
from ..records import Memory, memory_of_record
from ..store import HistoryEntry, Store
from ..store.base import Writer
from ..store.journal import DreamRun
from .apply import ACTOR
from .plan_file import plan_from_json
from .reminder import remind, reminded

EVENT = "UNDO"
RUN_EVENTS = ("ADD", "MERGE", "SUPERSEDE", "PRUNE")  # what an applied run writes
CHANGED = "changed since the run"
WITH_MERGE = "part of a merge that changed since the run"


@dataclass(frozen=True)
class Touched:
    """One memory as the run found it and as it left it (history records, with `version`)."""

    memory_id: str
    before: dict | None  # None: the run made it
    after: dict | None  # None: the run pruned it
    last_seq: int  # the run's last history row of it


@dataclass(frozen=True)
class Reversal:
    """One write of the undo: `current` (None: absent now) becomes `target` (None: deleted)."""

    memory_id: str
    left_as: str  # what the run left: merged, superseded, pruned, or made
    current: Memory | None
    target: Memory | None

    @property
    def restores(self) -> bool:
        return self.target is not None


@dataclass(frozen=True)
class LeftAlone:
    memory_id: str
    reason: str


@dataclass(frozen=True)
class UndoPlan:
    run: DreamRun
    reversals: tuple[Reversal, ...]
    left_alone: tuple[LeftAlone, ...]

    @property
    def restored(self) -> int:
        return sum(1 for r in self.reversals if r.restores)

    @property
    def retired(self) -> int:
        return sum(1 for r in self.reversals if not r.restores)


def check_undoable(run: DreamRun) -> None:
    """A run can be undone once, when finished."""
    if run.undone_at is not None:
        raise InvalidInputError(f"dream run {run.run_id} was already undone at {run.undone_at}")
    if run.status != "done":
        raise InvalidInputError(f"dream run {run.run_id} is not finished; run mem0-dream to complete it first")


def plan_undo(store: Store, run: DreamRun) -> UndoPlan:
    """Every write the undo of `run` needs, and every memory it must leave alone (reads only)."""
    check_undoable(run)
    touched = _touched(store.run_history(run.user_id, run.run_id))
    ids = list(touched)
    current = store.get_many(run.user_id, ids)
    last = store.last_history_seqs(run.user_id, ids)
    unchanged = {i for i, t in touched.items() if _as_left(t, current.get(i), last.get(i))}
    reversals: list[Reversal] = []
    left_alone: list[LeftAlone] = []
    for unit in _units(touched):
        if all(i in unchanged for i in unit):
            reversals += [_reversal(touched[i], current.get(i)) for i in unit]
        else:
            left_alone += [LeftAlone(i, CHANGED if i not in unchanged else WITH_MERGE) for i in unit]
    return UndoPlan(run, tuple(reversals), tuple(left_alone))


def _touched(rows: list[HistoryEntry]) -> dict[str, Touched]:
    """Each memory the run wrote, in the order it first wrote them."""
    touched: dict[str, Touched] = {}
    for row in rows:
        if row.event not in RUN_EVENTS:
            continue
        first = touched.get(row.memory_id)
        before = first.before if first is not None else row.before
        touched[row.memory_id] = Touched(row.memory_id, before, row.after, row.seq)
    return touched


def _as_left(touched: Touched, current: Memory | None, last_seq: int | None) -> bool:
    """Whether the memory is still exactly as the run left it."""
    if last_seq != touched.last_seq:  # every change writes a history row: a later one is a change
        return False
    if touched.after is None:
        return current is None
    return current is not None and current.version == touched.after.get("version")


def _units(touched: dict[str, Touched]) -> list[list[str]]:
    """The memories undone together: a merge's new memory with its sources; every other alone."""
    made_by = {}  # source id -> the memory it was merged into by the run
    for t in touched.values():
        if t.before is not None and t.after is not None and t.after.get("lifecycle_state") == "merged":
            made_by[t.memory_id] = t.after.get("replacement_memory_id")
    units: dict[str, list[str]] = {}
    for memory_id in touched:
        made = made_by.get(memory_id)
        key = made if made in touched and touched[made].before is None else memory_id
        units.setdefault(key, []).append(memory_id)
    return list(units.values())


def _reversal(touched: Touched, current: Memory | None) -> Reversal:
    if touched.before is None:
        return Reversal(touched.memory_id, "made", current, None)
    left_as = "pruned" if touched.after is None else str(touched.after.get("lifecycle_state"))
    return Reversal(touched.memory_id, left_as, current, memory_of_record(touched.before))


UNCHANGED_FIELDS = ("id", "version")  # a restore writes back every other field of the old record


def _write(writer: Writer, reversal: Reversal) -> None:
    current, target = reversal.current, reversal.target
    if target is None:
        assert current is not None
        writer.delete(current, ACTOR, event=EVENT)
    elif current is None:
        writer.insert(replace(target, version=target.version + 1), event=EVENT, actor=ACTOR)
    else:
        old = {f.name: getattr(target, f.name) for f in fields(Memory) if f.name not in UNCHANGED_FIELDS}
        writer.change(current, EVENT, ACTOR, **old)


def apply_undo(store: Store, identity: Identity, run_id: str) -> UndoPlan:
    """Undo the run in one transaction, computing it again inside; returns what was done.
    Nothing to reverse: nothing is written and the run is not marked."""
    with store.apply_lock((identity.user_id, identity.project_id)):
        with store.write() as writer:
            plan = plan_undo(store, store.dream_run(identity.user_id, identity.project_id, run_id))
            if not plan.reversals:
                return plan
            writer.dream_run_id = plan.run.run_id  # the undo's rows name the run they take back
            for reversal in plan.reversals:
                _write(writer, reversal)
            if not writer.journal_undone(plan.run.run_id):  # cannot happen under the locks; never twice
                raise InvalidInputError(f"dream run {plan.run.run_id} was already undone")
            back = conflicts_brought_back(store, plan)
            if back:
                writer.dream_run_id = None  # the reminder is no part of the run (`reminder`)
                remind(writer, identity, reminded(writer, identity) + back, add=True)
    return plan


def conflicts_brought_back(store: Store, plan: UndoPlan) -> int:
    """How many conflicts the run settled the undo unsettles: each loser it makes active again."""
    plan_json, resolutions_json = store.journal_plan(plan.run.run_id)
    run_plan, resolutions = plan_from_json(plan_json), json.loads(resolutions_json)
    losers = {
        conflict.ids[1] if resolutions.get(conflict.ids[0]) == "A" else conflict.ids[0]
        for conflict in run_plan.conflicts
        if resolutions.get(conflict.ids[0]) in ("A", "B")
    }
    return sum(1 for r in plan.reversals if r.restores and r.memory_id in losers)
