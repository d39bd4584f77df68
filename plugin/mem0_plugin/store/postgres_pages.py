"""Pages of a PostgreSQL store at any depth (docs/stores.md, "Pages on PostgreSQL").

A page far into a read (OFFSET 500,000) costs PostgreSQL a walk over every row before it.
`Anchors` remembers, per read, the (created_us, id) key of every `STEP`-th row and the
read's count, as one index scan found them; a page then starts at the anchor at or before
its first row and skips fewer than `STEP` rows from there (`(created_us, id) >= anchor`,
a range of the order index).

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
from dataclasses import dataclass
from typing import Any

from ..filters import TRUE, CompiledFilter
from .rows import SELECT_COLUMNS, row_to_memory
from .sqlite_store import Page, ReadMode

STEP = 500  # rows between two anchors: a page skips fewer than this
SHALLOW = 2 * STEP  # a page starting before this row is read by OFFSET alone, nothing remembered
SCOPES = 8  # reads remembered per store


@dataclass(frozen=True)
class Anchors:
    """One read as of one token: its count and the key of every `STEP`-th row (row 0, STEP, ...)."""

    token: str
    count: int
    keys: tuple[tuple[int, str], ...]

    def start(self, offset: int) -> tuple[tuple[int, str], int]:
        """The anchor at or before row `offset`, and the rows to skip from it."""
        index = min(offset // STEP, len(self.keys) - 1)
        return self.keys[index], offset - index * STEP


def token_sql(app_id: str | None, states: tuple[str, ...]) -> tuple[str, list]:
    """A scalar subquery: the token of the user's reads in `states` (of project `app_id` when
    given), and its parameters (the user first)."""
    marks = ", ".join("?" * len(states))
    app_sql, app_params = (" AND app_key = ?", ["=" + app_id]) if app_id is not None else ("", [])
    sql = (
        "(SELECT coalesce(string_agg(app_key || '/' || lifecycle_state || '/' || n || '/' || xmin::text, ' ' "
        "ORDER BY app_key, lifecycle_state), '') FROM memory_counts "
        f"WHERE user_id = ? AND lifecycle_state IN ({marks}){app_sql})"
    )
    return sql, list(states) + app_params


def build_sql(token: str, where: str) -> str:
    """The token, then (row number, created_us, id) of every `STEP`-th row of the read, the
    last of them with the number of rows from it on (so the count is known). A walk along the
    order index, `STEP` rows at a time (each step an index scan with a LIMIT, which PostgreSQL
    always reads from the index; read whole, it would rather sort the table). Parameters: the
    read's three times, then the token's."""
    first = f"SELECT created_us, id FROM memories WHERE {where} ORDER BY created_us, id LIMIT 1"
    step = (
        f"SELECT created_us, id FROM memories WHERE {where} AND (created_us, id) > (a.created_us, a.id) "
        f"ORDER BY created_us, id OFFSET {STEP - 1} LIMIT 1"
    )
    tail = (
        f"SELECT count(*) FROM (SELECT 1 FROM memories WHERE {where} AND (created_us, id) >= (k.created_us, k.id) "
        f"LIMIT {STEP}) r"
    )
    return (
        f"WITH RECURSIVE a (pos, created_us, id) AS (SELECT 0, f.created_us, f.id FROM ({first}) f "
        f"UNION ALL SELECT a.pos + {STEP}, n.created_us, n.id FROM a CROSS JOIN LATERAL ({step}) n) "
        f"SELECT t.token, k.pos, k.created_us, k.id, CASE WHEN k.last THEN ({tail}) END "
        f"FROM (SELECT {token} AS token) t LEFT JOIN (SELECT *, pos = max(pos) OVER () AS last FROM a) k ON TRUE "
        "ORDER BY k.pos"
    )


def page_sql(token: str, columns: str, where: str) -> str:
    """The token, then `columns` of the read's rows from an anchor on (LIMIT, OFFSET)."""
    return (
        f"SELECT t.token, p.* FROM (SELECT {token} AS token) t LEFT JOIN LATERAL ("
        f"SELECT {columns} FROM memories WHERE {where} AND (created_us, id) >= (?, ?) "
        "ORDER BY created_us, id LIMIT ? OFFSET ?) p ON TRUE"
    )


def anchors_of(rows: list[tuple]) -> Anchors:
    """`Anchors` from `build_sql`'s rows."""
    token = rows[0][0]
    found = [row for row in rows if row[1] is not None]
    count = found[-1][1] + found[-1][4] if found else 0
    return Anchors(token, count, tuple((row[2], row[3]) for row in found))


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
    """`page` for `PostgresStore` (before `SqliteStore` in its bases): a page from row
    `SHALLOW` on starts at a remembered anchor; the rest is `SqliteStore.page`."""

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
        token, token_params = token_sql(app_id, mode.value)
        token_params = [user_id, *token_params]
        columns = f"{SELECT_COLUMNS}, {'features' if with_features else 'NULL'}, created_us"
        cache = self.anchors
        key = (sql, tuple(params))
        for _ in range(2):
            anchors = cache.get(key)
            if anchors is None:
                built = self._query(build_sql(token, sql), [*params, *params, *params, *token_params])  # type: ignore[attr-defined]
                anchors = anchors_of(built)
                cache.put(key, anchors)
            if not anchors.keys:
                return None  # an empty read: nothing to anchor on
            anchor, skip = anchors.start(offset)
            rows = self._query(  # type: ignore[attr-defined]
                page_sql(token, columns, sql), [*token_params, *params, *anchor, page_size, skip]
            )
            if rows[0][0] == anchors.token:
                return anchors.count, [row[1:] for row in rows if row[1] is not None]
            cache.drop(key)  # changed since: anchors again, of the read as it is now
        return None
