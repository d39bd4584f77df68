"""The calibration of search scores and the recall hooks' relevance floor, from the development
set (docs/search.md, "Scores"): what `store/ranking.py` and `hooks/recall.py` hold.

    .venv/bin/python benchmarks/calibrate.py             # fit on dev; check on held-out
    .venv/bin/python benchmarks/calibrate.py --raw       # the raw fused sums (before calibration)

For each labelled question the first 20 results of a search are taken, each labelled relevant
or not, and for each off-topic prompt (tests/data/off_topic_prompts.json: prompts no memory
answers) its first 5, all irrelevant. A logistic curve P(relevant | s) = 1 / (1 + exp(-(a s + b)))
is fitted to the raw score s of the hybrid search (0.5 lexical + 0.5 cosine) and, separately,
of the lexical search alone. Then, for floors from 0.05 to 0.95: the share of off-topic prompts
that would get any memory (a trivial prompt gets none), and the share of questions whose
recalled memories (at most 5, at or above the floor) hold a relevant one, beside hit@5.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "plugin"))
sys.path.insert(0, str(ROOT.parent / "tests"))

import labelled  # noqa: E402
import numpy as np  # noqa: E402
import search_quality  # noqa: E402
from mem0_plugin import operations  # noqa: E402
from mem0_plugin.hooks.recall import trivial  # noqa: E402
from mem0_plugin.semantic import Semantic  # noqa: E402
from mem0_plugin.store import open_store, ranking  # noqa: E402

PROMPTS = ROOT.parent / "tests" / "data" / "off_topic_prompts.json"


def fit(scores: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    """(a, b) of the logistic curve of `labels` on `scores`, by Newton's method."""
    a, b = 1.0, 0.0
    x = np.stack([scores, np.ones_like(scores)], axis=1)
    for _ in range(100):
        p = 1 / (1 + np.exp(-(x @ np.array([a, b]))))
        gradient = x.T @ (labels - p)
        hessian = -(x.T * (p * (1 - p))) @ x - 1e-9 * np.eye(2)
        step = np.linalg.solve(hessian, gradient)
        a, b = a - step[0], b - step[1]
        if np.abs(step).max() < 1e-9:
            break
    return float(a), float(b)


def collect(name: str, prompts: list[dict], semantic_on: bool) -> tuple[list, list]:
    """(per question: [(score, relevant)] of its first 20; per off-topic prompt: its first 5
    scores): the raw fused sums, the curve's input (the calibration itself is turned off here)."""
    ranking.calibrated = lambda raw, curve: max(0.0, min(1.0, raw))
    data = labelled.load(search_quality.SETS[name])
    key_of_id = {labelled.memory_id(m["key"]): m["key"] for m in data["memories"]}
    questions, off = [], []
    with tempfile.TemporaryDirectory(prefix="mem0-calibrate-") as tmp:
        folder = Path(tmp)
        url = labelled.build_store(data, folder)
        semantic = Semantic.from_home(folder) if semantic_on else None
        with open_store(url) as store:
            if semantic is not None:
                search_quality.embed_store(store, data, semantic)
            for query in data["queries"]:
                caller = operations.Caller(store, labelled.identity(url, folder, query["project"]), semantic=semantic)
                found = operations.search_memories(caller, query["query"], top_k=20)["results"]
                questions.append([(r["score"], key_of_id[r["id"]] in query["relevant"]) for r in found])
            for prompt in prompts:
                project = prompt["project"] or data["queries"][len(off) % len(data["queries"])]["project"]
                if trivial(prompt["prompt"]):
                    off.append([])
                    continue
                caller = operations.Caller(store, labelled.identity(url, folder, project), semantic=semantic)
                off.append(
                    [r["score"] for r in operations.search_memories(caller, prompt["prompt"], top_k=5)["results"]]
                )
    return questions, off


def report(label: str, questions: list, off: list, curve: tuple[float, float] | None) -> None:
    a, b = curve if curve else (None, None)

    def calibrated(s: float) -> float:
        return s if curve is None else 1 / (1 + math.exp(-(a * s + b)))

    hit5 = sum(any(rel for _, rel in q[:5]) for q in questions) / len(questions)
    print(f"{label}: hit@5 {hit5:.3f} over {len(questions)} questions; {len(off)} off-topic prompts")
    for floor in [f / 100 for f in range(5, 61)]:
        recalled = sum(any(rel for s, rel in q[:5] if calibrated(s) >= floor) for q in questions) / len(questions)
        noisy = sum(any(calibrated(s) >= floor for s in o) for o in off) / len(off)
        print(f"  floor {floor:.2f}: questions answered {recalled:.3f}, off-topic prompts given any {noisy:.3f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--raw", action="store_true", help="report the raw fused sums, fit nothing")
    args = parser.parse_args()
    product = {"hybrid": ranking.HYBRID_CURVE, "lexical": ranking.LEXICAL_CURVE}
    prompts = json.loads(PROMPTS.read_text(encoding="utf-8"))["prompts"]
    for semantic_on, label in ((True, "hybrid"), (False, "lexical")):
        questions, off = collect("dev", [p for p in prompts if p["set"] == "dev"], semantic_on)
        curve = None
        if not args.raw:
            pairs = [(s, rel) for q in questions for s, rel in q] + [(s, False) for o in off for s in o]
            curve = fit(np.array([s for s, _ in pairs]), np.array([float(r) for _, r in pairs]))
            print(f"{label}: P(relevant | s) = 1 / (1 + exp(-({curve[0]:.4f} s + {curve[1]:.4f})))")
            print(f"  (store/ranking.py holds {product[label]})")
        report(f"{label}, dev", questions, off, curve)
        questions, off = collect("held-out", [p for p in prompts if p["set"] == "held-out"], semantic_on)
        report(f"{label}, held-out", questions, off, curve)
    return 0


if __name__ == "__main__":
    sys.exit(main())
