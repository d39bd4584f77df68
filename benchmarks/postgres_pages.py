"""A page of 200 anywhere in a scope of 1M memories, on PostgreSQL beside SQLite
(docs/stores.md, "Pages on PostgreSQL").

    .venv/bin/python benchmarks/postgres_pages.py                 # 1M, both stores built once
    .venv/bin/python benchmarks/postgres_pages.py --n 100000 --explain

Both stores hold `generate.py`'s memories (`n` in the benchmark scope, plus n/10 of another
project and n/10 of another user), built once in bulk (`build_sqlite`) and kept in
benchmarks/.data; the PostgreSQL database is loaded from it once with COPY (its triggers keep the counts) into a
local server whose files stay in benchmarks/.data/pg-pages (`pg_local.py`), then VACUUM
ANALYZE (what autovacuum does after a bulk load). MEM0_BENCH_POSTGRES_URL names another,
already loaded, server instead.

Measured with the product's code (`operations.get_memories`, what the MCP tool calls), in a
new process's store as an agent's first call sees it: the first page, the middle one, the
last one and random ones (p50 and worst of each), on each store, every page's ids compared
between the two; then random pages each read right after another connection wrote to the
scope (a memory added and deleted: the stores keep their contents, plus history rows). `--explain` prints PostgreSQL's plans of the page reads.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT.parent / "plugin"))
sys.path.insert(0, str(ROOT.parent / "tests"))

import generate as gen  # noqa: E402
from mem0_plugin import operations  # noqa: E402
from mem0_plugin.identity import Identity  # noqa: E402
from mem0_plugin.store import open_store  # noqa: E402
from mem0_plugin.store.rows import WRITE_COLUMNS  # noqa: E402

PAGE = 200


def build_sqlite(n: int, seed: int) -> Path:
    """The cached SQLite store of `generate.all_records(n, seed)`'s memories, written in bulk
    (one transaction, its triggers keep the counts and the full-text index; no history, no
    stored features: no page reads them): minutes at 1M, where `generate.build_store` takes
    an hour."""
    from mem0_plugin.records import memory_from_record
    from mem0_plugin.store import SqliteStore
    from mem0_plugin.store.rows import memory_to_row
    from mem0_plugin.store.sqlite.migrations import MIGRATIONS

    path = gen.DATA / f"pages-{n}-s{seed}-schema{len(MIGRATIONS)}.sqlite3"
    if path.exists():
        return path
    tmp = path.with_name(path.name + ".tmp")
    tmp.unlink(missing_ok=True)
    started = time.perf_counter()
    SqliteStore(tmp).close()  # the schema
    now = gen.NOW.isoformat()
    rows = (
        memory_to_row(memory_from_record(r, default_user=gen.USER, default_app=gen.PROJECT, now=now), features=None)
        for r in gen.all_records(n, seed)
    )
    conn = sqlite3.connect(tmp, isolation_level=None)
    conn.execute("BEGIN")
    marks = ", ".join("?" * len(WRITE_COLUMNS))
    conn.executemany(f"INSERT INTO memories ({', '.join(WRITE_COLUMNS)}) VALUES ({marks})", rows)
    conn.execute("COMMIT")
    conn.execute("ANALYZE")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    tmp.replace(path)
    print(f"built {path.name} in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return path


def database_name(n: int, seed: int) -> str:
    from mem0_plugin.store.postgres.migrations import MIGRATIONS

    return f"mem0_pages_{n}_s{seed}_schema{len(MIGRATIONS)}"


def load(url: str, sqlite_path: Path) -> None:
    """Every memory of the SQLite store, copied as it is (COPY; the history is left behind:
    no page reads it), then VACUUM ANALYZE. The counts trigger is off during the COPY and the
    counts are made after it in one statement: a million trigger calls that each update the
    same `memory_counts` row in one transaction slow down with every row version they leave."""
    import psycopg
    from mem0_plugin.store.postgres.store import PostgresStore

    PostgresStore(url).close()  # the schema
    source = sqlite3.connect(f"{sqlite_path.resolve().as_uri()}?mode=ro", uri=True)
    columns = ", ".join(WRITE_COLUMNS)
    started = time.perf_counter()
    with psycopg.connect(url, autocommit=False) as conn:
        conn.execute("ALTER TABLE memories DISABLE TRIGGER memory_counts_change")
        with conn.cursor().copy(f"COPY memories ({columns}) FROM STDIN") as copy:
            for row in source.execute(f"SELECT {columns} FROM memories ORDER BY rowid"):
                copy.write_row(row)
        conn.execute(
            "INSERT INTO memory_counts (user_id, app_key, lifecycle_state, n) "
            "SELECT user_id, coalesce('=' || app_id, ''), lifecycle_state, count(*) FROM memories GROUP BY 1, 2, 3"
        )
        conn.execute("ALTER TABLE memories ENABLE TRIGGER memory_counts_change")
        conn.commit()
    source.close()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
        pages, visible = conn.execute(
            "SELECT relpages, relallvisible FROM pg_class WHERE relname = 'memories'"
        ).fetchone()
        if visible < pages * 0.9:  # another transaction was open: index-only scans would read the table
            print(f"only {visible} of {pages} pages all-visible after VACUUM; run it again", file=sys.stderr)
    print(f"loaded PostgreSQL from {sqlite_path.name} in {time.perf_counter() - started:.1f} s", file=sys.stderr)


def postgres_url(n: int, seed: int, sqlite_path: Path):
    """(url, server to stop or None): the loaded database, built on first use."""
    given = os.environ.get("MEM0_BENCH_POSTGRES_URL")
    if given:
        return given, None
    from pg_local import LocalPostgres

    server = LocalPostgres(gen.DATA / "pg-pages").start()
    name = database_name(n, seed)
    if not server.has_database(name):
        server.admin(f"DROP DATABASE IF EXISTS {name}_tmp", f"CREATE DATABASE {name}_tmp")
        load(server.url(f"{name}_tmp"), sqlite_path)
        server.admin(f"ALTER DATABASE {name}_tmp RENAME TO {name}")
    server.admin_on(name, "VACUUM ANALYZE memories")  # what autovacuum does; nothing to do once done
    return server.url(name), server


def caller(url: str) -> operations.Caller:
    cwd = gen.DATA
    identity = Identity(user_id=gen.USER, project_id=gen.PROJECT, branch="main", home=cwd, store_url=url, cwd=cwd)
    return operations.Caller(open_store(url), identity, actor="bench")


def page_numbers(count: int, randoms: int, seed: int) -> dict[str, list[int]]:
    last = max(1, -(-count // PAGE))
    rng = random.Random(seed)
    return {
        "first": [1],
        "middle": [max(1, last // 2)],
        "last": [last],
        "random": [rng.randint(1, last) for _ in range(randoms)],
    }


def measure(url: str, numbers: dict[str, list[int]], repeat: int, writes: int) -> tuple[dict[str, list[float]], dict]:
    """Seconds of each page read, by kind; and each page's ids. A new store each round: what
    a new process's first pages cost (nothing remembered from an earlier round). Then
    `writes` random pages, each right after another connection added a memory to the scope
    and deleted it (the count and the ids as they were; all remembered of the read is void)."""
    times: dict[str, list[float]] = {kind: [] for kind in numbers}
    ids: dict[int, list[str]] = {}

    def read(c: operations.Caller, kind: str, number: int) -> None:
        started = time.perf_counter()
        answer = operations.get_memories(c, None, page=number, page_size=PAGE)
        times.setdefault(kind, []).append(time.perf_counter() - started)
        ids[number] = [m["id"] for m in answer["results"]]

    for _ in range(repeat):
        c = caller(url)
        for kind, pages in numbers.items():
            for number in pages:
                read(c, kind, number)
        c.store.close()
    c, other = caller(url), caller(url)
    rng = random.Random(len(numbers["random"]))
    for i in range(writes):
        added = operations.add_memory(other, f"postgres_pages benchmark write {i}", infer=False)
        operations.delete_memory(other, added["results"][0]["id"])
        read(c, "after a write", rng.choice(numbers["random"]))
    c.store.close()
    other.store.close()
    return times, ids


def explain(url: str, numbers: dict[str, list[int]]) -> None:
    import psycopg
    from mem0_plugin.store.postgres import store as postgres_store

    c = caller(url)
    store = c.store
    logged: list[tuple[str, tuple]] = []
    query = store._query

    def spy(sql, params=()):
        logged.append((sql, tuple(params)))
        return query(sql, params)

    store._query = spy  # type: ignore[method-assign]
    with psycopg.connect(url, autocommit=True) as conn:
        for kind in ("first", "middle", "last"):
            logged.clear()
            operations.get_memories(c, None, page=numbers[kind][0], page_size=PAGE)
            for sql, params in logged:
                print(f"-- {kind} page {numbers[kind][0]}: {sql[:160]}")
                plan = conn.execute(
                    "EXPLAIN (ANALYZE, BUFFERS) " + postgres_store.paramstyle(sql),  # type: ignore[arg-type]
                    params,
                ).fetchall()
                print("\n".join("   " + row[0] for row in plan))
    store.close()


def ms(seconds: float) -> float:
    return seconds * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=gen.DEFAULT_SEED)
    parser.add_argument("--random", type=int, default=20, help="random pages per round")
    parser.add_argument("--repeat", type=int, default=3, help="rounds, each with a new store")
    parser.add_argument("--writes", type=int, default=5, help="pages read right after another connection wrote")
    parser.add_argument("--explain", action="store_true")
    args = parser.parse_args(argv)
    sqlite_path = build_sqlite(args.n, args.seed)
    url, server = postgres_url(args.n, args.seed, sqlite_path)
    try:
        count = operations.get_memories(caller(str(sqlite_path)), None, page=1, page_size=1)["count"]
        numbers = page_numbers(count, args.random, args.seed)
        if args.explain:
            explain(url, numbers)
        results = {}
        for name, where in (("SQLite", str(sqlite_path)), ("PostgreSQL", url)):
            results[name] = measure(where, numbers, args.repeat, args.writes)
    finally:
        if server is not None:
            server.stop()
    differ = [n for n, ids in results["SQLite"][1].items() if results["PostgreSQL"][1].get(n) != ids]
    print(f"{count:,} memories in scope; pages of {PAGE}; {args.repeat} rounds, each with a new store")
    print(f"{'page':<14}{'SQLite p50':>12}{'worst':>9}{'PostgreSQL p50':>16}{'worst':>9}{'ratio':>8}")
    for kind in results["SQLite"][0]:
        s, p = results["SQLite"][0][kind], results["PostgreSQL"][0][kind]
        s50, p50 = ms(statistics.median(s)), ms(statistics.median(p))
        print(f"{kind:<14}{s50:>10.1f}ms{ms(max(s)):>7.1f}ms{p50:>14.1f}ms{ms(max(p)):>7.1f}ms{p50 / s50:>8.2f}")
    every = [t for kind, times in results["PostgreSQL"][0].items() if kind != "after a write" for t in times]
    print(f"PostgreSQL, any page: p50 {ms(statistics.median(every)):.1f} ms, worst {ms(max(every)):.1f} ms")
    print("every page's ids equal on both stores" if not differ else f"PAGES DIFFER: {sorted(differ)}")
    return 0 if not differ else 1


if __name__ == "__main__":
    sys.exit(main())
