"""The two vector paths of a PostgreSQL store side by side (docs/stores.md, "Vectors").

    .venv/bin/python benchmarks/postgres_vectors.py --n 20000
    MEM0_BENCH_POSTGRES_URL=postgresql://… .venv/bin/python benchmarks/postgres_vectors.py --n 100000

Needs a server with pgvector (the one named by MEM0_BENCH_POSTGRES_URL, else a throwaway one
started as the tests start theirs, tests/pg_server.py, which has pgvector only if the
installed server does). One database holds `n` memories of one user and project with a
random 384-dimension unit vector each. Measured on that one database, alternating the paths
(A B A B, the machine is shared and noisy: read the ratios): `nearest` (the write path's
comparison) and a hybrid `search` p50, pgvector vs in process, the in-process one both cold
(a new store: its first search loads every vector) and warm; a new store as the product
opens it (its first search by pgvector, its in-process copy loaded meanwhile); storing 200 vectors with and
without the `embedding` column; and filling the column of every row (`backfill`).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "plugin"))
sys.path.insert(0, str(ROOT.parent / "tests"))

import numpy as np  # noqa: E402
import psycopg  # noqa: E402
from mem0_plugin.records import Memory  # noqa: E402
from mem0_plugin.store.postgres.store import PostgresStore  # noqa: E402
from mem0_plugin.store.postgres.vectors import VectorPath, backfill  # noqa: E402

MODEL, DIMS, USER, APP = "bench-model", 384, "alice", "acme"
WORDS = "deploy billing service api postgres redis cache queue worker token retry webhook".split()


def unit(rng: np.random.Generator, rows: int) -> np.ndarray:
    v = rng.normal(size=(rows, DIMS)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def fill(store: PostgresStore, n: int, rng: np.random.Generator) -> None:
    done = 0
    while done < n:
        block = min(2000, n - done)
        vectors = unit(rng, block)
        with store.write() as writer:
            rows = []
            for i in range(block):
                k = done + i
                text = f"{WORDS[k % len(WORDS)]} {WORDS[(k * 7) % len(WORDS)]} note {k}"
                stamp = f"2026-01-01T00:00:{k % 60:02d}+00:00"
                memory = Memory(
                    id=f"m{k:07d}", memory=text, user_id=USER, app_id=APP, created_at=stamp, updated_at=stamp
                )
                writer.insert(memory, actor="bench")
                rows.append((memory.id, text, vectors[i]))
            writer.store_vectors(USER, MODEL, rows)
        done += block
        print(f"  filled {done}/{n}", file=sys.stderr)


def timed(call, queries: np.ndarray) -> float:
    """p50 in ms of `call(query)` for each query."""
    times = []
    for query in queries:
        started = time.perf_counter()
        call(query)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def in_process(url: str) -> PostgresStore:
    store = PostgresStore(url)
    store.vectors = VectorPath(None, "benchmark")
    return store


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args(argv)
    server = None
    base = os.environ.get("MEM0_BENCH_POSTGRES_URL")
    if not base:
        from pg_server import PostgresServer

        server = PostgresServer.start()
        base = server.base_url
    name = f"mem0_bench_vectors_{os.getpid()}"
    with psycopg.connect(base, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")  # type: ignore[arg-type]
    head, _, query = base.partition("?")
    url = f"{head.rpartition('/')[0]}/{name}" + (f"?{query}" if query else "")
    try:
        rng = np.random.default_rng(1)
        with PostgresStore(url) as store:
            store.warm_in_background = False  # pgvector on every call: the figures of that path
            print(f"vector path: {store.vectors.describe()}")
            if not store.vectors.pgvector:
                print("this server has no pgvector: nothing to compare", file=sys.stderr)
                return 1
            fill(store, args.n, rng)
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("ANALYZE")
            queries = unit(rng, args.repeat)
            here = in_process(url)
            started = time.perf_counter()
            here.nearest(USER, queries[0], MODEL, top_k=5)
            cold = (time.perf_counter() - started) * 1000
            figures: dict[str, list[float]] = {
                k: [] for k in ("pg_nearest", "here_nearest", "pg_search", "here_search")
            }
            for _ in range(2):  # A B A B
                figures["pg_nearest"].append(timed(lambda q: store.nearest(USER, q, MODEL, top_k=5), queries))
                figures["here_nearest"].append(timed(lambda q: here.nearest(USER, q, MODEL, top_k=5), queries))
                figures["pg_search"].append(
                    timed(lambda q: store.search(USER, "deploy cache", query_vector=q, model=MODEL), queries)
                )
                figures["here_search"].append(
                    timed(lambda q: here.search(USER, "deploy cache", query_vector=q, model=MODEL), queries)
                )
            fresh = PostgresStore(url)  # as a new MCP server: pgvector first, its own copy loaded meanwhile
            started = time.perf_counter()
            fresh.nearest(USER, queries[0], MODEL, top_k=5)
            first = (time.perf_counter() - started) * 1000
            while (USER, MODEL) not in fresh._warm:
                time.sleep(0.01)
            warm_after = (time.perf_counter() - started) * 1000
            fresh.close()
            extra = unit(rng, 200)
            ids = [(f"m{k:07d}", f"{WORDS[k % len(WORDS)]} {WORDS[(k * 7) % len(WORDS)]} note {k}") for k in range(200)]

            def store_200(target: PostgresStore) -> float:
                started = time.perf_counter()
                with target.write() as writer:
                    writer.store_vectors(USER, MODEL, [(i, t, v) for (i, t), v in zip(ids, extra)])
                return (time.perf_counter() - started) * 1000

            writes = {"pg": [store_200(store), store_200(store)], "here": [store_200(here), store_200(here)]}
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("UPDATE vectors SET embedding = NULL")
                started = time.perf_counter()
                filled = backfill(conn)
                fill_seconds = time.perf_counter() - started
            here.close()
        print(f"n={args.n}, {DIMS} dimensions, p50 of {args.repeat} (two alternated rounds)")
        for key, values in figures.items():
            print(f"  {key:<14} {' / '.join(f'{v:.1f} ms' for v in values)}")
        print(f"  in-process nearest, cold (first call loads every vector): {cold:.0f} ms")
        print(
            f"  a new store: first nearest {first:.0f} ms (pgvector), in-process copy loaded after {warm_after:.0f} ms"
        )
        print(
            "  store 200 vectors: with embedding "
            + " / ".join(f"{v:.0f} ms" for v in writes["pg"])
            + ", without "
            + " / ".join(f"{v:.0f} ms" for v in writes["here"])
        )
        print(f"  backfill of {filled} rows: {fill_seconds:.1f} s")
    finally:
        with psycopg.connect(base, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")  # type: ignore[arg-type]
        if server is not None:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
