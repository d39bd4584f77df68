"""How hybrid search orders what its two rankings found (docs/search.md). Pure.

Each candidate has a lexical score (`text.overlap_score`, in [0, 1]) and, when it has a
vector of the query's model, a cosine similarity. Its score is

    LEXICAL_WEIGHT * lexical + (1 - LEXICAL_WEIGHT) * max(cosine, 0)

(identical text: 1.0), or the lexical score alone for a memory not embedded yet. Results are
ordered by score, then `created_at`, then id. Last, a superseded memory is placed right
below its replacement when both are in the results, its score lowered to its
replacement's: the newer fact always comes first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from ..records import SUPERSEDED, Memory

LEXICAL_WEIGHT = 0.5  # tuned on the labelled set: 0.4–0.7 give hit@5 0.98–0.99, MRR 0.96 (docs/search.md)


class Near(NamedTuple):
    """A memory the vector side found near the query, with what its lexical score is read from."""

    memory: Memory
    cosine: float
    text_hash: str
    terms: str  # the stored `terms` column (`text.terms_text`)


@dataclass(frozen=True)
class Candidate:
    memory: Memory
    lexical: float
    cosine: float | None  # None: no vector of the query's model yet

    @property
    def score(self) -> float:
        if self.cosine is None:
            return self.lexical
        return round(LEXICAL_WEIGHT * self.lexical + (1 - LEXICAL_WEIGHT) * max(self.cosine, 0.0), 6)


def fused(candidates: Sequence[Candidate]) -> list[tuple[Memory, float]]:
    ranked = sorted(
        ((c.memory, min(1.0, c.score)) for c in candidates), key=lambda ms: (-ms[1], ms[0].created_at, ms[0].id)
    )
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
