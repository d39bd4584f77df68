"""Reading a `memories` row back into a `Memory`: the fast paths give what the plain ones gave."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
from mem0_plugin.records import MEMORY_FIELDS, Memory, memory_of_values
from mem0_plugin.store import rows
from mem0_plugin.store.rows import COLUMNS, row_to_memory


def plain_json_object(text: object) -> dict:
    """What `_json_object` is defined to return: `json.loads`'s object, else {}."""
    try:
        value = json.loads(text)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


ODD_METADATA = [
    "{}",
    '{"type": "decision"}',
    '{"type":"decision","confidence":0.8,"pinned":true,"x":null}',
    ' {"a": 1}',
    '{"a": 1} ',
    '{"a": 1}\n',
    "{ }",
    '{"a": 1}x',
    '{"a": 1}{}',
    '{"a": 1',
    "[1, 2]",
    "[]",
    '"a string"',
    "null",
    "true",
    "1",
    "",
    "   ",
    "not json at all",
    "\ufeff{}",
    '{"a": 1, "a": 2}',
    '{"a": {"b": [1, {"c": null}]}}',
    '{"a": [1]}',
    '{"big": 123456789012345678901234567890}',
    '{"a": ' + "9" * 5000 + "}",
    '{"é": "\\u00e9", "s": "\\ud800"}',
    b'{"a": 1}',
    b"\xff",
    None,
    3,
]


@pytest.mark.parametrize("text", ODD_METADATA)
def test_metadata_is_read_as_json_loads_reads_it(text):
    for _ in range(2):  # the second read may come from the cache of flat objects
        got = rows._json_object(text)
        expected = plain_json_object(text)
        assert got == expected and list(got) == list(expected) and type(got) is dict


def test_nan_and_infinity_in_metadata_read_as_before():
    got = rows._json_object('{"a": NaN, "b": Infinity}')
    assert math.isnan(got["a"]) and got["b"] == math.inf


@pytest.mark.parametrize("text", ['{"type": "decision"}', '{"tags": ["a"]}', "{}", "[1]"])
def test_every_read_is_a_new_dict(text):
    first = rows._json_object(text)
    first["added"] = 1
    for value in first.values():
        if isinstance(value, list):
            value.append("leak")
    assert rows._json_object(text) == plain_json_object(text)
    assert rows._json_object(text) is not rows._json_object(text)


def test_the_cache_of_flat_objects_is_bounded(monkeypatch):
    cache = rows._FlatObjects()
    monkeypatch.setattr(rows, "_FLAT_OBJECTS", cache)
    monkeypatch.setattr(rows._FlatObjects, "MAX_ENTRIES", 3)
    for i in range(10):
        assert rows._json_object(f'{{"n": {i}}}') == {"n": i}
    long_text = json.dumps({"text": "x" * rows._FlatObjects.MAX_TEXT})
    assert rows._json_object(long_text) == json.loads(long_text)
    assert rows._json_object('{"nested": {"a": 1}}') == {"nested": {"a": 1}}
    assert len(cache) == 3 and long_text not in cache and '{"nested": {"a": 1}}' not in cache


VALUES = (
    "id-1",
    "Use Redis",
    "alice",
    "acme-api",
    None,
    "run-1",
    {"type": "decision"},
    "2026-01-01T00:00:00+00:00",
    "2026-01-02T00:00:00+00:00",
    "active",
    None,
    ("a", "b"),
    True,
    3,
)


def test_memory_of_values_is_memory_of_the_same_values():
    built, plain = memory_of_values(VALUES), Memory(*VALUES)
    assert MEMORY_FIELDS == tuple(f.name for f in dataclasses.fields(Memory))
    assert built == plain and repr(built) == repr(plain) and vars(built) == vars(plain)
    assert built.type == "decision" and dataclasses.replace(built, id="id-2").id == "id-2"
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.memory = "changed"  # type: ignore[misc]


def test_memory_of_values_needs_every_field():
    with pytest.raises(ValueError):
        memory_of_values(VALUES[:-1])
    with pytest.raises(ValueError):
        memory_of_values((*VALUES, "extra"))


@pytest.mark.parametrize("metadata", ['{"type": "decision"}', "[1, 2]", "not json", "{}"])
def test_row_to_memory(metadata):
    row = (
        "id-1",
        "alice",
        "acme-api",
        None,
        "run-1",
        "Use Redis",
        metadata,
        "2026-01-01T00:00:00+00:00",
        "2026-01-02T00:00:00+00:00",
        "active",
        None,
        '["a", "b"]',
        1,
        3,
        "trailing column",
        1234,
    )
    assert len(COLUMNS) == 14
    assert row_to_memory(row) == Memory(
        id="id-1",
        memory="Use Redis",
        user_id="alice",
        app_id="acme-api",
        agent_id=None,
        run_id="run-1",
        metadata=plain_json_object(metadata),
        created_at="2026-01-01T00:00:00+00:00",
        updated_at="2026-01-02T00:00:00+00:00",
        lifecycle_state="active",
        replacement_memory_id=None,
        source_memory_ids=("a", "b"),
        immutable=True,
        version=3,
    )
