"""What a session learned, kept for the next one (docs/hooks.md, "Capture").

At compaction and at session end the transcript is read into a `Digest` and written as the
branch's one `session_state` memory; after a compaction, the summary the client wrote is also
kept as the branch's `compact_summary`. Each write supersedes the branch's previous capture of
its type in the same transaction (`operations.add_superseding`): one active state per branch,
the earlier ones kept as history with their pointers, none lost.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from .. import operations
from ..records import Memory
from ..timeutil import format_timestamp, utc_now
from . import summary
from .transcript import Digest, digest, read_lines

if TYPE_CHECKING:
    from ..store.base import Writer

CAPTURE_SOURCE = "mem0-capture"
SESSION_STATE = "session_state"
COMPACT_SUMMARY = "compact_summary"
CONFIDENCE = 0.6  # extractive, not checked by anyone: below what an agent's own memory gets


def _previous(caller: operations.Caller, kind: str):
    identity = caller.identity

    def previous(writer: Writer) -> Sequence[Memory]:
        return [
            memory
            for memory in writer.active_by_source(identity.user_id, identity.project_id, CAPTURE_SOURCE)
            if memory.metadata.get("type") == kind and memory.metadata.get("branch") == identity.branch
        ]

    return previous


def write(
    caller: operations.Caller,
    kind: str,
    text: str,
    *,
    trigger: str,
    session_id: str | None,
    now: datetime | None = None,
) -> dict:
    """Store `text` as the branch's `kind` capture, superseding the previous one."""
    metadata = {
        "type": kind,
        "source": CAPTURE_SOURCE,
        "branch": caller.identity.branch,
        "trigger": trigger,
        "confidence": CONFIDENCE,
    }
    if session_id:
        metadata["session_id"] = session_id[:200]
    return operations.add_superseding(caller, text, metadata, _previous(caller, kind), now=now)


def capture_state(
    caller: operations.Caller,
    transcript_path: str | None,
    *,
    trigger: str,
    session_id: str | None,
    now: datetime | None = None,
) -> dict | None:
    """The branch's `session_state` from the transcript; None when it holds nothing to keep."""
    if not transcript_path:
        return None
    found: Digest = digest(read_lines(transcript_path))
    if found.empty:
        return None
    now = now or utc_now()
    stamp = format_timestamp(now)
    text = summary.state_text(found, caller.identity.branch, f"{stamp[:10]} {stamp[11:16]} UTC, {trigger}")
    return write(caller, SESSION_STATE, text, trigger=trigger, session_id=session_id, now=now)
