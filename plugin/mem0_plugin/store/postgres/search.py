"""Lexical search on PostgreSQL: candidates ranked from the word postings (docs/stores.md).

Migration 2 keeps `memory_terms`, one row per (search term, memory) with the memory's term
count, in a primary key that holds all three. A search reads the postings of the query's
terms from that index alone (no `memories` row is touched), sums the weights of the terms
each memory holds, and so ranks every candidate by its BM25 score (`store.bm25`). The candidates are then read from `memories` best first,
a batch at a time, with the caller's scope and filters applied in SQL, until the next one
cannot beat the `top_k`-th kept (`search.walk_ranked`, as on SQLite). Exhaustive: the top
`top_k` by score of every memory in scope that shares a word with the query, ties by
`created_at` then `id`.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import search
from ..bm25 import Bm25Query

# Candidates read from `memories` at first: a round trip to the server costs more than the
# rows, so the first read takes what SQLite's first two would.
FIRST_BATCH = 120

# Every memory holding a query term (any user: the scope is applied when rows are read), by its
# BM25 score (`store.bm25`): the weights of the terms it holds against its term count, best
# first, ties by rowid.
RANKED = (
    "SELECT memory, sum(w), max(size) FROM memory_terms JOIN unnest(?::text[], ?::float8[]) AS q(t, w) "
    "ON term = t GROUP BY memory ORDER BY {order} DESC, memory LIMIT ?"
)


def ranked_candidates(query: search.Query, bm25: Bm25Query, limit: int) -> list[tuple[int, float]]:
    """(rowid, score) of the best `limit` memories holding one of the query's terms."""
    terms = sorted(bm25.terms)
    # in double precision, as SQLite and `bm25.bound` compute it (PostgreSQL's numeric literals
    # would make it numeric arithmetic: the same order, at twice the cost per candidate)
    order = search.order_sql("sum(w)", "max(size)::float8", bm25.mean_length)
    rows = query(RANKED.format(order=order), [terms, [bm25.weights[t] for t in terms], limit])
    return [(memory, bm25.bound(weight, size)) for memory, weight, size in rows]


def walk(
    query: search.Query,
    bm25: Bm25Query,
    read: Callable[[list[int]], None],
    *,
    kth_score: Callable[[], float | None],
    threshold: float | None,
) -> None:
    """Hand candidates' rowids to `read`, best first, until the best results are certain."""
    search.walk_ranked(lambda limit: ranked_candidates(query, bm25, limit), read, kth_score, threshold, FIRST_BATCH)
