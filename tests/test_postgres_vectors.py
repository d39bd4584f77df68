"""Vectors on a PostgreSQL store (docs/stores.md, "Vectors"): pgvector when the server has it,
detected at open, else ranked in the process, with the same results either way.

The detection-negative tests run wherever the test server lacks pgvector (CI's PostgreSQL 15
from Debian has no pgvector package). The pgvector tests run where the server offers the
extension (e.g. `MEM0_TEST_POSTGRES_URL` naming one that has it) and are skipped, saying
so, elsewhere. Each pgvector test compares the server's ranking with the in-process one on
the same database: a second store object told to rank in the process.
"""

from __future__ import annotations

import os
import random
import time
from datetime import datetime, timedelta, timezone

import numpy as np
import psycopg
import pytest
from mem0_plugin.filters import compile_filters
from mem0_plugin.records import Memory
from mem0_plugin.store import ReadMode
from mem0_plugin.store.postgres.store import PostgresStore
from mem0_plugin.store.postgres.vectors import NOT_INSTALLED, VectorPath
from mem0_plugin.store.vectors import decode_matrix
from psycopg.conninfo import make_conninfo

START = datetime(2026, 1, 1, tzinfo=timezone.utc)
WORDS = "deploy billing service api postgres redis cache queue worker token retry webhook".split()
MODEL = "test-model"
DIMS = 48


def offered(server) -> bool:
    with psycopg.connect(server.base_url, autocommit=True) as conn:
        return conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone() is not None


@pytest.fixture
def pgvector_url(postgres_server, postgres_url) -> str:
    if not offered(postgres_server):
        pytest.skip("the test PostgreSQL server has no pgvector (set MEM0_TEST_POSTGRES_URL to one that has it)")
    return postgres_url


@pytest.fixture
def no_pgvector_url(postgres_server, postgres_url) -> str:
    if offered(postgres_server):
        pytest.skip("the test PostgreSQL server has pgvector: the detection-negative path needs one without it")
    return postgres_url


def unit(rng: np.random.Generator, dims: int = DIMS) -> np.ndarray:
    v = rng.normal(size=dims).astype(np.float32)
    return v / np.linalg.norm(v)


def fill(store: PostgresStore, count: int, seed: int = 3) -> list[np.ndarray]:
    """`count` memories of alice and bob in two projects and three states, each with a vector;
    every tenth repeats an earlier vector (exact ties)."""
    rng, pick = np.random.default_rng(seed), random.Random(seed)
    vectors: list[np.ndarray] = []
    with store.write() as writer:
        for i in range(count):
            user, app = pick.choice([("alice", "p1")] * 4 + [("alice", "p2"), ("bob", "p1")])
            stamp = (START + timedelta(minutes=i)).isoformat()
            text = " ".join(pick.choice(WORDS) for _ in range(pick.randint(1, 5))) + f" n{i}"
            memory = Memory(
                id=f"m{i:04d}",
                memory=text,
                user_id=user,
                app_id=app,
                created_at=stamp,
                updated_at=stamp,
                lifecycle_state=pick.choice(["active"] * 6 + ["merged", "superseded"]),
            )
            writer.insert(memory, actor="test")
            vector = vectors[pick.randrange(len(vectors))] if vectors and i % 10 == 9 else unit(rng)
            vectors.append(vector)
            writer.store_vectors(user, MODEL, [(memory.id, text, vector)])
    return vectors


def pgvector_only(url: str) -> PostgresStore:
    """A store that ranks by pgvector on every call (no in-process ranking loaded meanwhile)."""
    store = PostgresStore(url)
    store.warm_in_background = False
    return store


def in_process(url: str) -> PostgresStore:
    store = PostgresStore(url)
    store.vectors = VectorPath(None, "told to rank in the process (test)")
    return store


def same(a: list, b: list) -> None:
    assert [m.id for m, _ in a] == [m.id for m, _ in b]
    assert np.allclose([s for _, s in a], [s for _, s in b], rtol=0, atol=1e-6)


def test_a_server_without_pgvector_ranks_in_the_process_and_health_says_so(no_pgvector_url, run_cli, tmp_path):
    with PostgresStore(no_pgvector_url) as store:
        assert store.vectors == VectorPath(None, NOT_INSTALLED)
        fill(store, 30)
        query = unit(np.random.default_rng(9))
        hits = store.nearest("alice", query, MODEL, top_k=5)
        assert len(hits) == 5 and [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
        columns = {r[0] for r in store._query("SELECT attname FROM pg_attribute WHERE attrelid = 'vectors'::regclass")}
        assert "embedding" not in columns
    done = run_cli("mem0-health", "--store", no_pgvector_url, "--user-id", "alice", cwd=str(tmp_path))
    assert "vectors: ranked in process (pgvector not installed on the server)" in done.stdout


def test_a_user_who_may_not_create_the_extension_ranks_in_the_process(postgres_server):
    """A server that has pgvector, a database without it, and a user who may not create it."""
    if not offered(postgres_server):
        pytest.skip("the test PostgreSQL server has no pgvector: nothing for the user to be refused")
    name = f"mem0_plain_{os.getpid()}"
    postgres_server._admin(
        "DROP ROLE IF EXISTS mem0_plain", "CREATE ROLE mem0_plain LOGIN", f"CREATE DATABASE {name} OWNER mem0_plain"
    )
    try:
        url = make_conninfo(postgres_server.url(name), user="mem0_plain")
        with PostgresStore(url) as store:
            assert not store.vectors.pgvector
            assert "this user may not enable it" in store.vectors.describe()
            with store.write() as writer:  # vectors are stored and ranked as without pgvector
                memory = Memory(id="m1", memory="one", user_id="alice", created_at=START.isoformat(),
                                updated_at=START.isoformat())  # fmt: skip
                writer.insert(memory, actor="test")
                writer.store_vectors("alice", MODEL, [("m1", "one", unit(np.random.default_rng(1)))])
            assert [m.id for m, _ in store.nearest("alice", unit(np.random.default_rng(2)), MODEL)] == ["m1"]
    finally:
        postgres_server._admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)", "DROP ROLE IF EXISTS mem0_plain")


def test_pgvector_turned_off_is_neither_created_nor_used(postgres_server, monkeypatch, run_cli, tmp_path):
    """`MEM0_PGVECTOR=off`, on any server: a database without the extension stays without it."""
    name = f"mem0_off_{os.getpid()}"
    postgres_server._admin(f"DROP DATABASE IF EXISTS {name}", f"CREATE DATABASE {name}")
    monkeypatch.setenv("MEM0_PGVECTOR", "off")
    try:
        url = postgres_server.url(name)
        with PostgresStore(url) as store:
            assert store.vectors == VectorPath(None, "pgvector turned off by MEM0_PGVECTOR=off")
            assert store._query("SELECT count(*) FROM pg_extension WHERE extname = 'vector'") == [(0,)]
            fill(store, 30)
            assert len(store.nearest("alice", unit(np.random.default_rng(4)), MODEL, top_k=5)) == 5
        done = run_cli("mem0-health", "--store", url, "--user-id", "alice", cwd=str(tmp_path))
        assert "vectors: ranked in process (pgvector turned off by MEM0_PGVECTOR=off)" in done.stdout
    finally:
        postgres_server._admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_pgvector_is_detected_created_and_named_by_health(pgvector_url, run_cli, tmp_path):
    with PostgresStore(pgvector_url) as store:
        assert store.vectors.pgvector
        version = store.vectors.version
        assert store._query("SELECT extversion FROM pg_extension WHERE extname = 'vector'") == [(version,)]
    with PostgresStore(pgvector_url, readonly=True) as readonly:
        assert readonly.vectors == VectorPath(version, "")
    done = run_cli("mem0-health", "--store", pgvector_url, "--user-id", "alice", cwd=str(tmp_path))
    assert f"vectors: pgvector {version}" in done.stdout


def test_pgvector_ranking_equals_the_in_process_ranking(pgvector_url):
    with pgvector_only(pgvector_url) as store, in_process(pgvector_url) as here:
        assert store.vectors.pgvector and not here.vectors.pgvector
        vectors = fill(store, 300)
        rng = np.random.default_rng(11)
        queries = [unit(rng), vectors[9], vectors[42]]  # the last two tie with their copies
        scopes = [
            ("alice", None, ReadMode.DEFAULT),
            ("alice", {"app_id": "p2"}, ReadMode.INCLUDE_MERGED),
            ("bob", None, ReadMode.DEFAULT),
        ]
        for query in queries:
            for user, filters, mode in scopes:
                where = compile_filters(filters, user_id=user)
                for top_k in (1, 40):
                    same(
                        store.nearest(user, query, MODEL, where, mode, top_k),
                        here.nearest(user, query, MODEL, where, mode, top_k),
                    )
                for words in ("deploy cache", "n42"):
                    same(
                        store.search(user, words, where, mode, 10, query_vector=query, model=MODEL),
                        here.search(user, words, where, mode, 10, query_vector=query, model=MODEL),
                    )


def test_vectors_written_without_the_column_are_found_and_filled_at_the_next_open(pgvector_url):
    with pgvector_only(pgvector_url) as store, in_process(pgvector_url) as here:
        fill(store, 80)
        # as a process that predates the column would leave them
        with psycopg.connect(pgvector_url, autocommit=True) as conn:
            conn.execute("UPDATE vectors SET embedding = NULL WHERE seq % 2 = 0")
        query = unit(np.random.default_rng(5))
        same(store.nearest("alice", query, MODEL, top_k=12), here.nearest("alice", query, MODEL, top_k=12))
        decoded = store._query("SELECT mem0_half_vector(vector)::text, vector FROM vectors WHERE seq % 2 = 0")
        for text, blob in decoded:
            assert np.array_equal(
                np.array(text.strip("[]").split(","), dtype=np.float32), decode_matrix([bytes(blob)])[0]
            )
    with PostgresStore(pgvector_url) as reopened:
        assert reopened._query("SELECT count(*) FROM vectors WHERE embedding IS NULL") == [(0,)]
        rows = reopened._query("SELECT embedding::text, vector FROM vectors")
        for text, blob in rows:
            assert np.array_equal(
                np.array(text.strip("[]").split(","), dtype=np.float32), decode_matrix([bytes(blob)])[0]
            )


def test_models_of_different_dimensions_share_the_column(pgvector_url):
    rng = np.random.default_rng(2)
    with pgvector_only(pgvector_url) as store, in_process(pgvector_url) as here:
        with store.write() as writer:
            for i in range(20):
                stamp = (START + timedelta(minutes=i)).isoformat()
                memory = Memory(id=f"d{i:02d}", memory=f"text {i}", user_id="alice", created_at=stamp, updated_at=stamp)
                writer.insert(memory, actor="test")
                writer.store_vectors("alice", "small", [(memory.id, memory.memory, unit(rng, 8))])
        with store.write() as writer:  # a second model's vectors replace some of the first's
            writer.store_vectors(
                "alice", "large", [(f"d{i:02d}", f"text {i}", unit(rng, 384)) for i in range(0, 20, 2)]
            )
        for model, dims in (("small", 8), ("large", 384)):
            query = unit(rng, dims)
            same(store.nearest("alice", query, model, top_k=5), here.nearest("alice", query, model, top_k=5))


def test_a_process_ranks_by_pgvector_until_its_own_copy_of_the_vectors_is_loaded(pgvector_url):
    with PostgresStore(pgvector_url) as store:
        fill(store, 60)
        query = unit(np.random.default_rng(8))
        first = store.nearest("alice", query, MODEL, top_k=8)  # by pgvector; a thread loads the vectors
        deadline = time.monotonic() + 10
        while ("alice", MODEL) not in store._warm and time.monotonic() < deadline:
            time.sleep(0.01)
        assert ("alice", MODEL) in store._warm
        assert len(store.vector_index("alice", MODEL).position()) == len(
            store._query("SELECT id FROM vectors WHERE user_id = 'alice'")
        )
        same(first, store.nearest("alice", query, MODEL, top_k=8))  # in the process now: the same answer
