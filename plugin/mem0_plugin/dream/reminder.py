"""The one reminder of conflicts left for a person (docs/dream.md, "`--auto`").

Upstream looks for an existing reminder by similarity and so stores a new one almost
every run. Here the check and the write share the caller's transaction, keyed on
`metadata.source`: at most one active reminder exists per project, whose count a later run
refreshes; extra ones (from older tools) are retired.

`remind` makes the reminder say how many conflicts are left: `--auto` adds it when there is
none; a run with a person (interactive, `--apply`) refreshes or retires the one there is;
`--undo` adds the conflicts it brings back. The run that writes it records that in its journal
(`apply.apply_plan`); the reminder's own history rows name no run, so undoing a run leaves
them alone.
"""

from __future__ import annotations

import uuid

from ..identity import Identity
from ..records import REMINDER_SOURCE, SUPERSEDED, Memory
from ..store.base import Writer
from .report import reminder_count, reminder_text

REMINDER_TYPE = "task_learning"
ADDED, REFRESHED, RETIRED, UNCHANGED = "added", "refreshed", "retired", "unchanged"


def remind(writer: Writer, identity: Identity, conflicts: int, *, add: bool) -> str:
    """Make the project's reminder say `conflicts`; 0 retires it (history `RETIRE`). Without
    `add`, a missing reminder stays missing. Returns what changed: added, refreshed, retired or
    unchanged."""
    existing = writer.active_by_source(identity.user_id, identity.project_id, REMINDER_SOURCE)
    if conflicts <= 0:
        for reminder in existing:
            writer.delete(reminder, REMINDER_SOURCE, event="RETIRE")
        return RETIRED if existing else UNCHANGED
    text = reminder_text(conflicts)
    if not existing:
        if not add:
            return UNCHANGED
        metadata = {"type": REMINDER_TYPE, "source": REMINDER_SOURCE, "branch": identity.branch}
        writer.insert(
            Memory(
                id=str(uuid.uuid4()),
                memory=text,
                user_id=identity.user_id,
                app_id=identity.project_id,
                metadata=metadata,
                created_at=writer.now,
                updated_at=writer.now,
            ),
            actor=REMINDER_SOURCE,
        )
        return ADDED
    keep, extras = existing[0], existing[1:]
    for extra in extras:
        writer.change(extra, "SUPERSEDE", REMINDER_SOURCE, lifecycle_state=SUPERSEDED, replacement_memory_id=keep.id)
    if keep.memory == text:
        return REFRESHED if extras else UNCHANGED
    writer.change(keep, "UPDATE", REMINDER_SOURCE, memory=text)
    return REFRESHED


def reminded(writer: Writer, identity: Identity) -> int:
    """How many conflicts the project's reminder counts now (0 without one)."""
    existing = writer.active_by_source(identity.user_id, identity.project_id, REMINDER_SOURCE)
    return max((reminder_count(r.memory) for r in existing), default=0)
