"""The mem0 filter grammar (docs/reads.md, "Filters"), compiled and run against a real SQLite store."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from conftest import BACKENDS
from mem0_plugin.errors import FilterError, ScopeError
from mem0_plugin.filters import compile_filters
from mem0_plugin.identity import Identity
from mem0_plugin.operations import Caller, add_memory
from mem0_plugin.store import ReadMode, SqliteStore, open_store

# Four memories of alice (three in acme-api, one in acme-web) and one of bob, named by key.
RECORDS = {
    "ecs": dict(
        text="Deploy to ECS with Terraform",
        app_id="acme-api",
        agent_id="claude",
        metadata={"type": "decision", "confidence": 0.9, "tags": ["infra", "aws"], "owner": "Ops Team"},
        at="2026-01-01T00:00:00+00:00",
    ),
    "pnpm": dict(
        text="Use pnpm, not npm",
        app_id="acme-api",
        agent_id="codex",
        run_id="r1",
        metadata={"type": "convention", "confidence": 0.5, "tags": ["js"], "pinned": True},
        at="2026-02-01T00:00:00+00:00",
    ),
    "port": dict(
        text="The API listens on port 8080",
        app_id="acme-web",
        metadata={"type": "decision", "confidence": 0.2},
        at="2026-03-01T00:00:00+00:00",
    ),
    "cache": dict(text="Cache builds in CI", app_id="acme-api", metadata={}, at="2026-04-01T00:00:00+00:00"),
}
ALL = {"ecs", "pnpm", "port", "cache"}


def identity(user: str, tmp: Path) -> Identity:
    return Identity(
        user_id=user,
        project_id="acme-api",
        branch="main",
        home=tmp,
        store_url=f"sqlite:///{tmp}/memories.sqlite3",
        cwd=tmp,
    )


@pytest.fixture(scope="module", params=BACKENDS)
def seeded(request, tmp_path_factory):
    """A real store (an SQLite file, a PostgreSQL database of its own) with RECORDS for alice
    and one memory for bob; → (store, key→id). One grammar, the same answers on both."""
    tmp = tmp_path_factory.mktemp("filters")
    if request.param == "postgresql":
        store = open_store(request.getfixturevalue("postgres_server").fresh_database())
    else:
        store = SqliteStore(tmp / "memories.sqlite3")
    alice = Caller(store, identity("alice", tmp))
    ids = {}
    for key, spec in RECORDS.items():
        answer = add_memory(
            alice,
            spec["text"],
            app_id=spec["app_id"],
            agent_id=spec.get("agent_id"),
            run_id=spec.get("run_id"),
            metadata=spec["metadata"],
            now=datetime.fromisoformat(spec["at"]),
        )
        ids[key] = answer["results"][0]["id"]
    bob = Caller(store, identity("bob", tmp))
    ids["bob"] = add_memory(bob, "Bob deploys to Vercel", metadata={"type": "decision"})["results"][0]["id"]
    yield store, ids
    store.close()


def matching(store: SqliteStore, filters, user: str = "alice") -> set[str]:
    """The texts (mapped back to RECORDS keys) a filter selects for the user, every state."""
    page = store.page(user, compile_filters(filters, user_id=user), ReadMode.INCLUDE_MERGED, 1, 1000)
    by_text = {spec["text"]: key for key, spec in RECORDS.items()}
    return {by_text.get(m.memory, m.memory) for m in page.results}


GRAMMAR = [
    # entity keys: a bare value is eq; every operator
    ({"app_id": "acme-api"}, {"ecs", "pnpm", "cache"}),
    ({"app_id": {"eq": "acme-web"}}, {"port"}),
    ({"app_id": {"ne": "acme-api"}}, {"port"}),
    ({"app_id": {"in": ["acme-web", "elsewhere"]}}, {"port"}),
    ({"app_id": {"nin": ["acme-api"]}}, {"port"}),
    ({"app_id": {"gt": "acme-b"}}, {"port"}),
    ({"app_id": {"gte": "acme-web"}}, {"port"}),
    ({"app_id": {"lt": "acme-b"}}, {"ecs", "pnpm", "cache"}),
    ({"app_id": {"lte": "acme-api"}}, {"ecs", "pnpm", "cache"}),
    ({"agent_id": "claude"}, {"ecs"}),
    ({"agent_id": {"nin": ["claude"]}}, {"pnpm", "port", "cache"}),  # a missing value is "not in"
    ({"agent_id": {"ne": "claude"}}, {"pnpm", "port", "cache"}),
    ({"run_id": "r1"}, {"pnpm"}),
    ({"memory": {"contains": "pnpm"}}, {"pnpm"}),
    ({"memory": {"contains": "PNPM"}}, set()),
    ({"memory": {"icontains": "PNPM"}}, {"pnpm"}),
    ({"lifecycle_state": "active"}, ALL),
    # "*": any non-null value; records without the field are excluded
    ({"agent_id": "*"}, {"ecs", "pnpm"}),
    ({"run_id": "*"}, {"pnpm"}),
    ({"app_id": "*"}, ALL),
    # user_id: only the caller's own (or "*") — still never another user's rows
    ({"user_id": "alice"}, ALL),
    ({"user_id": "*"}, ALL),
    ({"user_id": {"in": ["alice"]}}, ALL),
    # created_at / updated_at compare as timestamps, whatever the offset or precision
    ({"created_at": {"gte": "2026-02-01T00:00:00Z"}}, {"pnpm", "port", "cache"}),
    ({"created_at": {"gt": "2026-02-01T00:00:00+00:00"}}, {"port", "cache"}),
    ({"created_at": {"lt": "2026-02-01T01:00:00+01:00"}}, {"ecs"}),  # = 00:00Z, so pnpm is not less
    ({"created_at": {"lte": "2026-02-01"}}, {"ecs", "pnpm"}),
    ({"created_at": {"eq": "2026-03-01T00:00:00.000000Z"}}, {"port"}),
    ({"created_at": "2026-03-01T02:00:00+02:00"}, {"port"}),
    ({"created_at": {"ne": "2026-03-01T00:00:00Z"}}, {"ecs", "pnpm", "cache"}),
    ({"created_at": {"in": ["2026-01-01T00:00:00Z", "2026-04-01T00:00:00Z"]}}, {"ecs", "cache"}),
    ({"created_at": {"gte": "2026-01-15", "lt": "2026-03-15"}}, {"pnpm", "port"}),
    ({"updated_at": {"gt": "2026-03-15T00:00:00Z"}}, {"cache"}),
    # metadata keys: eq, in, comparisons, contains on strings and on lists
    ({"metadata": {"type": "decision"}}, {"ecs", "port"}),
    ({"metadata": {"type": {"eq": "decision"}}}, {"ecs", "port"}),
    ({"metadata": {"type": {"ne": "decision"}}}, {"pnpm", "cache"}),
    ({"metadata": {"type": {"in": ["convention", "decision"]}}}, {"ecs", "pnpm", "port"}),
    ({"metadata": {"type": {"nin": ["decision"]}}}, {"pnpm", "cache"}),
    ({"metadata": {"type": "*"}}, {"ecs", "pnpm", "port"}),
    ({"metadata": {"confidence": {"gte": 0.5}}}, {"ecs", "pnpm"}),
    ({"metadata": {"confidence": {"lt": 0.5}}}, {"port"}),
    ({"metadata": {"confidence": 0.9}}, {"ecs"}),
    ({"metadata": {"pinned": True}}, {"pnpm"}),
    ({"metadata": {"tags": {"contains": "aws"}}}, {"ecs"}),
    ({"metadata": {"tags": {"contains": "AWS"}}}, set()),
    ({"metadata": {"tags": {"icontains": "AWS"}}}, {"ecs"}),
    ({"metadata": {"tags": {"contains": "aw"}}}, set()),  # a list contains whole items only
    ({"metadata": {"owner": {"contains": "Ops"}}}, {"ecs"}),
    ({"metadata": {"owner": {"icontains": "team"}}}, {"ecs"}),
    ({"metadata": {"type": "decision", "confidence": {"gt": 0.5}}}, {"ecs"}),
    ({"metadata": {"no.such.key": "x"}}, set()),
    # AND / OR / NOT and their nesting
    ({"AND": [{"app_id": "acme-api"}, {"metadata": {"type": "decision"}}]}, {"ecs"}),
    ({"OR": [{"app_id": "acme-web"}, {"run_id": "r1"}]}, {"pnpm", "port"}),
    ({"NOT": [{"app_id": "acme-api"}]}, {"port"}),
    ({"NOT": [{"agent_id": "claude"}]}, {"pnpm", "port", "cache"}),  # records without agent_id included
    ({"NOT": [{"metadata": {"type": "decision"}}]}, {"pnpm", "cache"}),  # records without type included
    ({"NOT": [{"metadata": {"confidence": {"gt": 0.4}}}]}, {"port", "cache"}),
    (
        {
            "AND": [
                {"OR": [{"metadata": {"type": "decision"}}, {"metadata": {"type": "convention"}}]},
                {"NOT": [{"app_id": "acme-web"}]},
            ]
        },
        {"ecs", "pnpm"},
    ),
    (
        {
            "OR": [
                {"AND": [{"app_id": "acme-api"}, {"agent_id": "codex"}]},
                {"AND": [{"app_id": "acme-web"}, {"NOT": [{"metadata": {"confidence": {"gt": 0.5}}}]}]},
            ]
        },
        {"pnpm", "port"},
    ),
    ({"AND": []}, ALL),
    ({"app_id": "acme-api", "agent_id": "claude"}, {"ecs"}),  # several keys in one object: AND
    # no filter at all: everything of the user (operations narrows that to the project)
    (None, ALL),
    ({}, ALL),
    # JSON text of a filter is accepted
    ('{"app_id": "acme-web"}', {"port"}),
]


@pytest.mark.parametrize("filters, expected", GRAMMAR, ids=lambda v: json.dumps(v) if not isinstance(v, set) else "")
def test_grammar_selects_the_right_memories(seeded, filters, expected):
    store, _ = seeded
    assert matching(store, filters) == expected


def test_id_filter(seeded):
    store, ids = seeded
    assert matching(store, {"id": ids["ecs"]}) == {"ecs"}
    assert matching(store, {"id": {"in": [ids["ecs"], ids["port"], ids["bob"]]}}) == {"ecs", "port"}
    assert matching(store, {"id": ids["bob"]}) == set()  # bob's id, filtered by alice: nothing


MALFORMED = [
    ({"app_id": {"like": "acme%"}}, "unknown operator 'like'"),
    ({"metadata": {"type": {"regex": ".*"}}}, "unknown operator 'regex'"),
    ({"created_at": {"after": "2026-01-01"}}, "unknown operator 'after'"),
    ({"colour": "blue"}, "unknown filter key 'colour'"),
    ({"and": [{"app_id": "x"}]}, "must be upper case: AND"),
    ({"Or": [{"app_id": "x"}]}, "must be upper case: OR"),
    ({"AND": {"app_id": "x"}}, "AND takes a list of conditions"),
    ({"NOT": "app_id"}, "NOT takes a list of conditions"),
    ({"OR": []}, "OR needs at least one condition"),
    ({"NOT": []}, "NOT needs at least one condition"),
    ({"AND": ["app_id"]}, "must be a non-empty JSON object"),
    ({"AND": [{}]}, "must be a non-empty JSON object"),
    ({"created_at": {"gt": "yesterday"}}, "not an ISO-8601 timestamp"),
    ({"created_at": {"gt": 1700000000}}, "not an ISO-8601 timestamp"),
    ({"updated_at": {"lt": "2026-13-45"}}, "not an ISO-8601 timestamp"),
    ({"created_at": {"contains": "2026"}}, "created_at: contains"),
    ({"app_id": {"eq": {"nested": 1}}}, "must be a string, number, boolean or null"),
    ({"metadata": {"type": {"eq": {"a": 1}}}}, "must be a string, number, boolean or null"),
    ({"metadata": {"type": {"in": [["decision"]]}}}, "must be a string, number, boolean or null"),
    ({"metadata": {"confidence": {"gt": float("nan")}}}, "finite number"),
    ({"metadata": {"confidence": {"lt": float("inf")}}}, "finite number"),
    ('{"metadata": {"confidence": {"gt": NaN}}}', "finite number"),
    ({"metadata": {"n": 10**30}}, "out of range"),
    ({"app_id": {"in": "acme-api"}}, "in takes a non-empty list"),
    ({"app_id": {"nin": []}}, "nin takes a non-empty list"),
    ({"app_id": {}}, "empty operator object"),
    ({"memory": {"contains": ""}}, "contains takes a non-empty string"),
    ({"metadata": {"tags": {"contains": 3}}}, "contains takes a non-empty string"),
    ({"metadata": {"confidence": {"gt": None}}}, "gt needs a value"),
    ({"metadata": {"pinned": {"gt": True}}}, "gt needs a number"),
    ({"metadata": {}}, "metadata filter must be a non-empty object"),
    ({"metadata": "decision"}, "metadata filter must be a non-empty object"),
    ({"metadata": {'ty"pe': "x"}}, "is not allowed"),
    ({"metadata": {"": "x"}}, "is not allowed"),
    ({"metadata": {"a\\b": "x"}}, "is not allowed"),
    ("not json at all", "filters are not valid JSON"),
    ('{"app_id": ', "filters are not valid JSON"),
    ('["app_id"]', "filters must be a JSON object, got list"),
    ("[" * 100_000 + "]" * 100_000, "filters are"),
    (42, "filters must be a JSON object, got int"),
]


def _deep(levels: int) -> dict:
    node: dict = {"app_id": "acme-api"}
    for _ in range(levels):
        node = {"AND": [node]}
    return node


@pytest.mark.parametrize("filters, message", MALFORMED, ids=lambda v: repr(v)[:60])
def test_malformed_filters_raise_a_clear_filter_error(seeded, filters, message):
    with pytest.raises(FilterError) as caught:
        compile_filters(filters, user_id="alice")
    assert message in str(caught.value)
    assert len(str(caught.value)) < 400


@pytest.mark.parametrize("levels", [100, 5_000])
def test_deep_nesting_is_refused(levels):
    with pytest.raises(FilterError, match="nested deeper"):
        compile_filters(_deep(levels), user_id="alice")


def test_nesting_within_the_limit_works(seeded):
    store, _ = seeded
    assert matching(store, _deep(30)) == {"ecs", "pnpm", "cache"}


def test_too_many_conditions_are_refused():
    with pytest.raises(FilterError, match="over"):
        compile_filters({"OR": [{"app_id": str(i)} for i in range(5_000)]}, user_id="alice")


@pytest.mark.parametrize(
    "filters",
    [
        {"user_id": "bob"},
        {"user_id": {"eq": "bob"}},
        {"user_id": {"in": ["alice", "bob"]}},
        {"AND": [{"app_id": "acme-api"}, {"user_id": "bob"}]},
        {"OR": [{"user_id": "alice"}, {"NOT": [{"user_id": "mallory"}]}]},
        '{"user_id": "bob"}',
    ],
)
def test_another_user_id_is_a_scope_error(filters):
    with pytest.raises(ScopeError, match="another user"):
        compile_filters(filters, user_id="alice")


INJECTION = [
    {"app_id": "x' OR '1'='1"},
    {"app_id": "acme-api'; DROP TABLE memories; --"},
    {"memory": {"contains": "%' OR 1=1 --"}},
    {"memory": {"icontains": "') OR 1=1 --"}},
    {"app_id": {"in": ["a') OR ('1'='1", "acme-web' --"]}},
    {"metadata": {"type') OR 1=1 --": "x"}},
    {"metadata": {"type'] OR 1=1; --": {"contains": "x"}}},
    {"metadata": {"$": "x"}},
    {"metadata": {"type": {"contains": "' OR json_extract(metadata, '$') IS NOT NULL --"}}},
    {"metadata": {"$.type": "decision"}},
    {"metadata": {"type[0]": "decision"}},
    {"metadata": {"*": "decision"}},
    {"created_at": {"gt": "2026-01-01T00:00:00Z' OR 1=1 --"}},
    {"id": "1 OR 1=1"},
    {"run_id": {"nin": ["' OR 1=1 --"]}, "agent_id": 'x" OR "1"="1'},
]


@pytest.mark.parametrize("filters", INJECTION, ids=lambda v: json.dumps(v)[:50])
def test_sql_looking_keys_and_values_are_plain_data(seeded, filters):
    store, _ = seeded
    try:
        compiled = compile_filters(filters, user_id="alice")
    except FilterError:
        return  # refused with a clear error is fine too; a SQLite error is not
    assert matching(store, filters) == set()
    assert "DROP" not in compiled.sql and "1=1" not in compiled.sql
    assert store.count("alice") == 4  # nothing was dropped or changed


def test_names_app_id_is_reported(seeded):
    assert compile_filters({"app_id": "acme-api"}, user_id="alice").names_app_id
    assert compile_filters({"OR": [{"app_id": "a"}, {"run_id": "b"}]}, user_id="alice").names_app_id
    assert not compile_filters({"metadata": {"type": "decision"}}, user_id="alice").names_app_id


def test_the_readme_filter_examples(run_cli, tmp_path):
    """docs/reads.md, "Filters": a metadata field is reached through
    `metadata`; a bare `type` key is refused with the list of known keys."""
    project = ["--project-id", "readme"]
    for text, kind in [
        ("Use PostgreSQL for the ledger", "decision"),
        ("Tabs, not spaces", "convention"),
        ("Fixed the flaky login test", "bug_fix"),
    ]:
        added = run_cli("mem0-memories", "add", text, "--metadata", json.dumps({"type": kind}), *project)
        assert added.returncode == 0, added.stderr
    listed = run_cli("mem0-memories", "list", *project, "--filters", '{"metadata": {"type": "decision"}}')
    assert listed.returncode == 0 and "Use PostgreSQL" in listed.stdout and "Tabs" not in listed.stdout
    both = run_cli(
        "mem0-memories",
        "list",
        *project,
        "--filters",
        json.dumps(
            {"AND": [{"metadata": {"type": {"in": ["decision", "convention"]}}}, {"created_at": {"gte": "2026-11-01"}}]}
        ),
    )
    assert both.returncode == 0 and "Use PostgreSQL" in both.stdout and "Tabs" in both.stdout
    assert "flaky" not in both.stdout
    refused = run_cli("mem0-memories", "list", *project, "--filters", '{"type": "decision"}')
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.startswith("mem0-memories: error: unknown filter key 'type'; known keys: AND, OR, NOT,")
