"""Pages of a PostgreSQL store at any depth (docs/stores.md, "Pages on PostgreSQL").

A page far into a read (OFFSET 500,000) costs PostgreSQL a walk over every row before it.
`Anchors` remembers, per read, its count and the (created_us, id) key of every `STEP`-th
row, counted from the start and from the end, as far as pages have needed them: a page
with no anchor near it walks the order index from the nearer end's last known one, `STEP`
rows a step, to the page. A page then starts at the anchor at or before its first row
(or at or after its last, read backwards) and skips fewer than `STEP` rows from there
(`(created_us, id) >= anchor`: a range of the order index).

What was remembered is used only while the read is unchanged. Its token is the state of the
user's rows of `memory_counts` in the read's scope: their counts and `xmin` (the
transaction that last wrote each row). Every write that can add a row to the read, drop one
or move one (an insert, a delete, a change of user, project, lifecycle state or time: the
store's changes set them all together) goes through the counts trigger, which writes a new
version of one of those rows; so a token equal to the remembered one means no such write
was committed in between. The token is read in the same statement as the page (one
snapshot), so a page is exactly the page a LIMIT/OFFSET read would return at that moment,
whatever others write between pages. Inside a write transaction (whose own changes leave
`xmin` as it is) none of this is used.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Any

from ...filters import TRUE, CompiledFilter
from ..base import Page, ReadMode
from ..rows import SELECT_COLUMNS, row_to_memory

STEP = 500  # rows between two anchors: a page skips fewer than this
SHALLOW = 2 * STEP  # a page starting before this row is read by OFFSET alone, nothing remembered
SCOPES = 8  # reads remembered per store

Key = tuple[int, str]  # (created_us, id): a row's place in the order of every read


@dataclass(frozen=True)
class Anchors:
    """One read as of one token: its count, the keys of its rows 0, STEP, 2*STEP, ... as far as
    walked from the start (`head`), and of its rows count-1, count-1-STEP, ... as far as
    walked from the end (`tail`)."""

    token: str
    count: int
    head: tuple[Key, ...]
    tail: tuple[Key, ...]

    def forward(self, offset: int) -> tuple[Key, int] | None:
        """The anchor at or before row `offset` and the rows from it to skip, if walked to."""
        index = offset // STEP
        return (self.head[index], offset - index * STEP) if index < len(self.head) else None

    def backward(self, last: int) -> tuple[Key, int] | None:
        """The anchor at or after row `last` and the rows from it back to skip, if walked to."""
        index = (self.count - 1 - last) // STEP
        return (self.tail[index], self.count - 1 - index * STEP - last) if index < len(self.tail) else None


def token_sql(app_id: str | None, states: tuple[str, ...]) -> tuple[str, str, list]:
    """Two scalar subqueries on the user's rows of `memory_counts` in `states` (of project
    `app_id` when given): the read's token, and the sum of their counts; and the parameters
    of each (the user first)."""
    marks = ", ".join("?" * len(states))
    app_sql, app_params = (" AND app_key = ?", ["=" + app_id]) if app_id is not None else ("", [])
    scope = f"FROM memory_counts WHERE user_id = ? AND lifecycle_state IN ({marks}){app_sql}"
    token = (
        "(SELECT coalesce(string_agg(app_key || '/' || lifecycle_state || '/' || n || '/' || xmin::text, ' ' "
        f"ORDER BY app_key, lifecycle_state), '') {scope})"
    )
    return token, f"(SELECT coalesce(sum(n), 0) {scope})", list(states) + app_params


def ends_sql(token: str, count: str, where: str) -> str:
    """The token, the read's count, the keys of its first and last rows. Parameters: the
    token's, the count's, the read's twice."""
    first = f"SELECT created_us, id FROM memories WHERE {where} ORDER BY created_us, id LIMIT 1"
    last = f"SELECT created_us, id FROM memories WHERE {where} ORDER BY created_us DESC, id DESC LIMIT 1"
    return (
        f"SELECT t.token, t.n, f.created_us, f.id, l.created_us, l.id FROM (SELECT {token} AS token, {count} AS n) t "
        f"LEFT JOIN LATERAL ({first}) f ON TRUE LEFT JOIN LATERAL ({last}) l ON TRUE"
    )


def walk_sql(token: str, where: str, *, back: bool) -> str:
    """The token, then the keys of the next anchors from a known one, forward (or `back`):
    each `STEP` rows on, found by an index scan with a LIMIT (PostgreSQL reads those from the
    order index; asked for a whole read at once, it would rather sort the table). Parameters:
    the known key, the read's, how many anchors, the token's."""
    after, order = ("<", "DESC") if back else (">", "ASC")
    step = (
        f"SELECT created_us, id FROM memories WHERE {where} AND (created_us, id) {after} (a.created_us, a.id) "
        f"ORDER BY created_us {order}, id {order} OFFSET {STEP - 1} LIMIT 1"
    )
    return (
        'WITH RECURSIVE a (i, created_us, id) AS (SELECT 0, ?::bigint, (?::text) COLLATE "C" '
        f"UNION ALL SELECT a.i + 1, n.created_us, n.id FROM a CROSS JOIN LATERAL ({step}) n WHERE a.i < ?) "
        f"SELECT t.token, a.i, a.created_us, a.id FROM (SELECT {token} AS token) t LEFT JOIN a ON a.i > 0 ORDER BY a.i"
    )


def page_sql(token: str, columns: str, where: str, *, back: bool) -> str:
    """The token, then `columns` of the read's rows from an anchor on, forward (or `back`)
    (LIMIT, OFFSET). Parameters: the token's, the read's, the anchor, LIMIT, OFFSET."""
    after, order = ("<=", "DESC") if back else (">=", "ASC")
    return (
        f"SELECT t.token, p.* FROM (SELECT {token} AS token) t LEFT JOIN LATERAL ("
        f"SELECT {columns} FROM memories WHERE {where} AND (created_us, id) {after} (?, ?) "
        f"ORDER BY created_us {order}, id {order} LIMIT ? OFFSET ?) p ON TRUE"
    )


class AnchorCache:
    """The last `SCOPES` reads' anchors of one store, shared by its threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._reads: OrderedDict[Any, Anchors] = OrderedDict()

    def get(self, key: Any) -> Anchors | None:
        with self._lock:
            found = self._reads.get(key)
            if found is not None:
                self._reads.move_to_end(key)
            return found

    def put(self, key: Any, anchors: Anchors) -> None:
        with self._lock:
            self._reads[key] = anchors
            self._reads.move_to_end(key)
            while len(self._reads) > SCOPES:
                self._reads.popitem(last=False)

    def __len__(self) -> int:
        return len(self._reads)

    def drop(self, key: Any) -> None:
        with self._lock:
            self._reads.pop(key, None)


class DeepPages:
    """`page` for `PostgresStore` (before `SqlReads` in its bases): a page from row
    `SHALLOW` on starts at a remembered anchor; the rest is `SqlReads.page`."""

    _local: threading.local

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
        offset = (page - 1) * page_size
        if offset >= SHALLOW and not self._in_write():
            found = self._anchored_page(user_id, where, mode, offset, page_size, app_id, with_features)
            if found is not None:
                count, rows = found
                features = tuple(row[-2] for row in rows) if with_features else ()
                return Page(count, page, page_size, tuple(row_to_memory(r) for r in rows), features)
        return super().page(  # type: ignore[misc]
            user_id, where, mode, page, page_size, app_id=app_id, with_features=with_features
        )

    @property
    def anchors(self) -> AnchorCache:
        """The reads this store remembers anchors of (made with the first)."""
        return self.__dict__.setdefault("_anchor_cache", AnchorCache())

    def _in_write(self) -> bool:
        return getattr(self._local, "conn", None) is not None and getattr(self._local, "snapshot", None) is None

    def _anchored_page(
        self,
        user_id: str,
        where: CompiledFilter,
        mode: ReadMode,
        offset: int,
        page_size: int,
        app_id: str | None,
        with_features: bool,
    ) -> tuple[int, list[tuple]] | None:
        """(count, rows) of the page, or None when the read keeps changing under it."""
        sql, params = self._where(user_id, where, mode, app_id)  # type: ignore[attr-defined]
        token, count, token_params = token_sql(app_id, mode.value)
        token_params = [user_id, *token_params]
        if where is not TRUE:
            count, count_params = f"(SELECT count(*) FROM memories WHERE {sql})", params
        else:
            count_params = token_params
        query = self._query  # type: ignore[attr-defined]
        cache, key = self.anchors, (sql, tuple(params))
        for _ in range(3):
            anchors = cache.get(key)
            if anchors is None:
                ends = query(ends_sql(token, count, sql), [*token_params, *count_params, *params, *params])[0]
                if not ends[1]:
                    return None  # an empty read: nothing to anchor on
                anchors = Anchors(ends[0], ends[1], ((ends[2], ends[3]),), ((ends[4], ends[5]),))
                cache.put(key, anchors)
            last = min(offset + page_size, anchors.count) - 1
            found: tuple[Key, int] | None
            if offset >= anchors.count:  # past the end: nothing, once the token says so
                found, back = (anchors.tail[0], offset - anchors.count + 1), False
            else:
                found, back = anchors.forward(offset), False
                if found is None:
                    found, back = anchors.backward(last), True
            if found is None:
                walked = self._walk(anchors, offset, last, sql, params, token, token_params)
                if walked is not None:
                    cache.put(key, walked)
                else:
                    cache.drop(key)  # changed since: anchors again, of the read as it is now
                continue
            (anchor, skip), limit = found, (last - offset + 1 if back else page_size)
            columns = f"{SELECT_COLUMNS}, {'features' if with_features else 'NULL'}, created_us"
            rows = query(
                page_sql(token, columns, sql, back=back), [*token_params, *params, *anchor, max(limit, 0), skip]
            )
            if rows[0][0] == anchors.token:
                rows = [row[1:] for row in rows if row[1] is not None]
                return anchors.count, rows[::-1] if back else rows
            cache.drop(key)
        return None

    def _walk(
        self, anchors: Anchors, offset: int, last: int, sql: str, params: list, token: str, token_params: list
    ) -> Anchors | None:
        """`anchors` walked on from the nearer end to the page's rows; None if the read changed."""
        back = offset * 2 >= anchors.count
        have = anchors.tail if back else anchors.head
        wanted = ((anchors.count - 1 - last) if back else offset) // STEP
        rows = self._query(  # type: ignore[attr-defined]
            walk_sql(token, sql, back=back), [*have[-1], *params, wanted - len(have) + 1, *token_params]
        )
        found = tuple((row[2], row[3]) for row in rows if row[1] is not None)
        if rows[0][0] != anchors.token or len(have) + len(found) <= wanted:
            return None
        return replace(anchors, tail=have + found) if back else replace(anchors, head=have + found)
