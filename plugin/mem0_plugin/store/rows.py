"""Conversion between `Memory` and the `memories` row, and the columns a row holds."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import Any

from ..language.gloss import search_terms
from ..language.stored_features import encode_for
from ..language.text import terms_text
from ..records import Memory, memory_of_values
from ..timeutil import parse_timestamp, to_micros

COLUMNS = (
    "id",
    "user_id",
    "app_id",
    "agent_id",
    "run_id",
    "memory",
    "metadata",
    "created_at",
    "updated_at",
    "lifecycle_state",
    "replacement_memory_id",
    "source_memory_ids",
    "immutable",
    "version",
)
SELECT_COLUMNS = ", ".join(COLUMNS)
WRITE_COLUMNS = (*COLUMNS, "text_hash", "type", "created_us", "updated_us", "terms", "features")
# read from the text: kept as they are by a change that keeps the text (and so the full-text
# index is not rewritten); `features` is the text's stored features (`stored_features`)
TEXT_DERIVED_COLUMNS = frozenset({"memory", "text_hash", "terms", "features"})
UNCHANGED_TEXT_COLUMNS = tuple(c for c in WRITE_COLUMNS if c not in TEXT_DERIVED_COLUMNS)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.strip().encode("utf-8", "surrogatepass")).hexdigest()


_DECODER = json.JSONDecoder()
_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})


class _FlatObjects(dict):
    """Metadata text -> the JSON object it holds, kept for objects whose values are all scalars
    (a copy of one is then as good as a fresh parse, and several times cheaper): memories share
    a few metadata texts (``{"type": ..., "source": ..., "branch": ...}``). Bounded: texts up
    to `MAX_TEXT` characters, and it stops growing at `MAX_ENTRIES`."""

    MAX_TEXT = 256
    MAX_ENTRIES = 10_000

    def remember(self, text: str, value: dict[str, Any]) -> None:
        if (
            len(text) <= self.MAX_TEXT
            and len(self) < self.MAX_ENTRIES
            and all(type(item) in _SCALAR_TYPES for item in value.values())
        ):
            self[text] = value.copy()


_FLAT_OBJECTS = _FlatObjects()


def _json_object(text: str) -> dict[str, Any]:
    """The JSON object `text` holds, as `json.loads` reads it; {} for anything else. A new dict
    every call."""
    if not isinstance(text, str):
        return _decode_object(text)
    cached = _FLAT_OBJECTS.get(text)
    if cached is not None:
        return cached.copy()
    value = _decode_object(text)
    _FLAT_OBJECTS.remember(text, value)
    return value


def _decode_object(text: str) -> dict[str, Any]:
    try:
        # the store writes compact JSON: decoded without `json.loads`'s wrapping (it costs as much)
        value, end = _DECODER.raw_decode(text)
        exact = end == len(text)
    except (TypeError, ValueError):
        exact = False
    if not exact:  # not exactly one JSON value (whitespace around it, bytes, not JSON ...): in full
        try:
            value = json.loads(text)
        except (TypeError, ValueError):
            return {}
    return value if isinstance(value, dict) else {}


def _json_ids(text: str) -> tuple[str, ...]:
    if text == "[]":  # most memories: no sources (a fast path; json.loads gives the same)
        return ()
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return ()
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def row_to_memory(row: sqlite3.Row | tuple) -> Memory:
    """The `Memory` of a row starting with the `COLUMNS` (dream reads 100,000 of them: see
    `memory_of_values`)."""
    (mid, user, app, agent, run, text, metadata, created, updated, state, replacement, sources, immutable, version) = (
        tuple(row)[: len(COLUMNS)]
    )
    return memory_of_values(
        (
            mid,
            text,
            user,
            app,
            agent,
            run,
            _json_object(metadata),
            created,
            updated,
            state,
            replacement,
            _json_ids(sources),
            bool(immutable),
            int(version),
        )
    )


FROM_THE_TEXT = object()  # `memory_to_row`'s default features: computed from the text here


def memory_to_row(memory: Memory, *, with_text: bool = True, features: object = FROM_THE_TEXT) -> tuple:
    """The values of `WRITE_COLUMNS` for `memory`, or of `UNCHANGED_TEXT_COLUMNS` when
    `with_text` is false (a change that keeps the text need not re-read it). `features` is the
    `features` column's value when the caller already has it (`encode_for(memory.memory)`)."""
    if not with_text:
        return tuple(
            value
            for column, value in zip(WRITE_COLUMNS, _row(memory, "", "", None))
            if column not in TEXT_DERIVED_COLUMNS
        )
    if features is FROM_THE_TEXT:
        features = encode_for(memory.memory)
    return _row(
        memory,
        text_hash(memory.memory),
        terms_text(search_terms(memory.memory)),
        features if isinstance(features, str) else None,
    )


def _row(memory: Memory, hashed: str, terms: str, features: str | None) -> tuple:
    return (
        memory.id,
        memory.user_id,
        memory.app_id,
        memory.agent_id,
        memory.run_id,
        memory.memory,
        json.dumps(dict(memory.metadata), ensure_ascii=False),
        memory.created_at,
        memory.updated_at,
        memory.lifecycle_state,
        memory.replacement_memory_id,
        json.dumps(list(memory.source_memory_ids)),
        int(memory.immutable),
        memory.version,
        hashed,
        memory.type,
        to_micros(parse_timestamp(memory.created_at, "created_at")),
        to_micros(parse_timestamp(memory.updated_at, "updated_at")),
        terms,
        features,
    )
