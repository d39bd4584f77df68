"""`mem0-server` figures (docs/server.md): mem0ai's own `MemoryClient` against a real
`mem0-server` process on loopback, each beside the same call made in process through
`operations` on a copy of the same store (the ratio is the HTTP round trip's cost).

    .venv/bin/python benchmarks/run.py server-add server-search server-load --no-mem0

Figures: `add(infer=False)` p50 on the 10k store (target <= 5 ms); `search` p50 at 10k with the
query's embedding (<= 25 ms; lexical too); 50 concurrent clients for 30 s (no error, p99)."""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

os.environ.setdefault("MEM0_TELEMETRY", "false")  # mem0ai reads it at import: no telemetry from a benchmark

import generate as gen
import yaml
from mem0_plugin import operations
from mem0_plugin.store import SqliteStore

run: Any = None  # benchmarks/run.py, the running one (`benches`): its Figure, report, working_copy ...

KEY = "m0-benchmark-0123456789abcdef"
SCOPE = {"AND": [{"user_id": gen.USER}, {"app_id": gen.PROJECT}]}
CLIENTS = 50
LOAD_SECONDS = float(os.environ.get("MEM0_BENCH_LOAD_SECONDS", "30"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def server_process(store: Path, home: Path, *, embedder: bool) -> Iterator[str]:
    """The installed `mem0-server` over `store`, a key for the benchmark's user; its base URL."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(yaml.safe_dump({"server": {"api_keys": [{"key": KEY, "users": [gen.USER]}]}}))
    env = {**os.environ, "MEM0_HOME": str(home), "MEM0_PROJECT_ID": gen.PROJECT}
    env["MEM0_EMBEDDER"] = "" if embedder else "none"
    port = free_port()
    process = subprocess.Popen(
        [str(run.BIN / "mem0-server"), "--port", str(port), "--store", f"sqlite:///{store.resolve()}"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    SERVER_PIDS[url] = process.pid
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    problem = process.stderr.read() if process.stderr else ""
                    raise RuntimeError(f"mem0-server did not start: {problem}") from None
                time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


SERVER_PIDS: dict[str, int] = {}


def cpu_seconds(url: str) -> float:
    """CPU time the server process has used (user + system): what a request costs it, whatever the
    machine's load does to the wall-clock figures."""
    fields = Path(f"/proc/{SERVER_PIDS[url]}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def client(url: str):
    from mem0 import MemoryClient

    return MemoryClient(api_key=KEY, host=url)


def copy_in(folder: Path, n: int = 10000, *, vectors: bool = False) -> Path:
    """A fresh copy of the cached store in its own folder (`run.working_copy`)."""
    folder.mkdir(parents=True, exist_ok=True)
    return run.working_copy(n, folder, vectors=vectors)


def once(fn: Callable[..., object], *args: object, **kwargs: object) -> float:
    started = time.perf_counter()
    fn(*args, **kwargs)
    return time.perf_counter() - started


def bench_server_add(args, work: Path) -> None:
    texts = [r["memory"] + f" (http {i})" for i, r in enumerate(gen.records(800, seed=98))]
    metadata = {"type": "task_learning", "confidence": 0.7}
    local = operations.Caller(SqliteStore(copy_in(work / "local-add")), run.identity(work), actor="bench")
    with server_process(copy_in(work / "server-add"), work / "home-add", embedder=False) as url:
        sdk = client(url)
        for text in texts[:50]:
            sdk.add(text, user_id=gen.USER, app_id=gen.PROJECT, metadata=metadata, infer=False)
            operations.add_memory(local, text, metadata=metadata, infer=False)
        http_times, local_times = [], []
        cpu = cpu_seconds(url)
        for text in texts[50:450]:  # alternating, so that both see the same load
            http_times.append(once(sdk.add, text, user_id=gen.USER, app_id=gen.PROJECT, metadata=metadata, infer=False))
            local_times.append(once(operations.add_memory, local, text + " ", metadata=metadata, infer=False))
        server_cpu = (cpu_seconds(url) - cpu) / len(http_times)
    local.store.close()
    p50 = run.ms(statistics.median(http_times))
    figure = run.Figure("MemoryClient.add(infer=False) p50 via mem0-server, 10k", "<= 5 ms", p50, "ms", ok=p50 <= 5.0)
    figure.details["p95"] = run.fmt(run.ms(run.percentile(http_times, 95)), "ms")
    figure.details["server CPU per request"] = run.fmt(run.ms(server_cpu), "ms")
    figure.details["load average"] = f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus"
    figure.alternative = run.ms(statistics.median(local_times))
    figure.alternative_short = "in process"
    figure.alternative_label = "operations.add_memory(infer=False) in process, same store size, alternating"
    run.report(figure)


def bench_server_search(args, work: Path) -> None:
    queries = gen.queries(200, seed=11)
    for vectors, target in ((True, 25.0), (False, 25.0)):
        kind = "with the query's embedding" if vectors else "lexical (MEM0_EMBEDDER=none)"
        store = copy_in(work / ("vec" if vectors else "lex"), vectors=vectors)
        local_store = SqliteStore(copy_in(work / ("vec-local" if vectors else "lex-local"), vectors=vectors))
        local = operations.Caller(
            local_store, run.identity(work), actor="bench", semantic=run.semantic_for(work) if vectors else None
        )
        with server_process(store, work / f"home-search-{vectors}", embedder=vectors) as url:
            sdk = client(url)
            for q in queries[:20]:
                sdk.search(q, filters=SCOPE, top_k=10)
                operations.search_memories(local, q, SCOPE)
            http_times, local_times = [], []
            cpu = cpu_seconds(url)
            for _ in range(args.repeat):
                for q in queries:
                    http_times.append(once(sdk.search, q, filters=SCOPE, top_k=10))
                    local_times.append(once(operations.search_memories, local, q, SCOPE))
            server_cpu = (cpu_seconds(url) - cpu) / len(http_times)
        local_store.close()
        p50 = run.ms(run.percentile(http_times, 50))
        figure = run.Figure(f"MemoryClient.search p50 via mem0-server, 10k, {kind}", f"<= {target:g} ms", p50, "ms")
        figure.ok = p50 <= target
        figure.details["p95"] = run.fmt(run.ms(run.percentile(http_times, 95)), "ms")
        figure.details["server CPU per request"] = run.fmt(run.ms(server_cpu), "ms")
        figure.details["load average"] = f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus"
        figure.alternative = run.ms(run.percentile(local_times, 50))
        figure.alternative_short = "in process"
        figure.alternative_label = "operations.search_memories with the same filters, in process, alternating"
        run.report(figure)


def _load(calls: list[Callable[[int], object]], seconds: float) -> tuple[list[float], int, list[str]]:
    """Each of the callables (one per client) called in a loop on its own thread for `seconds`."""
    times: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def run(call: Callable[[int], object]) -> None:
        mine, i = [], 0
        while time.monotonic() < stop:
            started = time.perf_counter()
            try:
                call(i)
            except Exception as exc:  # counted and shown: the figure is "no error"
                with lock:
                    errors.append(f"{type(exc).__name__}: {exc}"[:200])
            mine.append(time.perf_counter() - started)
            i += 1
        with lock:
            times.extend(mine)

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return times, len(times), errors


def bench_server_load(args, work: Path) -> None:
    """50 clients, each its own MemoryClient, for 30 s: four searches for each add."""
    queries = gen.queries(200, seed=12)

    def mix(search: Callable[[str], object], add: Callable[[str], object], n: int) -> Callable[[int], object]:
        return lambda i: add(f"load client {n} note {i}") if i % 5 == 4 else search(queries[(n * 7 + i) % len(queries)])

    with server_process(copy_in(work / "load"), work / "home-load", embedder=False) as url:
        sdks = [client(url) for _ in range(CLIENTS)]
        calls = [
            mix(
                lambda q, s=s: s.search(q, filters=SCOPE, top_k=10),
                lambda t, s=s: s.add(t, user_id=gen.USER, app_id=gen.PROJECT, infer=False),
                n,
            )
            for n, s in enumerate(sdks)
        ]
        http_times, http_count, errors = _load(calls, LOAD_SECONDS)
    local = operations.Caller(SqliteStore(copy_in(work / "load-local")), run.identity(work), actor="bench")
    local_calls = [
        mix(
            lambda q: operations.search_memories(local, q, SCOPE),
            lambda t: operations.add_memory(local, t, infer=False),
            n,
        )
        for n in range(CLIENTS)
    ]
    local_times, local_count, local_errors = _load(local_calls, LOAD_SECONDS)
    local.store.close()
    p99 = run.ms(run.percentile(http_times, 99))
    figure = run.Figure(
        f"{CLIENTS} concurrent MemoryClients for {LOAD_SECONDS:g} s via mem0-server (4 searches : 1 add), p99",
        "no error, p99 reported",
        p99,
        "ms",
        ok=not errors,
    )
    figure.details["requests"] = f"{http_count:,} ({http_count / LOAD_SECONDS:,.0f}/s), errors {len(errors)}"
    figure.details["p50"] = run.fmt(run.ms(run.percentile(http_times, 50)), "ms")
    figure.details["load average"] = f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus"
    if errors:
        figure.details["first error"] = errors[0]
    figure.alternative = run.ms(run.percentile(local_times, 99))
    figure.alternative_short = "in process, 50 threads"
    figure.alternative_label = (
        f"the same mix on 50 threads in process: {local_count:,} calls ({local_count / LOAD_SECONDS:,.0f}/s), "
        f"p50 {run.fmt(run.ms(run.percentile(local_times, 50)), 'ms')}, errors {len(local_errors)}"
    )
    run.report(figure)


def benches(run_module: Any) -> dict[str, Callable]:
    """These figures, reported through `run_module` (benchmarks/run.py as it runs)."""
    global run
    run = run_module
    return {"server-add": bench_server_add, "server-search": bench_server_search, "server-load": bench_server_load}
