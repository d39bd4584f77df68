"""`mem0-forget` (docs/forget.md): the lines it prints and the answers it understands. Pure.

* A match line: `<n>. <first 120 chars> (type: <type>, created: <date>) [ID: <short id>]`.
* The id mode (a full id, or a unique prefix of at least 8 characters such as the listed
  short id): `Found: "<first 120 chars>" (created <date>)`, then `Delete this memory? [y/N] `.
* The outcome: `Deleted 1 memory.` or `Deleted <N> memories.`
* The selection prompt: `Delete which memories? Enter numbers (e.g., 1,3,5), 'all', or 'cancel'. `
  Answers: numbers (ASCII digits) separated by commas and/or spaces, ranges (`2-4`), `all`, `cancel`;
  `y` / `yes` when there is one match (it says which), else refused with the valid answers.
  An empty answer or the end of input cancels; anything else is refused with a message
  and the question is asked again.

Memory text is shown with credentials masked (`secrets.mask`) and control characters
neutralised (`sanitize.printable`), in listings and in `--json` alike. So is whatever the
user typed that is echoed back (the query, a refused answer): a credential typed as the
query is never printed in full.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .records import Memory
from .sanitize import printable
from .secrets import mask

TEXT_CHARS = 120
SHORT_ID_CHARS = 8
MAX_MATCHES = 10
SELECT_PROMPT = "Delete which memories? Enter numbers (e.g., 1,3,5), 'all', or 'cancel'. "
CONFIRM_PROMPT = "Delete this memory? [y/N] "
CANCELLED = "Cancelled. Nothing deleted."
RESTORE_HINT = "Undo with: mem0-memories restore {id}"
PURGE_WARNING = "--purge: the text is erased from the history too; it cannot be restored."
PURGED = "Purged: the text is gone from the history too; this cannot be undone."
PURGE_PENDING = (
    "Note: another process has the store open; the purged text leaves the store's "
    "write-ahead log (the -wal file) once it closes the store."
)

_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)
_RANGE = re.compile(r"^([0-9]{1,6})(?:-([0-9]{1,6}))?$")  # ASCII digits only, as typed
CANCEL_WORDS = ("", "cancel", "c", "none", "n", "no", "q", "quit")
YES_WORDS = ("y", "yes")


def looks_like_id(text: str) -> bool:
    """A full memory id (a UUID), as `get_memory` takes it."""
    return bool(_UUID.match(text.strip()))


def maybe_id(text: str) -> bool:
    """One word: it may be a memory id or a unique prefix of one (`ids`), else it is a query."""
    return bool(text.strip()) and len(text.split()) == 1


def shown(text: str) -> str:
    """Text as shown (a memory, or what the user typed echoed back): credentials masked,
    control characters neutralised."""
    return printable(mask(text))


def shown_text(memory: Memory, limit: int = TEXT_CHARS) -> str:
    return shown(memory.memory)[:limit]


def created_date(memory: Memory) -> str:
    return printable(memory.created_at[:10]) or "unknown"


def match_line(number: int, memory: Memory) -> str:
    return (
        f"{number}. {shown_text(memory)} (type: {printable(memory.type)}, created: {created_date(memory)}) "
        f"[ID: {memory.id[:SHORT_ID_CHARS]}]"
    )


def matches_header(count: int, query: str) -> str:
    noun = "memory" if count == 1 else "memories"
    return f'Found {count} {noun} matching "{shown(query)}":'


def no_matches(query: str, project_id: str) -> str:
    return f'No memories match "{shown(query)}" in project {printable(project_id)}. Nothing deleted.'


def found_line(memory: Memory) -> str:
    return f'Found: "{shown_text(memory)}" (created {created_date(memory)})'


def deleted_line(count: int) -> str:
    """`Deleted 1 memory.`, `Deleted <N> memories.`"""
    return f"Deleted {count} {'memory' if count == 1 else 'memories'}."


def not_found(key: str) -> str:
    return f"memory {key} not found; nothing was deleted"


@dataclass(frozen=True)
class Selection:
    """What an answer to the selection prompt means."""

    cancel: bool = False
    numbers: tuple[int, ...] = ()  # 1-based, in the order given, each once
    error: str = ""  # not understood: say this and ask again


def parse_selection(answer: str, count: int) -> Selection:
    """`1,3,5`, `1 3`, `2-4`, `all`, `cancel` (or empty) against a list of `count` matches; `yes`
    picks the one match there is."""
    text = answer.strip().lower()
    numbers_hint = f"numbers from 1 to {count} (e.g., 1,3,5)" if count > 1 else "1"
    if text in CANCEL_WORDS:
        return Selection(cancel=True)
    if text in ("all", "a", "*"):
        return Selection(numbers=tuple(range(1, count + 1)))
    if text in YES_WORDS:
        if count == 1:
            return Selection(numbers=(1,))
        return Selection(error=f"Which ones? Enter {numbers_hint}, 'all', or 'cancel'.")
    numbers: list[int] = []
    for part in filter(None, re.split(r"[,\s]+", answer.strip())):  # as typed, so a credential is masked
        match = _RANGE.match(part)
        low, high = (int(match.group(1)), int(match.group(2) or match.group(1))) if match else (0, -1)
        if not match or not 1 <= low <= high <= count:
            return Selection(error=f"Not understood: {shown(part)!r}. Enter {numbers_hint}, 'all', or 'cancel'.")
        numbers += [n for n in range(low, high + 1) if n not in numbers]
    return Selection(numbers=tuple(numbers))


def parse_yes_no(answer: str | None) -> bool | None:
    """y/yes → True; n/no/empty/end of input → False; anything else → None (ask again)."""
    if answer is None:
        return False
    text = answer.strip().lower()
    if text in ("y", "yes"):
        return True
    if text in ("", "n", "no"):
        return False
    return None


def parse_ids(text: str) -> list[str]:
    """`ID[,ID...]` → the ids, stripped, each once, in order."""
    ids: list[str] = []
    for part in text.split(","):
        part = part.strip()
        if part and part not in ids:
            ids.append(part)
    return ids


def match_record(memory: Memory, score: float | None = None) -> dict:
    """One match in `--json`: the full id, the masked text, type, dates and state."""
    record: dict[str, object] = {
        "id": memory.id,
        "memory": mask(memory.memory),
        "type": memory.type,
        "created_at": memory.created_at,
        "lifecycle_state": memory.lifecycle_state,
        "app_id": memory.app_id,
    }
    if score is not None:
        record["score"] = score
    return record
