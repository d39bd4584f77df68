"""Benchmarks: each figure beside the naive way and mem0ai's OSS `Memory`, in one run.

    .venv-bench/bin/python benchmarks/run.py all            # every figure (about 15 minutes)
    .venv-bench/bin/python benchmarks/run.py search add     # some of them
    .venv-bench/bin/python benchmarks/run.py all --no-mem0  # skip mem0ai OSS (no bench extra)

Figures: search, add, page, plan, auto, mcp, import (lexical, as in v1: MEM0_EMBEDDER=none for
the commands), and for meaning: embed, hybrid, add-infer, plan-vectors, auto-vectors (on stores where every
memory has a vector of the default model, `generate.py --vectors`); server-add, server-search,
server-load: `mem0-server` driven by mem0ai's `MemoryClient` (benchmarks/server_bench.py). The machine is shared and noisy: every
figure is a median (p50, and p95 for latencies) over repeated runs, and the
alternative is measured in the same run, so the ratio is the number to read. Where the
alternative is too slow to run in full, it is measured on a subset and extrapolated, and the
output says so. Results are also written to benchmarks/results/latest.json.

Data: `generate.py` (cached under benchmarks/.data/). Our side runs the product's own code:
`operations.*` (what the MCP tools call) on a `SqliteStore`, and the console scripts as
subprocesses for dream, import and the MCP server.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT.parent / "plugin"))

import generate as gen  # noqa: E402
from mem0_plugin import operations  # noqa: E402
from mem0_plugin.identity import Identity  # noqa: E402
from mem0_plugin.language.gloss import search_terms  # noqa: E402
from mem0_plugin.language.text import significant_words  # noqa: E402
from mem0_plugin.store import SqliteStore  # noqa: E402
from mem0_plugin.store.bm25 import Bm25Query, Statistics  # noqa: E402
from mem0_plugin.store.ranking import LEXICAL_CURVE, calibrated  # noqa: E402

BIN = Path(sys.executable).parent
RESULTS = ROOT / "results"
NOW = gen.NOW.isoformat()


# -- reporting ---------------------------------------------------------------------------


@dataclass
class Figure:
    name: str
    target: str
    ours: float  # what the target is about, in `unit`
    unit: str
    alternative: float | None = None
    alternative_label: str = ""  # what the alternative is and how it was measured
    alternative_short: str = ""  # the same in a few words, for the summary table
    ok: bool | None = None
    details: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def ratio(self) -> float | None:
        if self.alternative is None or not self.ours:
            return None
        return self.alternative / self.ours


FIGURES: list[Figure] = []


def fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    if unit == "ms":
        return f"{value:.2f} ms" if value < 10 else f"{value:,.0f} ms" if value >= 1000 else f"{value:.1f} ms"
    if unit == "s":
        return f"{value:.2f} s" if value < 10 else f"{value:,.1f} s"
    return f"{value:,.0f} {unit}"


def report(figure: Figure) -> Figure:
    FIGURES.append(figure)
    ratio = figure.ratio
    verdict = {True: "meets", False: "MISSES", None: ""}[figure.ok]
    print(f"\n## {figure.name}  (target {figure.target}) {verdict}", flush=True)
    print(f"  ours:        {fmt(figure.ours, figure.unit)}")
    for key, value in figure.details.items():
        print(f"  {key}: {value}")
    if figure.alternative is not None:
        print(f"  alternative: {fmt(figure.alternative, figure.unit)}  ({figure.alternative_label})")
        print(f"  ratio:       {ratio:,.1f}x")
    for note in figure.notes:
        print(f"  note: {note}")
    return figure


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))
    return ordered[index]


def ms(seconds: float) -> float:
    return seconds * 1000


# -- the stores ----------------------------------------------------------------------------


def identity(cwd: Path) -> Identity:
    return Identity(gen.USER, gen.PROJECT, "main", cwd, "sqlite:///unused", cwd)


def working_copy(n: int, folder: Path, *, vectors: bool = False) -> Path:
    """A fresh copy of the cached store (writes never touch the cache); with `vectors`, of the
    one in which every memory has a vector of the default model (`generate.build_vector_store`)."""
    source = gen.build_vector_store(n) if vectors else gen.build_store(n)
    target = folder / f"{'vec' if vectors else 'mem'}-{n}.sqlite3"
    for suffix in ("", "-wal", "-shm"):
        Path(str(target) + suffix).unlink(missing_ok=True)
    shutil.copyfile(source, target)
    return target


def open_caller(path: Path, cwd: Path) -> operations.Caller:
    return operations.Caller(SqliteStore(path), identity(cwd), actor="bench")


def scope_rows(store: SqliteStore) -> list[tuple[str, str, frozenset[str]]]:
    rows = store._query(
        "SELECT id, created_at, memory FROM memories WHERE user_id = ? AND app_id = ? "
        "AND lifecycle_state IN ('active', 'superseded')",
        [gen.USER, gen.PROJECT],
    )
    return [(mid, created, significant_words(text)) for mid, created, text in rows]


def naive_search(store: SqliteStore, query: str, top_k: int = 10) -> list[tuple[str, float]]:
    """The naive way: read every memory of the scope, compute its terms and the scope's
    statistics from the texts, score each with the same BM25 in Python, sort."""
    rows = store._query(
        "SELECT id, created_at, memory FROM memories WHERE user_id = ? AND app_id = ? "
        "AND lifecycle_state IN ('active', 'superseded')",
        [gen.USER, gen.PROJECT],
    )
    docs = [(mid, created, search_terms(text)) for mid, created, text in rows]
    frequency: dict[str, int] = {}
    for _, _, terms in docs:
        for term in terms:
            frequency[term] = frequency.get(term, 0) + 1
    statistics_ = Statistics(len(docs), sum(len(t) for _, _, t in docs), frequency)
    bm25 = Bm25Query(search_terms(query), statistics_)
    scored = [(bm25.score(terms), created, mid) for mid, created, terms in docs]
    scored = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1], s[2]))
    return [(mid, calibrated(score, LEXICAL_CURVE)) for score, _, mid in scored[:top_k]]


def mem0_reason(args) -> str | None:
    if args.no_mem0:
        return "skipped (--no-mem0)"
    import mem0_oss

    return mem0_oss.available()


# -- search --------------------------------------------------------------------------------


def bench_search(args, work: Path) -> None:
    queries = gen.queries(200, seed=11)
    mem0_times: dict[int, float] = {}
    reason = mem0_reason(args)
    if reason is None:
        import mem0_oss

        for n in (1000, 10000):
            folder = mem0_oss.build(n)
            memory = mem0_oss.open_memory(folder)
            subset = queries[:40]
            for q in subset[:5]:
                memory.search(q, filters={"user_id": gen.USER}, top_k=10)
            times = []
            for q in subset:
                started = time.perf_counter()
                memory.search(q, filters={"user_id": gen.USER}, top_k=10)
                times.append(time.perf_counter() - started)
            mem0_times[n] = ms(statistics.median(times))
            mem0_oss.close(memory)
    for n, target in ((10000, 5.0), (100000, 30.0)):
        path = working_copy(n, work)
        caller = open_caller(path, work)
        for q in queries[:20]:
            operations.search_memories(caller, q)
        times = []
        for _ in range(args.repeat):
            for q in queries:
                started = time.perf_counter()
                operations.search_memories(caller, q)
                times.append(time.perf_counter() - started)
        p50, p95 = ms(percentile(times, 50)), ms(percentile(times, 95))
        naive_queries = queries[: 30 if n <= 10000 else 8]
        naive_times, same_ids, same_scores = [], 0, 0
        for q in naive_queries:
            started = time.perf_counter()
            expected = naive_search(caller.store, q)
            naive_times.append(time.perf_counter() - started)
            got = [(r["id"], r["score"]) for r in operations.search_memories(caller, q)["results"]]
            same_ids += got == expected
            same_scores += [s for _, s in got] == [s for _, s in expected]
        naive = ms(statistics.median(naive_times))
        figure = Figure(
            f"search_memories p50, {n // 1000}k memories in scope", f"<= {target:g} ms", p50, "ms", ok=p50 <= target
        )
        figure.details["p95"] = fmt(p95, "ms")
        figure.details["naive full scan (Python scoring)"] = f"{fmt(naive, 'ms')} median ({naive / p50:,.0f}x)"
        figure.details["results identical to the full scan"] = (
            f"{same_ids}/{len(naive_queries)} queries (same scores: {same_scores}/{len(naive_queries)})"
        )
        if reason is None:
            if n in mem0_times:
                figure.alternative, figure.alternative_label = mem0_times[n], "mem0ai OSS Memory.search, measured"
                figure.alternative_short = "mem0ai OSS"
            else:
                (n1, t1), (n2, t2) = sorted(mem0_times.items())
                slope = (t2 - t1) / (n2 - n1)
                figure.alternative = t2 + slope * (n - n2)
                figure.alternative_label = (
                    f"mem0ai OSS, extrapolated linearly from {t1:.0f} ms at 1k and "
                    f"{t2:.0f} ms at 10k (local qdrant scans every vector)"
                )
                figure.alternative_short = "mem0ai OSS, extrapolated"
        else:
            figure.notes.append(f"mem0ai OSS: {reason}")
        report(figure)
        caller.store.close()


# -- add -----------------------------------------------------------------------------------


def bench_add(args, work: Path) -> None:
    path = working_copy(10000, work)
    caller = open_caller(path, work)
    texts = [r["memory"] + f" (run {i})" for i, r in enumerate(gen.records(600, seed=99))]
    for text in texts[:50]:
        operations.add_memory(caller, text, metadata={"type": "decision"}, infer=False)
    times = []
    for text in texts[50:350]:
        started = time.perf_counter()
        operations.add_memory(caller, text, metadata={"type": "task_learning", "confidence": 0.7}, infer=False)
        times.append(time.perf_counter() - started)
    p50 = ms(statistics.median(times))
    figure = Figure("add_memory p50 (store of 10k)", "<= 2 ms", p50, "ms", ok=p50 <= 2.0)
    figure.details["p95"] = fmt(ms(percentile(times, 95)), "ms")
    caller.store.close()
    reason = mem0_reason(args)
    if reason is None:
        import mem0_oss

        folder = mem0_oss.copy_of(mem0_oss.build(1000), work / "mem0-add")
        memory = mem0_oss.open_memory(folder)
        for text in texts[:5]:
            memory.add(text, user_id=gen.USER, metadata={"type": "decision"}, infer=False)
        mem0_times = []
        for text in texts[5:65]:
            started = time.perf_counter()
            memory.add(text, user_id=gen.USER, metadata={"type": "task_learning", "confidence": 0.7}, infer=False)
            mem0_times.append(time.perf_counter() - started)
        mem0_oss.close(memory)
        figure.alternative = ms(statistics.median(mem0_times))
        figure.alternative_label = "mem0ai OSS Memory.add(infer=False), store of 1k, measured"
        figure.alternative_short = "mem0ai OSS add(infer=False)"
    else:
        figure.notes.append(f"mem0ai OSS: {reason}")
    report(figure)


# -- pages ---------------------------------------------------------------------------------


def bench_page(args, work: Path) -> None:
    n = 100000
    path = working_copy(n, work)
    caller = open_caller(path, work)
    store = caller.store
    operations.get_memories(caller, page=1, page_size=200)
    sequential = []
    for _ in range(max(1, args.repeat // 2)):
        page: int | None = 1
        while page is not None:
            started = time.perf_counter()
            answer = operations.get_memories(caller, page=page, page_size=200)
            sequential.append(time.perf_counter() - started)
            page = answer["next"]
    pages = answer["count"] // 200 + 1
    rng = random.Random(5)
    fresh = []
    for _ in range(60):
        store._pager = None  # what a page costs after any change to the store: nothing remembered
        number = rng.randint(1, pages)
        started = time.perf_counter()
        operations.get_memories(caller, page=number, page_size=200)
        fresh.append(time.perf_counter() - started)
    # the naive way: count(*) and LIMIT/OFFSET for every page, as the first version did
    sql, params = store._where(gen.USER, operations.scoped_filter(caller, None), operations.ReadMode.DEFAULT)
    from mem0_plugin.store.rows import SELECT_COLUMNS, row_to_memory

    naive = []
    for number in range(1, pages + 1, 10):
        started = time.perf_counter()
        store._query(f"SELECT count(*) FROM memories WHERE {sql}", params)
        rows = store._query(
            f"SELECT {SELECT_COLUMNS} FROM memories WHERE {sql} ORDER BY created_us, id LIMIT 200 OFFSET ?",
            [*params, (number - 1) * 200],
        )
        [row_to_memory(r).to_dict() for r in rows]
        naive.append(time.perf_counter() - started)
    p50 = ms(statistics.median(sequential))
    figure = Figure(
        "get_memories page of 200, 100k in scope",
        "<= 20 ms",
        p50,
        "ms",
        ok=p50 <= 20 and ms(statistics.median(fresh)) <= 20,
    )
    figure.details["paging through all pages in order (dream, an agent)"] = (
        f"p50 {fmt(p50, 'ms')}, p95 {fmt(ms(percentile(sequential, 95)), 'ms')}, "
        f"{len(sequential) // max(1, args.repeat // 2)} pages in {sum(sequential) / max(1, args.repeat // 2):.2f} s"
    )
    figure.details["any page, nothing remembered (after a change)"] = (
        f"p50 {fmt(ms(statistics.median(fresh)), 'ms')}, p95 {fmt(ms(percentile(fresh, 95)), 'ms')}"
    )
    figure.details["naive count(*) + OFFSET per page"] = (
        f"p50 {fmt(ms(statistics.median(naive)), 'ms')}, all {pages} pages ≈ "
        f"{sum(naive) * 10:.1f} s ({ms(statistics.median(naive)) / p50:,.0f}x)"
    )
    store.close()
    reason = mem0_reason(args)
    if reason is None:
        import mem0_oss

        memory = mem0_oss.open_memory(mem0_oss.build(10000))
        times = []
        for _ in range(3):
            started = time.perf_counter()
            everything = memory.get_all(filters={"user_id": gen.USER}, top_k=1_000_000)
            times.append(time.perf_counter() - started)
        mem0_oss.close(memory)
        figure.alternative = ms(statistics.median(times))
        figure.alternative_label = (
            f"mem0ai OSS get_all has no pages: all {len(everything['results']):,} memories of a 10k store, measured"
        )
        figure.alternative_short = "mem0ai OSS get_all of 10k, no pages"
    else:
        figure.notes.append(f"mem0ai OSS: {reason}")
    report(figure)


# -- subprocesses --------------------------------------------------------------------------

TIME = Path("/usr/bin/time")


LEXICAL = {"MEM0_EMBEDDER": "none"}  # the v1 figures: no embedder in the commands


def run_measured(argv: list[str], *, env: dict | None = None, cwd: Path | None = None) -> tuple[float, float, str]:
    """(wall seconds, peak RSS in MB, stdout) of a child process.

    The peak RSS is the command's own, read by /usr/bin/time: the rusage of a child forked
    from this process would count this process's pages (torch, mem0ai) until it execs."""
    out_file = tempfile.TemporaryFile(mode="w+")
    err_file = tempfile.TemporaryFile(mode="w+")
    rss_file = Path(tempfile.mkstemp(prefix="rss-")[1])
    wrapped = [str(TIME), "-f", "%M", "-o", str(rss_file), *argv] if TIME.exists() else argv
    started = time.perf_counter()
    proc = subprocess.Popen(
        wrapped, stdin=subprocess.DEVNULL, stdout=out_file, stderr=err_file, env={**os.environ, **(env or {})}, cwd=cwd
    )
    proc.wait()
    wall = time.perf_counter() - started
    out_file.seek(0)
    err_file.seek(0)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:3])} failed ({proc.returncode}):\n{err_file.read()[-2000:]}")
    text = rss_file.read_text().strip().splitlines() if TIME.exists() else []
    rss_file.unlink(missing_ok=True)
    rss = int(text[-1]) / 1024 if text and text[-1].isdigit() else float("nan")
    return wall, rss, out_file.read()


def scope_args(path: Path) -> list[str]:
    return ["--store", f"sqlite:///{path}", "--user-id", gen.USER, "--project-id", gen.PROJECT, "--now", NOW]


def bench_plan(args, work: Path) -> None:
    n = 100000
    path = working_copy(n, work)
    plan_file = work / "plan.json"
    runs = []
    for _ in range(max(1, args.repeat)):
        runs.append(
            run_measured(
                [str(BIN / "mem0-dream"), "--plan", "--json", "-o", str(plan_file), *scope_args(path)],
                env=LEXICAL,
                cwd=work,
            )
        )
    wall = statistics.median(r[0] for r in runs)
    rss = max(r[1] for r in runs)
    plan = json.loads(plan_file.read_text())
    figure = Figure(
        "mem0-dream --plan over 100k", "<= 10 s, <= 1 GB peak RSS", wall, "s", ok=wall <= 10 and rss <= 1024
    )
    figure.details["peak RSS"] = f"{rss:,.0f} MB"
    figure.details["plan"] = (
        f"{len(plan['merges']):,} merges, {len(plan['conflicts']):,} conflicts, "
        f"{len(plan['prunes']):,} prunes over {plan['memory_count']:,} memories"
    )
    figure.details["runs"] = ", ".join(f"{r[0]:.1f} s" for r in runs)
    # a store written before dream stored its readings of the texts: every text is read
    _forget_readings(path)
    unread = run_measured(
        [str(BIN / "mem0-dream"), "--plan", "--json", "-o", str(work / "plan-unread.json"), *scope_args(path)],
        env=LEXICAL,
        cwd=work,
    )
    same = (work / "plan-unread.json").read_bytes() == plan_file.read_bytes()
    figure.details["without stored readings (a store from before them: every text read)"] = (
        f"{unread[0]:.1f} s, {unread[1]:,.0f} MB, plan {'identical' if same else 'DIFFERENT'}"
    )
    # the naive way: compare every pair of memories of one type (Jaccard of significant words)
    store = SqliteStore(path)
    rows = store._query(
        "SELECT type, memory FROM memories WHERE user_id = ? AND app_id = ? AND lifecycle_state = 'active'",
        [gen.USER, gen.PROJECT],
    )
    store.close()
    started = time.perf_counter()
    by_type: dict[str, list[frozenset[str]]] = {}
    for kind, text in rows:
        by_type.setdefault(kind, []).append(significant_words(text))
    tokenize = time.perf_counter() - started
    sample = max(by_type.values(), key=len)[:1500]
    started = time.perf_counter()
    pairs = 0
    for i, a in enumerate(sample):
        for b in sample[i + 1 :]:
            inter = len(a & b)
            _ = inter / (len(a) + len(b) - inter or 1) > 0.6
            pairs += 1
    per_pair = (time.perf_counter() - started) / pairs
    all_pairs = sum(len(v) * (len(v) - 1) // 2 for v in by_type.values())
    figure.alternative = tokenize + all_pairs * per_pair
    figure.alternative_label = (
        f"all pairs within each type: {all_pairs:,} Jaccard comparisons at "
        f"{per_pair * 1e9:.0f} ns each, extrapolated from {pairs:,} measured"
    )
    figure.alternative_short = "all pairs, extrapolated"
    report(figure)


def _forget_readings(path: Path) -> None:
    """Empty the `features` column, as in a store written before dream stored its readings."""
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE memories SET features = NULL")
    conn.close()


def bench_auto(args, work: Path) -> None:
    n = 10000
    lock = work / "dream.lock"
    first, second = [], []
    for _ in range(max(1, args.repeat)):
        path = working_copy(n, work)
        env = {"MEM0_DREAM_LOCK": str(lock), **LEXICAL}
        wall, _, out = run_measured([str(BIN / "mem0-dream"), "--auto", *scope_args(path)], env=env, cwd=work)
        first.append((wall, out.strip()))
        wall, _, out2 = run_measured([str(BIN / "mem0-dream"), "--auto", *scope_args(path)], env=env, cwd=work)
        second.append((wall, out2.strip()))
    steady = statistics.median(w for w, _ in second)
    initial = statistics.median(w for w, _ in first)
    figure = Figure(
        "mem0-dream --auto cold, 10k (a new process, as cron starts it)", "<= 1 s wall", steady, "s", ok=steady <= 1.0
    )
    figure.details["every night (a new process; what was due is applied, conflicts skipped)"] = (
        f"{fmt(steady, 's')} median: {second[0][1]}"
    )
    figure.details["the first run on the generated store (applies its backlog of merges and prunes)"] = (
        f"{fmt(initial, 's')} median: {first[0][1]}"
    )
    if initial > 1.0:
        figure.notes.append(f"the one-off first run, which applies the whole backlog, takes {fmt(initial, 's')}")
    help_wall = statistics.median(run_measured([str(BIN / "mem0-dream"), "--help"])[0] for _ in range(3))
    figure.details["start-up alone (mem0-dream --help)"] = fmt(help_wall, "s")
    reason = mem0_reason(args)
    if reason is None:
        import mem0_oss

        times = []
        for i in range(2):
            folder = work / f"mem0-cold-{i}"
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            times.append(run_measured([sys.executable, "-c", mem0_oss.cold_start_code(folder)], cwd=work)[0])
        figure.alternative = statistics.median(times)
        figure.alternative_label = "mem0ai OSS cold start alone (import + Memory.from_config), measured"
        figure.alternative_short = "mem0ai OSS cold start alone"
    else:
        figure.notes.append(f"mem0ai OSS: {reason}")
    report(figure)


INITIALIZE = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            },
        }
    )
    + "\n"
)


def first_line_after_spawn(argv: list[str], env: dict, cwd: Path, send: str = "") -> tuple[float, str]:
    """Seconds from spawning `argv` to the first line on its stdout (after writing `send`)."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd
    )
    if send:
        proc.stdin.write(send.encode())
        proc.stdin.flush()
    line = proc.stdout.readline().decode()
    elapsed = time.perf_counter() - started
    proc.kill()
    proc.wait()
    return elapsed, line


def bench_mcp(args, work: Path) -> None:
    path = working_copy(10000, work)
    env = {**os.environ, "MEM0_STORE": f"sqlite:///{path}", "MEM0_USER_ID": gen.USER, "MEM0_PROJECT_ID": gen.PROJECT}
    server = [str(BIN / "mem0-mcp-server")]
    import_alone = [sys.executable, "-c", "import mcp.server.mcpserver; print('imported', flush=True)"]
    runs = max(7, args.repeat * 3)
    ours, imports = [], []
    for _ in range(runs):  # interleaved, so both see the same machine
        elapsed, line = first_line_after_spawn(server, env, work, INITIALIZE)
        if '"result"' not in line or '"serverInfo"' not in line:
            raise SystemExit(f"mem0-mcp-server did not answer initialize: {line[:200]!r}")
        ours.append(elapsed)
        imports.append(first_line_after_spawn(import_alone, env, work)[0])
    median = statistics.median(ours)
    figure = Figure("MCP server answers initialize (spawn to result)", "<= 1.5 s", median, "s", ok=median <= 1.5)
    figure.details["runs"] = ", ".join(f"{t:.2f}" for t in ours)
    figure.details["over the import alone (ours minus it, median of pairs)"] = (
        f"{statistics.median(o - i for o, i in zip(ours, imports)):+.2f} s"
    )
    figure.alternative = statistics.median(imports)
    figure.alternative_label = (
        "a new python importing the SDK's server (`import mcp.server.mcpserver`), spawn "
        "to the line it prints after, measured interleaved with ours (the floor for any "
        "server built on the SDK)"
    )
    figure.alternative_short = "the SDK import alone"
    report(figure)


def bench_import(args, work: Path) -> None:
    n = 100000
    source = gen.write_jsonl(n)
    runs = []
    for i in range(max(1, args.repeat)):
        target = work / f"import-{i}.sqlite3"
        wall, rss, out = run_measured(
            [
                str(BIN / "mem0-memories"),
                "import",
                str(source),
                "--store",
                f"sqlite:///{target}",
                "--user-id",
                gen.USER,
                "--project-id",
                gen.PROJECT,
            ],
            cwd=work,
        )
        runs.append((wall, rss, out.strip()))
    wall = statistics.median(r[0] for r in runs)
    figure = Figure("mem0-memories import of 100k", "<= 60 s", wall, "s", ok=wall <= 60)
    figure.details["output"] = runs[0][2]
    figure.details["runs"] = ", ".join(f"{r[0]:.1f} s" for r in runs)
    figure.details["peak RSS"] = f"{max(r[1] for r in runs):,.0f} MB"
    # the naive way: one add_memory (one transaction) per record
    caller = open_caller(work / "naive-import.sqlite3", work)
    records = [json.loads(line) for _, line in zip(range(2000), source.open())]
    started = time.perf_counter()
    for record in records:
        operations.add_memory(caller, record["memory"], metadata=record["metadata"], infer=False)
    per_record = (time.perf_counter() - started) / len(records)
    caller.store.close()
    figure.alternative = per_record * n
    figure.alternative_label = (
        f"one add_memory per record: {per_record * 1000:.2f} ms each on the first "
        f"{len(records):,}, extrapolated to {n:,} (a lower bound: it slows as the store grows)"
    )
    figure.alternative_short = "one add_memory per record, extrapolated"
    report(figure)


# -- main ----------------------------------------------------------------------------------

# -- meaning (docs/embeddings.md) ---------------------------------------------------------


def semantic_for(work: Path):
    from mem0_plugin.semantic import Semantic

    return Semantic.from_home(work)


def bench_embed(args, work: Path) -> None:
    semantic = semantic_for(work)
    started = time.perf_counter()
    semantic.available()
    load = time.perf_counter() - started
    records = [r["memory"] for r in gen.records(4000, seed=5)]
    texts = [f"{a}; {b}" for a, b in zip(records[::2], records[1::2])]  # two joined: about 20 words
    words = statistics.mean(len(t.split()) for t in texts)
    semantic.embed(texts[:64])
    started = time.perf_counter()
    semantic.embed(texts)
    batched = len(texts) / (time.perf_counter() - started)
    started = time.perf_counter()
    for text in texts[:300]:
        semantic.embed([text])
    single = 300 / (time.perf_counter() - started)
    figure = Figure(
        f"embed throughput ({words:.0f}-word memories, {semantic.model_id})",
        ">= 200 texts/s",
        batched,
        "texts/s",
        ok=batched >= 200,
    )
    figure.alternative, figure.alternative_short = single, "one text per call"
    figure.alternative_label = "the same model called once per text (no batching, no length sorting)"
    figure.details["model load (first use, files verified by SHA-256)"] = f"{load:.2f} s (target <= 1 s)"
    if hasattr(semantic.embedder, "_loaded"):  # the local ONNX model (not a mem0 provider)
        figure.details["naive batches (unsorted, every text padded to 128 tokens), first 500"] = (
            f"{naive_embed_rate(semantic, texts[:500]):.0f} texts/s"
        )
    report(figure)


def naive_embed_rate(semantic, texts: list[str]) -> float:
    """The same model and session run the naive way: batches of 32 in the given order, each
    padded to 128 tokens (what a fixed-length export does); docs/embeddings.md, "Speed"."""
    import numpy as np

    embedder = semantic.embedder
    embedder.load()
    loaded = embedder._loaded
    started = time.perf_counter()
    for start in range(0, len(texts), 32):
        encodings = loaded.tokenizer.encode_batch(texts[start : start + 32])
        ids = np.zeros((len(encodings), 128), dtype=np.int64)
        for row, encoding in enumerate(encodings):
            ids[row, : len(encoding.ids)] = encoding.ids[:128]
        mask = (ids != 0).astype(np.int64)
        loaded.session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})
    return len(texts) / (time.perf_counter() - started)


# Questions in other languages (glossed into English: embedded twice), for the hybrid search row.
GLOSSED_QUESTIONS = [
    "На каком порту слушает локальная база данных?",
    "Как мы храним суммы платежей?",
    "Какой инструмент используем для миграций схемы?",
    "Где лежат переменные окружения для продакшена?",
    "本地数据库监听哪个端口？",
    "金额用什么类型存储？",
    "部署前需要运行哪些测试？",
    "ローカルのデータベースはどのポートを使う？",
    "本番環境へのデプロイ手順は？",
    "キャッシュの有効期限は何分？",
]


def bench_hybrid(args, work: Path) -> None:
    queries = gen.queries(200, seed=11)
    semantic = semantic_for(work)
    for n, target in ((10000, 20.0), (100000, 60.0)):
        path = working_copy(n, work, vectors=True)
        lexical = open_caller(path, work)
        hybrid = operations.Caller(lexical.store, identity(work), actor="bench", semantic=semantic)
        for q in queries[:20]:
            operations.search_memories(hybrid, q)
        timings: dict[str, list[float]] = {"hybrid": [], "lexical": [], "embed": []}
        for _ in range(args.repeat):
            for q in queries:
                for label, caller in (("hybrid", hybrid), ("lexical", lexical)):
                    started = time.perf_counter()
                    operations.search_memories(caller, q)
                    timings[label].append(time.perf_counter() - started)
        for q in queries[:50]:
            started = time.perf_counter()
            semantic.query_vector(q)
            timings["embed"].append(time.perf_counter() - started)
        timings["glossed"] = []  # embedded as written and in English (docs/search.md, "Across languages")
        for _ in range(args.repeat):
            for q in GLOSSED_QUESTIONS:
                started = time.perf_counter()
                operations.search_memories(hybrid, q)
                timings["glossed"].append(time.perf_counter() - started)
        p50 = ms(percentile(timings["hybrid"], 50))
        figure = Figure(
            f"search_memories p50 with the query's embedding, {n // 1000}k",
            f"<= {target:g} ms",
            p50,
            "ms",
            ok=p50 <= target,
        )
        figure.alternative = ms(percentile(timings["lexical"], 50))
        figure.alternative_short = "lexical only, same store"
        figure.alternative_label = "the same search without the embedder (v1), same run"
        figure.details["p95"] = fmt(ms(percentile(timings["hybrid"], 95)), "ms")
        figure.details["of which the query's embedding (p50)"] = fmt(ms(percentile(timings["embed"], 50)), "ms")
        figure.details["a Russian, Chinese or Japanese question (two texts embedded), p50"] = fmt(
            ms(percentile(timings["glossed"], 50)), "ms"
        )
        report(figure)
        lexical.store.close()


def bench_add_infer(args, work: Path) -> None:
    """add_memory(infer=true) on the 10k store with vectors: the new text embedded, compared with
    its 10 nearest memories of its type, merged or superseded at once (docs/mcp-tools.md). The
    alternative, infer=false (store only), alternates with it text by text on the same store."""
    path = working_copy(10000, work, vectors=True)
    semantic = semantic_for(work)
    caller = operations.Caller(SqliteStore(path), identity(work), actor="bench", semantic=semantic)
    drafts = list(gen.records(100 + 400 * max(1, args.repeat), seed=99))
    for record in drafts[:100]:  # warm: the model, the vector index, SQLite's pages
        operations.add_memory(caller, record["memory"] + " (warm-up)", metadata=record["metadata"])
    timings: dict[bool, list[float]] = {True: [], False: []}
    events: dict[str, int] = {}
    for i, record in enumerate(drafts[100:]):
        infer = i % 2 == 0
        started = time.perf_counter()
        answer = operations.add_memory(caller, record["memory"], metadata=record["metadata"], infer=infer)
        timings[infer].append(time.perf_counter() - started)
        for result in answer["results"]:
            events[result["event"]] = events.get(result["event"], 0) + 1
    embeds = []
    for record in drafts[100:200]:
        started = time.perf_counter()
        semantic.query_vector(record["memory"] + " (embed)")
        embeds.append(time.perf_counter() - started)
    p50 = ms(percentile(timings[True], 50))
    figure = Figure("add_memory(infer=true) p50, 10k with stored vectors", "<= 15 ms", p50, "ms", ok=p50 <= 15.0)
    figure.details["p95"] = fmt(ms(percentile(timings[True], 95)), "ms")
    figure.details["adds"] = f"{len(timings[True])} with infer, {len(timings[False])} without, alternating"
    figure.details["of which the new text's embedding (p50, measured alone)"] = fmt(ms(percentile(embeds, 50)), "ms")
    figure.details["load average at the end"] = f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cpus"
    figure.details["events"] = ", ".join(f"{k} {v}" for k, v in sorted(events.items()))
    figure.alternative = ms(percentile(timings[False], 50))
    figure.alternative_short = "infer=false, same store"
    figure.alternative_label = "add_memory(infer=false) (store only, no embedding inline), alternating in the same run"
    report(figure)
    caller.store.close()


def bench_plan_vectors(args, work: Path) -> None:
    n = 100000
    path = working_copy(n, work, vectors=True)
    env = {"MEM0_HOME": str(work)}
    runs = [
        run_measured(
            [str(BIN / "mem0-dream"), "--plan", "--json", "-o", str(work / "plan-v.json"), *scope_args(path)],
            env=env,
            cwd=work,
        )
        for _ in range(max(1, args.repeat))
    ]
    wall, rss = statistics.median(r[0] for r in runs), max(r[1] for r in runs)
    lexical = run_measured(
        [str(BIN / "mem0-dream"), "--plan", "--json", "-o", str(work / "plan-l.json"), *scope_args(path)],
        env=LEXICAL,
        cwd=work,
    )
    plan = json.loads((work / "plan-v.json").read_text())
    figure = Figure(
        "mem0-dream --plan over 100k with stored vectors",
        "<= 15 s, <= 1.5 GB peak RSS",
        wall,
        "s",
        ok=wall <= 15 and rss <= 1536,
    )
    figure.details["peak RSS"] = f"{rss:,.0f} MB"
    figure.details["runs"] = ", ".join(f"{r[0]:.1f} s" for r in runs)
    figure.details["plan"] = (
        f"{len(plan['merges']):,} merges, {len(plan['conflicts']):,} conflicts, "
        f"{len(plan['prunes']):,} prunes over {plan['memory_count']:,} memories"
    )
    figure.alternative, figure.alternative_short = lexical[0], "lexical rules only"
    figure.alternative_label = f"the same plan without the embedder (v1 rules), same run, {lexical[1]:,.0f} MB"
    report(figure)


def _copy_store(source: Path, target: Path) -> None:
    """A consistent copy of a SQLite store (its WAL included), replacing `target`."""
    for suffix in ("", "-wal", "-shm"):
        Path(str(target) + suffix).unlink(missing_ok=True)
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)
    src.close()
    dst.close()


def bench_auto_vectors(args, work: Path) -> None:
    n = 10000
    lock = work / "dream.lock"
    memos = work / "dream" / "pairs"  # the remembered pair decisions (docs/dream.md, "Remembered pairs")
    nightly, forgotten, lexical = [], [], []
    for _ in range(max(1, args.repeat)):
        shutil.rmtree(memos, ignore_errors=True)
        path = working_copy(n, work, vectors=True)
        env = {"MEM0_DREAM_LOCK": str(lock), "MEM0_HOME": str(work)}
        command = [str(BIN / "mem0-dream"), "--auto", *scope_args(path)]
        run_measured(command, env=env, cwd=work)  # the backlog
        after_backlog = work / "after-backlog.sqlite3"
        _copy_store(path, after_backlog)
        wall, _, out = run_measured(command, env=env, cwd=work)
        nightly.append((wall, out.strip()))
        _copy_store(after_backlog, path)  # the same night again, with nothing remembered
        shutil.rmtree(memos, ignore_errors=True)
        forgotten.append(run_measured(command, env=env, cwd=work)[0])
        _copy_store(after_backlog, path)
        lexical.append(run_measured(command, env={**env, **LEXICAL}, cwd=work)[0])
    steady = statistics.median(w for w, _ in nightly)
    figure = Figure(
        "mem0-dream --auto cold on 10k with stored vectors (nightly)", "<= 1.5 s wall", steady, "s", ok=steady <= 1.5
    )
    figure.details["output"] = nightly[0][1]
    figure.details["every nightly run"] = ", ".join(fmt(w, "s") for w, _ in nightly)
    figure.details["the same night with no pair decisions remembered (the first night after an upgrade)"] = fmt(
        statistics.median(forgotten), "s"
    )
    figure.alternative, figure.alternative_short = statistics.median(lexical), "without the embedder"
    figure.alternative_label = "the same nightly run with MEM0_EMBEDDER=none (v1 rules), same run"
    report(figure)


BENCHES = {
    "search": bench_search,
    "add": bench_add,
    "page": bench_page,
    "plan": bench_plan,
    "auto": bench_auto,
    "mcp": bench_mcp,
    "import": bench_import,
    "embed": bench_embed,
    "hybrid": bench_hybrid,
    "add-infer": bench_add_infer,
    "plan-vectors": bench_plan_vectors,
    "auto-vectors": bench_auto_vectors,
}


def _server_benches() -> dict:
    import server_bench  # mem0-server's figures (docs/server.md): MemoryClient over HTTP

    return server_bench.benches(sys.modules[__name__])


BENCHES |= {
    name: (lambda args, work, name=name: _server_benches()[name](args, work))
    for name in ("server-add", "server-search", "server-load")
}


def summary_table() -> str:
    lines = ["| figure | target | ours | alternative | ratio |", "|---|---|---|---|---|"]
    for f in FIGURES:
        verdict = {True: "", False: " (misses)", None: ""}[f.ok]
        ratio = f"{f.ratio:,.1f}x" if f.ratio is not None else "—"
        alt = f"{fmt(f.alternative, f.unit)} ({f.alternative_short})" if f.alternative else "—"
        lines.append(f"| {f.name} | {f.target} | {fmt(f.ours, f.unit)}{verdict} | {alt} | {ratio} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("which", nargs="*", default=["all"], help=f"all or any of: {', '.join(BENCHES)}")
    parser.add_argument("--repeat", type=int, default=3, help="passes over each measurement (default 3)")
    parser.add_argument("--no-mem0", action="store_true", help="skip mem0ai OSS (needs the bench extra)")
    args = parser.parse_args(argv)
    chosen = list(BENCHES) if "all" in args.which else args.which
    unknown = [w for w in chosen if w not in BENCHES]
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}")
    print(
        f"# benchmarks on {platform.node()}: {os.cpu_count()} cpus, Python {platform.python_version()}, "
        f"load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="mem0-bench-") as tmp:
        for name in chosen:
            BENCHES[name](args, Path(tmp))
    print("\n" + summary_table())
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "latest.json").write_text(
        json.dumps(
            {
                "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
                "load_average": os.getloadavg(),
                "figures": [{**asdict(f), "ratio": f.ratio} for f in FIGURES],
            },
            indent=2,
        )
        + "\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
