"""Ids as typed: the full id or a unique prefix of at least 8 characters, on a real store."""

from __future__ import annotations

import pytest
from mem0_plugin.errors import InvalidInputError, NotFoundError
from mem0_plugin.ids import matches, pick
from mem0_plugin.records import Memory
from mem0_plugin.store import SqliteStore

TWINS = ["abcdef12-0000-4000-8000-000000000001", "abcdef12-0000-4000-8000-000000000002"]
LONE = "2dfe514e-7a3b-4c1d-9e2f-0123456789ab"


def test_an_exact_id_wins_however_short():
    assert pick("m1", ["m1", "m10", "m11"]) == "m1"
    assert matches("m1", ["m10", "m11"]) == []


@pytest.mark.parametrize(
    "key, error, message",
    [
        ("2dfe51", InvalidInputError, "id prefix 2dfe51 is too short: give at least 8 characters of the id"),
        ("abcdef12", InvalidInputError, "id prefix abcdef12 matches 2 memories; give more characters of the id"),
        ("ffffffff", NotFoundError, "memory ffffffff not found"),
        ("ffff", NotFoundError, "memory ffff not found"),
    ],
)
def test_short_ambiguous_and_unknown_keys_are_clear_errors(key, error, message):
    with pytest.raises(error) as caught:
        pick(key, [*TWINS, LONE])
    assert str(caught.value) == message


def _memory(memory_id: str, user: str = "alice") -> Memory:
    return Memory(
        id=memory_id,
        memory=f"text of {memory_id}",
        user_id=user,
        app_id="acme-api",
        created_at="2026-01-01T00:00:00+00:00",
        updated_at="2026-01-01T00:00:00+00:00",
    )


def test_the_store_resolves_prefixes_of_the_users_own_ids_only(tmp_path):
    with SqliteStore(tmp_path / "m.sqlite3") as store:
        with store.write() as writer:
            for memory_id in (*TWINS, LONE):
                writer.insert(_memory(memory_id), actor="test")
            writer.insert(_memory("2dfe514e-ffff-4fff-8fff-ffffffffffff", user="bob"), actor="test")
        assert store.resolve_id("alice", "2dfe514e") == LONE  # bob's twin prefix is not alice's ambiguity
        assert store.resolve_id("bob", "2dfe514e") == "2dfe514e-ffff-4fff-8fff-ffffffffffff"
        with pytest.raises(NotFoundError):
            store.resolve_id("bob", "abcdef12")
        with pytest.raises(InvalidInputError, match="matches 2 memories"):
            store.resolve_id("alice", "abcdef12")
        assert store.resolve_id("alice", TWINS[1]) == TWINS[1]

        with store.write() as writer:
            writer.delete(writer.get("alice", LONE), "test")
        with pytest.raises(NotFoundError):
            store.resolve_id("alice", "2dfe514e")
        assert store.resolve_id("alice", "2dfe514e", deleted=True) == LONE  # history and restore reach it
