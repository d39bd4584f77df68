"""The PostgreSQL store beside the SQLite one (docs/stores.md): the figures of a team store.

    .venv/bin/python benchmarks/postgres.py --n 10000            # a local PostgreSQL is started
    MEM0_BENCH_POSTGRES_URL=postgresql://… .venv/bin/python benchmarks/postgres.py --n 100000

Both stores hold the same `generate.py` memories (`n` in the benchmark scope, plus another
project's and another user's). Measured on each, with the product's own code
(`operations.*`, what the MCP tools call): `search_memories` p50, `add_memory` p50, a page of
200 anywhere in the scope (p50 and worst), and `mem0-dream --plan` (a subprocess, median of
`--repeat`). Without MEM0_BENCH_POSTGRES_URL a throwaway server is started as the tests start
one (tests/pg_server.py). The machine is shared and noisy: read the ratio.

A page at 1M memories (any depth, beside SQLite) has a script of its own that builds both
stores once and keeps them: benchmarks/postgres_pages.py.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT.parent / "plugin"))
sys.path.insert(0, str(ROOT.parent / "tests"))

import generate as gen  # noqa: E402
from mem0_plugin import operations, transfer  # noqa: E402
from mem0_plugin.identity import Identity  # noqa: E402
from mem0_plugin.store import open_store  # noqa: E402

BIN = Path(sys.executable).parent


def caller(url: str, cwd: Path) -> operations.Caller:
    identity = Identity(user_id=gen.USER, project_id=gen.PROJECT, branch="main", home=cwd, store_url=url, cwd=cwd)
    return operations.Caller(open_store(url), identity, actor="bench")


def p50(values: list[float]) -> float:
    return statistics.median(values) * 1000


def measure(url: str, args, cwd: Path) -> dict[str, float]:
    c = caller(url, cwd)
    queries = gen.queries(args.queries, args.seed)
    for query in queries[:5]:
        operations.search_memories(c, query)  # warm
    search = []
    for query in queries:
        started = time.perf_counter()
        operations.search_memories(c, query)
        search.append(time.perf_counter() - started)
    adds = []
    for i in range(args.adds):
        started = time.perf_counter()
        operations.add_memory(c, f"bench add {i}: the {i % 7} worker listens on port {9000 + i}", infer=False)
        adds.append(time.perf_counter() - started)
    count = operations.get_memories(c, None, page=1, page_size=1)["count"]
    last = max(1, -(-count // 200))
    pages = []
    rng = random.Random(args.seed)
    for page in [1, last, *(rng.randint(1, last) for _ in range(args.pages))]:
        started = time.perf_counter()
        operations.get_memories(c, None, page=page, page_size=200)
        pages.append(time.perf_counter() - started)
    c.store.close()
    plans = []
    env = {**os.environ, "MEM0_STORE": url, "MEM0_USER_ID": gen.USER, "MEM0_PROJECT_ID": gen.PROJECT}
    env["MEM0_EMBEDDER"] = "none"
    for _ in range(args.repeat):
        started = time.perf_counter()
        done = subprocess.run(
            [str(BIN / "mem0-dream"), "--plan", "--json", "--now", gen.NOW.isoformat()],
            env=env,
            cwd=cwd,
            capture_output=True,
            timeout=3600,
        )
        assert done.returncode == 0, done.stderr
        plans.append(time.perf_counter() - started)
    return {
        "memories": count,
        "search_p50_ms": p50(search),
        "add_p50_ms": p50(adds),
        "page200_p50_ms": p50(pages),
        "page200_max_ms": max(pages) * 1000,
        "plan_s": statistics.median(plans),
    }


def load(url: str, source: str, cwd: Path) -> None:
    """Every user's memories of the generated SQLite store, copied as they are."""
    for user, project in ((gen.USER, gen.PROJECT), (gen.USER, gen.OTHER_PROJECT), (gen.OTHER_USER, gen.PROJECT)):
        identity = Identity(user_id=user, project_id=project, branch="main", home=cwd, store_url=source, cwd=cwd)
        with open_store(source) as from_store, open_store(url) as to_store:
            transfer.copy_scope(operations.Caller(from_store, identity, actor="bench"), to_store)
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:  # what autovacuum does a minute after a bulk load
        conn.execute("ANALYZE")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=gen.DEFAULT_SEED)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--adds", type=int, default=100)
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    server = None
    url = os.environ.get("MEM0_BENCH_POSTGRES_URL")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sqlite_path = work / "bench.sqlite3"
        sqlite_path.write_bytes(gen.build_store(args.n, args.seed).read_bytes())
        if url is None:
            from pg_server import PostgresServer

            server = PostgresServer.start()
            url = server.fresh_database()
        try:
            started = time.perf_counter()
            load(url, str(sqlite_path), work)
            print(f"loaded {args.n} (+ the other scopes) into PostgreSQL in {time.perf_counter() - started:.1f} s")
            results = {"sqlite": measure(str(sqlite_path), args, work), "postgresql": measure(url, args, work)}
        finally:
            if server is not None:
                server.stop()
    names = list(results["sqlite"])
    print(f"{'figure':<16}{'SQLite':>12}{'PostgreSQL':>14}")
    for name in names:
        print(f"{name:<16}{results['sqlite'][name]:>12.1f}{results['postgresql'][name]:>14.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
