"""Search quality on the labelled sets: hit@5 and recall@10 of our hybrid search beside its
lexical side alone (BM25), its vector side alone (dense), and a plain BM25 over the same texts
(Okapi BM25, k1 1.5, b 0.75, on lower-cased words: the reference), in one run (docs/quality.md,
"Search"). With `--explore`, fusions of the two sides are scored too, from the same candidates.

    .venv/bin/python benchmarks/search_quality.py                    # dev, held-out, conversations
    .venv/bin/python benchmarks/search_quality.py --data conversations --explore

A question is a hit at k when one of its relevant memories is among the first k results;
recall@10 is the share of its relevant memories in the first 10. Every question searches its
own project's memories, as the hooks and the MCP server do.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "plugin"))
sys.path.insert(0, str(ROOT.parent / "tests"))

import labelled  # noqa: E402
from mem0_plugin import operations  # noqa: E402
from mem0_plugin.filters import compile_filters  # noqa: E402
from mem0_plugin.semantic import Semantic  # noqa: E402
from mem0_plugin.store import ReadMode, open_store  # noqa: E402

SETS = {
    "dev": labelled.DATA,
    "held-out": labelled.HELD_OUT,
    "conversations": ROOT.parent / "tests" / "data" / "conversations.json",
}
POOL = 50  # candidates per side for --explore
_WORD = re.compile(r"\w+", re.UNICODE)


class PlainBm25:
    """Okapi BM25 over lower-cased word tokens, per project: the reference (no stop words, no
    stems, no glosses; CJK runs as single tokens)."""

    def __init__(self, texts: dict[str, str], k1: float = 1.5, b: float = 0.75):
        self.k1, self.b = k1, b
        self.docs = {key: Counter(_WORD.findall(text.lower())) for key, text in texts.items()}
        self.mean = sum(sum(c.values()) for c in self.docs.values()) / max(len(self.docs), 1)
        df: Counter = Counter()
        for counts in self.docs.values():
            df.update(counts.keys())
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def rank(self, query: str, k: int) -> list[str]:
        terms = set(_WORD.findall(query.lower()))
        scores = []
        for key, counts in self.docs.items():
            length = sum(counts.values())
            s = sum(
                self.idf[t]
                * counts[t]
                * (self.k1 + 1)
                / (counts[t] + self.k1 * (1 - self.b + self.b * length / self.mean))
                for t in terms
                if t in counts
            )
            if s > 0:
                scores.append((-s, key))
        return [key for _, key in sorted(scores)[:k]]


def embed_store(store, data: dict, semantic: Semantic) -> None:
    labelled.store_cached_vectors(store, data, semantic.model_id)
    semantic.backfill(store, labelled.USER)


class Measure:
    def __init__(self) -> None:
        self.hits: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        self.recall: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])

    def add(self, group: str, ranked: list[str], relevant: set[str]) -> None:
        for name in ("all", group):
            self.hits[name][0] += any(key in relevant for key in ranked[:5])
            self.hits[name][1] += 1
            self.recall[name][0] += len(relevant & set(ranked[:10])) / len(relevant)
            self.recall[name][1] += 1

    def line(self, label: str) -> str:
        parts = [
            f"{name} {self.hits[name][0] / self.hits[name][1]:.2f}/{self.recall[name][0] / self.recall[name][1]:.2f}"
            for name in sorted(self.hits, key=lambda n: (n != "all", n))
        ]
        return f"  {label:<28} hit@5/recall@10: " + ", ".join(parts)


def run(name: str, explore: bool) -> dict[str, Measure]:
    data = labelled.load(SETS[name])
    group_of = "category" if name == "conversations" else "lang"
    key_of_id = {labelled.memory_id(m["key"]): m["key"] for m in data["memories"]}
    texts_by_project: dict[str, dict[str, str]] = defaultdict(dict)
    for m in data["memories"]:
        texts_by_project[m["project"]][m["key"]] = m["text"]
    plain = {project: PlainBm25(texts) for project, texts in texts_by_project.items()}
    measures: dict[str, Measure] = defaultdict(Measure)
    collected = []
    with tempfile.TemporaryDirectory(prefix="mem0-search-quality-") as tmp:
        folder = Path(tmp)
        url = labelled.build_store(data, folder)
        semantic = Semantic.from_home(folder)
        with open_store(url) as store:
            embed_store(store, data, semantic)
            for query in data["queries"]:
                identity = labelled.identity(url, folder, query["project"])
                relevant = set(query["relevant"])
                group = query.get(group_of, "?")
                lexical = operations.Caller(store, identity, actor="cli")
                hybrid = operations.Caller(store, identity, actor="cli", semantic=semantic)
                ranked = {
                    "ours: hybrid": [
                        key_of_id[r["id"]]
                        for r in operations.search_memories(hybrid, query["query"], top_k=10)["results"]
                    ],
                    "ours: lexical (BM25)": [
                        key_of_id[r["id"]]
                        for r in operations.search_memories(lexical, query["query"], top_k=10)["results"]
                    ],
                    "reference: plain BM25": plain[query["project"]].rank(query["query"], 10),
                }
                where = compile_filters({"app_id": query["project"]}, user_id=labelled.USER)
                vector = semantic.query_vector_soon(query["query"])()  # as hybrid search embeds it
                near = store.nearest(labelled.USER, vector, semantic.model_id, where, ReadMode.DEFAULT, POOL)
                ranked["ours: dense (vectors alone)"] = [key_of_id[m.id] for m, _ in near[:10]]
                for label, keys in ranked.items():
                    measures[label].add(group, keys, relevant)
                if explore:
                    lex = store.lexical_search(
                        labelled.USER, query["query"], where, ReadMode.DEFAULT, POOL, app_id=query["project"]
                    )
                    collected.append(
                        (
                            group,
                            relevant,
                            [(key_of_id[m.id], s) for m, s in lex],
                            [(key_of_id[m.id], c) for m, c in near],
                        )
                    )
    if explore:
        for label, measure in explore_fusions(collected).items():
            measures[label] = measure
    return measures


def explore_fusions(collected: list) -> dict[str, Measure]:
    """Fusions of the two sides' candidates: weighted sums of the scores, and reciprocal ranks."""
    out: dict[str, Measure] = {}
    variants: dict[str, object] = {}
    for w in (0.3, 0.4, 0.5, 0.6, 0.7):
        variants[f"sum w={w}"] = ("sum", w)
    for k in (10, 60):
        variants[f"rrf k={k}"] = ("rrf", k)
    for label, (kind, p) in variants.items():
        measure = Measure()
        for group, relevant, lex, near in collected:
            scores: dict[str, float] = defaultdict(float)
            if kind == "sum":
                lexical, cosines = dict(lex), dict(near)
                for key in set(lexical) | set(cosines):
                    scores[key] = p * lexical.get(key, 0.0) + (1 - p) * max(cosines.get(key, 0.0), 0.0)
            else:
                for rank, (key, _) in enumerate(lex):
                    scores[key] += 1 / (p + rank + 1)
                for rank, (key, _) in enumerate(near):
                    scores[key] += 1 / (p + rank + 1)
            ranked = [key for key, _ in sorted(scores.items(), key=lambda kv: -kv[1])]
            measure.add(group, ranked, relevant)
        out[f"fusion: {label}"] = measure
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", choices=sorted(SETS), action="append", help="which sets (default: all present)")
    parser.add_argument("--explore", action="store_true", help="also score fusions of the two sides")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args()
    figures = {}
    for name in args.data or [n for n, p in SETS.items() if p.exists()]:
        measures = run(name, args.explore)
        print(f"{name} ({len(labelled.load(SETS[name])['queries'])} questions):")
        for label, measure in measures.items():
            print(measure.line(label))
        figures[name] = {
            label: {g: [m.hits[g][0] / m.hits[g][1], m.recall[g][0] / m.recall[g][1]] for g in m.hits}
            for label, m in measures.items()
        }
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
