"""Synthesis candidates: groups of independent observations that may show a pattern (docs/dream.md,
"Synthesis"). Pure: (memories, their vectors, now) → candidates for a judge.

A pattern ("runs the whole test suite before every push") is stated by no single memory, so no
rule can write it: dream only finds the evidence, and a judge (the agent running dream, or a
language model) writes the pattern's text or leaves the group alone.

What counts as evidence
    * An **observation** is an eligible memory (`analysis.takes_part`) in no action and no pair
      candidate of the run, that is not itself a synthesis (``metadata.source ==
      "mem0-dream-synthesis"``), that no existing synthesis already cites in its
      ``source_memory_ids`` (a pattern is not proposed again from the same evidence), that has a
      readable ``created_at``, whose type does not describe the setup (``environmental``,
      ``project_profile``: related facts of a setup are a profile, not a habit), and that is not a question ("How do I …?", "Asked how …"): the
      same question asked again and again shows no habit.
    * Two observations are **independent** when they come from different occasions: different
      sessions when both carry a ``run_id`` (mem0's session id), else different days (the UTC
      date of ``created_at``). Several memories of one session or one day are one event.
    * Two observations are **close** when they are about one thing without saying the same:
      with vectors, cosine ≥ `GROUP_COSINE`; without (no model), their significant words
      overlap with a Jaccard index ≥ `GROUP_JACCARD` (only in type groups of at most
      `LEXICAL_LIMIT` observations: words are a weak sign of a habit). Closer than `RESTATEMENT_COSINE`, or
      words overlapping above 0.6, is the same sentence again (a merge's business), not
      another observation.
    * Only the `RECENT_PER_TYPE` newest observations of each type are searched: a habit shows
      in recent activity, and the work stays bounded on a large store.
    * A **group** is formed greedily from the closest pair down, within one type: a memory
      joins when it is close to, not a restatement of, and independent of every member,
      up to `MAX_GROUP`. A group of at least `MIN_OBSERVATIONS` is a candidate unless every
      member carries one same literal value (a version, number, path, identifier): that is
      one thing followed over days (a release, an upgrade), not a habit.

Candidates: most similar first (the group's lowest pairwise similarity), at most
`MAX_SYNTHESIS_CANDIDATES`; ids and texts oldest first; question ``"synthesize"``.

Weekly (`synthesis_due`): `--auto` looks for synthesis candidates only when the project's
newest synthesized memory is `SYNTHESIS_INTERVAL_DAYS` days old or more, or there is none.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from fractions import Fraction
from itertools import combinations
from typing import TYPE_CHECKING

from ..language.analysed import AnalysedMemory, parse_created
from ..records import Memory
from ..relation.candidates import exceeds, similar_pairs
from ..relation.neighbours import similar_vector_pairs
from .plan import Candidate

if TYPE_CHECKING:
    import numpy as np

SYNTHESIS_SOURCE = "mem0-dream-synthesis"
SYNTHESIS_INTERVAL_DAYS = 7
MIN_OBSERVATIONS = 3
MAX_GROUP = 8
MAX_SYNTHESIS_CANDIDATES = 10
MAX_PATTERN_CHARS = 500  # a pattern is a sentence or two
GROUP_COSINE = 0.40
RESTATEMENT_COSINE = 0.90
GROUP_JACCARD = Fraction(1, 3)
RESTATEMENT_JACCARD = Fraction(3, 5)
RECENT_PER_TYPE = 1000  # the newest observations of a type that are searched (bounds the work)
NEIGHBOURS = 3  # each observation's closest others that may seed or join a group
SETUP_TYPES = frozenset({"environmental", "project_profile"})  # facts of the setup: a profile, not a habit
LEXICAL_LIMIT = 200  # a type group larger than this is not searched by words (see `_seed_pairs`)

_QUESTION_OPENING = (
    re.compile(  # "How do I …", "What is …" without "?"; "Does yoga …", "When deploying …" are statements
        r"\s*(?:how|what|why|which|where)\s+(?:do|does|did|is|are|was|can|could|should|would|to)\b", re.IGNORECASE
    )
)
_ASKED = re.compile(
    r"\b(?:asked|asks|asking|wondered|wonders)\s+(?:again\s+)?(?:about|how|what|why|whether|if|where|which|when)\b"
    r"|спрашивал|спросил|问了|询问|問い合わせ",
    re.IGNORECASE,
)
_ASKED_HINTS = ("ask", "wonder", "спр", "问", "询", "問")

Vectors = Mapping[str, "np.ndarray"]


def is_question(text: str) -> bool:
    """A question, or a memory that a question was asked: no observation of a habit. (The
    cheap tests first: this runs on every memory of the project.)"""
    if text.rstrip().endswith(("?", "？")) or _QUESTION_OPENING.match(text):
        return True
    lowered = text.lower()
    return any(hint in lowered for hint in _ASKED_HINTS) and _ASKED.search(text) is not None


def last_synthesis(memories: Iterable[Memory]) -> datetime | None:
    """When the project last synthesized: the newest `created_at` of a synthesized memory."""
    times = [parse_created(m.created_at) for m in memories if m.source == SYNTHESIS_SOURCE]
    known = [t for t in times if t is not None]
    return max(known) if known else None


def synthesis_due(memories: Iterable[Memory], now: datetime) -> bool:
    """Whether a weekly run (`--auto`) looks for syntheses as of `now`."""
    last = last_synthesis(memories)
    return last is None or now - last >= timedelta(days=SYNTHESIS_INTERVAL_DAYS)


def cited_by_syntheses(memories: Iterable[Memory]) -> set[str]:
    """The ids an existing synthesis already rests on."""
    return {i for m in memories if m.source == SYNTHESIS_SOURCE for i in m.source_memory_ids}


def observation_dates(memories: Iterable[Memory], candidates: Iterable[Candidate]) -> dict[str, str]:
    """The UTC date (``YYYY-MM-DD``) of each observation of the synthesis groups among
    `candidates`, by id: what a language model is shown beside each text (docs/judges.md)."""
    wanted = {i for c in candidates if c.question == "synthesize" for i in c.ids}
    dates: dict[str, str] = {}
    for memory in memories:
        if memory.id in wanted:
            created = parse_created(memory.created_at)
            if created is not None:
                dates[memory.id] = created.date().isoformat()
    return dates


def restates_a_source(text: str, sources: Iterable[str]) -> bool:
    """Whether a pattern's text is one of its sources again (case and spacing aside)."""
    folded = _fold(text)
    return any(_fold(source) == folded for source in sources)


def _fold(text: str) -> str:
    return " ".join(text.casefold().split()).rstrip(".。!")


def observations(items: Sequence[AnalysedMemory], taken: set[str], cited: set[str]) -> list[AnalysedMemory]:
    return [
        item
        for item in items
        if item.id not in taken
        and item.id not in cited
        and item.memory.source != SYNTHESIS_SOURCE
        and item.type not in SETUP_TYPES
        and item.created is not None
        and not is_question(item.memory.memory)
    ]


def independent(a: AnalysedMemory, b: AnalysedMemory) -> bool:
    """Different sessions (both with a run_id), else different UTC days."""
    if a.memory.run_id and b.memory.run_id:
        return a.memory.run_id != b.memory.run_id
    assert a.created is not None and b.created is not None
    return a.created.date() != b.created.date()


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    inter = len(a & b)
    union = len(a) + len(b) - inter
    return inter / union if union else 0.0


def _at_least(a: frozenset[str], b: frozenset[str], threshold: Fraction) -> bool:
    """Jaccard(a, b) ≥ threshold, exactly (a pair at exactly a third is at the floor)."""
    inter = len(a & b)
    union = len(a) + len(b) - inter
    return union > 0 and inter * threshold.denominator >= threshold.numerator * union


class _Closeness:
    """How close two observations are: cosine with vectors, else the Jaccard of their words.
    Each pair's cosine is computed once (a group's pairs are compared when members join and
    again for its similarity); a dot product is the same either way round."""

    def __init__(self, vectors: Vectors | None) -> None:
        self.vectors = vectors
        self._cosines: dict[tuple[str, str], float] = {}
        self._float32: dict[str, np.ndarray] = {}  # each vector as float32 once (stored float16)

    def __call__(self, a: AnalysedMemory, b: AnalysedMemory) -> float:
        if self.vectors is None:
            return _jaccard(a.features.sig, b.features.sig)
        key = (a.id, b.id) if a.id < b.id else (b.id, a.id)
        cosine = self._cosines.get(key)
        if cosine is None:
            cosine = self._cosines[key] = float(self._vector(a.id) @ self._vector(b.id))
        return cosine

    def _vector(self, memory_id: str) -> np.ndarray:
        vector = self._float32.get(memory_id)
        if vector is None:
            assert self.vectors is not None
            vector = self._float32[memory_id] = self.vectors[memory_id].astype("float32", copy=False)
        return vector

    def close(self, a: AnalysedMemory, b: AnalysedMemory) -> bool:
        if self.vectors is not None:
            return GROUP_COSINE <= self(a, b) < RESTATEMENT_COSINE
        sig_a, sig_b = a.features.sig, b.features.sig
        return _at_least(sig_a, sig_b, GROUP_JACCARD) and not exceeds(sig_a, sig_b, RESTATEMENT_JACCARD)


def synthesis_candidates(
    items: Sequence[AnalysedMemory],
    vectors: Vectors | None,
    taken: set[str],
    cited: set[str],
) -> list[Candidate]:
    """The groups worth asking a judge about (see the module docstring). `vectors`: by id, or
    None to compare words (no model); with vectors, only observations having one take part."""
    by_type: dict[str, list[AnalysedMemory]] = defaultdict(list)
    for item in observations(items, taken, cited):
        if vectors is None or item.id in vectors:
            by_type[item.type].append(item)
    found: list[Candidate] = []
    for type_name in sorted(by_type):
        recent = sorted(by_type[type_name], key=lambda item: item.newest_first_key)[:RECENT_PER_TYPE]
        found += _groups(sorted(recent, key=lambda item: item.id), type_name, _Closeness(vectors))
    found.sort(key=lambda c: (-c.similarity, c.ids))
    return found[:MAX_SYNTHESIS_CANDIDATES]


def _seed_pairs(group: list[AnalysedMemory], closeness: _Closeness) -> list[tuple[float, int, int]]:
    """(closeness, i, j) of the pairs that may start or grow a group, closest first."""
    if closeness.vectors is not None:
        vectors = closeness.vectors
        pairs = similar_vector_pairs([vectors[item.id] for item in group], GROUP_COSINE, NEIGHBOURS)
        found = [(cosine, i, j) for i, j, cosine in pairs]
    elif len(group) > LEXICAL_LIMIT:  # words are a weak sign of a habit, and templated text
        return []  # (hundreds of "Session state: …") would make every pair a candidate
    else:
        sets = [item.features.sig for item in group]
        below = GROUP_JACCARD - Fraction(1, 1000)  # the join finds pairs strictly above its threshold
        found = _nearest(
            [
                (_jaccard(sets[i], sets[j]), i, j)
                for i, j in similar_pairs(sets, below)
                if _at_least(sets[i], sets[j], GROUP_JACCARD)
            ]
        )
    return sorted(found, key=lambda p: (-p[0], group[p[1]].id, group[p[2]].id))


def _nearest(pairs: list[tuple[float, int, int]]) -> list[tuple[float, int, int]]:
    """The pairs where one side is among the other's `NEIGHBOURS` closest (as with vectors)."""
    best: dict[int, list[tuple[float, int, int]]] = defaultdict(list)
    for pair in sorted(pairs, key=lambda p: (-p[0], p[1], p[2])):
        for side in pair[1:]:
            if len(best[side]) < NEIGHBOURS:
                best[side].append(pair)
    return sorted({pair for kept in best.values() for pair in kept})


def _groups(group: list[AnalysedMemory], type_name: str, closeness: _Closeness) -> list[Candidate]:
    members_of: dict[int, list[int]] = {}
    for _, i, j in _seed_pairs(group, closeness):
        a, b = group[i], group[j]
        if i in members_of and j in members_of:
            continue
        if i not in members_of and j not in members_of:
            if _joins(a, [b], closeness):
                members_of[i] = members_of[j] = [i, j]
            continue
        members, joining = (members_of[i], j) if i in members_of else (members_of[j], i)
        if len(members) < MAX_GROUP and _joins(group[joining], [group[m] for m in members], closeness):
            members.append(joining)
            members_of[joining] = members
    groups = {id(m): m for m in members_of.values()}.values()
    return [
        _candidate([group[m] for m in members], type_name, closeness)
        for members in groups
        if len(members) >= MIN_OBSERVATIONS and not _one_thing([group[m] for m in members])
    ]


def _joins(item: AnalysedMemory, members: list[AnalysedMemory], closeness: _Closeness) -> bool:
    return all(independent(item, m) and closeness.close(item, m) for m in members)


def _one_thing(members: list[AnalysedMemory]) -> bool:
    """Every member carries one same literal value: one thing followed over days, not a habit."""
    shared = frozenset.intersection(*(m.features.literals for m in members))
    return bool(shared)


def _candidate(members: list[AnalysedMemory], type_name: str, closeness: _Closeness) -> Candidate:
    members = sorted(members, key=lambda m: m.oldest_first_key)
    lowest = min(closeness(a, b) for a, b in combinations(members, 2))
    return Candidate(
        ids=tuple(m.id for m in members),
        type=type_name,
        texts=tuple(m.memory.memory for m in members),
        similarity=round(min(max(lowest, 0.0), 1.0), 2),
        question="synthesize",
    )
