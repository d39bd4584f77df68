"""The lexical score: BM25 over a memory's search terms, read as the share of the query's
information a memory holds (docs/search.md, "The lexical score"). Pure; one formula for every
store, so the same memories give the same scores on SQLite and PostgreSQL.

For a query of terms Q and a memory of terms D (`gloss.search_terms`: significant words, their
stems and glosses, each term once), in a scope of N memories whose mean term count is avgdl,
a term held by df of them weighs

    idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))                       (never negative)

and the memory scores

    min(1, sum_{t in Q and D} idf(t) * (K1 + 1) / (1 + K1 * (1 - B + B * |D| / avgdl))
           / sum_{t in Q} idf(t))

1 when it holds every term of the query at a memory's usual length, less for each term it
lacks (a rare one costs more than a common one), less when it is long. A query term that no
memory holds still weighs in the denominator: a query about something the store does not know
scores low. Identical text scores 1.0 (by its hash, elsewhere).

The statistics (N, the term counts, df) are those of the scope searched: the project when the
search is confined to one, else all the user's memories (`Statistics`, read by the store).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

K1 = 1.2
B = 0.75


@dataclass(frozen=True)
class Statistics:
    """What BM25 needs of the scope: how many memories, their terms in all, and in how many
    memories each query term occurs."""

    docs: int = 0
    terms: int = 0
    frequency: Mapping[str, int] = field(default_factory=dict)

    @property
    def mean_length(self) -> float:
        return self.terms / self.docs if self.docs and self.terms else 1.0

    def idf(self, term: str) -> float:
        df = min(max(self.frequency.get(term, 0), 0), self.docs)
        return math.log(1 + (self.docs - df + 0.5) / (df + 0.5))


class Bm25Query:
    """A query's terms with their weights in one scope: `score` of a memory's terms."""

    def __init__(self, terms: Iterable[str], statistics: Statistics):
        self.terms = frozenset(terms)
        self.weights = {term: statistics.idf(term) for term in self.terms}
        self.mass = sum(self.weights.values())
        self.mean_length = statistics.mean_length

    def length_factor(self, length: int) -> float:
        """(K1 + 1) / (1 + K1 * (1 - B + B * length / avgdl)): 1 at the mean length."""
        return (K1 + 1) / (1 + K1 * (1 - B + B * max(length, 1) / self.mean_length))

    def bound(self, weight: float, length: int) -> float:
        """The score of a memory of `length` terms holding query terms of total `weight`."""
        if not self.mass or weight <= 0:
            return 0.0
        return round(min(1.0, weight * self.length_factor(length) / self.mass), 6)

    def score(self, terms: frozenset[str]) -> float:
        """The score of a memory whose search terms are `terms`."""
        shared = self.terms & terms
        return self.bound(sum(self.weights[t] for t in shared), len(terms)) if shared else 0.0

    def best_without(self, held: Iterable[str]) -> float:
        """The most a memory holding none of `held` (and a single term) may score: what a
        search that has not yet read the postings of `held` may still miss."""
        rest = sum(weight for term, weight in self.weights.items() if term not in set(held))
        return self.bound(rest, 1)
