"""The Mem0 platform's JSON shapes (docs/server.md, "Routes"): our records with the fields the
platform's answers carry beside them, and a request's pieces read and checked. Pure."""

from __future__ import annotations

import math
import re
import reprlib
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

from ..errors import InvalidInputError

ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}")
MAX_BATCH = 1000
ROLES = ("user", "assistant")  # stored; a "system" message is instructions, not a memory


def brief(value: object) -> str:
    """A client's value, short and inert, for a message."""
    return reprlib.repr(value)


def memory_id(value: object) -> str:
    """A memory id as a path or a batch item gives it: 1-128 of letters, digits, `_.:-`."""
    if not isinstance(value, str) or not ID_PATTERN.fullmatch(value):
        raise InvalidInputError(f"memory_id should be a valid id (a UUID), got {reprlib.repr(value)}")
    return value


def record(memory: Mapping[str, Any]) -> dict[str, Any]:
    """One memory as the platform answers it: ours (docs/records.md, lifecycle included) plus
    `session_id` (our run_id), `categories`, `replaced_by` and `expiration_date`."""
    metadata = memory.get("metadata") or {}
    categories = metadata.get("categories")
    return {
        **memory,
        "session_id": memory.get("run_id"),
        "categories": categories if isinstance(categories, list) else None,
        "replaced_by": memory.get("replacement_memory_id"),
        "expiration_date": None,
    }


def history_entry(memory_id: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    """One history row as the platform answers it (old_memory, new_memory, event ...), with our
    own `seq`, `actor`, `before` and `after` beside them."""
    before, after = entry.get("before") or {}, entry.get("after") or {}
    shown = after or before
    return {
        "id": f"{memory_id}:{entry['seq']}",
        "memory_id": memory_id,
        "input": [],
        "old_memory": before.get("memory"),
        "new_memory": after.get("memory") if after else None,
        "user_id": shown.get("user_id"),
        "agent_id": shown.get("agent_id"),
        "app_id": shown.get("app_id"),
        "session_id": shown.get("run_id"),
        "categories": None,
        "event": entry["event"],
        "metadata": shown.get("metadata"),
        "created_at": entry["at"],
        "updated_at": entry["at"],
        **entry,
    }


def json_object(value: object, what: str = "the request body") -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidInputError(f"{what} must be a JSON object")
    return value


def optional_object(body: Mapping[str, Any], name: str) -> dict[str, Any] | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InvalidInputError(f"{name} must be a JSON object, got {type(value).__name__}")
    return value


def flag(body: Mapping[str, Any], name: str, default: bool = False) -> bool:
    value = body.get(name, default)
    if value is None:
        return default
    if isinstance(value, str) and value.lower() in ("true", "false"):  # from a query string
        return value.lower() == "true"
    if not isinstance(value, bool):
        raise InvalidInputError(f"{name} must be true or false, got {reprlib.repr(value)}")
    return value


def integer(value: object, name: str, default: int) -> int:
    """An integer from a query string or a body (range checks are the operation's)."""
    if value is None or value == "":
        return default
    if isinstance(value, str) and re.fullmatch(r"[0-9]{1,12}", value):
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise InvalidInputError(f"{name} must be an integer, got {reprlib.repr(value)}")


def created_at(value: object, now: datetime) -> datetime | None:
    """An add's `timestamp` (Unix seconds: when the memory was made, e.g. by an import), or None
    for now; one after tomorrow or not a number is 400."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise InvalidInputError(f"timestamp must be Unix seconds, got {reprlib.repr(value)}")
    stamp = datetime.fromtimestamp(value, timezone.utc)
    if stamp > now + timedelta(days=1):
        raise InvalidInputError(f"timestamp is in the future: {stamp.isoformat()}")
    return stamp


def messages_texts(messages: object) -> list[str]:
    """The texts to store from an add's `messages`: each user or assistant message's content."""
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    if not isinstance(messages, list) or not messages:
        raise InvalidInputError("messages must be a non-empty list of {role, content}")
    texts = []
    for message in messages:
        if not isinstance(message, dict) or not isinstance(message.get("content"), str):
            raise InvalidInputError("each message must be an object with a string content")
        if message.get("role", "user") in ROLES:
            texts.append(message["content"])
    if not texts:
        raise InvalidInputError("messages hold no user or assistant message to store")
    return texts


def batch_items(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    items = body.get("memories")
    if not isinstance(items, list) or not items:
        raise InvalidInputError("memories must be a non-empty list of {memory_id, ...}")
    if len(items) > MAX_BATCH:
        raise InvalidInputError(f"Maximum of {MAX_BATCH} memories can be changed in a single request")
    for item in items:
        json_object(item, "each item of memories")
        memory_id(item.get("memory_id"))
    if len({item["memory_id"] for item in items}) != len(items):
        raise InvalidInputError("memories names the same memory_id twice")
    return items
