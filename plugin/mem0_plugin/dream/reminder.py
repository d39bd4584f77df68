"""The one reminder `--auto` leaves when it skipped conflicts (docs/dream.md, "--auto").

Upstream looks for an existing reminder by similarity and so stores a new one almost
every run. Here the check and the write share one immediate transaction, keyed on
`metadata.source`: at most one active reminder exists per project, whose count a
later run refreshes; extra ones (from older tools) are retired.
"""

from __future__ import annotations

import uuid

from ..identity import Identity
from ..records import REMINDER_SOURCE, SUPERSEDED, Memory
from ..store import SqliteStore
from .report import reminder_text

REMINDER_TYPE = "task_learning"


def leave_reminder(store: SqliteStore, identity: Identity, conflicts: int) -> str:
    """Add or refresh the reminder for `conflicts` (> 0); returns "added", "refreshed" or "unchanged"."""
    text = reminder_text(conflicts)
    with store.write() as writer:
        existing = writer.active_by_source(identity.user_id, identity.project_id, REMINDER_SOURCE)
        if not existing:
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
            return "added"
        keep, extras = existing[0], existing[1:]
        for extra in extras:
            writer.change(
                extra, "SUPERSEDE", REMINDER_SOURCE, lifecycle_state=SUPERSEDED, replacement_memory_id=keep.id
            )
        if keep.memory == text:
            return "unchanged"
        writer.change(keep, "UPDATE", REMINDER_SOURCE, memory=text)
        return "refreshed"


def retire_reminders(store: SqliteStore, identity: Identity) -> int:
    """Delete (recoverably) every active reminder of the project: nothing is left to review."""
    with store.write() as writer:
        existing = writer.active_by_source(identity.user_id, identity.project_id, REMINDER_SOURCE)
        for reminder in existing:
            writer.delete(reminder, REMINDER_SOURCE, event="RETIRE")
    return len(existing)
