"""Lexical search on PostgreSQL: candidates ranked from the word postings (docs/stores.md).

Migration 2 keeps `memory_terms`, one row per (significant word, memory) with the memory's
word count, in a primary key that holds all three. A search reads the postings of the
query's words from that index alone (no `memories` row is touched), counts the words each
memory shares with the query, and so ranks every candidate by its exact score (the same
arithmetic as `text.overlap_score`). The candidates are then read from `memories` best first,
a batch at a time, with the caller's scope and filters applied in SQL, until the next one
cannot beat the `top_k`-th kept (`search.walk_ranked`, as on SQLite). Exhaustive: the top
`top_k` by score of every memory in scope that shares a word with the query, ties by
`created_at` then `id`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from . import search

# Candidates read from `memories` at first: a round trip to the server costs more than the
# rows, so the first read takes what SQLite's first two would.
FIRST_BATCH = 120

# Every memory holding a query word (any user: the scope is applied when rows are read), by
# its score: shared words squared against its word count, best first, ties by rowid.
RANKED = (
    "SELECT memory, count(*), max(size) FROM memory_terms WHERE term = ANY(?) GROUP BY memory "
    "ORDER BY (count(*) * count(*))::float8 / greatest(max(size), count(*)) DESC, memory LIMIT ?"
)


def ranked_candidates(query: search.Query, terms: Sequence[str], limit: int) -> list[tuple[int, float]]:
    """(rowid, score) of the best `limit` memories holding one of `terms` (all distinct)."""
    rows = query(RANKED, [list(terms), limit])
    return [(memory, search.score(shared, len(terms), max(size, shared))) for memory, shared, size in rows]


def walk(
    query: search.Query,
    terms: Sequence[str],
    read: Callable[[list[int]], None],
    *,
    kth_score: Callable[[], float | None],
    threshold: float | None,
) -> None:
    """Hand candidates' rowids to `read`, best first, until the best results are certain."""
    search.walk_ranked(lambda limit: ranked_candidates(query, terms, limit), read, kth_score, threshold, FIRST_BATCH)
