"""`PostgresStore`: the store on a PostgreSQL database, for a team (docs/stores.md).

The same interface and the same meaning as `SqliteStore`: both read and write with the SQL
stores' shared SQL (`store.sql`) in their own dialect (`dialect.POSTGRES`: `IS NOT DISTINCT
FROM`, no index hints); psycopg takes `%s` marks where the shared SQL has `?` (`paramstyle`).
What differs is here: connections (a `psycopg_pool` pool, one connection per thread while it
reads a snapshot or writes), lexical candidates (word postings, `store.postgres.search`), the
filter dialect (`store.postgres.filters`), and the locks:

* every write transaction first takes one transaction-level advisory lock, so writers
  queue one after another as they do on SQLite (`BEGIN IMMEDIATE`): the same guarantees
  (an identical text stored once, conditional writes on the row version). A conflict the
  server still reports (with a session outside the store, or under a stricter isolation
  level set on the database) is a `WriteConflictError`, and `transact` runs the whole
  transaction again (`store.postgres.retry`);
* dream's apply holds a session-level advisory lock for its whole duration
  (`apply_lock`), the lock the SQLite store keeps in a file beside it: one apply at a time
  per database, across every machine that uses it.

A lost connection ends its transaction on the server: what it wrote is rolled back whole.
Vectors are ranked by pgvector when the server has it, else in the process
(`store.postgres.vectors`).
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from ...errors import StoreError, WriteConflictError
from ...filters import CompiledFilter
from ...store_url import display_url
from .. import search as lexical
from ..base import ReadMode
from ..ranking import Near
from ..rows import SELECT_COLUMNS
from ..sql.dialect import POSTGRES
from ..sql.reads import SqlReads
from ..sql.writer import SqlWriter
from . import migrations as postgres_migrations
from . import search as postgres_search
from .filters import postgres_filter
from .migrations import migrate
from .pages import DeepPages
from .retry import RETRYABLE, WriteRetry, run_with_retries
from .vectors import OFF_ENV, VectorPath, detect, insert_vector, known_cosines, nearest_in_scope

WRITE_LOCK = 0x6D656D30_0002  # pg_advisory_xact_lock key of every write transaction
POOL_SIZE = 8
T = TypeVar("T")
LEXICAL_MARGIN = 16  # ranked candidates read beyond top_k: the SQL order and the score may tie apart

_cache: dict[str, str] = {}


def paramstyle(sql: str) -> str:
    """The shared SQL's `?` marks as psycopg's `%s` (a literal `%` doubled)."""
    done = _cache.get(sql)
    if done is None:
        done = sql.replace("%", "%%").replace("?", "%s")
        if len(_cache) < 4096:
            _cache[sql] = done
    return done


def apply_lock_key(user_id: str, project_id: str | None) -> int:
    """The advisory lock key of one scope's dream apply: 64 bits of a hash of (user, project)."""
    scope = f"mem0-dream-apply\0{user_id}\0{'' if project_id is None else '=' + project_id}"
    return int.from_bytes(hashlib.sha256(scope.encode("utf-8", "surrogatepass")).digest()[:8], "big", signed=True)


def _tsquery(terms: Iterable[str]) -> str:
    """A tsquery matching any of `terms`, each a quoted lexeme (no parsing, no stemming)."""
    return " | ".join("'" + t.replace("\\", "\\\\").replace("'", "''") + "'" for t in terms)


class _Connection:
    """A psycopg connection that takes the shared SQL's `?` marks (`paramstyle`), as a writer
    expects of a connection (`store.sql.writer.Connection`)."""

    def __init__(self, conn: Any):
        self.raw = conn

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self.raw.execute(paramstyle(sql), tuple(params))

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> Any:
        cursor = self.raw.cursor()
        cursor.executemany(paramstyle(sql), [tuple(r) for r in rows])
        return cursor

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        return self.raw.info.transaction_status != TransactionStatus.IDLE


class PostgresWriter(SqlWriter):
    """The write primitives (`store.sql.writer`) inside one `PostgresStore.write()`
    transaction, with what PostgreSQL does its own way (the search index, pgvector)."""

    dialect = POSTGRES
    _conn: _Connection
    SOURCE_SQL = "mem0_text(meta -> 'source')"  # NULL for unreadable metadata, as on SQLite
    pgvector = False  # the store ranks by pgvector: each vector is also written as its `embedding`

    def reindex_search(self) -> int:
        """As on SQLite: the terms written again (the postings and statistics triggers follow),
        then the statistics counted again."""
        raw = self._conn.raw
        changed = postgres_migrations.reindex_terms(raw)
        postgres_migrations.recount_statistics(raw)
        return changed

    def _insert_vector(self, row: tuple[str, str, str, str, bytes], vector: Any) -> None:
        if not self.pgvector:
            return super()._insert_vector(row, vector)
        insert_vector(self._conn.raw, row)

    def optimize_search_index(self) -> None:
        """Nothing to merge: a GIN index drops a deleted row's entries at VACUUM (`scrub`)."""


class PostgresStore(DeepPages, SqlReads):
    """The store on a PostgreSQL database; `url` is a ``postgresql://`` URL (libpq's forms)."""

    dialect = POSTGRES
    scheme = "postgresql"
    write_retry = WriteRetry()  # `transact`'s attempts after a conflict
    warm_in_background = True  # with pgvector: load the in-process ranking's vectors meanwhile (`_vector_side`)

    def __init__(self, url: str, *, readonly: bool = False):
        self.url = url
        self._init_state(readonly)
        self._local = threading.local()
        self._apply_holder: Any = None  # the connection holding dream's apply lock, while held
        self.vectors = VectorPath()  # decided at open (`store.postgres.vectors.detect`)
        self.conflicts_retried: list[str] = []  # the SQLSTATE of each conflict whose transaction ran again
        self._warming: set[tuple[str, str]] = set()  # (user, model) whose vectors a thread loads or loaded
        self._warm: set[tuple[str, str]] = set()  # those loaded: ranked in the process from then on
        self._postings: bool | None = None  # migration 2's memory_terms (absent: read-only, older)
        self._pool = self._open_pool()

    def _has_features_column(self) -> bool:
        return True  # its first migration has it

    # -- connections --------------------------------------------------------------

    def _open_pool(self) -> Any:
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError:
            raise StoreError("PostgreSQL stores need psycopg: pip install 'mem0-dream-plugin[postgres]'") from None
        try:
            with psycopg.connect(self.url, autocommit=True, connect_timeout=10) as conn:
                if not self.readonly:
                    migrate(conn)
                off = os.environ.get(OFF_ENV, "").strip().lower() == "off"
                self.vectors = detect(conn, readonly=self.readonly, turned_off=off)
            pool = ConnectionPool(
                self.url, min_size=1, max_size=POOL_SIZE, kwargs={"autocommit": True}, open=False, name="mem0"
            )
            pool.open(wait=True, timeout=30)  # PoolTimeout is a psycopg.OperationalError
        except psycopg.Error as exc:
            raise StoreError(f"cannot open the store {display_url(self.url)}: {_first_line(exc)}") from None
        return pool

    def close(self) -> None:
        self._pool.close()

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        """Rows of one read; outside a transaction, a read on a connection the server has
        closed since (a restart, an idle timeout) is tried again once on a new one."""
        import psycopg

        bound = getattr(self._local, "conn", None)
        for attempt in (1, 2):
            try:
                if bound is not None:
                    return bound.execute(sql, params).fetchall()
                with self._pool.connection() as raw:
                    return _Connection(raw).execute(sql, params).fetchall()
            except psycopg.OperationalError as exc:
                if bound is not None or attempt == 2:
                    raise StoreError(f"store read failed: {_first_line(exc)}") from None
                self._pool.check()  # drop every other pooled connection the server closed too
            except psycopg.Error as exc:
                raise StoreError(f"store read failed: {_first_line(exc)}") from None
        raise AssertionError("unreachable")

    def _begin(self, *statements: tuple[str, tuple]) -> Any:
        """A pool connection with `statements` run on it (its BEGIN ...). One the server has
        closed since it was pooled is replaced, once: nothing was done on it yet."""
        import psycopg

        for attempt in (1, 2):
            raw = self._pool.getconn()
            try:
                for sql, params in statements:
                    raw.execute(sql, params or None)
                return raw
            except psycopg.OperationalError:
                self._pool.putconn(raw)  # a broken connection is discarded by the pool
                if attempt == 2:
                    raise
                self._pool.check()  # and every other one the server closed too
        raise AssertionError("unreachable")

    @contextmanager
    def write(self, *, secure: bool = False) -> Iterator[PostgresWriter]:
        """One transaction that holds the store's write lock; every change and its history row
        commit together. `secure` changes nothing here (`scrub` clears what a purge leaves)."""
        if self.readonly:
            raise StoreError("the store is open read-only")
        import psycopg

        if getattr(self._local, "conn", None) is not None:
            raise StoreError("store write failed: a transaction is already open in this thread")
        committing, raw = False, None
        try:
            raw = self._begin((f"BEGIN; SELECT pg_advisory_xact_lock({WRITE_LOCK:d})", ()))  # one round trip
            conn = self._local.conn = _Connection(raw)
            self._views += 1
            try:
                self._check_apply_lock()
                writer = PostgresWriter(conn)
                writer.pgvector = self.vectors.pgvector
                yield writer
                committing = True
                raw.execute("COMMIT")
            except BaseException:
                _rollback(conn)
                raise
            finally:
                self._local.conn = None
                self._views += 1
                self._pool.putconn(raw)
        except psycopg.Error as exc:
            lost = raw is None or raw.broken or raw.closed
            raise _write_error(exc, committing=committing, lost=lost) from None

    def transact(self, work: Callable[[PostgresWriter], T], *, secure: bool = False) -> T:
        """`work(writer)` in one write transaction, run again from the start after a conflict
        the server reports (`store.postgres.retry`): every attempt re-reads what it checks."""

        def once() -> T:
            with self.write(secure=secure) as writer:
                return work(writer)

        return run_with_retries(once, self.write_retry, retried=self._conflict_retried)

    def _conflict_retried(self, conflict: WriteConflictError) -> None:
        self.conflicts_retried.append(conflict.sqlstate)

    @contextmanager
    def read_snapshot(self) -> Iterator[None]:
        """Every read inside the block sees the store as of one moment (a repeatable-read
        transaction on one connection)."""
        if getattr(self._local, "conn", None) is not None:
            yield
            return
        import psycopg

        try:
            raw = self._begin(("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", ()))
            conn = self._local.conn = _Connection(raw)
            self._local.snapshot = self._views = self._views + 1
            try:
                yield
            finally:
                self._local.conn = None
                self._local.snapshot = None
                _rollback(conn)
                self._pool.putconn(raw)
        except psycopg.Error as exc:
            raise StoreError(f"store read failed: {_first_line(exc)}") from None

    def _view(self) -> tuple | None:
        """Inside a snapshot: a token for it (nothing changes there). Outside, None: other
        machines write without this process knowing, so nothing read is reused."""
        snapshot = getattr(self._local, "snapshot", None)
        return ("snapshot", id(self), snapshot) if snapshot is not None else None

    def scrub(self) -> bool:
        """VACUUM the tables a purge rewrote: their old row versions (the deleted text) go."""
        import psycopg

        try:
            with self._pool.connection() as raw:
                for table in ("memories", "memory_terms", "history", "dream_runs"):
                    raw.execute(f"VACUUM {table}")
        except psycopg.Error as exc:
            raise StoreError(f"store write failed: {_first_line(exc)}") from None
        return True

    @contextmanager
    def apply_lock(self, scope: tuple[str, str | None] = ("", None)) -> Iterator[None]:
        """Dream's apply lock of one (user, project) (docs/stores.md): held on a connection of
        its own for the block; the server drops it if this process dies or loses the connection."""
        import psycopg

        key = apply_lock_key(*scope)
        try:
            with self._pool.connection() as raw:
                raw.execute("SELECT pg_advisory_lock(%s)", (key,))
                self._apply_holder = raw
                try:
                    yield
                finally:
                    self._apply_holder = None
                    try:
                        raw.execute("SELECT pg_advisory_unlock(%s)", (key,))
                    except psycopg.OperationalError:
                        pass  # the connection is gone, and the lock with it
        except psycopg.Error as exc:
            raise StoreError(f"store write failed: {_first_line(exc)}") from None

    def _check_apply_lock(self) -> None:
        """While this process holds dream's apply lock, every write first checks that the
        connection holding it is alive: a run that lost it stops (the next run completes it)
        instead of applying on beside another that took the lock since."""
        import psycopg

        holder = self._apply_holder
        if holder is None:
            return
        try:
            holder.execute("SELECT 1")
        except psycopg.OperationalError:
            raise StoreError(
                "store write failed: the connection holding dream's apply lock was lost; "
                "the next run completes the apply"
            ) from None

    # -- reads whose SQL differs ----------------------------------------------------

    def _where(
        self, user_id: str, where: CompiledFilter, mode: ReadMode, app_id: str | None = None
    ) -> tuple[str, list]:
        """The shared scope, with the filter compiled for PostgreSQL."""
        return super()._where(user_id, postgres_filter(where), mode, app_id)

    def _vector_side(
        self,
        user_id: str,
        model: str,
        vector: Any,
        sql: str,
        params: list,
        wanted: int,
        known: Sequence[str] = (),
    ) -> tuple[dict[str, float], list[Near]]:
        """With pgvector, the server finds the nearest (`store.postgres.vectors`) until this
        process holds the user's vectors in memory, which a thread loads meanwhile
        (`warm_in_background`); then, or without pgvector, they are ranked here as on SQLite.
        Both give the same results: pgvector spares a new process the load (seconds for
        100,000 vectors), the loaded vectors a long-lived one the server's scan."""
        if not self.vectors.pgvector or (user_id, model) in self._warm:
            return super()._vector_side(user_id, model, vector, sql, params, wanted, known)
        if self.warm_in_background:
            self._start_warming(user_id, model)
        cosines = known_cosines(self._query, user_id, model, vector, known)
        return cosines, nearest_in_scope(self._query, user_id, model, vector, sql, params, wanted)

    def _start_warming(self, user_id: str, model: str) -> None:
        """Load the vectors of (user, model) for the in-process ranking, once, on a thread."""
        key = (user_id, model)
        with self._lock:
            if key in self._warming:
                return
            self._warming.add(key)
            index = self.vector_index(user_id, model)

        def load() -> None:
            try:
                index.current(self._query)
            except Exception:  # a closed store, a lost server: pgvector goes on serving
                return
            self._warm.add(key)

        threading.Thread(target=load, name="mem0-vectors", daemon=True).start()

    def _find_lexical(self, found: lexical.Found, sql: str, params: list, top_k: int) -> None:
        """Lexical search's candidates (docs/search.md): ranked from the word postings
        (`store.postgres.search`), read best first in scope, scored as on SQLite. Exhaustive:
        the top `top_k` by score, ties by `created_at` then `id`."""
        light = f"text_hash, terms, {SELECT_COLUMNS}"

        def take(rows: list[tuple]) -> None:
            for row in rows:
                found.take(row[2], row)  # by id

        take(self._query(f"SELECT {light} FROM memories WHERE {sql} AND text_hash = ?", [*params, found.exact]))
        if not found.terms:
            return
        if not self._has_postings():
            return self._scan_lexical(found, sql, params, top_k)
        postgres_search.walk(
            self._query,
            found.query,
            lambda rowids: take(
                self._query(f"SELECT {light} FROM memories WHERE rowid = ANY(?) AND {sql}", [rowids, *params])
            ),
            kth_score=lambda: found.kth_score(top_k),
            threshold=found.threshold,
        )

    def _has_postings(self) -> bool:
        """Whether the schema has migration 2's `memory_terms` (a store opened read-only may not)."""
        if self._postings is None:
            self._postings = bool(self._query("SELECT to_regclass('memory_terms') IS NOT NULL")[0][0])
        return self._postings

    def _has_statistics(self) -> bool:
        """Whether the schema has migration 4's BM25 statistics (as `_has_postings`)."""
        if self._statistics is None:
            self._statistics = bool(self._query("SELECT to_regclass('scope_sizes') IS NOT NULL")[0][0])
        return self._statistics

    def _counts_vectors(self) -> bool:
        """Whether the schema has migration 2's `vector_counts` (as `_has_postings`)."""
        if self._vector_counts is None:
            self._vector_counts = bool(self._query("SELECT to_regclass('vector_counts') IS NOT NULL")[0][0])
        return self._vector_counts

    def _scan_lexical(self, found: lexical.Found, sql: str, params: list, top_k: int) -> None:
        """Before migration 2 (read-only): the GIN index finds the memories in scope that hold
        a query word, PostgreSQL ranks them by shared words against their length."""
        light = f"text_hash, terms, {SELECT_COLUMNS}"
        wanted = sorted(found.terms)
        # the shared words counted once per candidate (LATERAL), its length is the tsvector's
        shared = "(SELECT count(*) AS n FROM unnest(tsvector_to_array(terms_vector)) w WHERE w = ANY(?::text[]))"
        rows = self._query(
            f"SELECT {light} FROM memories, LATERAL {shared} s WHERE {sql} AND terms_vector @@ ?::tsquery "
            "ORDER BY (s.n * s.n)::float8 / greatest(length(terms_vector), s.n, 1) DESC, created_us, id LIMIT ?",
            [wanted, *params, _tsquery(wanted), top_k + LEXICAL_MARGIN],
        )
        for row in rows:
            found.take(row[2], row)


def _rollback(conn: _Connection) -> None:
    if conn.in_transaction and not conn.raw.closed:
        try:
            conn.raw.execute("ROLLBACK")
        except Exception:
            pass


def _write_error(exc: Any, *, committing: bool, lost: bool) -> StoreError:
    """The store error of a failed write transaction: a conflict (`WriteConflictError`, which
    `transact` retries), a lost connection (said plainly, with what became of the write), or
    any other."""
    if getattr(exc, "sqlstate", None) in RETRYABLE:
        conflict = WriteConflictError(f"store write failed: {_first_line(exc)} (a conflict with another transaction)")
        conflict.sqlstate = exc.sqlstate
        return conflict
    if lost:
        if committing:
            return StoreError(
                f"store write failed: the connection to the database was lost while committing ({_first_line(exc)}); "
                "the change may or may not have been applied: check with `mem0-memories history`"
            )
        return StoreError(
            f"store write failed: the connection to the database was lost ({_first_line(exc)}); "
            "nothing of this write was applied"
        )
    return StoreError(f"store write failed: {_first_line(exc)}")


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
