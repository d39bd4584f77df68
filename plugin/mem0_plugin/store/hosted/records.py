"""Our memory record on the Mem0 platform and back (docs/hosted.md, "What is stored where"). Pure.

The platform stores a memory's text, scope (user_id, app_id, agent_id, run_id), metadata,
timestamps and `immutable`. It has no lifecycle of ours, so the lifecycle lives in the
memory's `metadata` under one namespaced key, `LIFECYCLE_KEY`:

    "mem0_dream": {"lifecycle_state": "merged", "replacement_memory_id": "<id>",
                   "source_memory_ids": []}

`lifecycle_state` is one of ours, or `DELETED`: a memory dream pruned, kept on the platform
(its text and metadata untouched) and left out of every read here. Records without the key
are active, unless the server itself names a lifecycle (`mem0-server` does).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import InvalidInputError
from ...records import ACTIVE, LIFECYCLE_STATES, Memory
from ...timeutil import normalize_timestamp, parse_timestamp

LIFECYCLE_KEY = "mem0_dream"
DELETED = "deleted"  # pruned by dream: on the platform, out of every read (docs/hosted.md)
SCOPE = ("app_id", "agent_id", "run_id")


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _timestamp(value: object, fallback: str) -> str:
    try:
        return normalize_timestamp(value)
    except InvalidInputError:
        return fallback


def lifecycle_of(record: Mapping[str, Any]) -> dict[str, Any]:
    """(lifecycle_state, replacement_memory_id, source_memory_ids) of a platform record: from
    our key when it is there and well formed, else from the record's own fields (a server that
    has a lifecycle), else active."""
    metadata = record.get("metadata")
    ours = metadata.get(LIFECYCLE_KEY) if isinstance(metadata, Mapping) else None
    source = ours if isinstance(ours, Mapping) else record
    state = source.get("lifecycle_state")
    if state not in (*LIFECYCLE_STATES, DELETED):
        state = ACTIVE
    sources = source.get("source_memory_ids")
    return {
        "lifecycle_state": state,
        "replacement_memory_id": _text_or_none(source.get("replacement_memory_id")) if state != ACTIVE else None,
        "source_memory_ids": tuple(s for s in sources if isinstance(s, str)) if isinstance(sources, list) else (),
    }


def memory_of_platform(record: Mapping[str, Any], user_id: str, now: str) -> Memory | None:
    """The `Memory` of one platform record of `user_id`; None when it is not one we can keep:
    no id or text, another user's, or pruned by dream (`DELETED`). `now` stands in for a
    missing or unreadable timestamp."""
    memory_id, text = record.get("id"), record.get("memory")
    if not isinstance(text, str) and isinstance(record.get("data"), Mapping):
        text = record["data"].get("memory")
    owner = record.get("user_id")
    if not isinstance(memory_id, str) or not memory_id or not isinstance(text, str):
        return None
    if owner is not None and owner != user_id:
        return None
    lifecycle = lifecycle_of(record)
    if lifecycle["lifecycle_state"] == DELETED:
        return None
    metadata = record.get("metadata")
    created = _timestamp(record.get("created_at"), now)
    return Memory(
        id=memory_id,
        memory=text,
        user_id=user_id,
        app_id=_text_or_none(record.get("app_id")),
        agent_id=_text_or_none(record.get("agent_id")),
        run_id=_text_or_none(record.get("run_id")) or _text_or_none(record.get("session_id")),
        metadata={k: v for k, v in metadata.items() if k != LIFECYCLE_KEY} if isinstance(metadata, Mapping) else {},
        created_at=created,
        updated_at=_timestamp(record.get("updated_at"), created),
        immutable=record.get("immutable") is True,
        **lifecycle,
    )


def lifecycle_value(memory: Memory, *, deleted: bool = False) -> dict[str, Any]:
    """What `LIFECYCLE_KEY` holds for `memory` (`deleted`: pruned by dream)."""
    return {
        "lifecycle_state": DELETED if deleted else memory.lifecycle_state,
        "replacement_memory_id": memory.replacement_memory_id,
        "source_memory_ids": list(memory.source_memory_ids),
    }


def platform_metadata(memory: Memory, *, deleted: bool = False, always: bool = True) -> dict[str, Any]:
    """The metadata written to the platform for `memory`: its own, plus `LIFECYCLE_KEY`. An add
    (`always=False`) carries the key only when the lifecycle says more than "active"; an update
    always does, so a memory brought back to active says so."""
    value = lifecycle_value(memory, deleted=deleted)
    plain = value == {"lifecycle_state": ACTIVE, "replacement_memory_id": None, "source_memory_ids": []}
    extra = {} if plain and not always else {LIFECYCLE_KEY: value}
    return {**dict(memory.metadata), **extra}


def add_arguments(memory: Memory) -> dict[str, Any]:
    """`MemoryClient.add`'s keyword arguments storing `memory` as given: no inference, synchronous,
    created at its `created_at` (whole seconds: an imported memory keeps its date)."""
    arguments: dict[str, Any] = {
        "user_id": memory.user_id,
        "metadata": platform_metadata(memory, always=False),
        "infer": False,
        "async_mode": False,
    }
    try:
        arguments["timestamp"] = int(parse_timestamp(memory.created_at).timestamp())
    except InvalidInputError:
        pass
    arguments.update({name: getattr(memory, name) for name in SCOPE if getattr(memory, name) is not None})
    if memory.immutable:
        arguments["immutable"] = True
    return arguments


CONTENT_FIELDS = (
    "memory",
    "metadata",
    "app_id",
    "agent_id",
    "run_id",
    "lifecycle_state",
    "replacement_memory_id",
    "source_memory_ids",
)


def same_content(a: Memory, b: Memory) -> bool:
    """True when the two say the same (timestamps and our local `version` aside): what a
    conditional write compares the platform's current record with."""
    return all(getattr(a, name) == getattr(b, name) for name in CONTENT_FIELDS)


def added_id(answer: object) -> tuple[str, bool] | None:
    """The id an add (infer=false, synchronous) answered with, its first result's, and whether
    it is a new memory: a server that keeps one memory per text (`mem0-server` does) answers
    an identical text with the memory it has, event NOOP."""
    results = answer.get("results") if isinstance(answer, Mapping) else answer
    if not isinstance(results, list):
        return None
    for item in results:
        if isinstance(item, Mapping) and isinstance(item.get("id"), str) and item["id"]:
            return item["id"], item.get("event") != "NOOP"
    return None
