"""Quality on a labelled set (docs/quality.md): our dream and search, lexical and hybrid,
beside mem0ai's OSS `Memory.search` with the same model (all-MiniLM-L6-v2).

    .venv-bench/bin/python benchmarks/quality.py          # ours and mem0ai OSS (bench extra)
    .venv/bin/python benchmarks/quality.py --no-mem0      # ours only
    .venv/bin/python benchmarks/quality.py --data held-out --no-mem0   # the held-out set, slice by slice too

The development set (`--data dev`, the default) is the one the rules are tuned on and the test
suite scores; the held-out set is never tuned on and only scored here.

mem0ai OSS gets each project's memories through `Memory.add(infer=False)` (user_id = the
project, so each question searches its own project's memories, as ours do) and answers
`Memory.search(question, top_k=5)`; a question is a hit when a relevant memory's text is
among the five.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT.parent / "plugin"))
sys.path.insert(0, str(ROOT.parent / "tests"))

import labelled  # noqa: E402
from mem0_plugin.semantic import Semantic  # noqa: E402


def mem0_hits(data: dict, folder: Path, k: int = 5) -> dict[str, list[int]]:
    import mem0_oss

    memory = mem0_oss.open_memory(folder)
    started = time.perf_counter()
    for m in data["memories"]:
        memory.add(m["text"], user_id=m["project"], metadata={"type": m["type"]}, infer=False)
    print(
        f"mem0ai OSS: added {len(data['memories'])} memories in {time.perf_counter() - started:.0f}s", file=sys.stderr
    )
    text_of = {m["key"]: m["text"] for m in data["memories"]}
    hits: dict[str, list[int]] = {}
    for query in data["queries"]:
        found = memory.search(query["query"], filters={"user_id": query["project"]}, top_k=k)
        results = found.get("results", found) if isinstance(found, dict) else found
        texts = {r.get("memory") for r in results}
        counts = hits.setdefault(query["lang"], [0, 0])
        counts[0] += any(text_of[key] in texts for key in query["relevant"])
        counts[1] += 1
    mem0_oss.close(memory)
    return hits


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-mem0", action="store_true", help="skip mem0ai OSS (needs the bench extra)")
    parser.add_argument("--data", choices=("dev", "held-out"), default="dev", help="which labelled set")
    args = parser.parse_args()
    data = labelled.load(labelled.DATA if args.data == "dev" else labelled.HELD_OUT)
    with tempfile.TemporaryDirectory(prefix="mem0-quality-") as tmp:
        folder = Path(tmp)
        url = labelled.build_store(data, folder)
        for label, semantic in (("lexical only", None), ("hybrid", Semantic.from_home(folder))):
            scores = labelled.score_search(
                data, url, folder, semantic, labelled.score_dream(data, url, folder, semantic)
            )
            print(labelled.describe(scores, label))
        for part in data.get("slices", []):  # the held-out set's slices, each as it came
            piece = labelled.only(data, part["projects"])
            scores = labelled.score_dream(piece, url, folder, Semantic.from_home(folder))
            print(
                labelled.describe(
                    labelled.score_search(piece, url, folder, Semantic.from_home(folder), scores), part["name"]
                )
            )
        if not args.no_mem0:
            import mem0_oss

            reason = mem0_oss.available()
            if reason:
                print(f"mem0ai OSS: {reason}")
                return 0
            hits = mem0_hits(data, folder / "mem0")
            total = sum(h for h, _ in hits.values()) / sum(n for _, n in hits.values())
            langs = ", ".join(f"{lang} {h / n:.2f}" for lang, (h, n) in sorted(hits.items()))
            print(f"mem0ai OSS Memory.search (all-MiniLM-L6-v2, fp32): search hit@5 {total:.2f} ({langs})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
