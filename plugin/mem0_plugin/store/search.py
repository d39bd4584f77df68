"""Lexical search over the full-text index, in time that does not grow with common words.

The score is `text.overlap_score`: the cosine of the binary word vectors of the query's
and the memory's significant words, m / sqrt(Q * L) (m shared words, Q query words, L the
memory's words). Scoring every memory that shares a word with the query costs as much as
the query's commonest word is frequent (a word in a third of 100k memories means 33k rows
to read), so the candidates are found like this:

1. The document frequency of each query word (`count(*)` of an FTS5 match: cheap, it
   reads no rows).
2. The rarest words are *selected* until their postings exceed `SEARCH_BUDGET` (the
   rarest one always is). Every memory holding a selected word is a candidate.
3. For each candidate, m counts every query word it holds: selected words by their
   postings, the other (common) words by an FTS5 `"common" AND (selected ...)` match,
   which reads only what it intersects. L is the memory's token count, kept by FTS5 in
   its `docsize` table. So candidates are ranked by their exact score without touching
   the `memories` table: one SQL statement, all of it in SQLite.
4. The ranked candidates are then read from `memories` in order, a batch at a time, with
   the caller's scope and filters applied in SQL (another user's or project's memories are
   never returned and never take a place: the walk goes on until `top_k` in-scope results
   are certain), and each is scored again from its stored words.

When the rarest words yield fewer than `top_k` results, the next words are selected and
the search repeats, so a query finds `top_k` memories whenever that many share a word with
it. Below `SEARCH_BUDGET` postings in all (every store under a few thousand memories) the
ranking is exhaustive: the top `top_k` by score, ties by `created_at` then `id`. Above it,
a memory sharing only the query's commonest words (and none of its rarer ones) can be
passed over for one that shares a rarer word.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import partial

from ..text import overlap_score

SEARCH_BUDGET = 8_000
FIRST_BATCH = 24  # candidates read from `memories` at first (then 4x as many each time)
FIRST_LIMIT = 256  # candidates ranked at first (ranking all costs about the same)
MAX_BATCH = 512
MAX_RANKED_TERMS = 200  # more distinct query words than this: candidates are read unranked

# The token count FTS5 keeps per row (`docsize`) is a varint: one byte below 128. A longer
# row counts as 128, a lower bound, which can only rank it earlier: never a missed result.
_LENGTH = "(CASE WHEN sz < x'80' THEN unicode(CAST(sz AS TEXT)) ELSE 128 END)"

Query = Callable[[str, Sequence], list[tuple]]


def stored_score(terms: frozenset[str], exact: str, text_hash: str, stored_terms: str) -> float:
    """A stored memory's lexical score for a query of `terms` whose text hashes to `exact`, from
    its `text_hash` and `terms` columns: 1.0 for the query's own text, else `text.overlap_score`
    (the terms are read when the text is written: nothing is read from the text again)."""
    return 1.0 if text_hash == exact else overlap_score(terms, frozenset(stored_terms.split()))


class Found:
    """The scored rows of a lexical search (`text_hash, terms, *COLUMNS` rows, any store), by
    key: scored as `text.overlap_score` (identical text: 1.0), ranked by score, `created_at`,
    then id."""

    def __init__(self, terms: frozenset[str], exact: str, threshold: float | None):
        self.terms, self.exact, self.threshold = terms, exact, threshold
        self.rows: dict[object, tuple[float, tuple]] = {}

    def take(self, key: object, row: Sequence) -> None:
        """Keep `row` (text hash, terms, then the memory's columns) if it scores above 0 and
        the threshold."""
        score = stored_score(self.terms, self.exact, row[0], row[1])
        if score > 0 and (self.threshold is None or score >= self.threshold):
            self.rows[key] = (score, tuple(row[2:]))

    def ranking(self) -> list[tuple[float, tuple]]:
        return sorted(self.rows.values(), key=lambda sr: (-sr[0], sr[1][7], sr[1][0]))

    def kth_score(self, k: int) -> float | None:
        return self.ranking()[k - 1][0] if len(self.rows) >= k else None


def quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def score(shared: int, query_size: int, doc_size: int) -> float:
    """`text.overlap_score` from the counts (the same arithmetic, so the same float)."""
    return round(shared / math.sqrt(query_size * doc_size), 6) if shared else 0.0


def document_frequencies(query: Query, terms: Sequence[str]) -> dict[str, int]:
    """How many rows of the index hold each term (every user: it only orders the terms)."""
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
    terms: Sequence[str],
    read: Callable[[list[int]], None],
    *,
    kth_score: Callable[[], float | None],
    threshold: float | None,
) -> None:
    """Hand candidates' rowids to `read` (which keeps those in scope), best first, until the
    best results are certain: the next candidate scores below `kth_score()` (the k-th best
    kept so far, None while fewer are kept) or below `threshold`."""
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
            walk_ranked(partial(ranked_candidates, query, selected, rest, len(terms)), read, kth_score, threshold)
        if kth_score() is not None or not rest:
            return
        budget = sum(frequencies[t] for t in selected) + frequencies[rest[0]]  # too few found: widen


def walk_ranked(
    rank: Callable[[int], list[tuple[int, float]]],
    read: Callable[[list[int]], None],
    kth_score: Callable[[], float | None],
    threshold: float | None,
    first_batch: int = FIRST_BATCH,
) -> bool:
    """Read ranked candidates in order (`rank(limit)`: the best `limit` as (rowid, score), best
    first, ties in a fixed order); True when the walk stopped early (the rest cannot win)."""
    limit, position, batch = FIRST_LIMIT, 0, first_batch
    ranked = rank(limit)
    while True:
        if position >= len(ranked):
            if len(ranked) < limit:
                return False  # every candidate has been read
            limit *= 8
            ranked = rank(limit)
            continue
        kth, best_left = kth_score(), ranked[position][1]
        if (kth is not None and best_left < kth) or (threshold is not None and best_left < threshold):
            return True
        chunk = [rowid for rowid, _ in ranked[position : position + batch]]
        position += len(chunk)
        batch = min(batch * 4, MAX_BATCH)
        read(chunk)


def ranked_candidates(
    query: Query, selected: Sequence[str], rest: Sequence[str], query_size: int, limit: int
) -> list[tuple[int, float]]:
    """(rowid, score) of the best `limit` candidates holding a selected term, best first."""
    any_selected = " OR ".join(quote(t) for t in selected)
    matches = [quote(t) for t in selected] + [f"{quote(t)} AND ({any_selected})" for t in rest]
    hits = " UNION ALL ".join("SELECT rowid AS hit FROM memories_fts WHERE memories_fts MATCH ?" for _ in matches)
    rows = query(
        f"SELECT hit, shared, max({_LENGTH}, shared) AS size FROM "
        f"(SELECT hit, count(*) AS shared FROM ({hits}) GROUP BY hit) "
        f"JOIN memories_fts_docsize ON id = hit "
        f"ORDER BY (shared * shared * 1048576) / size DESC, hit LIMIT {int(limit)}",
        matches,
    )
    return [(rowid, score(shared, query_size, size)) for rowid, shared, size in rows]
