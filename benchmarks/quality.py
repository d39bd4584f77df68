"""Quality on a labelled set (docs/quality.md): our dream and search, lexical and hybrid,
beside mem0ai's OSS `Memory.search` with the same model (all-MiniLM-L6-v2).

    .venv-bench/bin/python benchmarks/quality.py          # ours and mem0ai OSS (bench extra)
    .venv/bin/python benchmarks/quality.py --no-mem0      # ours only
    .venv/bin/python benchmarks/quality.py --data held-out --no-mem0   # the held-out set, slice by slice too
    .venv/bin/python benchmarks/quality.py --ablation     # each named rule off in turn, on both sets
    .venv/bin/python benchmarks/quality.py --unrendered   # beside memories embedded without their English

The development set (`--data dev`, the default) is the one the rules are tuned on and the test
suite scores; the held-out set is never tuned on and only scored here.

`--ablation` scores dream's plans, made by the pure analysis from the model's vectors
(`labelled.analysed_plans`), on both sets with every rule of the registry (`relation.rules`) and
then with each one off in turn: what the rule adds (the right merges, contradictions and
supersedes lost without it) and what it costs (the wrong ones it makes, and merges of a labelled
contradiction), and its share of the analysis' CPU time (the rule's calls timed in one run with
every rule on; a rule calling another counts in both). It also gives the rates of marked
replacements superseded by `--auto` (the plan's supersedes) and by the write path
(`labelled.write_path_rate`).

`--unrendered` asks what the English renderings in memories' vectors are worth: both sets are
scored with the vectors as stored (a memory whose text has an English rendering,
`gloss.english_rendering`, is stored as the blend of its vector and its rendering's,
`Semantic.memory_vectors`) and with those memories embedded as written instead (the pure
analysis, as `--ablation`), whole and slice by slice, and the merges that join a labelled
contradiction are listed.

mem0ai OSS gets each project's memories through `Memory.add(infer=False)` (user_id = the
project, so each question searches its own project's memories, as ours do) and answers
`Memory.search(question, top_k=5)`; a question is a hit when a relevant memory's text is
among the five.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT.parent / "plugin"))
sys.path.insert(0, str(ROOT.parent / "tests"))

import labelled  # noqa: E402
from mem0_plugin.language.gloss import english_rendering  # noqa: E402
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


def model_vectors(name: str, data: dict, folder: Path) -> dict:
    """The model's vectors of the set's memories by id: the development set's from its cache
    (`labelled.VECTORS`), the held-out set's embedded now in a store under `folder`."""
    semantic = Semantic.from_home(folder)
    assert semantic.model_id is not None, semantic.reason
    if name == "dev":
        return labelled.vectors_by_id(data, labelled.cached_vectors(semantic.model_id))
    url = labelled.build_store(data, folder)
    with labelled.open_store(url) as store:
        semantic.backfill(store, labelled.USER)
        ids = [labelled.memory_id(m["key"]) for m in data["memories"]]
        return store.vectors_of(labelled.USER, semantic.model_id, ids)


COLUMNS = ("merges", "conflicts", "supersedes", "retirer merges")


def counts(scores: labelled.Scores) -> tuple[tuple[int, int], ...]:
    """(right, wrong) of each column."""
    return (
        (scores.merge_tp, scores.merge_predicted - scores.merge_tp),
        (scores.conflict_tp, scores.conflict_predicted - scores.conflict_tp),
        (scores.supersede_tp, scores.supersede_predicted - scores.supersede_tp),
        (0, scores.retirer_merges),
    )


def ablation(folder: Path) -> None:
    from mem0_plugin.relation.rules import RULES

    sets = {}
    for name, path in (("dev", labelled.DATA), ("held-out", labelled.HELD_OUT)):
        data = labelled.load(path)
        (folder / name).mkdir()
        sets[name] = (data, model_vectors(name, data, folder / name))
    base, spent, total = {}, {}, 0.0
    for name, (data, vectors) in sets.items():
        started = time.process_time()
        with labelled.timed(RULES, spent):
            plans = labelled.analysed_plans(data, vectors)
        total += time.process_time() - started
        base[name] = counts(labelled.score_plans(data, plans))
        scores = labelled.score_plans(data, labelled.analysed_plans(data, vectors))
        written, wrong, marked = labelled.write_path_rate(data, vectors)
        print(labelled.describe(scores, name))
        print(
            f"{name}: marked replacements superseded by --auto {scores.supersede_tp}/{scores.supersede_truth}, "
            f"by the write path {written}/{marked} ({wrong} other pairs superseded)"
        )
    print("\nWhat each rule changes (with it, against without it):\n")
    print(
        "| rule | kind | "
        + " | ".join(f"{name}: right merges, contradictions, supersedes" for name in sets)
        + " | "
        + " | ".join(f"{name}: wrong merges, contradictions, retirer merges" for name in sets)
        + " | CPU |"
    )
    print("|---|---|" + "---|" * (2 * len(sets) + 1))
    for rule in RULES:
        adds, costs = [], []
        for name, (data, vectors) in sets.items():
            with labelled.switched_off(rule):
                off = counts(labelled.score_plans(data, labelled.analysed_plans(data, vectors)))
            on = base[name]
            adds.append(", ".join(f"{on[i][0] - off[i][0]:+d}" for i in range(3)))
            costs.append(", ".join(f"{on[i][1] - off[i][1]:+d}" for i in (0, 1, 3)))
        share = 100 * spent.get(rule.name, 0.0) / total if total else 0.0
        print(f"| {rule.name} | {rule.kind} | " + " | ".join(adds) + " | " + " | ".join(costs) + f" | {share:.1f}% |")


def unrendered_vectors(data: dict, vectors: dict, folder: Path) -> dict:
    """`vectors` with each memory that has an English rendering embedded as written instead."""
    semantic = Semantic.from_home(folder)
    texts = {labelled.memory_id(m["key"]): m["text"] for m in data["memories"]}
    ids = [i for i, text in texts.items() if i in vectors and english_rendering(text)]
    made = semantic.embed([texts[i] for i in ids])
    assert made is not None, semantic.reason
    return {**vectors, **dict(zip(ids, made))}


def unrendered(folder: Path) -> None:
    for name, path in (("dev", labelled.DATA), ("held-out", labelled.HELD_OUT)):
        data = labelled.load(path)
        (folder / name).mkdir()
        stored = model_vectors(name, data, folder / name)
        pieces = [(name, data)] + [
            (part["name"], labelled.only(data, part["projects"])) for part in data.get("slices", [])
        ]
        for label, vectors in (("stored", stored), ("unrendered", unrendered_vectors(data, stored, folder / name))):
            for piece_name, piece in pieces:
                scores = labelled.score_plans(piece, labelled.analysed_plans(piece, vectors))
                print(labelled.describe(scores, f"{piece_name}, {label}").split("; synthesis")[0])
            truth, text = labelled.Truth.of(data), {labelled.memory_id(m["key"]): m["text"] for m in data["memories"]}
            for plan in labelled.analysed_plans(data, vectors):
                for merge in plan.merges:
                    for pair in itertools.combinations(merge.ids, 2):
                        if frozenset(pair) in truth.conflicts:
                            print(
                                f"  {label}: merged with the text that retires it: " + " / ".join(text[i] for i in pair)
                            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-mem0", action="store_true", help="skip mem0ai OSS (needs the bench extra)")
    parser.add_argument("--data", choices=("dev", "held-out"), default="dev", help="which labelled set")
    parser.add_argument("--ablation", action="store_true", help="each named rule off in turn, on both sets")
    parser.add_argument(
        "--unrendered", action="store_true", help="beside memories embedded without their English rendering"
    )
    args = parser.parse_args()
    if args.unrendered:
        with tempfile.TemporaryDirectory(prefix="mem0-unrendered-") as tmp:
            unrendered(Path(tmp))
        return 0
    if args.ablation:
        with tempfile.TemporaryDirectory(prefix="mem0-ablation-") as tmp:
            ablation(Path(tmp))
        return 0
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
