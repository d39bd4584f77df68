"""Metadata filters over rows whose `metadata` column another tool left unreadable.

Our own writes always store a JSON object; another tool writing the SQLite file may not.
Such a row has no metadata fields as far as filters are concerned (filters.py): it never
matches a condition that needs a metadata value, it does match the negative ones (`ne`,
`nin`, `NOT`, `ne "*"`, `eq null`) exactly as a row with `{}` does, and it never turns a
read into a "malformed JSON" error that loses every other result.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from conftest import BACKENDS
from mem0_plugin.identity import Identity
from mem0_plugin.operations import Caller, get_memories, search_memories
from mem0_plugin.store import SqliteStore, open_store
from mem0_plugin.transfer import import_memories

# Every memory mentions "auth", so one search reaches them all; ids name what each one is.
RECORDS = [
    {
        "id": "full",
        "memory": "Deploy the auth service to ECS with Terraform",
        "metadata": {"type": "decision", "confidence": 0.9, "tags": ["infra", "aws"], "owner": "Ops Team"},
    },
    {
        "id": "other",
        "memory": "Auth client code uses pnpm workspaces",
        "metadata": {"type": "convention", "confidence": 0.3, "tags": ["js"], "owner": "Web"},
    },
    {"id": "empty", "memory": "Auth tokens expire after fifteen minutes", "metadata": {}},
]
# Rows imported like "full", then their metadata overwritten by "another tool".
CORRUPT = {
    "truncated": '{"type": "decision", "confidence": 0.9, "tags": ["infra", "aws"], "owner": "Ops',
    "plain-text": "decision, confidence 0.9, tags infra aws, owner Ops Team",
    "empty-string": "",
    "json5": '{type: "decision", confidence: 0.9, tags: ["infra", "aws"], owner: "Ops Team",}',
}
BROKEN = set(CORRUPT)
EVERY = {"full", "other", "empty"} | BROKEN
BROKEN_TEXT = {name: f"Auth note {name.replace('-', ' ')} from another tool" for name in CORRUPT}

# (filters, the ids selected). A broken row goes wherever "empty" goes (no metadata fields).
CASES = [
    # eq, bare and explicit
    ({"metadata": {"type": "decision"}}, {"full"}),
    ({"metadata": {"type": {"eq": "decision"}}}, {"full"}),
    ({"metadata": {"confidence": 0.9}}, {"full"}),
    # ne, in, nin
    ({"metadata": {"type": {"ne": "decision"}}}, {"other", "empty"} | BROKEN),
    ({"metadata": {"type": {"in": ["decision", "convention"]}}}, {"full", "other"}),
    ({"metadata": {"type": {"nin": ["decision"]}}}, {"other", "empty"} | BROKEN),
    ({"metadata": {"owner": {"nin": ["Web", "Nobody"]}}}, {"full", "empty"} | BROKEN),
    # gt, gte, lt, lte, and a range
    ({"metadata": {"confidence": {"gt": 0.5}}}, {"full"}),
    ({"metadata": {"confidence": {"gte": 0.3}}}, {"full", "other"}),
    ({"metadata": {"confidence": {"lt": 0.5}}}, {"other"}),
    ({"metadata": {"confidence": {"lte": 0.9}}}, {"full", "other"}),
    ({"metadata": {"confidence": {"gt": 0.1, "lt": 0.5}}}, {"other"}),
    ({"metadata": {"owner": {"gte": "P"}}}, {"other"}),
    # contains / icontains, on text and on lists
    ({"metadata": {"owner": {"contains": "Ops"}}}, {"full"}),
    ({"metadata": {"owner": {"contains": "ops"}}}, set()),
    ({"metadata": {"owner": {"icontains": "ops team"}}}, {"full"}),
    ({"metadata": {"tags": {"contains": "aws"}}}, {"full"}),
    ({"metadata": {"tags": {"icontains": "JS"}}}, {"other"}),
    # the wildcard and null
    ({"metadata": {"type": "*"}}, {"full", "other"}),
    ({"metadata": {"type": {"eq": "*"}}}, {"full", "other"}),
    ({"metadata": {"type": {"ne": "*"}}}, {"empty"} | BROKEN),
    ({"metadata": {"type": None}}, {"empty"} | BROKEN),
    ({"metadata": {"type": {"ne": None}}}, {"full", "other"}),
    # several keys, NOT, AND, OR
    ({"metadata": {"type": "decision", "confidence": {"gte": 0.9}}}, {"full"}),
    ({"NOT": [{"metadata": {"type": "decision"}}]}, {"other", "empty"} | BROKEN),
    ({"NOT": [{"metadata": {"confidence": {"gt": 0.5}}}]}, {"other", "empty"} | BROKEN),
    ({"NOT": [{"metadata": {"tags": {"contains": "aws"}}}]}, {"other", "empty"} | BROKEN),
    ({"NOT": [{"metadata": {"owner": {"icontains": "ops"}}}]}, {"other", "empty"} | BROKEN),
    ({"NOT": [{"metadata": {"type": "*"}}]}, {"empty"} | BROKEN),
    ({"NOT": [{"metadata": {"type": {"ne": "decision"}}}]}, {"full"}),
    ({"AND": [{"metadata": {"type": "decision"}}, {"app_id": "acme-api"}]}, {"full"}),
    ({"AND": [{"metadata": {"type": {"ne": "convention"}}}, {"app_id": "acme-api"}]}, {"full", "empty"} | BROKEN),
    ({"OR": [{"metadata": {"type": "convention"}}, {"metadata": {"tags": {"contains": "aws"}}}]}, {"full", "other"}),
    ({"OR": [{"metadata": {"type": "decision"}}, {"metadata": {"type": {"ne": "decision"}}}]}, EVERY),
    ({"OR": [{"metadata": {"type": "convention"}}, {"id": "truncated"}]}, {"other", "truncated"}),
    ({"AND": [{"memory": {"icontains": "another tool"}}, {"NOT": [{"metadata": {"type": "decision"}}]}]}, BROKEN),
    # no metadata condition at all: the broken rows come back like any other
    ({"app_id": "acme-api"}, EVERY),
]
CASE_IDS = [json.dumps(filters) for filters, _ in CASES]


def _identity(tmp: Path, url: str | None = None) -> Identity:
    return Identity(
        user_id="alice",
        project_id="acme-api",
        branch="main",
        home=tmp,
        store_url=url or f"sqlite:///{tmp}/memories.sqlite3",
        cwd=tmp,
    )


def _corrupt_postgresql(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for name, text in CORRUPT.items():
            assert conn.execute("UPDATE memories SET metadata = %s WHERE id = %s", (text, name)).rowcount == 1
        assert conn.execute("SELECT count(*) FROM memories WHERE meta IS NULL").fetchone()[0] == len(CORRUPT)


@pytest.fixture(scope="module", params=BACKENDS)
def corrupted(request, tmp_path_factory):
    """A store with RECORDS and the CORRUPT rows, corrupted by a raw UPDATE; → (caller, store url).
    On PostgreSQL (a database of its own) the same rows have no `meta` (docs/stores.md)."""
    tmp = tmp_path_factory.mktemp("unreadable")
    url = request.getfixturevalue("postgres_server").fresh_database() if request.param == "postgresql" else None
    store = open_store(url) if url else SqliteStore(tmp / "memories.sqlite3")
    caller = Caller(store, _identity(tmp, url))
    broken = [{"id": name, "memory": BROKEN_TEXT[name], "metadata": RECORDS[0]["metadata"]} for name in CORRUPT]
    import_memories(caller, json.dumps(RECORDS + broken))
    if url:
        _corrupt_postgresql(url)
    else:
        with sqlite3.connect(tmp / "memories.sqlite3") as conn:
            for name, text in CORRUPT.items():
                assert conn.execute("UPDATE memories SET metadata = ? WHERE id = ?", (text, name)).rowcount == 1
            assert conn.execute("SELECT count(*) FROM memories WHERE NOT json_valid(metadata)").fetchone()[0] == len(
                CORRUPT
            )
        conn.close()
    yield caller, _identity(tmp, url).store_url
    store.close()


def _ids(answer: dict) -> set[str]:
    return {record["id"] for record in answer["results"]}


@pytest.mark.parametrize("filters, expected", CASES, ids=CASE_IDS)
def test_get_memories_skips_unreadable_metadata_and_returns_the_rest(corrupted, filters, expected):
    caller, _ = corrupted
    answer = get_memories(caller, filters, page_size=1000)
    assert _ids(answer) == expected
    assert answer["count"] == len(expected)


@pytest.mark.parametrize("filters, expected", CASES, ids=CASE_IDS)
def test_search_memories_skips_unreadable_metadata_and_returns_the_rest(corrupted, filters, expected):
    caller, _ = corrupted
    assert _ids(search_memories(caller, "auth", filters, top_k=100)) == expected


# The installed command, as a user types it: a subset covering every operator and NOT / OR.
CLI_CASES = [
    ({"metadata": {"type": "decision"}}, {"full"}),
    ({"metadata": {"type": {"ne": "decision"}}}, {"other", "empty"} | BROKEN),
    ({"metadata": {"type": {"in": ["decision", "convention"]}}}, {"full", "other"}),
    ({"metadata": {"type": {"nin": ["convention"]}}}, {"full", "empty"} | BROKEN),
    ({"metadata": {"confidence": {"gt": 0.5}}}, {"full"}),
    ({"metadata": {"confidence": {"gte": 0.3, "lte": 0.5}}}, {"other"}),
    ({"metadata": {"confidence": {"lt": 0.5}}}, {"other"}),
    ({"metadata": {"tags": {"contains": "aws"}}}, {"full"}),
    ({"metadata": {"owner": {"icontains": "ops"}}}, {"full"}),
    ({"metadata": {"type": "*"}}, {"full", "other"}),
    ({"NOT": [{"metadata": {"tags": {"contains": "aws"}}}]}, {"other", "empty"} | BROKEN),
    ({"OR": [{"metadata": {"type": "convention"}}, {"id": "json5"}]}, {"other", "json5"}),
]


@pytest.mark.parametrize("command", ["list", "search"])
@pytest.mark.parametrize("filters, expected", CLI_CASES, ids=[json.dumps(f) for f, _ in CLI_CASES])
def test_mem0_memories_filters_skip_unreadable_metadata(corrupted, run_cli, command, filters, expected):
    _, store_url = corrupted
    args = ["list", "--page-size", "1000"] if command == "list" else ["search", "auth", "--top-k", "100"]
    done = run_cli("mem0-memories", *args, "--filters", json.dumps(filters), "--json", env={"MEM0_STORE": store_url})
    assert done.returncode == 0, done.stderr
    assert "malformed" not in done.stderr
    assert _ids(json.loads(done.stdout)) == expected
