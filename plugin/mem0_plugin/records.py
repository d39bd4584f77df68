"""The memory record (docs/records.md) as a frozen dataclass, and its JSON shape."""

from __future__ import annotations

import json
import math
import reprlib
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import timedelta
from typing import Any

from .errors import InvalidInputError
from .sanitize import printable
from .timeutil import normalize_timestamp, parse_timestamp

ACTIVE, MERGED, SUPERSEDED = "active", "merged", "superseded"
REMINDER_SOURCE = "mem0-dream-auto"  # metadata.source of the one reminder `mem0-dream --auto` leaves
LIFECYCLE_STATES = (ACTIVE, MERGED, SUPERSEDED)
UNKNOWN_TYPE = "unknown"
MAX_TEXT_CHARS = 1_000_000
SCOPE_FIELDS = ("user_id", "app_id", "agent_id", "run_id")
CLOCK_SKEW = timedelta(days=1)  # an imported created_at later than now + this is refused


@dataclass(frozen=True)
class Memory:
    id: str
    memory: str
    user_id: str
    app_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    created_at: str = ""
    updated_at: str = ""
    lifecycle_state: str = ACTIVE
    replacement_memory_id: str | None = None
    source_memory_ids: tuple[str, ...] = ()
    immutable: bool = False
    version: int = 1

    __hash__ = None  # type: ignore[assignment]  # metadata is a dict

    @property
    def type(self) -> str:
        """`metadata.type`, or the group `unknown` when absent or not a non-empty string."""
        value = self.metadata.get("type")
        return value if isinstance(value, str) and value.strip() else UNKNOWN_TYPE

    @property
    def confidence(self) -> float | None:
        """`metadata.confidence` when it is a number in 0..1 (docs/records.md); None (unknown) otherwise."""
        value = self.metadata.get("confidence")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        return float(value) if math.isfinite(value) and 0 <= value <= 1 else None

    @property
    def pinned(self) -> bool:
        return self.metadata.get("pinned") is True

    @property
    def excluded_from_dream(self) -> bool:
        return self.metadata.get("exclude_from_dream") is True

    @property
    def source(self) -> str | None:
        value = self.metadata.get("source")
        return value if isinstance(value, str) else None

    def to_dict(self) -> dict[str, Any]:
        """The docs/records.md record (what tools answer and `export` writes)."""
        return {
            "id": self.id,
            "memory": self.memory,
            "user_id": self.user_id,
            "app_id": self.app_id,
            "agent_id": self.agent_id,
            "run_id": self.run_id,
            "metadata": dict(self.metadata),
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "lifecycle_state": self.lifecycle_state,
            "replacement_memory_id": self.replacement_memory_id,
            "source_memory_ids": list(self.source_memory_ids),
            "immutable": self.immutable,
        }


MEMORY_FIELDS = tuple(f.name for f in fields(Memory))  # the order of `Memory(...)`'s arguments


def memory_of_values(values: Sequence[Any]) -> Memory:
    """`Memory(*values)` (every field given, in `MEMORY_FIELDS` order), built faster: the frozen
    dataclass's `__init__` sets the fields one `object.__setattr__` call at a time, a third of
    the cost of reading a memory back from the store. The record is the same, equal to
    `Memory(*values)`; like it, this checks no value."""
    record = object.__new__(Memory)
    object.__setattr__(record, "__dict__", dict(zip(MEMORY_FIELDS, values, strict=True)))
    return record


def memory_of_record(record: Mapping[str, Any]) -> Memory:
    """The `Memory` of a record the store wrote itself (a history row's before or after, with its
    `version`): no check, the store wrote it valid."""
    fields_ = {
        k: record[k]
        for k in (
            "id",
            "memory",
            "user_id",
            "app_id",
            "agent_id",
            "run_id",
            "created_at",
            "updated_at",
            "lifecycle_state",
            "replacement_memory_id",
            "immutable",
        )
    }
    fields_["metadata"] = dict(record.get("metadata") or {})
    fields_["source_memory_ids"] = tuple(record.get("source_memory_ids") or ())
    fields_["version"] = int(record.get("version", 1))
    return Memory(**fields_)


def new_memory_id() -> str:
    return str(uuid.uuid4())


def validate_text(text: object) -> str:
    if not isinstance(text, str):
        raise InvalidInputError(f"memory text must be a string, got {type(text).__name__}")
    if not text.strip():
        raise InvalidInputError("memory text is empty")
    if "\x00" in text:
        raise InvalidInputError("memory text contains a NUL character")
    if len(text) > MAX_TEXT_CHARS:
        raise InvalidInputError(f"memory text is longer than {MAX_TEXT_CHARS:,} characters")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInputError("memory text is not valid Unicode (it holds a lone surrogate)") from None
    return text


def validate_metadata(metadata: object) -> dict[str, Any]:
    """A JSON object that the store can hold and export: JSON types only, no NaN, valid Unicode."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise InvalidInputError(f"metadata must be a JSON object, got {type(metadata).__name__}")
    try:
        json.dumps(metadata, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (TypeError, ValueError, RecursionError) as exc:
        # TypeError: not a JSON type; ValueError: NaN/Infinity, circular, or a lone surrogate
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise InvalidInputError(f"metadata is not storable JSON: {reason}") from None
    return dict(metadata)


def optional_str(value: object, name: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InvalidInputError(f"{name} must be a string, got {type(value).__name__}")
    if printable(value) != value:  # ids and scopes are printed: no control, bidi or line-break characters
        raise InvalidInputError(f"{name} must be one line of printable text: {reprlib.repr(value)}")
    return value


def _imported_metadata(record: Mapping[str, Any]) -> dict[str, Any]:
    """The record's metadata; the Mem0 platform's top-level `categories` list is kept in it."""
    metadata = validate_metadata(record.get("metadata"))
    categories = record.get("categories")
    if isinstance(categories, list) and categories and "categories" not in metadata:
        metadata["categories"] = [c for c in categories if isinstance(c, str)]
    return validate_metadata(metadata)


def _given(record: Mapping[str, Any], key: str, default: Any = None) -> Any:
    """The field's value; `default` when it is absent, null or "" (a `[]` or `0` is a wrong type, not absent)."""
    value = record.get(key)
    return default if value is None or value == "" else value


def memory_from_record(record: Mapping[str, Any], *, default_user: str, default_app: str | None, now: str) -> Memory:
    """Validate one imported record (the docs/records.md shape); missing ids and scope take defaults."""
    if not isinstance(record, Mapping):
        raise InvalidInputError(f"a record must be a JSON object, got {type(record).__name__}")
    text = record.get("memory", record.get("text"))
    state = _given(record, "lifecycle_state", ACTIVE)
    if state not in LIFECYCLE_STATES:
        raise InvalidInputError(f"lifecycle_state must be one of {', '.join(LIFECYCLE_STATES)}: {reprlib.repr(state)}")
    sources = _given(record, "source_memory_ids", [])
    if not isinstance(sources, list) or not all(isinstance(s, str) and printable(s) == s for s in sources):
        raise InvalidInputError("source_memory_ids must be a list of ids")
    immutable = record.get("immutable")
    immutable = False if immutable is None else immutable  # the Mem0 platform may export null
    if not isinstance(immutable, bool):
        raise InvalidInputError(f"immutable must be true or false: {reprlib.repr(immutable)}")
    created = now if _given(record, "created_at") is None else normalize_timestamp(record["created_at"], "created_at")
    if parse_timestamp(created) > parse_timestamp(now) + CLOCK_SKEW:
        raise InvalidInputError(f"created_at is in the future: {created}")
    updated = (
        created if _given(record, "updated_at") is None else normalize_timestamp(record["updated_at"], "updated_at")
    )
    return Memory(
        id=optional_str(record.get("id"), "id") or new_memory_id(),
        memory=validate_text(text),
        user_id=optional_str(record.get("user_id"), "user_id") or default_user,
        app_id=optional_str(record.get("app_id"), "app_id") or default_app,
        agent_id=optional_str(record.get("agent_id"), "agent_id"),
        run_id=optional_str(record.get("run_id"), "run_id"),
        metadata=_imported_metadata(record),
        created_at=created,
        updated_at=updated,
        lifecycle_state=state,
        replacement_memory_id=optional_str(record.get("replacement_memory_id"), "replacement_memory_id"),
        source_memory_ids=tuple(sources),
        immutable=immutable,
    )


def takes_part(memory: Memory) -> bool:
    """Whether dream may act on this memory at all (docs/dream.md, "Who takes part"). A text holding a NUL
    character (which no write of ours accepts; another tool wrote it) takes part in nothing:
    no plan file can carry it."""
    return (
        memory.lifecycle_state == ACTIVE
        and not memory.immutable
        and not memory.pinned
        and not memory.excluded_from_dream
        and memory.source != REMINDER_SOURCE
        and isinstance(memory.memory, str)
        and "\x00" not in memory.memory
    )
