"""Lexical search over the full-text index, in time that does not grow with common words.

The score is BM25 (`store.bm25`): each shared term weighs its rarity in the scope, a long
memory weighs less. Scoring every memory that shares a term with the query costs as much as
the query's commonest term is frequent (a term in a third of 100k memories means 33k rows to
read), so the candidates are found like this:

1. The number of rows of the index holding each query term (`count(*)` of an FTS5 match:
   cheap, it reads no rows). This orders the terms by what reading them costs.
2. The rarest terms are *selected* until their postings exceed `SEARCH_BUDGET` (the rarest
   one always is). Every memory holding a selected term is a candidate.
3. For each candidate the weights of every query term it holds are summed: selected terms by
   their postings, the other (common) terms by an FTS5 `"common" AND (selected ...)` match,
   which reads only what it intersects; its term count is kept by FTS5 in its `docsize`
   table. So candidates are ranked by their score (an upper bound of it: a count over 127
   is read as 128) without touching the `memories` table: one SQL statement.
4. The ranked candidates are then read from `memories` in order, a batch at a time, with the
   caller's scope and filters applied in SQL (another user's or project's memories are never
   returned and never take a place: the walk goes on until `top_k` in-scope results are
   certain), and each is scored again from its stored terms.

A memory holding none of the selected terms scores at most what the other terms weigh
(`Bm25Query.best_without`); when the `top_k`-th result kept scores less than that, or fewer
than `top_k` were found, the next terms are selected and the search repeats. So the ranking
is exact: the top `top_k` by score, ties by `created_at` then `id`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from .bm25 import K1, B, Bm25Query

SEARCH_BUDGET = 8_000
FIRST_BATCH = 24  # candidates read from `memories` at first (then 4x as many each time)
# Candidates ranked at first: about one per 16 postings of the selected terms, from 32 to 256.
# Ranking costs the SQL statement (grows with the postings) and a score in Python per candidate
# (grows with the limit): few postings, a short list; many, a long one, so that the statement
# rarely runs twice.
FIRST_LIMIT = 256
MIN_FIRST_LIMIT = 32
POSTINGS_PER_CANDIDATE = 16
MAX_BATCH = 512
MAX_RANKED_TERMS = 200  # more distinct query words than this: candidates are read unranked
SLACK = 1e-6  # SQL's float order and Python's rounded score may differ by this much

# The token count FTS5 keeps per row (`docsize`) is a varint: one byte below 128. A longer
# row counts as 128, a lower bound, which can only rank it earlier: never a missed result.
_LENGTH = "(CASE WHEN sz < x'80' THEN unicode(CAST(sz AS TEXT)) ELSE 128 END)"

Query = Callable[[str, Sequence], list[tuple]]


def stored_score(query: Bm25Query, exact: str, text_hash: str, stored_terms: str) -> float:
    """A stored memory's lexical score from its `text_hash` and `terms` columns: 1.0 for the
    query's own text, else BM25 (the terms are read when the text is written: nothing is read
    from the text again)."""
    return 1.0 if text_hash == exact else query.score(frozenset(stored_terms.split()))


class Found:
    """The scored rows of a lexical search (`text_hash, terms, *COLUMNS` rows, any store), by
    key: ranked by score, `created_at`, then id."""

    def __init__(self, query: Bm25Query, exact: str, threshold: float | None):
        self.query, self.exact, self.threshold = query, exact, threshold
        self.terms = query.terms
        self.rows: dict[object, tuple[float, tuple]] = {}

    def take(self, key: object, row: Sequence) -> None:
        """Keep `row` (text hash, terms, then the memory's columns) if it scores above 0 and
        the threshold."""
        score = stored_score(self.query, self.exact, row[0], row[1])
        if score > 0 and (self.threshold is None or score >= self.threshold):
            self.rows[key] = (score, tuple(row[2:]))

    def ranking(self) -> list[tuple[float, tuple]]:
        return sorted(self.rows.values(), key=lambda sr: (-sr[0], sr[1][7], sr[1][0]))

    def kth_score(self, k: int) -> float | None:
        return self.ranking()[k - 1][0] if len(self.rows) >= k else None


def quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def order_sql(weight: str, length: str, mean_length: float) -> str:
    """SQL of the score's order for a summed `weight` and a term count `length` (both SQL)."""
    return f"({weight}) * {K1 + 1!r} / (1 + {K1!r} * ({1 - B!r} + {B!r} * ({length}) / {float(mean_length)!r}))"


def document_frequencies(query: Query, terms: Sequence[str]) -> dict[str, int]:
    """How many rows of the index hold each term (every user: it only orders the terms by cost)."""
    frequencies: dict[str, int] = {}
    for start in range(0, len(terms), 500):
        chunk = terms[start : start + 500]
        columns = ", ".join("(SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?)" for _ in chunk)
        frequencies.update(zip(chunk, query(f"SELECT {columns}", [quote(t) for t in chunk])[0]))
    return frequencies


def select_terms(frequencies: dict[str, int], budget: int) -> tuple[list[str], list[str]]:
    """(selected, rest): the rarest present terms within `budget` postings, and the others."""
    present = sorted((t for t, n in frequencies.items() if n), key=lambda t: (frequencies[t], t))
    selected: list[str] = []
    total = 0
    for term in present:
        if selected and total + frequencies[term] > budget:
            break
        selected.append(term)
        total += frequencies[term]
    return selected, present[len(selected) :]


def walk_candidates(
    query: Query,
    bm25: Bm25Query,
    read: Callable[[list[int]], None],
    *,
    kth_score: Callable[[], float | None],
    threshold: float | None,
) -> None:
    """Hand candidates' rowids to `read` (which keeps those in scope), best first, until the
    best results are certain: the next candidate scores below `kth_score()` (the k-th best
    kept so far, None while fewer are kept) or below `threshold`, and no memory holding only
    terms not yet selected could score as much."""
    terms = sorted(bm25.terms)
    frequencies = document_frequencies(query, terms)
    budget = SEARCH_BUDGET
    while True:
        selected, rest = select_terms(frequencies, budget)
        if not selected:
            return
        if len(selected) + len(rest) > MAX_RANKED_TERMS:  # a whole document as the query: read them all
            any_selected = " OR ".join(quote(t) for t in selected)
            rowids = [r for (r,) in query("SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?", [any_selected])]
            for start in range(0, len(rowids), MAX_BATCH):
                read(rowids[start : start + MAX_BATCH])
        else:
            postings = sum(frequencies[t] for t in selected)
            first = min(FIRST_LIMIT, max(MIN_FIRST_LIMIT, postings // POSTINGS_PER_CANDIDATE))
            walk_ranked(
                partial(ranked_candidates, query, bm25, selected, rest), read, kth_score, threshold, first_limit=first
            )
        if not rest:
            return
        missed = bm25.best_without(selected)
        kth = kth_score()
        if (kth is not None and kth >= missed) or (threshold is not None and threshold > missed):
            return
        budget = sum(frequencies[t] for t in selected) + frequencies[rest[0]]  # may be missed: widen


def walk_ranked(
    rank: Callable[[int], list[tuple[int, float]]],
    read: Callable[[list[int]], None],
    kth_score: Callable[[], float | None],
    threshold: float | None,
    first_batch: int = FIRST_BATCH,
    first_limit: int = FIRST_LIMIT,
) -> bool:
    """Read ranked candidates in order (`rank(limit)`: the best `limit` as (rowid, score), best
    first, ties in a fixed order); True when the walk stopped early (the rest cannot win)."""
    limit, position, batch = first_limit, 0, first_batch
    ranked = rank(limit)
    while True:
        if position >= len(ranked):
            if len(ranked) < limit:
                return False  # every candidate has been read
            limit *= 8
            ranked = rank(limit)
            continue
        kth, best_left = kth_score(), ranked[position][1] + SLACK
        if (kth is not None and best_left < kth) or (threshold is not None and best_left < threshold):
            return True
        chunk = [rowid for rowid, _ in ranked[position : position + batch]]
        position += len(chunk)
        batch = min(batch * 4, MAX_BATCH)
        read(chunk)


def ranked_candidates(
    query: Query, bm25: Bm25Query, selected: Sequence[str], rest: Sequence[str], limit: int
) -> list[tuple[int, float]]:
    """(rowid, score bound) of the best `limit` candidates holding a selected term, best first."""
    any_selected = " OR ".join(quote(t) for t in selected)
    matches = [quote(t) for t in selected] + [f"{quote(t)} AND ({any_selected})" for t in rest]
    weights = [bm25.weights[t] for t in (*selected, *rest)]
    hits = " UNION ALL ".join(
        "SELECT rowid AS hit, ? AS w FROM memories_fts WHERE memories_fts MATCH ?" for _ in matches
    )
    params: list[object] = [value for pair in zip(weights, matches) for value in pair]
    rows = query(
        f"SELECT hit, total, max({_LENGTH}, shared) AS terms FROM "
        f"(SELECT hit, sum(w) AS total, count(*) AS shared FROM ({hits}) GROUP BY hit) "
        f"JOIN memories_fts_docsize ON id = hit "
        f"ORDER BY {order_sql('total', 'terms', bm25.mean_length)} DESC, hit LIMIT {int(limit)}",
        params,
    )
    return [(rowid, bm25.bound(total, size)) for rowid, total, size in rows]
