"""The labelled development set (tests/data/dev_set.json) loaded into a real store, and the
product scored on it: dream's merges and conflicts, search hit@5 (docs/quality.md).

Used by tests/test_quality.py (which asserts floors) and benchmarks/quality.py (which
prints every figure). The set: `about`, `as_of`, `memories` (key, project, type, lang,
text, created_at, optional confidence / immutable / pinned / exclude_from_dream /
agent_id / run_id), `merge_groups`, `conflicts` (old, new, kind, marked), `hard_negatives`,
`queries` (project, lang, query, relevant), `synthesis_groups` (ids, pattern: three or more
independent observations of one habit) and `synthesis_negatives` (ids, why: groups that must
not be proposed — one question asked again, one event, one session, restatements, unrelated facts).

Synthesis candidates are scored as groups: a proposed group is right when it holds every
member of a labelled group; a labelled negative is hit when a proposed group holds two or
more of its members.

A labelled conflict whose `marked` is true is one whose newer text marks the change itself
("now", "switched to", "moved to" …; labelled by hand, docs/quality.md): dream should
propose it as a supersede. Conflicts are scored with supersedes together (the pair found,
as either), and supersedes on their own against the marked pairs.
"""

from __future__ import annotations

import copy
import hashlib
import importlib
import itertools
import json
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from mem0_plugin import operations, transfer
from mem0_plugin.dream.analysis import analyse
from mem0_plugin.dream.pipeline import make_plan
from mem0_plugin.dream.retention import choose_policy
from mem0_plugin.identity import Identity
from mem0_plugin.records import Memory
from mem0_plugin.store import open_store
from mem0_plugin.timeutil import parse_timestamp

if TYPE_CHECKING:
    from mem0_plugin.relation.rules import Example, Rule

DATA = Path(__file__).parent / "data" / "dev_set.json"
HELD_OUT = Path(__file__).parent / "data" / "held_out.json"  # never tuned on (docs/quality.md, "The held-out set")
# The development set's texts embedded by the default model, as the store keeps them (float16),
# by the SHA-256 of each text: embedding 3,000 texts takes about 50 s of the suite's 4 minutes.
# tests/test_quality.py checks a sample against the model itself and that every text is here;
# after editing the set: `.venv/bin/python tests/labelled.py --cache-vectors` (docs/quality.md).
VECTORS = Path(__file__).parent / "data" / "dev_set.vectors.npz"
USER = "labeller"
NAMESPACE = uuid.UUID("6f1d2c1e-93c4-4a8e-9d0b-6a3e0c9e2b51")


def load(path: Path = DATA) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def memory_id(key: str) -> str:
    return str(uuid.uuid5(NAMESPACE, key))


def records(data: dict, project: str) -> list[dict]:
    out = []
    for m in data["memories"]:
        if m["project"] != project:
            continue
        metadata = {"type": m["type"]}
        for flag in ("pinned", "exclude_from_dream"):
            if m.get(flag):
                metadata[flag] = True
        if "confidence" in m:
            metadata["confidence"] = m["confidence"]
        out.append(
            {
                "id": memory_id(m["key"]),
                "memory": m["text"],
                "user_id": USER,
                "app_id": project,
                "agent_id": m.get("agent_id"),
                "run_id": m.get("run_id"),
                "metadata": metadata,
                "created_at": m["created_at"],
                "updated_at": m["created_at"],
                "immutable": bool(m.get("immutable")),
            }
        )
    return out


def projects(data: dict) -> list[str]:
    return sorted({m["project"] for m in data["memories"]})


def only(data: dict, chosen: list[str]) -> dict:
    """The part of a set about the `chosen` projects (one slice of the held-out set)."""
    keys = {m["key"] for m in data["memories"] if m["project"] in chosen}
    return {
        **data,
        "memories": [m for m in data["memories"] if m["key"] in keys],
        "merge_groups": [g for g in data["merge_groups"] if set(g) <= keys],
        "conflicts": [c for c in data["conflicts"] if c["old"] in keys],
        "hard_negatives": [h for h in data["hard_negatives"] if h["a"] in keys],
        "queries": [q for q in data["queries"] if q["project"] in chosen],
        "synthesis_groups": [g for g in data["synthesis_groups"] if set(g["ids"]) <= keys],
        "synthesis_negatives": [g for g in data["synthesis_negatives"] if set(g["ids"]) <= keys],
    }


def problems(data: dict) -> list[str]:
    """What makes a set unusable for scoring: a key twice, a group or conflict across types or
    projects (dream never acts across them), a memory in two merge groups, a conflict whose
    newer side is not newer, a reference to no memory."""
    found = []
    by_key = {m["key"]: m for m in data["memories"]}
    if len(by_key) != len(data["memories"]):
        found.append("a key is used twice")
    seen: set[str] = set()
    for group in data["merge_groups"]:
        members = [by_key.get(key) for key in group]
        if None in members or len({(m["type"], m["project"]) for m in members if m}) != 1:
            found.append(f"merge group {group}: unknown key, or more than one type or project")
        if seen & set(group):
            found.append(f"merge group {group}: a member of another group")
        seen |= set(group)
    for conflict in data["conflicts"]:
        old, new = by_key.get(conflict["old"]), by_key.get(conflict["new"])
        if old is None or new is None or (old["type"], old["project"]) != (new["type"], new["project"]):
            found.append(f"conflict {conflict}: unknown key, or two types or projects")
        elif not old["created_at"] < new["created_at"]:
            found.append(f"conflict {conflict}: the new memory is not newer")
    for pair in data["hard_negatives"]:
        if pair["a"] not in by_key or pair["b"] not in by_key:
            found.append(f"hard negative {pair}: unknown key")
    for query in data["queries"]:
        if not query["relevant"] or not set(query["relevant"]) <= by_key.keys():
            found.append(f"query {query['query']!r}: no relevant memory, or an unknown one")
    return found


def identity(store_url: str, home: Path, project: str) -> Identity:
    return Identity(user_id=USER, project_id=project, branch="main", home=home, store_url=store_url, cwd=home)


def build_store(data: dict, folder: Path) -> str:
    """A real SQLite store holding the set; returns its URL."""
    url = f"sqlite:///{folder}/labelled.sqlite3"
    with open_store(url) as store:
        for project in projects(data):
            caller = operations.Caller(store, identity(url, folder, project), actor="cli")
            transfer.import_memories(caller, json.dumps(records(data, project)))
    return url


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cached_vectors(model: str, path: Path = VECTORS) -> dict[str, np.ndarray]:
    """The cached vectors by text key, float16 as stored; {} when the cache is of another model."""
    if not path.exists():
        return {}
    with np.load(path) as cache:
        if str(cache["model"]) != model:
            return {}
        return dict(zip(cache["keys"].tolist(), cache["vectors"]))


def store_cached_vectors(store, data: dict, model: str) -> int:
    """Store the cached vector of each memory of the set whose text the cache holds; returns how
    many. The rest is left for `Semantic.backfill` (the model embeds it)."""
    cache = cached_vectors(model)
    rows = [
        (memory_id(m["key"]), m["text"], cache[text_key(m["text"])])
        for m in data["memories"]
        if text_key(m["text"]) in cache
    ]
    with store.write() as writer:
        return writer.store_vectors(USER, model, rows)


def vectors_by_id(data: dict, cache: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The cached vectors (by text key, `cached_vectors`) of the set's memories, by memory id."""
    return {memory_id(m["key"]): cache[text_key(m["text"])] for m in data["memories"] if text_key(m["text"]) in cache}


def write_path_rate(data: dict, vectors: dict[str, np.ndarray]) -> tuple[int, int, int]:
    """(right, wrong, marked): each memory added after every memory of its project created before
    it, what the write path (`write_path.retirements_of`, as `add_memory(infer=true)` runs it on
    the `write_path.CANDIDATES` nearest of its type) supersedes: the labelled marked replacements it
    supersedes (right), the other pairs it supersedes (wrong), and how many marked replacements
    there are."""
    from mem0_plugin import write_path
    from mem0_plugin.language.analysed import analysed

    by_id = {memory_id(m["key"]): m for m in data["memories"]}
    built = {r["id"]: Memory(**r) for project in projects(data) for r in records(data, project)}
    marked = marked_pairs(data)
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for i, m in sorted(by_id.items(), key=lambda item: item[1]["created_at"]):
        if i in vectors:
            groups[(m["project"], m["type"])].append(i)
    right = wrong = 0
    for members in groups.values():
        matrix = np.stack([vectors[i].astype(np.float32) for i in members])
        cosines = matrix @ matrix.T
        for n, new in enumerate(members[1:], start=1):
            nearest = sorted(range(n), key=lambda o: -cosines[n, o])[: write_path.CANDIDATES]
            candidates = [(built[members[o]], float(cosines[n, o])) for o in nearest]
            for retirement in write_path.retirements_of(candidates, analysed(built[new])):
                if retirement.state == write_path.SUPERSEDED:
                    hit = marked.get(frozenset((retirement.old.id, new))) == new
                    right, wrong = right + hit, wrong + (not hit)
    return right, wrong, len(marked)


def write_vector_cache(data: dict, folder: Path, path: Path = VECTORS) -> int:
    """Embed every text of the set with the default model (in a store under `folder`) and write
    the cache; returns how many texts it holds."""
    from mem0_plugin.semantic import Semantic

    url = build_store(data, folder)
    semantic = Semantic.from_home(folder)
    assert semantic.model_id is not None, semantic.reason
    text_of = {memory_id(m["key"]): m["text"] for m in data["memories"]}
    with open_store(url) as store:
        semantic.backfill(store, USER)
        vectors = store.vectors_of(USER, semantic.model_id, list(text_of))
    by_key = {text_key(text_of[i]): np.asarray(vector, dtype=np.float16) for i, vector in vectors.items()}
    keys = sorted(by_key)
    np.savez_compressed(
        path, model=np.array(semantic.model_id), keys=np.array(keys), vectors=np.stack([by_key[k] for k in keys])
    )
    return len(keys)


@dataclass
class Scores:
    merge_tp: int = 0
    merge_predicted: int = 0
    merge_truth: int = 0
    conflict_tp: int = 0
    conflict_predicted: int = 0
    conflict_truth: int = 0
    winner_right: int = 0
    supersede_tp: int = 0  # a marked pair proposed as a supersede, the labelled newer one as new
    supersede_predicted: int = 0
    supersede_truth: int = 0
    protected_touched: int = 0
    candidates: int = 0  # pairs asked of a judge (synthesis groups aside)
    judge_merges: int = 0  # of them, labelled merge pairs: what an always-right judge adds
    judge_conflicts: int = 0  # of them, labelled contradictions
    retirer_merges: int = 0  # merged pairs that are a labelled contradiction: a fact merged with what retires it
    synthesis_tp: int = 0  # proposed groups holding a labelled group
    synthesis_predicted: int = 0
    synthesis_found: int = 0  # labelled groups some proposed group holds
    synthesis_truth: int = 0
    synthesis_negatives_hit: int = 0
    synthesis_negatives: int = 0
    hits: dict = field(default_factory=lambda: defaultdict(lambda: [0, 0]))  # lang -> [hits, queries]

    @staticmethod
    def ratio(a: int, b: int) -> float:
        return round(a / b, 3) if b else 0.0

    @property
    def merge_precision(self) -> float:
        return self.ratio(self.merge_tp, self.merge_predicted)

    @property
    def merge_recall(self) -> float:
        return self.ratio(self.merge_tp, self.merge_truth)

    @property
    def conflict_precision(self) -> float:
        return self.ratio(self.conflict_tp, self.conflict_predicted)

    @property
    def conflict_recall(self) -> float:
        return self.ratio(self.conflict_tp, self.conflict_truth)

    @property
    def supersede_precision(self) -> float:
        return self.ratio(self.supersede_tp, self.supersede_predicted)

    @property
    def supersede_recall(self) -> float:
        return self.ratio(self.supersede_tp, self.supersede_truth)

    @property
    def winner_rate(self) -> float:
        return self.ratio(self.winner_right, self.conflict_tp)

    @property
    def synthesis_precision(self) -> float:
        return self.ratio(self.synthesis_tp, self.synthesis_predicted)

    @property
    def synthesis_recall(self) -> float:
        return self.ratio(self.synthesis_found, self.synthesis_truth)

    @property
    def judged_merge_recall(self) -> float:
        """Merge recall with an always-right judge answering the candidates."""
        return self.ratio(self.merge_tp + self.judge_merges, self.merge_truth)

    @property
    def judged_conflict_recall(self) -> float:
        return self.ratio(self.conflict_tp + self.judge_conflicts, self.conflict_truth)

    def hit_rate(self, lang: str | None = None) -> float:
        if lang is None:
            return self.ratio(sum(h for h, _ in self.hits.values()), sum(n for _, n in self.hits.values()))
        hits, total = self.hits[lang]
        return self.ratio(hits, total)


def truth_pairs(data: dict) -> tuple[set, dict]:
    merges = {frozenset(map(memory_id, p)) for g in data["merge_groups"] for p in itertools.combinations(g, 2)}
    conflicts = {frozenset((memory_id(c["old"]), memory_id(c["new"]))): memory_id(c["new"]) for c in data["conflicts"]}
    return merges, conflicts


def marked_pairs(data: dict) -> dict:
    """The labelled conflicts whose newer text marks the change: pair -> the newer id."""
    return {
        frozenset((memory_id(c["old"]), memory_id(c["new"]))): memory_id(c["new"])
        for c in data["conflicts"]
        if c["marked"]
    }


def protected_ids(data: dict) -> set[str]:
    return {
        memory_id(m["key"])
        for m in data["memories"]
        if m.get("immutable") or m.get("pinned") or m.get("exclude_from_dream")
    }


@dataclass(frozen=True)
class Truth:
    """What a set labels, as pairs of memory ids."""

    merges: frozenset
    conflicts: dict  # pair -> the newer id
    marked: dict  # the marked conflicts: pair -> the newer id
    protected: frozenset
    groups: tuple  # synthesis groups
    negatives: tuple  # synthesis negatives

    @classmethod
    def of(cls, data: dict) -> Truth:
        merges, conflicts = truth_pairs(data)
        return cls(
            frozenset(merges),
            conflicts,
            marked_pairs(data),
            frozenset(protected_ids(data)),
            tuple(frozenset(map(memory_id, g["ids"])) for g in data.get("synthesis_groups", [])),
            tuple(frozenset(map(memory_id, g["ids"])) for g in data.get("synthesis_negatives", [])),
        )


def score_dream(data: dict, url: str, home: Path, semantic) -> Scores:
    """Dream's plan of each project, made from the store as a user's run makes it, scored."""
    now = parse_timestamp(data["as_of"], "as_of")
    with open_store(url) as store:
        plans = [make_plan(store, identity(url, home, project), now, semantic=semantic) for project in projects(data)]
    return score_plans(data, plans)


def analysed_plans(data: dict, vectors: dict[str, np.ndarray]) -> list:
    """Dream's plan of each project made by the pure analysis from `vectors` (by memory id), without
    a store: the plan a run makes from the same memories and stored vectors, in a fraction of
    the time (`benchmarks/quality.py --ablation` makes hundreds)."""
    now = parse_timestamp(data["as_of"], "as_of")
    policy, source = choose_policy({})
    plans = []
    for project in projects(data):
        memories = [Memory(**record) for record in records(data, project)]
        plans.append(
            analyse(
                memories,
                policy,
                now,
                user_id=USER,
                project_id=project,
                policy_source=source,
                vectors={m.id: vectors[m.id] for m in memories if m.id in vectors},
            )
        )
    return plans


def score_plans(data: dict, plans) -> Scores:
    """The plans (one per project) scored against what `data` labels."""
    truth = Truth.of(data)
    scores = Scores(
        merge_truth=len(truth.merges), conflict_truth=len(truth.conflicts), supersede_truth=len(truth.marked)
    )
    found: set[frozenset] = set()
    hit: set[frozenset] = set()
    for plan in plans:
        for candidate in plan.candidates:
            if candidate.question != "synthesize":
                pair = frozenset(candidate.ids)
                scores.candidates += 1
                scores.judge_merges += pair in truth.merges
                scores.judge_conflicts += pair in truth.conflicts
                continue
            ids = set(candidate.ids)
            scores.synthesis_predicted += 1
            held = [g for g in truth.groups if g <= ids]
            scores.synthesis_tp += bool(held)
            found.update(held)
            hit.update(n for n in truth.negatives if len(n & ids) >= 2)
        _score_actions(scores, plan, truth)
        scores.protected_touched += len(truth.protected & set(plan.memory_ids))
    scores.synthesis_truth, scores.synthesis_found = len(truth.groups), len(found)
    scores.synthesis_negatives, scores.synthesis_negatives_hit = len(truth.negatives), len(hit)
    return scores


def _score_actions(scores: Scores, plan, truth: Truth) -> None:
    for merge in plan.merges:
        pairs = {frozenset(p) for p in itertools.combinations(merge.ids, 2)}
        scores.merge_predicted += len(pairs)
        scores.merge_tp += len(pairs & truth.merges)
        scores.retirer_merges += len(pairs & truth.conflicts.keys())
    for conflict in plan.conflicts:
        pair = frozenset(conflict.ids)
        scores.conflict_predicted += 1
        if pair in truth.conflicts:
            scores.conflict_tp += 1
            scores.winner_right += conflict.likely_winner == truth.conflicts[pair]
    for supersede in plan.supersedes:  # a supersede is a conflict whose winner is known
        pair = frozenset(supersede.ids)
        scores.conflict_predicted += 1
        scores.supersede_predicted += 1
        if pair in truth.conflicts:
            scores.conflict_tp += 1
            scores.winner_right += supersede.new == truth.conflicts[pair]
        scores.supersede_tp += truth.marked.get(pair) == supersede.new


def score_search(data: dict, url: str, home: Path, semantic, scores: Scores, k: int = 5) -> Scores:
    with open_store(url) as store:
        for query in data["queries"]:
            caller = operations.Caller(store, identity(url, home, query["project"]), actor="cli", semantic=semantic)
            found = operations.search_memories(caller, query["query"], top_k=k)["results"]
            relevant = {memory_id(key) for key in query["relevant"]}
            counts = scores.hits[query["lang"]]
            counts[0] += any(r["id"] in relevant for r in found)
            counts[1] += 1
    return scores


def describe(scores: Scores, label: str) -> str:
    langs = ", ".join(f"{lang} {scores.hit_rate(lang):.2f}" for lang in sorted(scores.hits))
    return (
        f"{label}: merges P {scores.merge_precision:.2f} R {scores.merge_recall:.2f} "
        f"({scores.merge_tp}/{scores.merge_predicted} predicted, {scores.merge_truth} true pairs); "
        f"conflicts P {scores.conflict_precision:.2f} R {scores.conflict_recall:.2f} "
        f"({scores.conflict_tp}/{scores.conflict_predicted}, {scores.conflict_truth} true); "
        f"supersedes P {scores.supersede_precision:.2f} R {scores.supersede_recall:.2f} "
        f"({scores.supersede_tp}/{scores.supersede_predicted}, {scores.supersede_truth} true); "
        f"likely winner {scores.winner_rate:.2f}; merges of a labelled contradiction {scores.retirer_merges}; "
        f"protected touched {scores.protected_touched}; "
        f"candidates {scores.candidates} (with an always-right judge: merges R {scores.judged_merge_recall:.2f}, "
        f"conflicts R {scores.judged_conflict_recall:.2f}); "
        f"synthesis P {scores.synthesis_precision:.2f} R {scores.synthesis_recall:.2f} "
        f"({scores.synthesis_tp}/{scores.synthesis_predicted} groups, {scores.synthesis_truth} true; "
        f"negatives hit {scores.synthesis_negatives_hit}/{scores.synthesis_negatives}); "
        f"search hit@5 {scores.hit_rate():.2f} ({langs})"
    )


def example_outcome(example: Example) -> str | None:
    """What dream's plan makes of a rule's example (`relation.rules.Example`): its two memories alone,
    the older first, with vectors at the example's cosine: "merge", "conflict", "supersede",
    "candidate" (left to a judge) or None."""
    texts = (example.older, example.newer)
    memories = [
        Memory(
            id=f"00000000-0000-4000-8000-00000000000{i}",
            memory=text,
            user_id=USER,
            app_id="examples",
            metadata={"type": example.type},
            created_at=f"2026-0{i + 1}-01T00:00:00+00:00",
            updated_at=f"2026-0{i + 1}-01T00:00:00+00:00",
        )
        for i, text in enumerate(texts)
    ]
    sine = float(np.sqrt(max(0.0, 1.0 - example.cosine**2)))
    vectors = {
        memories[0].id: np.array([1.0, 0.0], dtype=np.float32),
        memories[1].id: np.array([example.cosine, sine], dtype=np.float32),
    }
    policy, source = choose_policy({})
    plan = analyse(
        memories,
        policy,
        parse_timestamp("2026-06-01T00:00:00+00:00", "now"),
        user_id=USER,
        project_id="examples",
        policy_source=source,
        vectors=vectors,
        synthesis=False,
    )
    if plan.merges:
        return "merge"
    if plan.supersedes:
        return "supersede"
    if plan.conflicts:
        return "conflict"
    return "candidate" if plan.candidates else None


@contextmanager
def switched_off(rule: Rule) -> Iterator[None]:
    """`rule` off for the block: each name it is called by answers its `off` value."""
    saved = []
    try:
        for where in rule.where:
            module, name = where.rsplit(".", 1)
            owner = importlib.import_module(f"mem0_plugin.{module}")
            saved.append((owner, name, getattr(owner, name)))
            setattr(owner, name, lambda *args, _off=rule.off, **kwargs: copy.copy(_off))  # (a fresh [] each call)
        yield
    finally:
        for owner, name, value in reversed(saved):
            setattr(owner, name, value)


@contextmanager
def timed(rules: Sequence[Rule], spent: dict[str, float]) -> Iterator[None]:
    """Each rule's calls timed for the block, the seconds added to `spent` by rule name (a rule
    calling another is counted in both)."""
    saved = []

    def wrapped(function: Callable, name: str) -> Callable:
        def call(*args, **kwargs):
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                spent[name] = spent.get(name, 0.0) + time.perf_counter() - started

        return call

    try:
        for rule in rules:
            for where in rule.where:
                module, name = where.rsplit(".", 1)
                owner = importlib.import_module(f"mem0_plugin.{module}")
                saved.append((owner, name, getattr(owner, name)))
                setattr(owner, name, wrapped(getattr(owner, name), rule.name))
        yield
    finally:
        for owner, name, value in reversed(saved):
            setattr(owner, name, value)


if __name__ == "__main__":  # `python tests/labelled.py --cache-vectors`: refresh VECTORS after editing the set
    import tempfile

    if sys.argv[1:] != ["--cache-vectors"]:
        sys.exit("usage: python tests/labelled.py --cache-vectors")
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{write_vector_cache(load(), Path(tmp))} texts embedded into {VECTORS}")
