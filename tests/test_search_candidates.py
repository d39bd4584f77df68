"""Search's candidate walk (store/search.py) against an exhaustive scoring of every memory.

Correctness only, no timings: below the postings budget the results must be exactly the
exhaustive top k (score, then created_at, then id); with a tiny budget (so the rarest-words
selection, the widening and the batched walk all run) every result must still be in scope,
correctly scored and ordered, and as many as the exhaustive search finds; another user's or
project's memories never appear and never take a place.
"""

from __future__ import annotations

import math
import random
from datetime import datetime, timedelta, timezone

import pytest
from mem0_plugin.filters import compile_filters
from mem0_plugin.language.gloss import search_terms
from mem0_plugin.records import Memory
from mem0_plugin.store import ReadMode, SqliteStore
from mem0_plugin.store import search as lexical

WORDS = (
    "deploy billing service api postgres redis cache queue worker test fixture port "
    "config docker ecs vercel auth token session retry webhook stripe invoice"
).split()
START = datetime(2026, 1, 1, tzinfo=timezone.utc)


def fill(store: SqliteStore, rng: random.Random, count: int) -> None:
    scopes = [("alice", "acme-api")] * 6 + [("alice", "acme-web"), ("bob", "acme-api"), ("bob", "other")]
    with store.write() as writer:
        for i in range(count):
            user, app = rng.choice(scopes)
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 7)))
            stamp = (START + timedelta(minutes=rng.randint(0, 5000))).isoformat()  # ties on purpose
            state = rng.choice(["active"] * 8 + ["superseded", "merged"])
            writer.insert(
                Memory(
                    id=f"m{i:05d}",
                    memory=text,
                    user_id=user,
                    app_id=app,
                    metadata={"type": rng.choice(["decision", "convention"])},
                    created_at=stamp,
                    updated_at=stamp,
                    lifecycle_state=state,
                ),
                actor="test",
            )


def exhaustive(
    store: SqliteStore,
    user: str,
    query: str,
    filters,
    mode: ReadMode,
    top_k: int,
    threshold=None,
    stats_app: str | None = None,
) -> list[tuple[str, float]]:
    """The top `top_k` by BM25 (docs/search.md) of every memory in scope, computed here from the
    texts alone: the statistics counted over the user's memories (of `stats_app` only, if given)."""
    where = compile_filters(filters, user_id=user)
    sql, params = store._where(user, where, mode)
    rows = store._query(f"SELECT id, created_at, memory FROM memories WHERE {sql}", params)
    counted = store._query(
        "SELECT memory FROM memories WHERE user_id = ?" + ("" if stats_app is None else " AND app_id = ?"),
        [user] + ([] if stats_app is None else [stats_app]),
    )
    documents = [search_terms(text) for (text,) in counted]
    n, mean = len(documents), (sum(map(len, documents)) / len(documents) if documents else 1.0)
    terms = search_terms(query)
    idf = {t: math.log(1 + (n - (df := sum(t in d for d in documents)) + 0.5) / (df + 0.5)) for t in terms}
    mass = sum(idf.values())
    scored = []
    for mid, created, text in rows:
        own = search_terms(text)
        held = sum(idf[t] for t in terms & own) * 2.2 / (1 + 1.2 * (0.25 + 0.75 * max(len(own), 1) / (mean or 1.0)))
        score = 1.0 if text.strip() == query.strip() else round(min(1.0, held / mass), 6) if mass and held else 0.0
        if score > 0 and (threshold is None or score >= threshold):
            scored.append((-score, created, mid))
    return [(mid, -neg) for neg, _, mid in sorted(scored)[:top_k]]


CASES = [
    ("alice", None),
    ("alice", {"app_id": "acme-api"}),
    ("alice", {"app_id": "acme-web"}),
    ("bob", {"app_id": "acme-api"}),
    ("alice", {"metadata": {"type": "decision"}}),
]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    store = SqliteStore(tmp_path_factory.mktemp("search") / "s.sqlite3")
    fill(store, random.Random(7), 1500)
    yield store
    store.close()


@pytest.mark.parametrize("user,filters", CASES)
def test_below_the_budget_results_are_the_exhaustive_top_k(store, user, filters):
    rng = random.Random(hash((user, str(filters))) & 0xFFFF)
    for _ in range(40):
        query = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))
        mode, top_k = rng.choice(list(ReadMode)), rng.choice([1, 3, 10, 50])
        where = compile_filters(filters, user_id=user)
        got = [(m.id, s) for m, s in store.lexical_search(user, query, where, mode, top_k)]
        assert got == exhaustive(store, user, query, filters, mode, top_k), query
        app = (filters or {}).get("app_id")
        if app:  # a search confined to a project is weighed by that project's statistics
            got = [(m.id, s) for m, s in store.lexical_search(user, query, where, mode, top_k, app_id=app)]
            assert got == exhaustive(store, user, query, filters, mode, top_k, stats_app=app), query


@pytest.mark.parametrize("budget", [1, 30, 200])
@pytest.mark.parametrize("user,filters", CASES)
def test_with_a_small_budget_results_stay_in_scope_scored_and_ordered(store, monkeypatch, budget, user, filters):
    monkeypatch.setattr(lexical, "SEARCH_BUDGET", budget)
    monkeypatch.setattr(lexical, "FIRST_BATCH", 2)
    monkeypatch.setattr(lexical, "FIRST_LIMIT", 3)
    rng = random.Random(budget)
    for _ in range(25):
        query = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))
        mode, top_k = rng.choice(list(ReadMode)), rng.choice([1, 5, 20])
        threshold = rng.choice([None, None, 0.3])
        where = compile_filters(filters, user_id=user)
        got = store.lexical_search(user, query, where, mode, top_k, threshold)
        expected = exhaustive(store, user, query, filters, mode, 10_000, threshold)
        allowed = dict(expected)
        assert len(got) == min(top_k, len(expected))
        for memory, score in got:
            assert memory.user_id == user and memory.lifecycle_state in mode.value
            assert allowed[memory.id] == score
        keys = [(-s, m.created_at, m.id) for m, s in got]
        assert keys == sorted(keys)


def test_other_users_matches_never_crowd_out_the_callers(tmp_path, monkeypatch):
    monkeypatch.setattr(lexical, "FIRST_BATCH", 2)
    monkeypatch.setattr(lexical, "FIRST_LIMIT", 4)
    store = SqliteStore(tmp_path / "s.sqlite3")
    with store.write() as writer:
        for i in range(300):  # bob's exact matches rank first among the candidates
            writer.insert(
                Memory(
                    id=f"b{i:04d}",
                    memory="deploy billing",
                    user_id="bob",
                    app_id="p",
                    created_at=START.isoformat(),
                    updated_at=START.isoformat(),
                ),
                actor="t",
            )
        writer.insert(
            Memory(
                id="a1",
                memory="deploy billing service to ecs today",
                user_id="alice",
                app_id="p",
                created_at=START.isoformat(),
                updated_at=START.isoformat(),
            ),
            actor="t",
        )
    hits = store.search("alice", "deploy billing", compile_filters(None, user_id="alice"), ReadMode.DEFAULT, 10)
    assert [m.id for m, _ in hits] == ["a1"]
    store.close()


def test_a_query_of_many_distinct_words_is_answered(store):
    rng = random.Random(3)
    query = " ".join(f"word{rng.randint(0, 10**6)}" for _ in range(lexical.MAX_RANKED_TERMS + 50)) + " deploy"
    hits = store.lexical_search("alice", query, compile_filters(None, user_id="alice"), ReadMode.DEFAULT, 5)
    assert hits == [(m, s) for m, s in hits if "deploy" in m.memory]
    assert [(m.id, s) for m, s in hits] == exhaustive(store, "alice", query, None, ReadMode.DEFAULT, 5)
