"""Benchmarks of meaning (docs/embeddings.md): model load, embed throughput, and search p50
with the query's embedding beside lexical-only search, on a store of N memories.

    python benchmarks/meaning.py [--memories 10000]

Each figure is printed beside the naive or lexical way, as a ratio from the same run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugin"))

from mem0_plugin import operations  # noqa: E402
from mem0_plugin.identity import Identity  # noqa: E402
from mem0_plugin.semantic import Semantic  # noqa: E402
from mem0_plugin.store import open_store  # noqa: E402

SUBJECTS = ["the ledger API", "the billing worker", "the storefront", "the data pipeline", "the mobile app",
            "the search service", "the auth gateway", "the metrics exporter", "the admin console", "the CLI"]
FACTS = ["listens on port {n} in local development", "is deployed to region eu-west-{k} with {n} replicas",
         "stores its state in PostgreSQL table t_{n} and never in Redis", "is tested with pytest -k case_{n}",
         "logs to CloudWatch group /app/{n} with a retention of {k} days",
         "needs the environment variable FEATURE_{n} set before it starts"]


def texts(count: int) -> list[str]:
    return [f"{SUBJECTS[i % len(SUBJECTS)].capitalize()} {FACTS[i % len(FACTS)].format(n=i, k=i % 7)}"
            for i in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp())
    semantic = Semantic.from_home(home)
    started = time.perf_counter()
    semantic.available()
    print(f"model load: {time.perf_counter() - started:.2f} s ({semantic.model_id})")
    sample = texts(2000)
    started = time.perf_counter()
    semantic.embed(sample)
    batched = len(sample) / (time.perf_counter() - started)
    started = time.perf_counter()
    for text in sample[:200]:
        semantic.embed([text])
    one_by_one = 200 / (time.perf_counter() - started)
    print(f"embed throughput: {batched:.0f} texts/s batched vs {one_by_one:.0f} texts/s one at a time "
          f"({batched / one_by_one:.1f}x)")
    url = f"sqlite:///{home}/bench.sqlite3"
    identity = Identity(user_id="bench", project_id="bench", branch="main", home=home, store_url=url, cwd=home)
    store = open_store(url)
    lexical = operations.Caller(store, identity, actor="cli")
    with store.write() as writer:
        from mem0_plugin.records import Memory, new_memory_id
        from mem0_plugin.timeutil import format_timestamp, utc_now
        stamp = format_timestamp(utc_now())
        for text in texts(args.memories):
            writer.insert(Memory(id=new_memory_id(), memory=text, user_id="bench", app_id="bench",
                                 metadata={"type": "environmental"}, created_at=stamp, updated_at=stamp), actor="bench")
    started = time.perf_counter()
    semantic.backfill(store, "bench", "bench")
    print(f"backfill of {args.memories}: {time.perf_counter() - started:.1f} s")
    hybrid = operations.Caller(store, identity, actor="cli", semantic=semantic)
    queries = [f"which port does {SUBJECTS[i % len(SUBJECTS)]} use locally?" for i in range(args.queries)]
    operations.search_memories(hybrid, queries[0])
    timings = {}
    for label, caller in (("lexical", lexical), ("hybrid", hybrid)):
        spent = []
        for query in queries:
            started = time.perf_counter()
            operations.search_memories(caller, query)
            spent.append((time.perf_counter() - started) * 1000)
        timings[label] = statistics.median(spent)
    print(f"search_memories p50 @{args.memories}: hybrid {timings['hybrid']:.1f} ms (query embedding included) "
          f"vs lexical {timings['lexical']:.1f} ms ({timings['hybrid'] / timings['lexical']:.1f}x)")


if __name__ == "__main__":
    main()
