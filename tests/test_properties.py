"""Property tests (hypothesis): the mem0.md parser never raises, every filter compiles or is refused
cleanly (and compiled SQL runs), and dream's analysis keeps its invariants on random memory sets.

Example counts are modest so the suite stays fast in CI; `deadline=None` because the first
examples pay for imports and a store.
"""

from __future__ import annotations

import json
import math
import os
import random
import tempfile
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mem0_plugin import mem0_config, operations
from mem0_plugin.dream.analysis import analyse
from mem0_plugin.dream.plan import plan_to_json
from mem0_plugin.dream.plan_file import plan_from_json
from mem0_plugin.dream.retention import DEFAULT_POLICY, choose_policy
from mem0_plugin.errors import FilterError, InvalidInputError, ScopeError
from mem0_plugin.filters import LOGICAL, OPERATORS, compile_filters
from mem0_plugin.identity import resolve_identity
from mem0_plugin.language.text import significant_words
from mem0_plugin.records import Memory, takes_part
from mem0_plugin.store import ReadMode, SqliteStore

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)


# ------------------------------------------------------------------ mem0.md never raises


def check_policies(policies: object) -> None:
    assert isinstance(policies, dict)
    for key, value in policies.items():
        assert isinstance(key, str) and key
        assert value is None or (
            isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= mem0_config.MAX_RETENTION_DAYS
        )


retention_line = st.one_of(
    st.builds(
        lambda c, n, unit: f"{c}: {n}{unit}",
        st.from_regex(r"[A-Za-z0-9_.\-]{1,12}", fullmatch=True),
        st.one_of(st.integers(min_value=0, max_value=10**30), st.just(99999999999)),
        st.sampled_from(["d", "D", " d", "", "days", "d # note"]),
    ),
    st.builds(lambda c: f"{c}: forever", st.text(max_size=12)),
    st.text(max_size=40),
)
mem0_md_text = st.one_of(
    st.text(max_size=400),
    st.builds(
        lambda head, lines, tail: head + "\n## Retention\n" + "\n".join(lines) + tail,
        st.text(max_size=40),
        st.lists(retention_line, max_size=8),
        st.sampled_from(["", "\n## Other\nx: 1d", "\n##", "\n## retention\nsession_state: 3d"]),
    ),
)


@settings(max_examples=300, deadline=None)
@given(mem0_md_text)
def test_parse_retention_never_raises_and_returns_days_or_forever(content):
    policies = mem0_config.parse_retention(content)
    check_policies(policies)
    mem0_config.parse_identity(content)
    mem0_config.parse_categories(content)
    policy, source = choose_policy(policies)
    assert (policy, source) == ((policies, "mem0.md") if policies else (dict(DEFAULT_POLICY), "default"))


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.binary(max_size=2000), mem0_md_text.map(lambda t: t.encode("utf-8", "surrogatepass"))))
def test_load_retention_policies_never_raises_on_any_bytes(content):
    with tempfile.TemporaryDirectory() as root:
        with open(os.path.join(root, "mem0.md"), "wb") as handle:
            handle.write(content)
        check_policies(mem0_config.load_retention_policies(root))


@settings(max_examples=100, deadline=None)
@given(st.one_of(st.none(), st.integers(), st.binary(max_size=50), st.lists(st.text(max_size=5), max_size=3)))
def test_parse_retention_of_a_non_string_is_empty(value):
    assert mem0_config.parse_retention(value) == {}


# ------------------------------------------------------------------ filters compile or are refused cleanly

MARK = "Zq"  # every generated free-text value carries it, so it can be looked for in the SQL
KEYS = [
    *LOGICAL,
    "user_id",
    "app_id",
    "agent_id",
    "run_id",
    "id",
    "memory",
    "lifecycle_state",
    "created_at",
    "updated_at",
    "metadata",
    "and",
    "Or",
    "type",
    "",
    "*",
]
free_text = st.text(max_size=12).map(lambda t: MARK + t)
scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    free_text,
    st.sampled_from(["alice", "bob", "*", "acme-api", "2026-01-01T00:00:00Z", "2026-13-45", "", "active"]),
)
key = st.one_of(st.sampled_from(KEYS), st.sampled_from(OPERATORS), free_text)
json_ish = st.recursive(
    scalar,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(key, children, max_size=4)),
    max_leaves=25,
)
filter_like = st.one_of(
    json_ish,
    st.dictionaries(
        st.sampled_from(["app_id", "created_at", "metadata", "id", "user_id"]),
        st.one_of(
            scalar,
            st.dictionaries(st.sampled_from(OPERATORS), json_ish, max_size=2),
            st.dictionaries(
                free_text,
                st.one_of(scalar, st.dictionaries(st.sampled_from(OPERATORS), json_ish, max_size=2)),
                max_size=2,
            ),
        ),
        min_size=1,
        max_size=3,
    ),
    st.builds(lambda op, items: {op: items}, st.sampled_from(LOGICAL), st.lists(json_ish, max_size=3)),
)


@pytest.fixture(scope="module")
def filter_store(tmp_path_factory):
    db = tmp_path_factory.mktemp("filters") / "memories.sqlite3"
    store = SqliteStore(db)
    stamp = NOW.isoformat()
    with store.write() as writer:
        for index, metadata in enumerate(
            [
                {},
                {"type": "decision", "confidence": 0.9},
                {"tags": ["a", MARK]},
                {"n": 3, "flag": True, "nested": {"x": 1}},
                {"type": None},
            ]
        ):
            writer.insert(
                Memory(
                    id=f"f{index}",
                    memory=f"memory {index} {MARK}",
                    user_id="alice",
                    app_id="acme-api" if index % 2 else "other",
                    metadata=metadata,
                    created_at=stamp,
                    updated_at=stamp,
                ),
                actor="test",
            )
        writer.insert(
            Memory(id="bob1", memory="bob's", user_id="bob", app_id="acme-api", created_at=stamp, updated_at=stamp),
            actor="test",
        )
    identity = resolve_identity(user_id="alice", project_id="acme-api", store=f"sqlite:///{db}", cwd=str(db.parent))
    yield operations.Caller(store, identity)
    store.close()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(filter_like)
def test_any_filter_compiles_and_runs_or_is_refused_with_the_clear_error(filter_store, filters):
    try:
        compiled = compile_filters(filters, user_id="alice")
    except (FilterError, ScopeError) as exc:
        assert str(exc) and "Traceback" not in str(exc)
        return
    assert MARK not in compiled.sql, "a filter value reached the SQL text"
    for mode in ReadMode:
        page = filter_store.store.page("alice", compiled, mode, 1, 10)  # the SQL runs
        assert all(m.user_id == "alice" for m in page.results)
    hits = filter_store.store.search("alice", f"memory {MARK}", compiled)
    assert all(m.user_id == "alice" for m, _ in hits)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(filter_like, filter_like.map(lambda f: json.dumps(f, allow_nan=True)), st.text(max_size=30)))
def test_tools_given_any_filter_answer_or_raise_a_clear_error(filter_store, filters):
    """Through the tool functions (JSON text accepted too): an answer confined to alice, or an input error."""
    for call in (
        lambda: operations.get_memories(filter_store, filters),
        lambda: operations.search_memories(filter_store, "memory", filters),
    ):
        try:
            answer = call()
        except (InvalidInputError, ScopeError) as exc:
            assert str(exc)
            continue
        assert all(r["user_id"] == "alice" for r in answer["results"])
        assert "bob1" not in {r["id"] for r in answer["results"]}


# ------------------------------------------------------------------ analysis invariants

SENTENCES = [
    "Use PostgreSQL for auth",
    "Auth DB is PostgreSQL",
    "use postgresql for auth",
    "Use MySQL for auth",
    "Run tests with pytest -q",
    "Tests are run with pytest -q",
    "Run tests with pytest -x",
    "Use tabs for indentation",
    "Tabs are used for indentation",
    "Never commit directly to main",
    "Don't commit directly to main",
    "Deploy to ECS",
    "Deploy to Vercel",
    "Deploy API to ECS",
    "API listens on port 8080",
    "API listens on port 3000",
    "Use Redis",
    "Don't use Redis",
    "Project uses Python v2",
    "Project uses Python v3",
    "lives in Tokyo",
    "moved to Osaka",
    "Config lives in src/app/config.py",
    "Config lives in src/core/config.py",
    "maybe something about stuff",
    "Working on the login form refactor",
    "Prefer small pull requests",
]
VOCABULARY = [
    "use",
    "the",
    "for",
    "auth",
    "db",
    "PostgreSQL",
    "redis",
    "cache",
    "tests",
    "run",
    "with",
    "pytest",
    "don't",
    "never",
    "only",
    "before",
    "deploy",
    "to",
    "ECS",
    "Vercel",
    "port",
    "8080",
    "3000",
    "v2",
    "library",
    "tool",
    "project",
    "is",
    "are",
    "logs",
    "src/app.py",
    "`make`",
    "\x1b[31m",
    "é",
    "ünïcödé",
    "\u202e",
    "\r",
    "Tokyo",
]
texts = st.one_of(
    st.sampled_from(SENTENCES),
    st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=7).map(" ".join),
    st.sampled_from(SENTENCES).map(str.upper),
    st.text(min_size=1, max_size=30),
)
odd_values = st.sampled_from(["high", math.nan, math.inf, -math.inf, True, False, -1, 2, 42, None, [0.5], {"v": 1}])
metadata_strategy = st.fixed_dictionaries(
    {},
    optional={
        "type": st.one_of(
            st.sampled_from(["decision", "convention", "session_state", "bug_fix", "", "  "]), odd_values
        ),
        "confidence": st.one_of(st.floats(min_value=0, max_value=1), odd_values),
        "pinned": st.one_of(st.booleans(), st.just("yes")),
        "exclude_from_dream": st.one_of(st.booleans(), st.just(1)),
        "source": st.sampled_from(["mem0-dream-auto", "mem0-dream", "cli", 7]),
    },
)
created_strategy = st.one_of(
    st.integers(min_value=-30, max_value=400).map(lambda d: (NOW - timedelta(days=d, minutes=7)).isoformat()),
    st.sampled_from(
        [
            "",
            "not a date",
            "2026-02-30T00:00:00",
            "9999-12-31T23:59:59+00:00",
            "0001-01-01T00:00:00Z",
            "2026-11-29T12:00:00-23:59",
        ]
    ),
)


@st.composite
def memory_sets(draw) -> list[Memory]:
    count = draw(st.integers(min_value=0, max_value=14))
    memories = []
    for index in range(count):
        created = draw(created_strategy)
        memories.append(
            Memory(
                id=f"{index:02d}-{draw(st.sampled_from(['a', 'b', 'c']))}",
                memory=draw(texts),
                user_id="alice",
                app_id="acme-api",
                metadata=draw(metadata_strategy),
                created_at=created,
                updated_at=created,
                lifecycle_state=draw(st.sampled_from(["active"] * 6 + ["merged", "superseded"])),
                immutable=draw(st.booleans().map(lambda b: b and draw(st.integers(0, 4)) == 0)),
                version=draw(st.integers(min_value=1, max_value=3)),
            )
        )
    return memories


def plan_for(memories, policy=None):
    return analyse(
        memories,
        DEFAULT_POLICY if policy is None else policy,
        NOW,
        user_id="alice",
        project_id="acme-api",
        policy_source="default",
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    memory_sets(),
    st.randoms(use_true_random=False),
    st.sampled_from([None, {}, {"decision": 0, "convention": None, "session_state": 36500}]),
)
def test_analysis_invariants_on_random_memory_sets(memories, rng, policy):
    plan = plan_for(memories, policy)
    by_id = {m.id: m for m in memories}

    # each memory takes part in at most one action, and protected ones in none
    named = list(plan.memory_ids)
    assert len(named) == len(set(named))
    for memory_id in named:
        memory = by_id[memory_id]
        assert takes_part(memory), memory
        assert memory.lifecycle_state == "active" and not memory.immutable
        assert memory.metadata.get("pinned") is not True and memory.metadata.get("exclude_from_dream") is not True
        assert memory.metadata.get("source") != "mem0-dream-auto"
    # candidates (pairs and synthesis groups for a judge) are fingerprinted too, and share no
    # memory with an action or with one another
    asked = [i for candidate in plan.candidates for i in candidate.ids]
    assert len(asked) == len(set(asked)) and not set(asked) & set(named)
    assert set(plan.fingerprints) == set(named) | set(asked)
    assert all(plan.fingerprints[i] == str(by_id[i].version) for i in plan.fingerprints)

    # an action never spans two types; a merge keeps every significant word of its sources
    for merge in plan.merges:
        assert len(merge.ids) >= 2 and {by_id[i].type for i in merge.ids} == {merge.type}
        kept = significant_words(merge.merged_text)
        for memory_id in merge.ids:
            assert significant_words(by_id[memory_id].memory) <= kept, (merge, by_id[memory_id].memory)
        assert merge.confidence is None or 0 <= merge.confidence <= 1
    for conflict in plan.conflicts:
        assert {by_id[i].type for i in conflict.ids} == {conflict.type} and conflict.likely_winner == conflict.ids[0]
    assert plan.memory_count == len(memories)

    # the plan is a pure function of the set: any input order gives the same JSON
    text = plan_to_json(plan)
    shuffled = list(memories)
    rng.shuffle(shuffled)
    assert plan_to_json(plan_for(shuffled, policy)) == text
    # and the JSON round-trips
    assert plan_from_json(text) == plan


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(SENTENCES), min_size=2, max_size=40), st.randoms(use_true_random=False))
def test_analysis_finds_actions_on_realistic_sets_and_stays_order_independent(sentences, rng):
    """Many near-duplicates of a few facts: merges and conflicts do appear, and the invariants hold."""
    memories = [
        Memory(
            id=f"r{i:03d}",
            memory=text,
            user_id="alice",
            app_id="acme-api",
            metadata={"type": "decision", "confidence": rng.choice([0.2, 0.5, 0.9])},
            created_at=(NOW - timedelta(days=rng.randint(0, 200))).isoformat(),
            updated_at=NOW.isoformat(),
        )
        for i, text in enumerate(sentences)
    ]
    plan = plan_for(memories)
    named = list(plan.memory_ids)
    assert len(named) == len(set(named))
    if len(set(sentences)) < len(sentences):
        assert plan.merges, "identical texts of one type always merge"
    for merge in plan.merges:
        union = frozenset().union(*(significant_words(m.memory) for m in memories if m.id in merge.ids))
        assert union <= significant_words(merge.merged_text)
    rng.shuffle(memories)
    assert plan_to_json(plan_for(memories)) == plan_to_json(plan)


def test_random_sets_do_produce_every_kind_of_action():
    """A guard on the strategies above: they are not so random that the invariants hold vacuously."""
    rng = random.Random(7)
    kinds = {"merges": 0, "conflicts": 0, "prunes": 0}
    for _ in range(60):
        memories = [
            Memory(
                id=f"x{i}",
                memory=rng.choice(SENTENCES),
                user_id="alice",
                app_id="acme-api",
                metadata={"type": rng.choice(["decision", "session_state"]), "confidence": rng.choice([0.1, 0.9])},
                created_at=(NOW - timedelta(days=rng.randint(0, 200))).isoformat(),
            )
            for i in range(12)
        ]
        plan = plan_for(memories)
        for kind in kinds:
            kinds[kind] += len(getattr(plan, kind))
    assert all(kinds.values()), kinds


def test_the_guarantees_name_tests_that_exist():
    """Every `file.py::test_name` docs/guarantees.md cites is a test of that file."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent
    section = (root.parent / "docs" / "guarantees.md").read_text(encoding="utf-8").split("# Guarantees", 1)[1]
    cited = re.findall(r"`(test_\w+\.py)::(test_\w+)`", section)
    assert len(cited) >= 20
    for file_name, test_name in cited:
        source = (root / file_name).read_text(encoding="utf-8")
        assert re.search(rf"^def {test_name}\(", source, re.M), f"{file_name}::{test_name} does not exist"
