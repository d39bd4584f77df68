"""`SqliteStore`: memories, history and the dream journal in one SQLite file.

Several processes use the file at once (the MCP server, a cron `--auto`, the CLI):
WAL mode, a long busy timeout and `BEGIN IMMEDIATE` for every write, so writers
queue instead of failing. Every change and its history row share one transaction.
Within a process, one connection is shared by threads (the MCP server runs each tool
call on a worker thread): a lock keeps one thread's transaction from swallowing another's.
The reads are the SQL stores' (`store.sql.reads`); lexical candidates come from FTS5.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from filelock import FileLock

from ...errors import StoreError
from ...private_files import create_private_file, private_folder
from ...store_url import sqlite_url
from .. import search as lexical
from ..rows import SELECT_COLUMNS
from ..sql.dialect import SQLITE
from ..sql.reads import SqlReads
from .migrations import migrate
from .writer import SqliteWriter

T = TypeVar("T")
BUSY_TIMEOUT_MS = 60_000
CHECKPOINT_WAIT_MS = 3_000


def _is_locked(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _retry_locked(action, attempts: int = 50):
    """Run `action`, retrying while SQLite reports the file busy (beyond busy_timeout's reach)."""
    for attempt in range(attempts):
        try:
            return action()
        except sqlite3.OperationalError as exc:
            if not _is_locked(exc) or attempt == attempts - 1:
                raise
            time.sleep(min(0.01 * (attempt + 1), 0.2))


class SqliteStore(SqlReads):
    """The embedded store. Reads and writes are confined to the `user_id` passed in."""

    dialect = SQLITE
    scheme = "sqlite"

    def __init__(self, path: str | Path, *, readonly: bool = False):
        self.path = Path(path)
        self.url = sqlite_url(self.path)
        self._init_state(readonly)
        self._conn = self._connect()

    def _connect(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = None
        try:
            if self.readonly:
                if not self.path.is_file():
                    raise StoreError(f"store file does not exist: {self.path}")
                conn = sqlite3.connect(
                    f"{self.path.resolve().as_uri()}?mode=ro",
                    uri=True,
                    timeout=60,
                    isolation_level=None,
                    check_same_thread=False,
                )
                conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
                conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
                return conn
            private_folder(self.path.parent)  # a new store and its folder: 0600 / 0700 (its WAL files follow it)
            create_private_file(self.path)
            conn = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            _retry_locked(lambda: conn.execute("PRAGMA journal_mode = WAL").fetchone())
            conn.execute("PRAGMA synchronous = NORMAL")
            _retry_locked(lambda: migrate(conn))
            return conn
        except sqlite3.DatabaseError as exc:
            if conn is not None:
                conn.close()  # a server retrying a corrupt file must not leak a handle per call
            raise StoreError(f"cannot open the store {self.path}: {exc}") from None
        except OSError as exc:
            raise StoreError(f"cannot create the store directory {self.path.parent}: {exc.strerror}") from None

    def close(self) -> None:
        self._conn.close()

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        try:
            with self._lock:
                return _retry_locked(lambda: self._conn.execute(sql, params).fetchall())
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"store read failed: {exc}") from None

    @contextmanager
    def apply_lock(self, scope: tuple[str, str | None] = ("", None)) -> Iterator[None]:
        """Dream's apply lock (blocking), held for the block: one apply at a time on this file,
        whatever the scope (docs/dream.md, "Step 5: confirm and apply"); a file beside the store."""
        lock_path = f"{self.path}.dream-apply.lock"
        lock = FileLock(lock_path, mode=0o600)
        try:
            lock.acquire()
        except OSError as exc:
            raise StoreError(f"cannot open the apply lock {lock_path}: {exc.strerror or exc}") from None
        try:
            yield
        finally:
            lock.release()

    @contextmanager
    def write(self, *, secure: bool = False) -> Iterator[SqliteWriter]:
        """One immediate transaction; every change and its history row commit together.
        `secure`: what it deletes or overwrites is zeroed in the file (`PRAGMA secure_delete`),
        not merely marked free (a purge)."""
        if self.readonly:
            raise StoreError("the store is open read-only")
        with self._lock:
            before = int(self._conn.execute("PRAGMA secure_delete").fetchone()[0]) if secure else 0
            if secure:
                self._conn.execute("PRAGMA secure_delete = 1")
            try:
                with self._transaction() as writer:
                    yield writer
            finally:
                if secure:
                    self._conn.execute(f"PRAGMA secure_delete = {before:d}")

    def transact(self, work: Callable[[SqliteWriter], T], *, secure: bool = False) -> T:
        """`work(writer)` in one `write()` transaction, and its result. The whole transaction is
        a function, so a store whose server may abort one for a conflict can run it again from
        the start (the PostgreSQL store: docs/stores.md, "Conflicts retried"); here it runs once."""
        with self.write(secure=secure) as writer:
            return work(writer)

    @contextmanager
    def _transaction(self) -> Iterator[SqliteWriter]:
        with self._lock:
            try:
                _retry_locked(lambda: self._conn.execute("BEGIN IMMEDIATE"))
            except sqlite3.DatabaseError as exc:
                raise StoreError(f"store write failed: {exc}") from None
            self._views += 1
            self._writing = True
            try:
                yield self._new_writer()
                self._conn.execute("COMMIT")
            except sqlite3.DatabaseError as exc:
                self._rollback()
                raise StoreError(f"store write failed: {exc}") from None
            except BaseException:
                self._rollback()
                raise
            finally:
                self._writing = False
                self._views += 1

    def _new_writer(self) -> SqliteWriter:
        """The writer of one transaction (a hosted store's also writes to the platform)."""
        return SqliteWriter(self._conn)

    def scrub(self) -> bool:
        """Leave no trace of deleted text in the file (after a purge): the full-text index drops
        the entries of deleted rows (FTS5 `optimize`, freed pages zeroed), VACUUM rewrites the file
        from the live rows only, and the write-ahead log is emptied. False if another process kept
        the log from being emptied (it is, once they close the store)."""
        with self.write(secure=True) as writer:
            writer.optimize_search_index()
        with self._lock:
            try:
                _retry_locked(lambda: self._conn.execute("VACUUM"))
                # a reader of an older snapshot holds the log: wait a little for it, not the full timeout
                self._conn.execute(f"PRAGMA busy_timeout = {CHECKPOINT_WAIT_MS}")
                busy = self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            except sqlite3.DatabaseError as exc:
                raise StoreError(f"store write failed: {exc}") from None
            finally:
                self._conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            self._views += 1
        return busy == 0

    def _rollback(self) -> None:
        """Roll back the open transaction, if any: a SIGTERM (SystemExit) may arrive just after COMMIT."""
        if self._conn.in_transaction:
            self._conn.execute("ROLLBACK")

    @contextmanager
    def read_snapshot(self) -> Iterator[None]:
        """Every read inside the block sees the store as of one moment (one read transaction), so
        paging through it with LIMIT/OFFSET neither skips nor repeats a row while others write."""
        with self._lock:
            if self._conn.in_transaction:  # already inside a transaction: its view is the snapshot
                yield
                return
            self._views += 1
            try:
                _retry_locked(lambda: self._conn.execute("BEGIN DEFERRED"))
                _retry_locked(lambda: self._conn.execute("SELECT count(*) FROM sqlite_master").fetchone())
            except sqlite3.DatabaseError as exc:
                self._rollback()
                raise StoreError(f"store read failed: {exc}") from None
            try:
                yield
            finally:
                self._rollback()  # nothing was written: ending the read is all
                self._views += 1

    def _view(self) -> tuple | None:
        """A token equal between two calls only if this connection saw no change in between:
        inside a read snapshot nothing changes; outside, `data_version` moves with every commit
        of another connection and `_views` with ours. None inside a write (it changes as it goes)."""
        if self._writing:
            return None
        if self._conn.in_transaction:
            return ("snapshot", self._views)
        try:
            return ("live", self._views, self._conn.execute("PRAGMA data_version").fetchone()[0])
        except sqlite3.DatabaseError:
            return None

    # -- what only SQLite does ------------------------------------------------------

    def _counts_vectors(self) -> bool:
        if self._vector_counts is None:
            self._vector_counts = bool(
                self._query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vector_counts'")
            )
        return self._vector_counts

    def _has_features_column(self) -> bool:
        if self._features_column is None:
            self._features_column = any(row[1] == "features" for row in self._query("PRAGMA table_info(memories)"))
        return self._features_column

    def _has_statistics(self) -> bool:
        if self._statistics is None:
            self._statistics = bool(self._query("SELECT count(*) FROM sqlite_master WHERE name = 'scope_sizes'")[0][0])
        return self._statistics

    def _find_lexical(self, found: lexical.Found, sql: str, params: list, top_k: int) -> None:
        """Score into `found` every row in scope (`sql`) that may be among the best `top_k`."""
        light = f"rowid, text_hash, terms, {SELECT_COLUMNS}"

        def take(rows: list[tuple]) -> None:
            for row in rows:
                found.take(row[0], row[1:])

        take(
            self._query(
                f"SELECT {light} FROM memories INDEXED BY memories_text_hash WHERE {sql} AND text_hash = ?",
                [*params, found.exact],
            )
        )
        if found.terms:
            lexical.walk_candidates(
                self._query,
                found.query,
                lambda rowids: take(
                    self._query(
                        f"SELECT {light} FROM memories WHERE rowid IN ({', '.join('?' * len(rowids))}) AND {sql}",
                        [*rowids, *params],
                    )
                ),
                kth_score=lambda: found.kth_score(top_k),
                threshold=found.threshold,
            )
