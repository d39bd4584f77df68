"""How hybrid search orders what its two rankings found, and what its scores mean
(docs/search.md, "Scores"). Pure.

Each candidate has a lexical score (BM25, `store.bm25`, in [0, 1]) and, when it has a vector
of the query's model, a cosine similarity. Their fused sum

    s = LEXICAL_WEIGHT * lexical + (1 - LEXICAL_WEIGHT) * max(cosine, 0)

orders the results (the weight chosen on the development set's questions); the score shown
is s calibrated into the probability that the memory is relevant to the query,

    score = 1 / (1 + exp(-(A * s + B)))

fitted on the development set (`benchmarks/calibrate.py`), and 0 when s is 0 (nothing
shared, no similarity). A memory not embedded yet, and a search without a model, use the
lexical score alone with its own curve (`LEXICAL_CURVE`). Identical text scores 1.0.
Results are ordered by score, then `created_at`, then id. Last, a superseded memory is
placed right below its replacement when both are in the results, its score lowered to its
replacement's: the newer fact always comes first.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from ..records import SUPERSEDED, Memory

LEXICAL_WEIGHT = 0.5  # hit@5 on the development set: 0.3-0.7 give 0.91-0.92, 0.5 the best (docs/search.md)
# (A, B) of P(relevant | s), fitted on the development set's questions and off-topic prompts
HYBRID_CURVE = (12.7247, -5.0905)
LEXICAL_CURVE = (7.0712, -3.2429)


def calibrated(raw: float, curve: tuple[float, float]) -> float:
    """The probability of relevance of a raw score `raw` on `curve`; 0 for 0, 1 for 1 and above
    (identical text)."""
    if raw <= 0:
        return 0.0
    if raw >= 1:
        return 1.0
    a, b = curve
    return round(1 / (1 + math.exp(-(a * raw + b))), 6)


class Near(NamedTuple):
    """A memory the vector side found near the query, with what its lexical score is read from."""

    memory: Memory
    cosine: float
    text_hash: str
    terms: str  # the stored `terms` column (`text.terms_text`)


@dataclass(frozen=True)
class Scored:
    """A memory a search found, with its lexical score and its cosine, before they are fused."""

    memory: Memory
    lexical: float
    cosine: float | None  # None: no vector of the query's model yet

    @property
    def score(self) -> float:
        """The calibrated score (the docstring above)."""
        if self.lexical >= 1:
            return 1.0
        if self.cosine is None:
            return calibrated(self.lexical, LEXICAL_CURVE)
        return calibrated(LEXICAL_WEIGHT * self.lexical + (1 - LEXICAL_WEIGHT) * max(self.cosine, 0.0), HYBRID_CURVE)


def lexical_floor(threshold: float | None) -> float | None:
    """The lexical score below which a lexical-only result cannot reach `threshold`."""
    if threshold is None or threshold <= 0:
        return threshold
    if threshold >= 1:
        return 1.0
    a, b = LEXICAL_CURVE
    return max(0.0, (math.log(threshold / (1 - threshold)) - b) / a - 1e-6)


def fused(found: Sequence[Scored]) -> list[tuple[Memory, float]]:
    ranked = sorted(((c.memory, c.score) for c in found), key=lambda ms: (-ms[1], ms[0].created_at, ms[0].id))
    return replacements_first(ranked)


def replacements_first(ranked: list[tuple[Memory, float]]) -> list[tuple[Memory, float]]:
    """`ranked` with every superseded memory moved right below its replacement, if present
    (a chain of replacements keeps its order: newest first)."""
    present = {memory.id for memory, _ in ranked}
    followers: dict[str, list[tuple[Memory, float]]] = {}
    kept: list[tuple[Memory, float]] = []
    for memory, score in ranked:
        target = memory.replacement_memory_id
        if memory.lifecycle_state == SUPERSEDED and target in present and target != memory.id:
            followers.setdefault(target, []).append((memory, score))
        else:
            kept.append((memory, score))
    if not followers:
        return ranked
    result: list[tuple[Memory, float]] = []

    def place(memory: Memory, score: float, seen: frozenset[str]) -> None:
        result.append((memory, score))
        for follower, own in followers.pop(memory.id, []):
            if follower.id not in seen:
                place(follower, min(own, score), seen | {follower.id})

    for memory, score in kept:
        place(memory, score, frozenset({memory.id}))
    for rest in list(followers.values()):  # a cycle of replacements: keep them, in rank order
        result.extend(rest)
    return result
