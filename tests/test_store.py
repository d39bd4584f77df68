"""The embedded store (docs/records.md, docs/reads.md): real SQLite files, real transactions, real processes."""

from __future__ import annotations

import itertools
import sqlite3
import subprocess
import sys
import textwrap
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from conftest import BACKENDS
from mem0_plugin import operations
from mem0_plugin.errors import ImmutableError, InvalidInputError, NotFoundError, ScopeError, StaleWriteError, StoreError
from mem0_plugin.identity import Identity
from mem0_plugin.operations import Caller
from mem0_plugin.records import MERGED, SUPERSEDED
from mem0_plugin.store import SqliteStore, open_store
from mem0_plugin.store.sqlite.migrations import MIGRATIONS
from mem0_plugin.timeutil import parse_timestamp

T0 = datetime(2026, 1, 1, 9, 0, tzinfo=timezone.utc)


def make_identity(user: str, tmp: Path, project: str = "acme-api") -> Identity:
    return Identity(
        user_id=user,
        project_id=project,
        branch="main",
        home=tmp,
        store_url=f"sqlite:///{tmp}/memories.sqlite3",
        cwd=tmp,
    )


@pytest.fixture(params=BACKENDS)
def store(request, store_url_of):
    """The store under test, on each backend (docs/stores.md): one contract, two engines."""
    s = open_store(store_url_of(request.param))
    yield s
    s.close()


@pytest.fixture
def alice(store, tmp_path) -> Caller:
    return Caller(store, make_identity("alice", tmp_path), actor="test")


@pytest.fixture
def bob(store, tmp_path) -> Caller:
    return Caller(store, make_identity("bob", tmp_path), actor="test")


def add(caller: Caller, text: str, **kwargs) -> str:
    return operations.add_memory(caller, text, **kwargs)["results"][0]["id"]


def retire(store: SqliteStore, user: str, memory_id: str, state: str, replacement: str) -> None:
    """Mark a memory merged/superseded the way dream does: a conditional change in one transaction."""
    with store.write() as writer:
        before = writer.get(user, memory_id)
        writer.change(before, state.upper(), "test", lifecycle_state=state, replacement_memory_id=replacement)


# -- pagination ------------------------------------------------------------------


def test_251_records_in_pages_of_200(alice):
    # timestamps come in runs of 7 equal values, so the id breaks ties inside a run
    for i in range(251):
        add(alice, f"memory number {i} about topic {i % 13}", now=T0 + timedelta(seconds=i // 7))
    first = operations.get_memories(alice, page=1, page_size=200)
    second = operations.get_memories(alice, page=2, page_size=200)
    third = operations.get_memories(alice, page=3, page_size=200)

    assert set(first) == {"count", "page", "page_size", "next", "previous", "results"}
    assert (
        first["count"],
        first["page"],
        first["page_size"],
        first["next"],
        first["previous"],
        len(first["results"]),
    ) == (251, 1, 200, 2, None, 200)
    assert (second["count"], second["page"], second["next"], second["previous"], len(second["results"])) == (
        251,
        2,
        None,
        1,
        51,
    )
    assert (third["results"], third["next"], third["previous"]) == ([], None, 2)

    records = first["results"] + second["results"]
    ids = [r["id"] for r in records]
    assert len(set(ids)) == 251  # no record twice, none missing
    order = [(parse_timestamp(r["created_at"]), r["id"]) for r in records]
    assert order == sorted(order)  # created_at, then id
    assert sum(1 for a, b in itertools.pairwise(order) if a[0] == b[0]) > 200  # ties were really exercised


def test_order_is_stable_across_calls_and_page_sizes(alice):
    for i in range(30):
        add(alice, f"same moment memory {i}", now=T0)
    whole = [r["id"] for r in operations.get_memories(alice, page_size=1000)["results"]]
    assert whole == sorted(whole)
    paged = []
    for page in range(1, 5):
        paged += [r["id"] for r in operations.get_memories(alice, page=page, page_size=8)["results"]]
    assert paged == whole
    assert [r["id"] for r in operations.get_memories(alice, page_size=1000)["results"]] == whole


@pytest.mark.parametrize(
    "page, page_size, message",
    [
        (0, 100, "page must be between 1"),
        (1, 0, "page_size must be between 1 and 1000"),
        (1, 1001, "page_size must be between 1 and 1000"),
        ("2", 100, "page must be an integer"),
        (1, True, "page_size must be an integer"),
    ],
)
def test_bad_page_arguments(alice, page, page_size, message):
    with pytest.raises(InvalidInputError, match=message):
        operations.get_memories(alice, page=page, page_size=page_size)


def test_an_empty_store_is_one_empty_page(alice):
    assert operations.get_memories(alice) == {
        "count": 0,
        "page": 1,
        "page_size": 100,
        "next": None,
        "previous": None,
        "results": [],
    }


# -- the three read modes (docs/reads.md) ------------------------------------------


@pytest.fixture
def lifecycle(alice, store):
    """One memory in each state: active, superseded, merged, deleted (all sharing 'deploy')."""
    ids = {
        "active": add(alice, "deploy the api with docker compose", now=T0),
        "superseded": add(alice, "deploy the api with heroku", now=T0 + timedelta(minutes=1)),
        "merged": add(alice, "deploy the api using docker", now=T0 + timedelta(minutes=2)),
        "deleted": add(alice, "deploy the api by hand", now=T0 + timedelta(minutes=3)),
    }
    retire(store, "alice", ids["superseded"], SUPERSEDED, ids["active"])
    retire(store, "alice", ids["merged"], MERGED, ids["active"])
    operations.delete_memory(alice, ids["deleted"])
    return ids


READ_MODES = [
    # read,                                     active superseded merged deleted
    (dict(), {"active", "superseded"}),
    (dict(latest_only=True), {"active"}),
    (dict(include_merged=True), {"active", "superseded", "merged"}),
    (dict(latest_only=False, include_merged=False), {"active", "superseded"}),
]


@pytest.mark.parametrize("flags, visible", READ_MODES, ids=lambda v: str(sorted(v) if isinstance(v, set) else v))
def test_read_modes_of_get_memories(alice, lifecycle, flags, visible):
    page = operations.get_memories(alice, **flags)
    states = {r["lifecycle_state"]: r for r in page["results"]}
    assert {key for key, mid in lifecycle.items() if mid in {r["id"] for r in page["results"]}} == visible
    assert set(states) == visible  # each record is labelled by its state
    assert page["count"] == len(visible)
    for state in visible - {"active"}:
        assert states[state]["replacement_memory_id"] == lifecycle["active"]


@pytest.mark.parametrize("flags, visible", READ_MODES, ids=lambda v: str(sorted(v) if isinstance(v, set) else v))
def test_read_modes_of_search(alice, lifecycle, flags, visible):
    hits = operations.search_memories(alice, "deploy api", **flags)["results"]
    assert {r["lifecycle_state"] for r in hits} == visible
    assert lifecycle["deleted"] not in {r["id"] for r in hits}


def test_latest_only_and_include_merged_together_is_an_error(alice):
    with pytest.raises(InvalidInputError, match="latest_only and include_merged"):
        operations.get_memories(alice, latest_only=True, include_merged=True)
    with pytest.raises(InvalidInputError, match="latest_only and include_merged"):
        operations.search_memories(alice, "x", latest_only=True, include_merged=True)


def test_get_by_id_sees_every_state_but_deleted(alice, lifecycle):
    for key in ("active", "superseded", "merged"):
        assert operations.get_memory(alice, lifecycle[key])["lifecycle_state"] == key
    with pytest.raises(NotFoundError):
        operations.get_memory(alice, lifecycle["deleted"])


# -- identical text --------------------------------------------------------------


def test_identical_text_in_one_scope_is_stored_once(alice, store):
    first = operations.add_memory(alice, "Run tests with pytest -q")
    again = operations.add_memory(alice, "Run tests with pytest -q")
    assert first["results"][0]["event"] == "ADD"
    assert again["status"] == "SUCCEEDED"
    assert again["results"] == [
        {"id": first["results"][0]["id"], "memory": "Run tests with pytest -q", "event": "NOOP"}
    ]
    assert operations.add_memory(alice, "  Run tests with pytest -q\n")["results"][0]["event"] == "NOOP"
    assert store.count("alice") == 1


@pytest.mark.parametrize(
    "scope",
    [
        dict(app_id="acme-web"),
        dict(agent_id="codex"),
        dict(run_id="session-2"),
    ],
)
def test_identical_text_in_another_scope_is_a_new_memory(alice, store, scope):
    first = add(alice, "Run tests with pytest -q")
    answer = operations.add_memory(alice, "Run tests with pytest -q", **scope)
    assert answer["results"][0]["event"] == "ADD"
    assert answer["results"][0]["id"] != first
    assert store.count("alice") == 2


def test_identical_text_of_another_user_is_a_new_memory(alice, bob, store):
    first = add(alice, "Run tests with pytest -q")
    assert add(bob, "Run tests with pytest -q") != first
    assert store.count("bob") == 1


def test_identical_text_of_a_retired_memory_is_a_new_memory(alice, store):
    old = add(alice, "Deploy to Heroku")
    new = add(alice, "Deploy to Fly.io")
    retire(store, "alice", old, SUPERSEDED, new)
    assert operations.add_memory(alice, "Deploy to Heroku")["results"][0]["event"] == "ADD"


# -- search ------------------------------------------------------------------------


@pytest.fixture
def corpus(alice):
    texts = [
        "Use pnpm instead of npm for installs",
        "The staging database is PostgreSQL 16 on port 5433",
        "Always run ruff before committing Python code",
        "Deploy the frontend to Vercel from the main branch",
        "the and of to",
    ]
    return {text: add(alice, text) for text in texts}


def test_identical_text_scores_at_least_0_99(alice, corpus):
    for text, memory_id in corpus.items():
        hits = operations.search_memories(alice, text)["results"]
        assert hits[0]["id"] == memory_id
        assert hits[0]["score"] >= 0.99


@pytest.mark.parametrize("query", ["kubernetes helm chart", "the of and", "Zebra!", "🦓 ünïcödé"])
def test_no_shared_significant_word_is_absent(alice, corpus, query):
    hits = operations.search_memories(alice, query)["results"]
    assert [h for h in hits if h["memory"] != query] == []


@pytest.mark.parametrize(
    "query",
    [
        "pnpm",
        "database port",
        "python code ruff",
        "deploy vercel main",
        "Use pnpm instead of npm",
        "installs installs installs",
        "PostgreSQL 16",
    ],
)
def test_scores_are_in_0_1_and_ranked(alice, corpus, query):
    hits = operations.search_memories(alice, query)["results"]
    assert hits, query
    scores = [h["score"] for h in hits]
    assert all(0 <= s <= 1 for s in scores)
    assert scores == sorted(scores, reverse=True)
    assert set(hits[0]) == {
        "id",
        "memory",
        "user_id",
        "app_id",
        "agent_id",
        "run_id",
        "metadata",
        "created_at",
        "updated_at",
        "lifecycle_state",
        "replacement_memory_id",
        "source_memory_ids",
        "immutable",
        "score",
    }


def test_search_top_k_and_threshold(alice):
    for i in range(20):
        add(alice, f"deploy service number {i} " + "extra " * (i % 5))
    assert len(operations.search_memories(alice, "deploy service", top_k=5)["results"]) == 5
    strict = operations.search_memories(alice, "deploy service", top_k=100, threshold=0.9)["results"]
    assert all(h["score"] >= 0.9 for h in strict)
    with pytest.raises(InvalidInputError, match="threshold"):
        operations.search_memories(alice, "deploy", threshold=1.5)
    with pytest.raises(InvalidInputError, match="top_k"):
        operations.search_memories(alice, "deploy", top_k=0)
    with pytest.raises(InvalidInputError, match="query"):
        operations.search_memories(alice, "   ")


def test_search_respects_filters_and_project(alice):
    here = add(alice, "cache docker layers in CI")
    there = add(alice, "cache docker layers in CI", app_id="acme-web")
    assert [h["id"] for h in operations.search_memories(alice, "docker cache")["results"]] == [here]
    across = operations.search_memories(alice, "docker cache", filters={"metadata": {"type": "*"}})
    assert across["results"] == []
    both = operations.search_memories(alice, "docker cache", filters={"app_id": {"in": ["acme-api", "acme-web"]}})
    assert {h["id"] for h in both["results"]} == {here, there}


# -- history and restore -----------------------------------------------------------


def test_history_records_every_change_with_before_and_after(alice, store):
    memory_id = add(alice, "Use Node 18", metadata={"type": "convention"})
    operations.update_memory(alice, memory_id, text="Use Node 20")
    operations.delete_memory(alice, memory_id)
    restored = operations.restore_memory(alice, memory_id)
    entries = store.history("alice", memory_id)

    assert [e.event for e in entries] == ["ADD", "UPDATE", "DELETE", "RESTORE"]
    add_e, update_e, delete_e, restore_e = entries
    assert add_e.before is None and add_e.after["memory"] == "Use Node 18"
    assert update_e.before["memory"] == "Use Node 18" and update_e.after["memory"] == "Use Node 20"
    assert update_e.after["version"] == update_e.before["version"] + 1
    assert delete_e.before["memory"] == "Use Node 20" and delete_e.after is None
    assert restore_e.before is None and restore_e.after["lifecycle_state"] == "active"
    assert restored.memory == "Use Node 20" and restored.metadata == {"type": "convention"}
    assert all(e.actor == "test" for e in entries)
    # every history row carries the full record
    full = {
        "id",
        "memory",
        "user_id",
        "app_id",
        "agent_id",
        "run_id",
        "metadata",
        "created_at",
        "updated_at",
        "lifecycle_state",
        "replacement_memory_id",
        "source_memory_ids",
        "immutable",
        "version",
    }
    assert set(add_e.after) == full and set(delete_e.before) == full


@pytest.mark.parametrize("state", ["deleted", "merged", "superseded"])
def test_restore_brings_back_a_retired_memory(alice, lifecycle, state):
    memory = operations.restore_memory(alice, lifecycle[state])
    assert memory.lifecycle_state == "active" and memory.replacement_memory_id is None
    record = operations.get_memory(alice, lifecycle[state])
    assert record["lifecycle_state"] == "active"
    assert record["id"] in {r["id"] for r in operations.get_memories(alice, latest_only=True)["results"]}


def test_restore_keeps_the_original_created_at(alice):
    memory_id = add(alice, "Old decision", now=T0)
    operations.delete_memory(alice, memory_id)
    assert operations.restore_memory(alice, memory_id).created_at == T0.isoformat()


def test_restore_refuses_active_and_unknown(alice):
    memory_id = add(alice, "still here")
    with pytest.raises(InvalidInputError, match="already active"):
        operations.restore_memory(alice, memory_id)
    with pytest.raises(NotFoundError):
        operations.restore_memory(alice, "no-such-id")


def test_the_change_and_its_history_share_one_transaction(alice, store):
    memory_id = add(alice, "atomic")
    with pytest.raises(RuntimeError):
        with store.write() as writer:
            before = writer.get("alice", memory_id)
            writer.change(before, "UPDATE", "test", memory="half-done")
            raise RuntimeError("crash after the change, before commit")
    assert operations.get_memory(alice, memory_id)["memory"] == "atomic"
    assert [e.event for e in store.history("alice", memory_id)] == ["ADD"]


# -- update ------------------------------------------------------------------------


def test_update_changes_text_and_merges_metadata(alice):
    memory_id = add(alice, "Use Node 18", metadata={"type": "convention", "confidence": 0.4, "source": "x"})
    after = operations.update_memory(
        alice, memory_id, text="Use Node 20", metadata={"confidence": 0.9, "source": None, "branch": "main"}
    )
    assert after["memory"] == "Use Node 20"
    assert after["metadata"] == {"type": "convention", "confidence": 0.9, "branch": "main"}
    assert after["updated_at"] >= after["created_at"]
    assert operations.get_memory(alice, memory_id) == after


def test_update_of_an_immutable_memory_is_refused(alice, store):
    memory_id = add(alice, "Never change this", immutable=True)
    with pytest.raises(ImmutableError, match="immutable"):
        operations.update_memory(alice, memory_id, text="changed")
    with pytest.raises(ImmutableError):
        operations.update_memory(alice, memory_id, metadata={"type": "x"})
    assert operations.get_memory(alice, memory_id)["memory"] == "Never change this"
    assert [e.event for e in store.history("alice", memory_id)] == ["ADD"]


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(), InvalidInputError, "needs text, metadata, or both"),
        (dict(text=""), InvalidInputError, "empty"),
        (dict(text=5), InvalidInputError, "must be a string"),
        (dict(metadata=[1]), InvalidInputError, "metadata must be a JSON object"),
    ],
)
def test_bad_updates(alice, kwargs, error, message):
    memory_id = add(alice, "a memory")
    with pytest.raises(error, match=message):
        operations.update_memory(alice, memory_id, **kwargs)


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "empty"),
        ("   \n", "empty"),
        (None, "must be a string"),
        (b"bytes", "must be a string"),
        ("nul\x00byte", "NUL"),
        ("x" * 1_000_001, "longer than"),
        ("lone \ud800 surrogate", "not valid Unicode"),
    ],
)
def test_bad_text_is_refused(alice, store, text, message):
    with pytest.raises(InvalidInputError, match=message):
        operations.add_memory(alice, text)
    assert store.count() == 0


@pytest.mark.parametrize(
    "metadata, message",
    [
        ("type=decision", "metadata must be a JSON object"),
        ({"confidence": float("nan")}, "metadata"),
        ({"when": datetime(2026, 1, 1)}, "metadata"),
        ({"bad": "\udcff"}, "metadata"),
    ],
)
def test_bad_metadata_is_refused(alice, store, metadata, message):
    with pytest.raises(InvalidInputError, match=message):
        operations.add_memory(alice, "text", metadata=metadata)
    assert store.count() == 0


def test_huge_and_unicode_text_round_trips(alice):
    text = "🧠 ünïcödé — " + "big text " * 100_000
    memory_id = add(alice, text)
    assert operations.get_memory(alice, memory_id)["memory"] == text


# -- conditional writes --------------------------------------------------------------


def test_a_stale_write_is_refused_and_changes_nothing(alice, store):
    memory_id = add(alice, "version one")
    with store.write() as writer:
        stale = writer.get("alice", memory_id)
    operations.update_memory(alice, memory_id, text="version two")  # someone else got there first

    with pytest.raises(StaleWriteError, match="changed since it was read"):
        with store.write() as writer:
            writer.change(stale, "MERGE", "test", lifecycle_state=MERGED)
    with pytest.raises(StaleWriteError):
        with store.write() as writer:
            writer.delete(stale, "test")
    current = operations.get_memory(alice, memory_id)
    assert (current["memory"], current["lifecycle_state"]) == ("version two", "active")
    assert [e.event for e in store.history("alice", memory_id)] == ["ADD", "UPDATE"]


# -- scope isolation ---------------------------------------------------------------


def test_another_user_cannot_touch_alices_memory(alice, bob, store):
    memory_id = add(alice, "alice's secret deploy key lives in vault", metadata={"type": "decision"})
    deleted_id = add(alice, "alice's deleted memory")
    operations.delete_memory(alice, deleted_id)

    for action in (
        lambda: operations.get_memory(bob, memory_id),
        lambda: operations.update_memory(bob, memory_id, text="pwned"),
        lambda: operations.delete_memory(bob, memory_id),
        lambda: operations.restore_memory(bob, deleted_id),
    ):
        with pytest.raises(NotFoundError):
            action()
    for filters in (
        {"id": memory_id},
        {"metadata": {"type": "decision"}},
        {"app_id": "acme-api"},
        {"user_id": "*"},
        {"OR": [{"id": memory_id}, {"app_id": "*"}]},
    ):
        assert operations.get_memories(bob, filters=filters, include_merged=True)["results"] == []
        assert operations.search_memories(bob, "secret deploy key vault", filters=filters)["results"] == []
    assert operations.search_memories(bob, "alice's secret deploy key lives in vault")["results"] == []
    for filters in ({"user_id": "alice"}, {"AND": [{"user_id": "alice"}]}):
        with pytest.raises(ScopeError):
            operations.get_memories(bob, filters=filters)
        with pytest.raises(ScopeError):
            operations.search_memories(bob, "secret", filters=filters)
    with pytest.raises(ScopeError):
        operations.add_memory(bob, "sneaky", user_id="alice")
    assert store.history("bob", memory_id) == []
    assert operations.get_memory(alice, memory_id)["memory"] == "alice's secret deploy key lives in vault"
    assert store.count("bob") == 0


def test_no_filter_reads_the_current_project_a_filter_without_app_id_reads_all(alice):
    here = add(alice, "in acme-api")
    there = add(alice, "in acme-web", app_id="acme-web")
    assert [r["id"] for r in operations.get_memories(alice)["results"]] == [here]
    assert {r["id"] for r in operations.get_memories(alice, filters={"user_id": "alice"})["results"]} == {here, there}
    assert [r["id"] for r in operations.get_memories(alice, filters={"app_id": "acme-web"})["results"]] == [there]


# -- the file ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content", [b"this is not a database at all" * 100, b"\x00" * 4096, b"SQLite format 3\x00" + b"\xff" * 4000]
)
def test_a_corrupt_database_file_is_a_clear_store_error(tmp_path, content):
    path = tmp_path / "memories.sqlite3"
    path.write_bytes(content)
    with pytest.raises(StoreError) as caught:
        SqliteStore(path).page("alice")
    message = str(caught.value)
    assert str(path) in message and ("not a database" in message or "malformed" in message)
    assert "\n" not in message


def test_a_store_path_that_is_a_directory_is_a_clear_store_error(tmp_path):
    (tmp_path / "dir.sqlite3").mkdir()
    with pytest.raises(StoreError, match="cannot open the store"):
        SqliteStore(tmp_path / "dir.sqlite3")


@pytest.mark.parametrize(
    "url, message",
    [
        ("mysql://db/mem0", "scheme 'mysql' is not supported;"),
        ("sqlite://", "no file path"),
        ("sqlite:///", "no file path"),
        ("sqlite:///:memory:", "no file path"),
        ("sqlite://host/m.sqlite3", "names a host"),
        ("", "empty"),
    ],
)
def test_unsupported_store_urls(url, message):
    from mem0_plugin.errors import ConfigError

    with pytest.raises(ConfigError, match=message) as caught:
        open_store(url)
    assert "sqlite:////<absolute path>" in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("url", ["postgresql://127.0.0.1:1/mem0", "postgres://user:secret@127.0.0.1:1/mem0"])
def test_an_unreachable_postgresql_store_is_a_clear_store_error_without_the_password(url):
    with pytest.raises(StoreError, match="cannot open the store") as caught:
        open_store(url)
    assert "secret" not in str(caught.value) and "\n" not in str(caught.value)


def test_store_urls_follow_sqlalchemy_three_slashes_relative_four_absolute(tmp_path, monkeypatch):
    from mem0_plugin.store_url import parse_store_url

    monkeypatch.chdir(tmp_path)
    assert parse_store_url("sqlite:///rel.sqlite3").path == tmp_path / "rel.sqlite3"
    assert parse_store_url("sqlite:///sub/rel.sqlite3").path == tmp_path / "sub" / "rel.sqlite3"
    assert parse_store_url("sqlite:////abs/m.sqlite3").path == Path("/abs/m.sqlite3")
    assert parse_store_url("SQLite:////abs/m.sqlite3").path == Path("/abs/m.sqlite3")
    assert parse_store_url("/abs/m.sqlite3").path == Path("/abs/m.sqlite3")  # a bare path
    assert parse_store_url("bare.sqlite3").path == tmp_path / "bare.sqlite3"
    assert parse_store_url("./a/../bare.sqlite3").path == tmp_path / "bare.sqlite3"
    assert parse_store_url("~/m.sqlite3").path == Path.home() / "m.sqlite3"
    with open_store("sqlite:///rel.sqlite3") as store:  # written where the URL says, not at the root
        assert store.path == tmp_path / "rel.sqlite3" and store.url == f"sqlite:///{tmp_path}/rel.sqlite3"
    assert (tmp_path / "rel.sqlite3").is_file()
    with open_store(str(tmp_path / "bare path.sqlite3")) as store:
        assert store.path.is_file()


def test_an_explicit_store_in_a_missing_directory_is_an_error_and_creates_nothing(tmp_path):
    from mem0_plugin.errors import ConfigError

    for url in (f"sqlite:///{tmp_path}/no/such/m.sqlite3", str(tmp_path / "no" / "such" / "m.sqlite3")):
        with pytest.raises(ConfigError, match=r"directory does not exist: .*/no/such"):
            open_store(url)
    assert not (tmp_path / "no").exists()


def test_three_slashes_before_an_absolute_path_get_a_hint(tmp_path, monkeypatch):
    from mem0_plugin.errors import ConfigError

    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=f"four slashes: sqlite:///{tmp_path}/m.sqlite3"):
        open_store(f"sqlite://{tmp_path}/m.sqlite3")  # = the relative path tmp/.../m.sqlite3 here
    assert not any(tmp_path.iterdir())


def test_the_default_store_may_create_its_home(tmp_path):
    from mem0_plugin.identity import resolve_identity

    home = tmp_path / "new" / "home"
    identity = resolve_identity(user_id="alice", project_id="p", cwd=tmp_path, env={"MEM0_HOME": str(home)})
    with open_store(identity.store_location) as store:
        assert store.path == home / "memories.sqlite3" and store.path.is_file()
    explicit = resolve_identity(
        user_id="alice", project_id="p", cwd=tmp_path, env={"MEM0_STORE": str(tmp_path / "other" / "m.sqlite3")}
    )
    with pytest.raises(Exception, match="directory does not exist"):
        open_store(explicit.store_location)


def test_migrations_are_recorded_and_reopening_is_idempotent(tmp_path):
    path = tmp_path / "memories.sqlite3"
    with SqliteStore(path) as first:
        memory_id = add(Caller(first, make_identity("alice", tmp_path)), "kept across reopen")
    for _ in range(3):
        with SqliteStore(path) as again:
            assert again.get("alice", memory_id).memory == "kept across reopen"
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) >= 1
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')")}
    assert {"memories", "history", "memories_fts", "memories_lifecycle"} <= tables
    conn.close()


def test_readonly_store(tmp_path):
    path = tmp_path / "odd dir ?#%" / "memories.sqlite3"
    with SqliteStore(path) as rw:
        memory_id = add(Caller(rw, make_identity("alice", tmp_path)), "read me")
    with SqliteStore(path, readonly=True) as ro:
        assert ro.get("alice", memory_id).memory == "read me"
        with pytest.raises(StoreError, match="read-only"):
            with ro.write():
                pass
    with pytest.raises(StoreError, match="does not exist"):
        SqliteStore(tmp_path / "missing.sqlite3", readonly=True)


WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from mem0_plugin.identity import Identity
    from mem0_plugin.operations import Caller, add_memory, get_memories
    from mem0_plugin.store import SqliteStore
    path, worker, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    store = SqliteStore(path)
    me = Identity("alice", "acme-api", "main", path.parent, "sqlite:///" + str(path), path.parent)
    caller = Caller(store, me, actor=worker)
    for i in range(count):
        add_memory(caller, f"worker {worker} memory {i}")
        if i % 50 == 0:
            get_memories(caller, page_size=10)
    print("done", worker)
""")


def test_several_processes_write_at_once(tmp_path):
    path = tmp_path / "shared.sqlite3"  # not created yet: the workers race on the migration too
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), str(n), "100"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(4)
    ]
    results = [w.communicate(timeout=240) for w in workers]
    for worker, (_, err) in zip(workers, results):
        assert worker.returncode == 0, err
        assert "locked" not in err.lower() and err == ""
    with SqliteStore(path) as store:
        assert store.count("alice") == 400
        texts = {m.memory for m in store.iter_scope("alice", "acme-api")}
    assert texts == {f"worker {w} memory {i}" for w in range(4) for i in range(100)}


def test_a_listing_of_one_project_counts_the_same_however_it_is_asked(store, alice, bob, tmp_path):
    """The store is told the project (`page(..., app_id=)`), never asked to recognise a filter's
    SQL: every way of saying "this project" counts what count(*) counts."""
    kept = [add(alice, f"acme fact number {i}", app_id="acme-api") for i in range(3)]
    add(alice, "another project's fact", app_id="other")
    add(bob, "bob's fact", app_id="acme-api")
    retire(store, "alice", kept[0], SUPERSEDED, kept[1])
    asked = [
        None,
        {"app_id": "acme-api"},
        {"AND": [{"user_id": "alice"}, {"app_id": "acme-api"}]},
        {"user_id": "alice", "app_id": "acme-api"},
        {"app_id": {"eq": "acme-api"}},
        {"AND": [{"app_id": "acme-api"}, {"created_at": {"gte": "2000-01-01"}}]},
    ]
    for filters in asked:
        assert operations.get_memories(alice, filters, page_size=1)["count"] == 3, filters
        assert operations.get_memories(alice, filters, page_size=1, latest_only=True)["count"] == 2, filters
    assert store.page("alice", app_id="other").count == 1
    assert store.page("alice").count == 4 and store.page("bob").count == 1
    assert [m.id for m in store.page("alice", app_id="acme-api").results] == kept


@pytest.mark.parametrize(
    "filters, project",
    [
        ({"app_id": "p"}, "p"),
        ({"AND": [{"user_id": "alice"}, {"app_id": "p"}]}, "p"),
        ({"AND": [{"AND": [{"app_id": "p"}]}, {"user_id": "alice"}]}, "p"),
        ({"app_id": "*"}, None),
        ({"app_id": {"eq": "p"}}, None),
        ({"AND": [{"user_id": "bob"}, {"app_id": "p"}]}, None),
        ({"AND": [{"app_id": "p"}, {"app_id": "q"}]}, None),
        ({"OR": [{"app_id": "p"}]}, None),
        ({"user_id": "alice"}, None),
        ({"app_id": "p", "agent_id": "a"}, None),
    ],
)
def test_only_project_recognises_a_filter_by_its_meaning(filters, project):
    assert operations.only_project(filters, "alice") == project
