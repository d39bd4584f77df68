"""The PostgreSQL store beside the SQLite one (docs/stores.md): the figures of a team store.

    .venv/bin/python benchmarks/postgres.py --n 10000            # a local PostgreSQL is started
    .venv/bin/python benchmarks/postgres.py --n 100000 --vectors # + hybrid search (stored vectors)
    MEM0_BENCH_POSTGRES_URL=postgresql://… .venv/bin/python benchmarks/postgres.py --n 100000

Both stores hold the same `generate.py` memories (`n` in the benchmark scope, plus another
project's and another user's; with `--vectors`, every memory also has a vector of the default
embedder, `generate.py --vectors`). Measured on each, with the product's own code
(`operations.*`, what the MCP tools call), the two stores alternating query by query:
`search_memories` p50 (lexical, and with `--vectors` hybrid: the query's embedding made
and ranked against the stored vectors), `add_memory` p50, a page of 200 anywhere in the
scope (p50 and worst), and `mem0-dream --plan` (a subprocess, median of `--repeat`, run
lexical and, with `--vectors`, with the embedder). Without MEM0_BENCH_POSTGRES_URL a
throwaway server is started as the tests start one (tests/pg_server.py). The PostgreSQL
database is bulk-loaded with COPY from the cached SQLite file, into the schema the store's
own migrations make (seconds, not the minutes a copy through the store takes). The machine
is shared and noisy: read the ratio. Figures are written to
benchmarks/results/postgres-<n>.json.

A page at 1M memories (any depth, beside SQLite) has a script of its own that builds both
stores once and keeps them: benchmarks/postgres_pages.py.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT.parent / "plugin"))
sys.path.insert(0, str(ROOT.parent / "tests"))

import generate as gen  # noqa: E402
from mem0_plugin import operations  # noqa: E402
from mem0_plugin.identity import Identity  # noqa: E402
from mem0_plugin.store import open_store  # noqa: E402

BIN = Path(sys.executable).parent
RESULTS = ROOT / "results"
# The throwaway server's memory: the tests' 64 MB of shared buffers hold a tenth of a 100k
# store, so most reads would go through the kernel; a team's server has more (PostgreSQL's
# advice: about a quarter of the machine's memory).
SERVER_SETTINGS = ("shared_buffers=512MB",)

# What is copied of each table (the PostgreSQL columns the store computes are left out:
# rowid, meta, terms_vector), and the sequence each one's serial key draws from.
TABLES = {
    "memories": (
        "id, user_id, app_id, agent_id, run_id, memory, text_hash, metadata, type, created_at, created_us, "
        "updated_at, updated_us, lifecycle_state, replacement_memory_id, source_memory_ids, immutable, version, "
        "terms, features",
        None,
    ),
    "history": ("seq, memory_id, user_id, event, actor, at, before, after, dream_run_id", "seq"),
    "dream_runs": (
        "run_id, user_id, app_id, started_at, finished_at, status, plan, resolutions, mode, merged, superseded, "
        "pruned, resolved, not_applied, undone_at",
        None,
    ),
    "dream_steps": ("run_id, step, kind, outcome, detail, at", None),
    "vectors": ("seq, id, user_id, model, text_hash, vector", "seq"),
}


VISIBLE = "SELECT relpages, relallvisible FROM pg_class WHERE relname = 'memory_terms'"


def bulk_load(url: str, source: Path) -> None:
    """Every row of the SQLite store `source` into the empty PostgreSQL store `url` with COPY,
    in one transaction, the triggers off; what they keep (counts, word postings) is computed once
    at the end, as the migrations compute it."""
    import psycopg
    from mem0_plugin.store.postgres.migrations import TERMS_BACKFILL, VECTOR_COUNTS_BACKFILL
    from mem0_plugin.store.postgres.store import PostgresStore

    PostgresStore(url).close()  # the store's own schema: its migrations
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    with psycopg.connect(url) as conn:
        # a durable commit: the throwaway server commits asynchronously, and VACUUM cannot mark
        # pages all-visible (what index-only scans need) before the commit reaches the WAL
        conn.execute("SET synchronous_commit = on")
        for table in ("memories", "vectors"):
            conn.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")  # type: ignore[arg-type]
        for table, (columns, serial) in TABLES.items():
            with conn.cursor().copy(f"COPY {table} ({columns}) FROM STDIN") as copy:  # type: ignore[arg-type]
                for row in src.execute(f"SELECT {columns} FROM {table}"):
                    copy.write_row(row)
            if serial:
                conn.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', '{serial}'), "  # type: ignore[arg-type]
                    f"(SELECT coalesce(max({serial}), 0) + 1 FROM {table}), false)"
                )
        for table in ("memories", "vectors"):
            conn.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER")  # type: ignore[arg-type]
        conn.execute(
            "INSERT INTO memory_counts (user_id, app_key, lifecycle_state, n) "
            "SELECT user_id, coalesce('=' || app_id, ''), lifecycle_state, count(*) FROM memories GROUP BY 1, 2, 3"
        )
        conn.execute(TERMS_BACKFILL)  # type: ignore[arg-type]
        conn.execute(VECTOR_COUNTS_BACKFILL)  # type: ignore[arg-type]
    src.close()
    with psycopg.connect(url, autocommit=True) as conn:  # what autovacuum does a minute after a bulk load
        conn.execute("VACUUM ANALYZE")
        for _ in range(5):  # until the postings' pages are all-visible (index-only scans), as they
            # are in a store autovacuum has visited; the first VACUUM after the load may leave them
            pages, visible = conn.execute(VISIBLE).fetchone() or (0, 0)
            if visible >= pages:
                break
            time.sleep(1)
            conn.execute("VACUUM memory_terms")
            pages, visible = conn.execute(VISIBLE).fetchone() or (0, 0)
        print(f"memory_terms: {visible} of {pages} pages all-visible after VACUUM")


def caller(url: str, cwd: Path, semantic=None) -> operations.Caller:
    identity = Identity(user_id=gen.USER, project_id=gen.PROJECT, branch="main", home=cwd, store_url=url, cwd=cwd)
    return operations.Caller(open_store(url), identity, actor="bench", semantic=semantic)


def p50(values: list[float]) -> float:
    return statistics.median(values) * 1000


def alternate(callers: dict[str, operations.Caller], calls: list[Callable]) -> dict[str, list[float]]:
    """Seconds of each call on each store, the stores taking turns (one machine, one moment)."""
    timings: dict[str, list[float]] = {name: [] for name in callers}
    for call in calls:
        for name, c in callers.items():
            started = time.perf_counter()
            call(c)
            timings[name].append(time.perf_counter() - started)
    return timings


def search_calls(queries: list[str]) -> list[Callable]:
    return [lambda c, q=q: operations.search_memories(c, q) for q in queries]


def measure(urls: dict[str, str], args, cwd: Path) -> dict[str, dict[str, float]]:
    callers = {name: caller(url, cwd) for name, url in urls.items()}
    queries = gen.queries(args.queries, args.seed)
    figures: dict[str, dict[str, float]] = {name: {} for name in urls}
    alternate(callers, search_calls(queries[:5]))  # warm
    for name, times in alternate(callers, search_calls(queries)).items():
        figures[name]["search_p50_ms"] = p50(times)
    if args.vectors:
        from mem0_plugin.semantic import Semantic

        semantic = Semantic.from_home(cwd)
        hybrid = {
            name: operations.Caller(c.store, c.identity, actor="bench", semantic=semantic)
            for name, c in callers.items()
        }
        alternate(hybrid, search_calls(queries[:5]))  # warm: the model loads, the vectors are read once
        for name, times in alternate(hybrid, search_calls(queries)).items():
            figures[name]["hybrid_p50_ms"] = p50(times)
    adds = [
        lambda c, i=i: operations.add_memory(
            c, f"bench add {i}: the {i % 7} worker listens on port {9000 + i}", infer=False
        )
        for i in range(args.adds)
    ]
    for name, times in alternate(callers, adds).items():
        figures[name]["add_p50_ms"] = p50(times)
    for name, c in callers.items():
        figures[name]["memories"] = operations.get_memories(c, None, page=1, page_size=1)["count"]
    last = max(1, -(-figures["sqlite"]["memories"] // 200))
    rng = random.Random(args.seed)
    pages = [
        lambda c, page=page: operations.get_memories(c, None, page=page, page_size=200)
        for page in [1, last, *(rng.randint(1, last) for _ in range(args.pages))]
    ]
    for name, times in alternate(callers, pages).items():
        figures[name]["page200_p50_ms"] = p50(times)
        figures[name]["page200_max_ms"] = max(times) * 1000
    for c in callers.values():
        c.store.close()
    embedders = ["none", "default"] if args.vectors else ["none"]
    for embedder in embedders:
        key = "plan_s" if embedder == "none" else "plan_vectors_s"
        plans: dict[str, list[float]] = {name: [] for name in urls}
        for _ in range(args.repeat):
            for name, url in urls.items():
                plans[name].append(plan(url, cwd, embedder))
        for name in urls:
            figures[name][key] = statistics.median(plans[name])
    return figures


def plan(url: str, cwd: Path, embedder: str) -> float:
    env = {**os.environ, "MEM0_STORE": url, "MEM0_USER_ID": gen.USER, "MEM0_PROJECT_ID": gen.PROJECT}
    env["MEM0_EMBEDDER"] = embedder
    if embedder == "default":
        env.pop("MEM0_EMBEDDER")
    started = time.perf_counter()
    done = subprocess.run(
        [str(BIN / "mem0-dream"), "--plan", "--json", "--now", gen.NOW.isoformat()],
        env=env,
        cwd=cwd,
        capture_output=True,
        timeout=3600,
    )
    assert done.returncode == 0, done.stderr
    return time.perf_counter() - started


LABELS = {
    "search_p50_ms": ("search_memories p50, lexical (MEM0_EMBEDDER=none)", "<= 50 ms at 100k", "ms"),
    "hybrid_p50_ms": ("search_memories p50 with the query's embedding and stored vectors", "<= 50 ms at 100k", "ms"),
    "add_p50_ms": ("add_memory(infer=False) p50", "<= 5 ms", "ms"),
    "page200_p50_ms": ("get_memories page of 200, p50", "<= 30 ms at 1M", "ms"),
    "page200_max_ms": ("get_memories page of 200, worst", "", "ms"),
    "plan_s": ("mem0-dream --plan, lexical", "within 1.5x of SQLite at 100k", "s"),
    "plan_vectors_s": ("mem0-dream --plan with the default embedder", "within 1.5x of SQLite at 100k", "s"),
}


def write_results(n: int, figures: dict[str, dict[str, float]], load: list[float]) -> Path:
    """benchmarks/results/postgres-<n>.json, in run.py's format: `ours` is PostgreSQL, the
    alternative SQLite (the same data, the same run)."""
    rows = []
    for key, (name, target, unit) in LABELS.items():
        if key not in figures["postgresql"]:
            continue
        ours, sqlite = figures["postgresql"][key], figures["sqlite"][key]
        rows.append(
            {
                "name": f"PostgreSQL {name}, {n // 1000}k",
                "target": target,
                "ours": ours,
                "unit": unit,
                "alternative": sqlite,
                "alternative_label": "the SQLite store, same data, alternating in the same run",
                "alternative_short": "SQLite",
                "ok": None,
                "details": {"PostgreSQL / SQLite": f"{ours / sqlite:.2f}x" if sqlite else "—"},
                "notes": [],
                "ratio": sqlite / ours if ours else None,
            }
        )
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"postgres-{n}.json"
    when = time.strftime("%Y-%m-%dT%H:%M:%S")
    path.write_text(json.dumps({"when": when, "load_average": load, "figures": rows}, indent=2) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=gen.DEFAULT_SEED)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--adds", type=int, default=100)
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--vectors", action="store_true", help="stores with every memory embedded: hybrid figures")
    args = parser.parse_args(argv)
    server = None
    url = os.environ.get("MEM0_BENCH_POSTGRES_URL")
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sqlite_path = work / "bench.sqlite3"
        source = gen.build_vector_store(args.n, args.seed) if args.vectors else gen.build_store(args.n, args.seed)
        sqlite_path.write_bytes(source.read_bytes())
        if url is None:
            from pg_server import PostgresServer

            server = PostgresServer.start(SERVER_SETTINGS)
            url = server.fresh_database()
        try:
            started = time.perf_counter()
            bulk_load(url, sqlite_path)
            print(f"loaded {args.n} (+ the other scopes) into PostgreSQL in {time.perf_counter() - started:.1f} s")
            results = measure({"sqlite": str(sqlite_path), "postgresql": url}, args, work)
        finally:
            if server is not None:
                server.stop()
    loads.append(os.getloadavg()[0])
    print(
        f"{'figure':<18}{'SQLite':>12}{'PostgreSQL':>14}{'ratio':>8}   (load average {loads[0]:.1f} -> {loads[1]:.1f})"
    )
    for name in results["sqlite"]:
        s, p = results["sqlite"][name], results["postgresql"][name]
        print(f"{name:<18}{s:>12.1f}{p:>14.1f}{p / s if s else 0:>8.2f}")
    print(f"written to {write_results(args.n, results, loads)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
