"""`add_memory(infer=true)`: the write path merges or supersedes at once when dream's rules are
certain, in the write that stores the new memory (docs/mcp-tools.md, "infer"). Real stores, the
real default model where meaning is needed, real threads and a real killed process."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from mem0_plugin import operations, write_path
from mem0_plugin.identity import resolve_identity
from mem0_plugin.records import ACTIVE, MERGED, SUPERSEDED
from mem0_plugin.semantic import Semantic
from mem0_plugin.store import open_store


@pytest.fixture
def semantic_home(mem0_home, monkeypatch) -> Path:
    monkeypatch.delenv("MEM0_EMBEDDER")
    mem0_home.mkdir(parents=True, exist_ok=True)
    return mem0_home


@pytest.fixture(scope="module")
def semantic(tmp_path_factory) -> Semantic:
    """One loaded model for the module (it reads no store)."""
    home = tmp_path_factory.mktemp("model-home")
    old = os.environ.pop("MEM0_EMBEDDER", None)
    try:
        found = Semantic.from_home(home, quiet=True)
        assert found.available()
        return found
    finally:
        if old is not None:
            os.environ["MEM0_EMBEDDER"] = old


def caller(home: Path, semantic: Semantic | None) -> operations.Caller:
    home.mkdir(parents=True, exist_ok=True)
    identity = resolve_identity(cwd=str(home))
    return operations.Caller(open_store(identity.store_location), identity, actor="mcp", semantic=semantic)


def add(memories: operations.Caller, text: str, **options) -> dict:
    return operations.add_memory(memories, text, metadata=options.pop("metadata", {"type": "fact"}), **options)


def state(memories: operations.Caller, memory_id: str) -> tuple[str, str | None]:
    memory = memories.store.get(memories.user_id, memory_id)
    return memory.lifecycle_state, memory.replacement_memory_id


def dangling(memories: operations.Caller) -> list[tuple[str, str]]:
    """(retired id, the id it points at) for every pointer at a memory that is not active."""
    page = operations.get_memories(memories, include_merged=True, page_size=1000)["results"]
    states = {m["id"]: m["lifecycle_state"] for m in page}
    return [
        (m["id"], m["replacement_memory_id"])
        for m in page
        if m["replacement_memory_id"] is not None and states.get(m["replacement_memory_id"]) != ACTIVE
    ]


def test_infer_false_only_stores(mem0_home):
    memories = caller(mem0_home, None)
    first = add(memories, "Use PostgreSQL for auth", infer=False)
    second = add(memories, "Auth DB is PostgreSQL", infer=False)
    assert [r["event"] for r in first["results"] + second["results"]] == ["ADD", "ADD"]
    assert "infer" not in second
    assert state(memories, first["results"][0]["id"]) == (ACTIVE, None)


def test_without_a_model_a_lexical_duplicate_merges_into_the_new_text(mem0_home):
    memories = caller(mem0_home, None)
    old = add(memories, "Use PostgreSQL for auth")["results"][0]["id"]
    answer = add(memories, "Auth DB is PostgreSQL")
    new = answer["results"][0]["id"]
    assert answer["results"] == [
        {"id": new, "memory": "Auth DB is PostgreSQL", "event": "ADD"},
        {"id": old, "memory": "Use PostgreSQL for auth", "event": "MERGE", "replacement_memory_id": new},
    ]
    assert state(memories, old) == (MERGED, new)
    history = memories.store.history(memories.user_id, old)
    assert [h.event for h in history][-1] == "MERGE"


def test_without_a_model_a_changed_value_is_left_to_dream(mem0_home):
    memories = caller(mem0_home, None)
    old = add(memories, "The API listens on port 5432")["results"][0]["id"]
    answer = add(memories, "The API now listens on port 5433")
    assert [r["event"] for r in answer["results"]] == ["ADD"]
    assert state(memories, old) == (ACTIVE, None)


@pytest.mark.parametrize(
    "left_alone",
    [
        {"immutable": True},
        {"metadata": {"type": "fact", "pinned": True}},
        {"metadata": {"type": "fact", "exclude_from_dream": True}},
    ],
)
def test_what_dream_leaves_alone_neither_retires_nor_is_retired(mem0_home, left_alone):
    memories = caller(mem0_home, None)
    old = add(memories, "Use PostgreSQL for auth")["results"][0]["id"]
    assert [r["event"] for r in add(memories, "Auth DB is PostgreSQL", **left_alone)["results"]] == ["ADD"]
    assert state(memories, old) == (ACTIVE, None)
    kept = add(memories, "Auth store is PostgreSQL", **left_alone)["results"][0]["id"]
    assert [r["event"] for r in add(memories, "Use PostgreSQL for the auth DB")["results"]] == ["ADD", "MERGE"]
    assert state(memories, kept) == (ACTIVE, None)  # the old one merged; the one left alone stays


def test_identical_text_is_still_a_noop(mem0_home):
    memories = caller(mem0_home, None)
    first = add(memories, "Use PostgreSQL for auth")["results"][0]["id"]
    again = add(memories, "Use PostgreSQL for auth")
    assert again["results"] == [{"id": first, "memory": "Use PostgreSQL for auth", "event": "NOOP"}]


def test_a_paraphrase_merges_the_old_one_into_the_new(semantic_home, semantic):
    memories = caller(semantic_home, semantic)
    old = add(memories, "Use PostgreSQL for the ledger, not DynamoDB.")["results"][0]["id"]
    answer = add(memories, "The ledger is stored in PostgreSQL, not DynamoDB.")
    new = answer["results"][0]["id"]
    merge = answer["results"][1]
    assert merge["id"] == old and merge["event"] == "MERGE" and merge["replacement_memory_id"] == new
    assert 0 < merge["similarity"] <= 1
    assert state(memories, old) == (MERGED, new)
    assert state(memories, new) == (ACTIVE, None)


def test_a_marked_change_supersedes(semantic_home, semantic):
    memories = caller(semantic_home, semantic)
    old = add(memories, "The API listens on port 5432")["results"][0]["id"]
    answer = add(memories, "The API now listens on port 5433")
    new = answer["results"][0]["id"]
    assert [(r["id"], r["event"]) for r in answer["results"]] == [(new, "ADD"), (old, "SUPERSEDE")]
    assert state(memories, old) == (SUPERSEDED, new)


def test_a_marked_change_supersedes_only_the_nearest_memory_it_replaces(semantic_home, semantic):
    """The rules read the other pools' caps as replaced too (each a conflict with a marked change,
    at cosine 0.71 and 0.58): a new text states one change, so only the nearest is superseded;
    dream compares the rest."""
    memories = caller(semantic_home, semantic)
    texts = (
        "The web pool is capped at max_replicas = 4.",
        "The batch worker pool is capped at max_replicas = 12.",
        "The cron pool runs with max_replicas = 2.",
    )
    old = [add(memories, text)["results"][0]["id"] for text in texts]
    answer = add(memories, "We raised the web pool's cap to max_replicas = 8 after the load test.")
    new = answer["results"][0]["id"]
    assert [(r["id"], r["event"]) for r in answer["results"]] == [(new, "ADD"), (old[0], "SUPERSEDE")]
    assert [state(memories, i) for i in old] == [(SUPERSEDED, new), (ACTIVE, None), (ACTIVE, None)]


def test_a_change_naming_what_it_left_supersedes_however_far_apart(semantic_home, semantic):
    memories = caller(semantic_home, semantic)
    old = add(memories, "Python deps via pip-tools: edit requirements.in, run pip-compile, commit requirements.txt.")
    old_id = old["results"][0]["id"]
    answer = add(memories, "Replaced pip-tools with uv. Lockfile is uv.lock; install with `uv sync --frozen`.")
    new = answer["results"][0]["id"]
    assert [(r["id"], r["event"]) for r in answer["results"]] == [(new, "ADD"), (old_id, "SUPERSEDE")]
    assert state(memories, old_id) == (SUPERSEDED, new)


def test_an_acknowledgement_retires_nothing_it_restates(semantic_home, semantic):
    memories = caller(semantic_home, semantic)
    old = add(memories, "I prefer tabs over spaces")["results"][0]["id"]
    answer = add(memories, "Noted: you prefer tabs")
    assert [r["event"] for r in answer["results"]] == ["ADD"]
    assert state(memories, old) == (ACTIVE, None)


def test_an_unmarked_contradiction_touches_nothing(semantic_home, semantic):
    memories = caller(semantic_home, semantic)
    old = add(memories, "The API listens on port 5432")["results"][0]["id"]
    answer = add(memories, "The API listens on port 5433")
    assert [r["event"] for r in answer["results"]] == ["ADD"]
    assert state(memories, old) == (ACTIVE, None)


def test_different_types_never_relate(semantic_home, semantic):
    memories = caller(semantic_home, semantic)
    old = add(memories, "The API listens on port 5432", metadata={"type": "decision"})["results"][0]["id"]
    answer = add(memories, "The API now listens on port 5433", metadata={"type": "fact"})
    assert [r["event"] for r in answer["results"]] == ["ADD"]
    assert state(memories, old) == (ACTIVE, None)


def test_an_added_condition_is_neither(semantic_home, semantic):
    memories = caller(semantic_home, semantic)
    old = add(memories, "Run the e2e suite before merging")["results"][0]["id"]
    answer = add(memories, "Run the e2e suite before merging only when the API changed")
    assert [r["event"] for r in answer["results"]] == ["ADD"]
    assert state(memories, old) == (ACTIVE, None)


def test_the_new_memory_gets_its_vector_in_the_same_write(semantic_home, semantic):
    memories = caller(semantic_home, semantic)
    new = add(memories, "Deploy the storefront to Vercel")["results"][0]["id"]
    assert memories.store.without_vectors(memories.user_id, semantic.model_id, None, ids=[new]) == []


def test_a_memory_that_changed_after_it_was_read_is_left_alone(semantic_home, semantic):
    memories = caller(semantic_home, semantic)
    old = add(memories, "The API listens on port 5432")["results"][0]["id"]
    new_memory = operations.Memory(
        id="new-0000-0000",
        memory="The API now listens on port 5433",
        user_id=memories.user_id,
        app_id=memories.identity.project_id,
        metadata={"type": "fact"},
        created_at="2026-01-01T00:00:00Z",
        updated_at="2026-01-01T00:00:00Z",
    )
    comparison = write_path.compare(memories.store, semantic, new_memory)
    assert [r.old.id for r in comparison.retirements] == [old]
    operations.update_memory(memories, old, metadata={"note": "edited meanwhile"})
    with memories.store.write() as writer:
        writer.insert(new_memory, actor="mcp")
        assert write_path.retire(writer, new_memory, comparison, "mcp") == []
    assert state(memories, old) == (ACTIVE, None)


def test_a_chain_of_changes_points_every_old_memory_at_the_newest(semantic_home, semantic):
    memories = caller(semantic_home, semantic)
    first = add(memories, "The API listens on port 5432")["results"][0]["id"]
    second = add(memories, "The API now listens on port 5433")["results"][0]["id"]
    third = add(memories, "The API now listens on port 5434 instead")["results"]
    assert [r["event"] for r in third] == ["ADD", "SUPERSEDE"]
    assert state(memories, second) == (SUPERSEDED, third[0]["id"])
    assert state(memories, first) == (SUPERSEDED, third[0]["id"])
    assert dangling(memories) == []


def test_two_clients_adding_at_once_leave_no_pointer_at_a_retired_memory(semantic_home, semantic):
    seeds = [
        "The API listens on port 5432",
        "Use PostgreSQL for the ledger, not DynamoDB.",
        "The dev server listens on port 8080",
    ]
    texts = [
        [
            "The API now listens on port 5433",
            "The ledger is stored in PostgreSQL, not DynamoDB.",
            "The dev server now listens on port 3000",
        ],
        [
            "The API now listens on port 6000",
            "Ledger storage is PostgreSQL; DynamoDB was rejected.",
            "The dev server now listens on port 4000",
        ],
    ]
    first = caller(semantic_home, semantic)
    for text in seeds:
        add(first, text)
    start = threading.Barrier(2)
    failures: list[BaseException] = []

    def client(batch: list[str]) -> None:
        memories = caller(semantic_home, semantic)  # its own connection, as another server would have
        try:
            start.wait()
            for text in batch:
                add(memories, text)
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=client, args=(batch,)) for batch in texts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    retired = [
        m for m in operations.get_memories(first, include_merged=True)["results"] if m["lifecycle_state"] != ACTIVE
    ]
    assert retired  # the race did retire something
    assert dangling(first) == []


CRASHING_ADD = """
import sys
from mem0_plugin import operations
from mem0_plugin.identity import resolve_identity
from mem0_plugin.store import open_store
identity = resolve_identity(cwd=sys.argv[1])
memories = operations.Caller(open_store(identity.store_location), identity)
operations.add_memory(memories, sys.argv[2], metadata={"type": "fact"})
"""


def test_killed_inside_a_write_path_merge_leaves_nothing_half_done(mem0_home):
    memories = caller(mem0_home, None)
    old = add(memories, "Use PostgreSQL for auth")["results"][0]["id"]
    env = {**os.environ, write_path.CRASH_ENV: "1"}
    killed = subprocess.run(
        [sys.executable, "-c", CRASHING_ADD, str(mem0_home), "Auth DB is PostgreSQL"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert killed.returncode == 137, killed.stderr
    reopened = caller(mem0_home, None)
    listed = operations.get_memories(reopened, include_merged=True)["results"]
    assert [(m["id"], m["lifecycle_state"]) for m in listed] == [(old, ACTIVE)]
    assert dangling(reopened) == []
    again = add(reopened, "Auth DB is PostgreSQL")  # the same add, not killed, does it all
    assert [r["event"] for r in again["results"]] == ["ADD", "MERGE"]
