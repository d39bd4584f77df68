"""`SqlReads`: every read of the SQLite and PostgreSQL stores, written once in the SQL both
run (`store.sql`). A store adds its connections (`_query`, `_view`), its transactions, its
locks and what only its database does: finding lexical candidates (`_find_lexical`: FTS5 on
SQLite, word postings on PostgreSQL) and telling which of its tables exist."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from ...errors import NotFoundError
from ...filters import TRUE, CompiledFilter
from ...ids import pick
from ...language.gloss import search_terms
from ...records import ACTIVE, SUPERSEDED, Memory
from .. import search as lexical
from ..base import HistoryEntry, Page, ReadMode
from ..bm25 import Bm25Query, Statistics
from ..journal import SELECT_RUN_COLUMNS, DreamRun, run_of_row
from ..ranking import Near, Scored, fused, lexical_floor
from ..rows import SELECT_COLUMNS, row_to_memory, text_hash
from ..search import stored_score
from .dialect import Dialect
from .writer import history_record, id_candidates

if TYPE_CHECKING:  # numpy loads with the first vector read: a server that never searches never pays for it
    import numpy as np

    from ..vectors import VectorIndex

T = TypeVar("T")


@dataclass
class _Pager:
    """What `SqlReads.page` remembers of one read while the view is unchanged."""

    view: tuple | None
    key: tuple
    count: int
    cursors: dict[int, tuple[int, str]] = field(default_factory=dict)  # offset -> last (created_us, id) before it

    def remember(self, offset: int, last: tuple[int, str]) -> None:
        if len(self.cursors) >= 16:
            self.cursors.pop(next(iter(self.cursors)))
        self.cursors[offset] = last


class SqlReads:
    """The reads of a SQL store. Reads are confined to the `user_id` passed in."""

    dialect: Dialect
    readonly: bool

    # -- what each store provides ------------------------------------------------

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        """The rows of one read (`?` marks)."""
        raise NotImplementedError

    def _view(self) -> tuple | None:
        """A token equal between two calls only if what this store sees did not change in
        between; None when that cannot be known (nothing read is then reused)."""
        raise NotImplementedError

    def _find_lexical(self, found: lexical.Found, sql: str, params: list, top_k: int) -> None:
        """Score into `found` every row in scope (`sql`) that may be among the best `top_k`."""
        raise NotImplementedError

    def _has_features_column(self) -> bool:
        raise NotImplementedError

    def _counts_vectors(self) -> bool:
        raise NotImplementedError

    def _has_statistics(self) -> bool:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def _init_state(self, readonly: bool) -> None:
        """What a store keeps between calls, whatever its database (a PostgreSQL store too)."""
        self.readonly = readonly
        self._lock = threading.RLock()
        self._views = 0  # bumped whenever what this connection sees may change (see _view)
        self._writing = False
        self._pager: _Pager | None = None
        self._features_column: bool | None = None
        self._vector_counts: bool | None = None  # the table migration 8 adds (absent: read-only, older)
        self._statistics: bool | None = None  # the tables migration 10 adds (as above)
        self._vector_indexes: dict[tuple[str, str], VectorIndex] = {}

    def __enter__(self: T) -> T:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def get(self, user_id: str, memory_id: str) -> Memory:
        rows = self._query(f"SELECT {SELECT_COLUMNS} FROM memories WHERE id = ? AND user_id = ?", (memory_id, user_id))
        if not rows:
            raise NotFoundError(f"memory {memory_id} not found")
        return row_to_memory(rows[0])

    def resolve_id(self, user_id: str, key: str, *, deleted: bool = False) -> str:
        """The full id of the user's memory that `key` names: its id, or a unique prefix of at
        least 8 characters (`ids.pick` says why not). `deleted`: deleted memories (only in the
        history) count too, for `history` and `restore`."""
        return pick(key, self.id_candidates(user_id, key, deleted=deleted))

    def id_candidates(self, user_id: str, key: str, *, deleted: bool = False) -> list[str]:
        """The user's ids equal to `key` or starting with it (at most `ids.CANDIDATE_LIMIT`)."""
        return id_candidates(self._query, self.dialect, user_id, key, deleted)

    def get_many(self, user_id: str, ids: list[str]) -> dict[str, Memory]:
        found: dict[str, Memory] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            for row in self._query(
                f"SELECT {SELECT_COLUMNS} FROM memories WHERE user_id = ? AND id IN ({marks})", (user_id, *chunk)
            ):
                memory = row_to_memory(row)
                found[memory.id] = memory
        return found

    def _where(
        self, user_id: str, where: CompiledFilter, mode: ReadMode, app_id: str | None = None
    ) -> tuple[str, list]:
        marks = ", ".join("?" * len(mode.value))
        project_sql, project = (" AND app_id = ?", [app_id]) if app_id is not None else ("", [])
        sql = f"user_id = ? AND lifecycle_state IN ({marks}){project_sql} AND {where.sql}"
        return sql, [user_id, *mode.value, *project, *where.params]

    def page(
        self,
        user_id: str,
        where: CompiledFilter = TRUE,
        mode: ReadMode = ReadMode.DEFAULT,
        page: int = 1,
        page_size: int = 100,
        *,
        app_id: str | None = None,
        with_features: bool = False,
    ) -> Page:
        """One page in (created_at, id) order, with the count of the whole read: the user's
        memories in `mode`'s states, of project `app_id` when given, that match `where`.

        Paging on through an unchanged store (what dream's fetch and an agent do) costs the
        same on page 500 as on page 1: the count and where each page ended are remembered
        while the view is unchanged (`_view`), and the next page starts after the last
        (created_at, id) seen instead of skipping OFFSET rows. Any change in between, and
        every other page, falls back to count(*) and OFFSET: the same rows either way. A read of
        the user (or of one project, `app_id`) with no other condition is counted from the
        per-project counts (`memory_counts`), no row read.

        `with_features` also returns each memory's `features` column (its text's stored
        features, `stored_features`): None where missing, or on a store whose
        schema predates the column (one opened read-only is never migrated)."""
        sql, params = self._where(user_id, where, mode, app_id)
        offset = (page - 1) * page_size
        columns = (
            f"{SELECT_COLUMNS}, {'features' if with_features and self._has_features_column() else 'NULL'}, created_us"
        )
        with self._lock:
            view, key = self._view(), (sql, tuple(params))
            pager = self._pager
            if view is None or pager is None or pager.view != view or pager.key != key:
                if where is TRUE:
                    count = self._scope_count(user_id, mode, app_id)
                else:
                    count = self._query(f"SELECT count(*) FROM memories WHERE {sql}", params)[0][0]
                pager = _Pager(view, key, count)
                self._pager = pager if view is not None else None
            after = pager.cursors.get(offset)
            if after is not None:
                rows = self._query(
                    f"SELECT {columns} FROM memories WHERE {sql} AND (created_us, id) > (?, ?) "
                    "ORDER BY created_us, id LIMIT ?",
                    [*params, *after, page_size],
                )
            elif view is not None and offset * 2 > pager.count:
                # the second half: skip from the end (same rows, if the count is of the same view)
                end = min(offset + page_size, pager.count)
                rows = self._query(
                    f"SELECT {columns} FROM memories WHERE {sql} ORDER BY created_us DESC, id DESC LIMIT ? OFFSET ?",
                    [*params, max(end - offset, 0), pager.count - end],
                )[::-1]
                if self._view() != view:
                    rows = None
            else:
                rows = None
            if rows is None:
                rows = self._query(
                    f"SELECT {columns} FROM memories WHERE {sql} ORDER BY created_us, id LIMIT ? OFFSET ?",
                    [*params, page_size, offset],
                )
            if rows:
                pager.remember(offset + len(rows), (rows[-1][-1], rows[-1][0]))
        features = tuple(row[-2] for row in rows) if with_features else ()
        return Page(pager.count, page, page_size, tuple(row_to_memory(r) for r in rows), features)

    def features_of(self, user_id: str, memory_ids: Sequence[str]) -> dict[str, str]:
        """The stored `features` column (`stored_features`) of these memories of the user, by id,
        where one is stored (read by primary key)."""
        if not memory_ids or not self._has_features_column():
            return {}
        marks = ", ".join("?" * len(memory_ids))
        rows = self._query(
            f"SELECT id, features FROM memories{self.dialect.indexed_by('sqlite_autoindex_memories_1')} "
            f"WHERE id IN ({marks}) AND user_id = ? AND features IS NOT NULL",  # by primary key
            [*memory_ids, user_id],
        )
        return dict(rows)

    def _scope_count(self, user_id: str, mode: ReadMode, app_id: str | None) -> int:
        """How many of the user's memories (of project `app_id`, when given) are in `mode`'s
        states, from `memory_counts` (no rows read)."""
        app_sql, app_params = (" AND app_key = ?", ["=" + app_id]) if app_id is not None else ("", [])
        marks = ", ".join("?" * len(mode.value))
        return self._query(
            f"SELECT coalesce(sum(n), 0) FROM memory_counts WHERE user_id = ? "
            f"AND lifecycle_state IN ({marks}){app_sql}",
            [user_id, *mode.value, *app_params],
        )[0][0]

    def search(
        self,
        user_id: str,
        query: str,
        where: CompiledFilter = TRUE,
        mode: ReadMode = ReadMode.DEFAULT,
        top_k: int = 10,
        threshold: float | None = None,
        *,
        query_vector: np.ndarray | Callable[[], np.ndarray | None] | None = None,
        model: str | None = None,
        app_id: str | None = None,
    ) -> list[tuple[Memory, float]]:
        """The best `top_k` memories for `query`: lexical alone, or hybrid when the query's
        vector (`query_vector`, made by `model`) is given (`store.ranking` orders them). The
        vector may be a function returning it (an embedding still being made: it is asked for
        after the lexical side has run, so both proceed at once), or None: lexical after all.
        `app_id`: the project whose statistics weigh the query's terms (None: all the user's)."""
        bm25 = Bm25Query(search_terms(query), self.statistics(user_id, app_id, search_terms(query)))
        if query_vector is None or model is None:
            lexical = self._lexical(bm25, user_id, query, where, mode, top_k, lexical_floor(threshold))
            return fused([Scored(m, s, None) for m, s in lexical])
        lexical = self._lexical(bm25, user_id, query, where, mode, top_k, None)
        vector = query_vector() if callable(query_vector) else query_vector
        if vector is None:
            return [
                (m, s)
                for m, s in fused([Scored(m, s, None) for m, s in lexical])
                if threshold is None or s >= threshold
            ]
        pool = max(2 * top_k, 20)  # vector candidates; the lexical side's best `top_k` join them
        found: dict[str, Scored] = {}
        sql, params = self._where(user_id, where, mode)
        cosines, nearest = self._vector_side(user_id, model, vector, sql, params, pool, [m.id for m, _ in lexical])
        for memory, score in lexical:
            found[memory.id] = Scored(memory, score, cosines.get(memory.id))
        exact = text_hash(query)
        for memory, cosine, hashed, stored_terms in nearest:
            if memory.id not in found:
                found[memory.id] = Scored(memory, stored_score(bm25, exact, hashed, stored_terms), cosine)
        results = [(m, s) for m, s in fused(list(found.values())) if s > 0 and (threshold is None or s >= threshold)]
        return results[:top_k]

    def nearest(
        self,
        user_id: str,
        vector: np.ndarray,
        model: str,
        where: CompiledFilter = TRUE,
        mode: ReadMode = ReadMode.DEFAULT,
        top_k: int = 10,
    ) -> list[tuple[Memory, float]]:
        """The `top_k` memories in scope whose stored vectors of `model` are nearest to `vector`,
        with their cosines, nearest first (no lexical side: the write path judges by cosine)."""
        sql, params = self._where(user_id, where, mode)
        return [
            (memory, cosine) for memory, cosine, *_ in self._vector_side(user_id, model, vector, sql, params, top_k)[1]
        ]

    def _vector_side(
        self,
        user_id: str,
        model: str,
        vector: np.ndarray,
        sql: str,
        params: list,
        wanted: int,
        known: Sequence[str] = (),
    ) -> tuple[dict[str, float], list[Near]]:
        """The cosines of those `known` ids that have a vector of `model`, and the `wanted`
        in-scope memories (`Near`: with their cosines, text hashes and terms) nearest to `vector`: ranked here
        on the user's vectors held in memory (`VectorIndex`)."""
        with self._lock:
            view = self._view()
        index = self.vector_index(user_id, model)
        ids, matrix = index.current(self._query, view, counted=self._counts_vectors())
        position = index.position()
        cosines = {i: float(matrix[position[i]] @ vector) for i in known if i in position}
        return cosines, self._nearest_in_scope(ids, matrix, vector, sql, params, wanted)

    def _nearest_in_scope(
        self, ids: list[str], matrix: np.ndarray, query_vector: np.ndarray, sql: str, params: list, wanted: int
    ) -> list[Near]:
        """The `wanted` in-scope memories nearest to `query_vector`: the nearest of every vector,
        read through the scope's SQL, widening fourfold until enough are in scope."""
        from ..vectors import similarities, top_scores

        limit = 2 * wanted  # room for some out of scope (other projects, merged ...)
        scores = similarities(matrix, query_vector)  # once: widening only ranks more of them
        by_key = self.dialect.indexed_by("sqlite_autoindex_memories_1")
        while True:
            matches = top_scores(scores, limit)
            kept: list[Near] = []
            for start in range(0, len(matches), 500):
                chunk = matches[start : start + 500]
                marks = ", ".join("?" * len(chunk))
                # by primary key: else SQLite may prefer the scope's paging index and walk the project
                rows = self._query(
                    f"SELECT {SELECT_COLUMNS}, text_hash, terms FROM memories{by_key} WHERE id IN ({marks}) AND {sql}",
                    [*(ids[row] for row, _ in chunk), *params],
                )
                by_id = {row[0]: row for row in rows}
                kept += [
                    Near(row_to_memory(row), cosine, row[-2], row[-1])
                    for r, cosine in chunk
                    if (row := by_id.get(ids[r])) is not None
                ]
            if len(kept) >= wanted or limit >= len(ids):
                return kept[:wanted]
            limit *= 4

    def lexical_search(
        self,
        user_id: str,
        query: str,
        where: CompiledFilter = TRUE,
        mode: ReadMode = ReadMode.DEFAULT,
        top_k: int = 10,
        threshold: float | None = None,
        app_id: str | None = None,
    ) -> list[tuple[Memory, float]]:
        """Lexical search: FTS5 finds candidates, BM25 scores them (`store.bm25`; the
        statistics of project `app_id`, or of all the user's memories).

        How candidates are found without reading every row that shares a common word:
        `store.search`. Results: the best `top_k` by score, ties by `created_at` then `id`.
        """
        terms = search_terms(query)
        bm25 = Bm25Query(terms, self.statistics(user_id, app_id, terms))
        return self._lexical(bm25, user_id, query, where, mode, top_k, threshold)

    def _lexical(
        self,
        bm25: Bm25Query,
        user_id: str,
        query: str,
        where: CompiledFilter,
        mode: ReadMode,
        top_k: int,
        threshold: float | None,
    ) -> list[tuple[Memory, float]]:
        sql, params = self._where(user_id, where, mode)
        found = lexical.Found(bm25, text_hash(query), threshold)
        self._find_lexical(found, sql, params, top_k)
        return [(row_to_memory(row), score) for score, row in found.ranking()[:top_k]]

    def statistics(self, user_id: str, app_id: str | None, terms: Iterable[str]) -> Statistics:
        """BM25's statistics of project `app_id` (None: every project of the user) for `terms`
        (`store.bm25`); none in a store without them (an older one opened read-only)."""
        if not self._has_statistics():
            return Statistics()
        scope, params = (
            ("user_id = ?", [user_id]) if app_id is None else ("user_id = ? AND app_key = ?", [user_id, "=" + app_id])
        )
        docs, total = self._query(
            f"SELECT coalesce(sum(docs), 0), coalesce(sum(terms), 0) FROM scope_sizes WHERE {scope}", params
        )[0]
        wanted = sorted(set(terms))
        frequency: dict[str, int] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            rows = self._query(
                f"SELECT term, sum(n) FROM term_counts WHERE {scope} AND term IN ({', '.join('?' * len(chunk))}) GROUP BY term",
                [*params, *chunk],
            )
            frequency.update((term, int(n)) for term, n in rows)
        return Statistics(int(docs), int(total), frequency)

    def vector_index(self, user_id: str, model: str) -> VectorIndex:
        from ..vectors import VectorIndex

        key = (user_id, model)
        if key not in self._vector_indexes:
            self._vector_indexes[key] = VectorIndex(user_id, model)
        return self._vector_indexes[key]

    def without_vectors(
        self,
        user_id: str,
        model: str,
        app_id: str | None = None,
        *,
        ids: list[str] | None = None,
        limit: int | None = None,
        newest: int | None = None,
    ) -> list[tuple[str, str]]:
        """(id, text) of the user's memories (of one project, or of `ids`) that have no vector
        of `model` for their current text, in (created_at, id) order. `newest`: look only at the
        project's `newest` most recent memories (a bounded read: `app_id` required)."""
        if newest is not None:
            assert app_id is not None
            return [
                tuple(r)
                for r in self._query(
                    "SELECT m.id, m.memory FROM (SELECT id, memory, text_hash, created_us FROM memories "
                    "WHERE user_id = ? AND app_id = ? ORDER BY created_us DESC, id DESC LIMIT ?) m "
                    "LEFT JOIN vectors v ON v.id = m.id AND v.model = ? AND v.text_hash = m.text_hash "
                    "WHERE v.id IS NULL ORDER BY m.created_us, m.id",
                    [user_id, app_id, newest, model],
                )
            ]
        sql = (
            "SELECT m.id, m.memory FROM memories m LEFT JOIN vectors v ON v.id = m.id AND v.model = ? "
            "AND v.text_hash = m.text_hash WHERE m.user_id = ? AND v.id IS NULL"
        )
        params: list = [model, user_id]
        if app_id is not None:
            sql, params = sql + " AND m.app_id = ?", [*params, app_id]
        if ids is not None:
            found: list[tuple[str, str]] = []
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                found += self._query(f"{sql} AND m.id IN ({', '.join('?' * len(chunk))})", [*params, *chunk])
            return found
        sql += " ORDER BY m.created_us, m.id"
        if limit is not None:
            sql, params = sql + " LIMIT ?", [*params, limit]
        return [tuple(r) for r in self._query(sql, params)]

    MANY_IDS = 5000  # `vectors_of`: above this many ids, one pass over the user's vectors

    def vectors_of(
        self, user_id: str, model: str, ids: list[str], text_hashes: Mapping[str, str] | None = None
    ) -> dict[str, np.ndarray]:
        """The stored vectors of `model` (float16 rows, `vectors.stored_rows`) for those of `ids`
        that have one for their current text, or, with `text_hashes` (id -> `rows.text_hash` of
        the text the caller read), for that text. Many ids (dream's fetch): one pass over the
        user's vectors — with `text_hashes`, no join of every vector with its memory (0.3 s
        instead of 1 s at 100,000); few: by primary key."""
        from ..vectors import stored_rows

        by_key = self.dialect.indexed_by
        join = (
            f"FROM vectors v{{hint}} JOIN memories m{by_key('sqlite_autoindex_memories_1')} "
            "ON m.id = v.id AND m.text_hash = v.text_hash WHERE v.user_id = ? AND v.model = ?"
        )
        if len(ids) > self.MANY_IDS and text_hashes is not None:
            rows = self._query(
                "SELECT id, text_hash, vector FROM vectors WHERE user_id = ? AND model = ?", [user_id, model]
            )
        elif len(ids) > self.MANY_IDS:
            wanted = set(ids)
            found = self._query(f"SELECT v.id, v.text_hash, v.vector {join.format(hint='')}", [user_id, model])
            rows = [r for r in found if r[0] in wanted]
        else:
            rows = []
            for start in range(0, len(ids), 500):  # by primary key: the planner would rather walk them all
                chunk = ids[start : start + 500]
                rows += self._query(
                    f"SELECT v.id, v.text_hash, v.vector {join.format(hint=by_key('sqlite_autoindex_vectors_1'))} "
                    f"AND v.id IN ({', '.join('?' * len(chunk))})",
                    [user_id, model, *chunk],
                )
        if text_hashes is not None:
            rows = [r for r in rows if text_hashes.get(r[0]) == r[1]]
        matrix = stored_rows([r[2] for r in rows])
        return {r[0]: matrix[row] for row, r in enumerate(rows)}

    def vectors_by_text(self, user_id: str, model: str, texts: list[str]) -> dict[str, np.ndarray]:
        """Vectors of `model` that another of the user's memories with the same text already has
        (a merge whose draft is one of its sources, a re-import): no need to embed those again."""
        from ..vectors import decode_matrix

        by_hash = {text_hash(text): text for text in texts}
        by = self.dialect.indexed_by
        hashes = list(by_hash)
        rows: list[tuple] = []
        for start in range(0, len(hashes), 500):
            chunk = hashes[start : start + 500]
            rows += self._query(
                f"SELECT m.text_hash, v.vector FROM memories m{by('memories_text_hash')} "
                f"JOIN vectors v{by('sqlite_autoindex_vectors_1')} ON v.id = m.id AND v.model = ? "
                f"AND v.text_hash = m.text_hash WHERE m.user_id = ? AND m.text_hash IN ({', '.join('?' * len(chunk))})",
                [model, user_id, *chunk],
            )
        matrix = decode_matrix([blob for _, blob in rows])
        return {by_hash[hashed]: matrix[row] for row, (hashed, _) in enumerate(rows)}

    def vector_counts(self, user_id: str, model: str, app_id: str | None = None) -> tuple[int, int]:
        """(memories with a vector of `model`, all memories) of the user, or of one project."""
        app_sql, params = ("AND m.app_id = ?", [app_id]) if app_id is not None else ("", [])
        embedded = self._query(
            f"SELECT count(*) FROM vectors v JOIN memories m ON m.id = v.id AND "
            f"m.text_hash = v.text_hash WHERE v.user_id = ? AND v.model = ? {app_sql}",
            [user_id, model, *params],
        )[0][0]
        total = self._query(f"SELECT count(*) FROM memories m WHERE m.user_id = ? {app_sql}", [user_id, *params])[0][0]
        return embedded, total

    def count(self, user_id: str | None = None, app_id: str | None = None) -> int:
        chosen = [(column, value) for column, value in (("user_id", user_id), ("app_id", app_id)) if value is not None]
        where = " AND ".join(f"{column} = ?" for column, _ in chosen)
        sql = "SELECT count(*) FROM memories" + (f" WHERE {where}" if where else "")
        return self._query(sql, [value for _, value in chosen])[0][0]

    def iter_scope(self, user_id: str, app_id: str | None, batch: int = 1000) -> Iterator[Memory]:
        """Every memory of the scope in every lifecycle state, in stable order (for export)."""
        after: tuple[int, str] = (-(2**62), "")
        app_sql, app_params = (f"AND app_id {self.dialect.same} ?", [app_id]) if app_id is not None else ("", [])
        while True:
            rows = self._query(
                f"SELECT {SELECT_COLUMNS}, created_us FROM memories WHERE user_id = ? {app_sql} "
                "AND (created_us, id) > (?, ?) ORDER BY created_us, id LIMIT ?",
                [user_id, *app_params, *after, batch],
            )
            if not rows:
                return
            for row in rows:
                yield row_to_memory(row)
            after = (rows[-1][-1], rows[-1][0])

    def owner_of(self, memory_id: str) -> tuple[str, str | None] | None:
        """(user_id, app_id) of the memory with exactly this id, in any user's store, or of the
        last history row of a deleted one; None when no user has it (`mem0-server` checks a
        path's id against the caller's key with it: docs/server.md, "Access")."""
        rows = self._query("SELECT user_id, app_id FROM memories WHERE id = ?", (memory_id,))
        if rows:
            return rows[0][0], rows[0][1]
        rows = self._query(
            "SELECT user_id, before, after FROM history WHERE memory_id = ? ORDER BY seq DESC LIMIT 1", (memory_id,)
        )
        if not rows:
            return None
        record = history_record(rows[0][2]) or history_record(rows[0][1]) or {}
        return rows[0][0], record.get("app_id")

    def user_ids(self) -> list[str]:
        """Every user with a memory in the store."""
        return [row[0] for row in self._query("SELECT DISTINCT user_id FROM memory_counts WHERE n > 0 ORDER BY 1")]

    def scope_rows(self, user_id: str) -> list[tuple[str | None, str | None, str | None, int, str, str]]:
        """(agent_id, app_id, run_id, memories, first created_at, last updated_at) of each scope
        the user's active and superseded memories are in."""
        return [
            tuple(row)
            for row in self._query(
                "SELECT agent_id, app_id, run_id, count(*), min(created_at), max(updated_at) FROM memories "
                "WHERE user_id = ? AND lifecycle_state IN (?, ?) GROUP BY agent_id, app_id, run_id",
                (user_id, ACTIVE, SUPERSEDED),
            )
        ]

    def history(self, user_id: str, memory_id: str) -> list[HistoryEntry]:
        rows = self._query(
            "SELECT seq, memory_id, event, actor, at, before, after FROM history "
            "WHERE user_id = ? AND memory_id = ? ORDER BY seq",
            (user_id, memory_id),
        )
        return [_entry(row) for row in rows]

    def history_ids(self, user_id: str) -> list[str]:
        """Every memory id of the user that has a history (deleted memories' too), in order."""
        return [
            row[0]
            for row in self._query(
                "SELECT DISTINCT memory_id FROM history WHERE user_id = ? ORDER BY memory_id", (user_id,)
            )
        ]

    def journal_open_runs(self, user_id: str, app_id: str | None) -> list[tuple[str, str, str]]:
        """(run_id, plan JSON, resolutions JSON) of dream runs interrupted while applying."""
        return [
            tuple(r)
            for r in self._query(
                f"SELECT run_id, plan, resolutions FROM dream_runs WHERE user_id = ? AND app_id {self.dialect.same} ? "
                "AND status = 'applying' ORDER BY started_at",
                (user_id, app_id),
            )
        ]

    def journal_plan(self, run_id: str) -> tuple[str, str]:
        """(plan JSON, resolutions JSON) of a recorded dream run."""
        rows = self._query("SELECT plan, resolutions FROM dream_runs WHERE run_id = ?", (run_id,))
        if not rows:
            raise NotFoundError(f"no dream run {run_id}")
        return rows[0][0], rows[0][1]

    def journal_steps(self, run_id: str) -> dict[int, str]:
        return dict(self._query("SELECT step, outcome FROM dream_steps WHERE run_id = ?", (run_id,)))

    def dream_runs(self, user_id: str, app_id: str | None) -> list[DreamRun]:
        """The recorded runs of one project, newest first."""
        return [
            run_of_row(r)
            for r in self._query(
                f"SELECT {SELECT_RUN_COLUMNS} FROM dream_runs WHERE user_id = ? AND app_id {self.dialect.same} ? "
                "ORDER BY started_at DESC, run_id DESC",
                (user_id, app_id),
            )
        ]

    def dream_run(self, user_id: str, app_id: str | None, key: str) -> DreamRun:
        """The project's run whose id is `key` or starts with it (docs/dream.md, "Runs and undo")."""

        def starting_with(prefix: str) -> list[str]:
            return [
                r[0]
                for r in self._query(
                    f"SELECT run_id FROM dream_runs WHERE user_id = ? AND app_id {self.dialect.same} ? "
                    "AND substr(run_id, 1, ?) = ? "
                    "ORDER BY run_id LIMIT 3",
                    (user_id, app_id, len(prefix), prefix),
                )
            ]

        key = key.strip()
        run_id = pick(key, starting_with(key) if key else [], what="dream run", whats="dream runs")
        return run_of_row(self._query(f"SELECT {SELECT_RUN_COLUMNS} FROM dream_runs WHERE run_id = ?", (run_id,))[0])

    def run_history(self, user_id: str, run_id: str) -> list[HistoryEntry]:
        """The history rows a dream run wrote (and those of its undo), in order."""
        return [
            _entry(row)
            for row in self._query(
                "SELECT seq, memory_id, event, actor, at, before, after FROM history "
                "WHERE dream_run_id = ? AND user_id = ? ORDER BY seq",
                (run_id, user_id),
            )
        ]

    def last_history_seqs(self, user_id: str, ids: list[str]) -> dict[str, int]:
        """The seq of each memory's latest history row (every change writes one)."""
        found: dict[str, int] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            found.update(
                self._query(
                    f"SELECT memory_id, max(seq) FROM history WHERE user_id = ? "
                    f"AND memory_id IN ({', '.join('?' * len(chunk))}) GROUP BY memory_id",
                    (user_id, *chunk),
                )
            )
        return found


def _entry(row: tuple) -> HistoryEntry:
    seq, memory_id, event, actor, at, before, after = row
    return HistoryEntry(
        seq, memory_id, event, actor, at, json.loads(before) if before else None, json.loads(after) if after else None
    )
