"""Write primitives inside one store transaction (`Store.write`): inserts, changes, history
rows, deletes, purges, features, vectors and the apply journal, in the SQL both databases run
(`store.sql`). Each store's writer names its `Dialect` and adds what only it does (the
search index's upkeep)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from ...errors import StaleWriteError
from ...ids import CANDIDATE_LIMIT, pick, prefix_bounds
from ...records import Memory
from ...timeutil import format_timestamp, utc_now
from ..base import HistoryEntry
from ..journal import RUN_COUNTS
from .dialect import Dialect

if TYPE_CHECKING:  # numpy loads with the first vector read: a server that never searches never pays for it
    import numpy as np

from ..rows import (
    FROM_THE_TEXT,
    SELECT_COLUMNS,
    UNCHANGED_TEXT_COLUMNS,
    WRITE_COLUMNS,
    memory_to_row,
    row_to_memory,
    text_hash,
)

PURGED_TEXT = "[purged]"  # what `mem0-forget --purge` leaves where a forgotten memory's text was

PURGE_EVENT = "PURGE"


class Connection(Protocol):
    """What a writer needs of its transaction's connection (sqlite3's, or the PostgreSQL
    store's wrapper of psycopg's)."""

    def execute(self, sql: str, params: Any = ..., /) -> Any: ...

    def executemany(self, sql: str, rows: Iterable[Any], /) -> Any: ...

    @property
    def in_transaction(self) -> bool: ...


def id_candidates(
    fetch: Callable[[str, tuple], list[tuple]], dialect: Dialect, user_id: str, key: str, deleted: bool
) -> list[str]:
    """The user's memory ids equal to `key` or starting with it (with `deleted`, those only in
    the history too), by index range: see `ids`."""
    low, high = prefix_bounds(key)
    found = [
        row[0]
        for row in fetch(
            f"SELECT id FROM memories{dialect.indexed_by('sqlite_autoindex_memories_1')} "
            "WHERE id >= ? AND id < ? AND user_id = ? ORDER BY id LIMIT ?",
            (low, high, user_id, CANDIDATE_LIMIT),
        )
    ]
    if deleted:
        found += [
            row[0]
            for row in fetch(
                f"SELECT DISTINCT memory_id FROM history{dialect.indexed_by('history_memory')} "
                "WHERE user_id = ? AND memory_id >= ? AND memory_id < ? ORDER BY memory_id LIMIT ?",
                (user_id, low, high, CANDIDATE_LIMIT),
            )
        ]
    return found


def history_record(text: str | None) -> dict | None:
    """A history record's JSON as a dict; None when there is none or it is not readable."""
    try:
        record = json.loads(text) if text else None
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def purged_record(text: str | None) -> str | None:
    """A history record (JSON) with its memory text replaced by PURGED_TEXT."""
    record = history_record(text)
    if record is None or "memory" not in record:
        return text
    return json.dumps({**record, "memory": PURGED_TEXT}, ensure_ascii=False)


class SqlWriter:
    """Write primitives inside one write transaction of a SQL store (`SqliteWriter`,
    `PostgresWriter`)."""

    dialect: Dialect
    SOURCE_SQL: str  # metadata.source, NULL for metadata that is not valid JSON (no reminder, not an error)

    def __init__(self, conn: Connection):
        self._conn = conn
        self.now = format_timestamp(utc_now())
        self.dream_run_id: str | None = None  # set while a dream run writes: its history rows name it

    def _execute(self, sql: str, params: tuple | list = ()) -> Any:
        return self._conn.execute(sql, params)

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        """A unit of work inside the transaction, stamped with its own `now` as if it were a
        transaction of its own: an exception undoes only its writes, then propagates."""
        self.now = format_timestamp(utc_now())
        self._execute("SAVEPOINT unit")
        try:
            yield
        except BaseException:
            if self._conn.in_transaction:  # an error that ended the transaction leaves nothing to undo
                self._execute("ROLLBACK TO unit")
                self._execute("RELEASE unit")
            raise
        self._execute("RELEASE unit")

    def get(self, user_id: str, memory_id: str) -> Memory | None:
        row = self._execute(
            f"SELECT {SELECT_COLUMNS} FROM memories WHERE id = ? AND user_id = ?", (memory_id, user_id)
        ).fetchone()
        return row_to_memory(row) if row else None

    def resolve_id(self, user_id: str, key: str, *, deleted: bool = False) -> str:
        """`Store.resolve_id` inside this transaction."""

        def fetch(sql: str, params: tuple) -> list[tuple]:
            return self._execute(sql, params).fetchall()

        return pick(key, id_candidates(fetch, self.dialect, user_id, key, deleted))

    def find_identical(self, memory: Memory) -> Memory | None:
        """An active memory with the same text in exactly the same scope, if any."""
        same = self.dialect.same
        row = self._execute(
            # The hash index is the selective one; without statistics SQLite would rather
            # walk the created_us order index of the whole project.
            f"SELECT {SELECT_COLUMNS} FROM memories{self.dialect.indexed_by('memories_text_hash')} "
            f"WHERE user_id = ? AND text_hash = ? AND app_id {same} ? AND agent_id {same} ? "
            f"AND run_id {same} ? AND lifecycle_state = 'active' ORDER BY created_us, id LIMIT 1",
            (memory.user_id, text_hash(memory.memory), memory.app_id, memory.agent_id, memory.run_id),
        ).fetchone()
        return row_to_memory(row) if row and row[5].strip() == memory.memory.strip() else None

    def active_by_source(self, user_id: str, app_id: str | None, source: str) -> list[Memory]:
        """Active memories of one project whose `metadata.source` is `source`, oldest first."""
        rows = self._execute(
            f"SELECT {SELECT_COLUMNS} FROM memories WHERE user_id = ? AND app_id {self.dialect.same} ? "
            "AND lifecycle_state = 'active' "
            f"AND {self.SOURCE_SQL} = ? ORDER BY created_us, id",
            (user_id, app_id, source),
        ).fetchall()
        return [row_to_memory(r) for r in rows]

    def replaced_by(self, user_id: str, app_id: str | None, memory_id: str) -> list[Memory]:
        """The merged or superseded memories of one project that point at `memory_id`."""
        rows = self._execute(
            f"SELECT {SELECT_COLUMNS} FROM memories{self.dialect.indexed_by('memories_lifecycle')} "
            f"WHERE user_id = ? AND app_id {self.dialect.same} ? "
            "AND lifecycle_state IN ('merged', 'superseded') AND replacement_memory_id = ? ORDER BY id",
            (user_id, app_id, memory_id),
        ).fetchall()
        return [row_to_memory(r) for r in rows]

    def exists(self, memory_id: str) -> bool:
        return self._execute("SELECT 1 FROM memories WHERE id = ?", (memory_id,)).fetchone() is not None

    def insert(self, memory: Memory, *, event: str = "ADD", actor: str, features: object = FROM_THE_TEXT) -> Memory:
        """Insert `memory` and its history row; `features`: its `features` column value if already known."""
        marks = ", ".join("?" * len(WRITE_COLUMNS))
        self._execute(
            f"INSERT INTO memories ({', '.join(WRITE_COLUMNS)}) VALUES ({marks})",
            memory_to_row(memory, features=features),
        )
        self.record(memory.user_id, memory.id, event, actor, None, memory)
        return memory

    def put(self, memory: Memory) -> None:
        """Insert `memory` exactly as it is (version included) and write no history: a copy
        from another store, which brings its history along (`copy_history`)."""
        marks = ", ".join("?" * len(WRITE_COLUMNS))
        self._execute(f"INSERT INTO memories ({', '.join(WRITE_COLUMNS)}) VALUES ({marks})", memory_to_row(memory))

    def copy_history(self, user_id: str, entries: Iterable[HistoryEntry]) -> int:
        """Append another store's history rows of the user as they are (event, actor, time,
        records); returns how many."""
        count = 0
        for entry in entries:
            self._execute(
                "INSERT INTO history (memory_id, user_id, event, actor, at, before, after) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    entry.memory_id,
                    user_id,
                    entry.event,
                    entry.actor,
                    entry.at,
                    json.dumps(entry.before, ensure_ascii=False) if entry.before is not None else None,
                    json.dumps(entry.after, ensure_ascii=False) if entry.after is not None else None,
                ),
            )
            count += 1
        return count

    def has_history(self, user_id: str, memory_id: str) -> bool:
        return (
            self._execute(
                "SELECT 1 FROM history WHERE user_id = ? AND memory_id = ? LIMIT 1", (user_id, memory_id)
            ).fetchone()
            is not None
        )

    def change(self, before: Memory, event: str, actor: str, **fields: Any) -> Memory:
        """Replace fields of `before` if its version is unchanged; bump version and updated_at
        (to now, unless `updated_at` is one of the fields: an undo puts the old one back)."""
        fields.setdefault("updated_at", self.now)
        after = replace(before, **fields, version=before.version + 1)
        with_text = after.memory != before.memory
        columns = WRITE_COLUMNS if with_text else UNCHANGED_TEXT_COLUMNS
        assignments = ", ".join(f"{c} = ?" for c in columns if c != "id")
        values = [v for c, v in zip(columns, memory_to_row(after, with_text=with_text)) if c != "id"]
        cursor = self._execute(
            f"UPDATE memories SET {assignments} WHERE id = ? AND user_id = ? AND version = ?",
            [*values, before.id, before.user_id, before.version],
        )
        if cursor.rowcount != 1:
            raise StaleWriteError(f"memory {before.id} changed since it was read")
        self.record(before.user_id, before.id, event, actor, before, after)
        return after

    def store_features(self, user_id: str, values: Iterable[tuple[str, str, str]]) -> int:
        """Store the features (`stored_features`) of memories that had none, from
        (id, text, value) triples; a memory whose text changed meanwhile is left alone. A cache:
        no version bump, no history. Returns how many rows took it."""
        cursor = self._conn.executemany(
            "UPDATE memories SET features = ? WHERE id = ? AND user_id = ? AND memory = ?",
            ((value, memory_id, user_id, text) for memory_id, text, value in values),
        )
        return cursor.rowcount

    def store_vectors(self, user_id: str, model: str, vectors: Iterable[tuple[str, str, np.ndarray]]) -> int:
        """Store the vector of each (id, text, vector) made by `model`, replacing any other; a
        memory whose text changed meanwhile (or is gone) is left alone. A cache: no version bump,
        no history. Returns how many were stored."""
        from ..vectors import encode_vector

        stored = 0
        for memory_id, text, vector in vectors:
            hashed = text_hash(text)
            row = self._execute(
                "SELECT 1 FROM memories WHERE id = ? AND user_id = ? AND text_hash = ?", (memory_id, user_id, hashed)
            ).fetchone()
            if row is None:
                continue
            self._execute("DELETE FROM vectors WHERE id = ?", (memory_id,))
            self._insert_vector((memory_id, user_id, model, hashed, encode_vector(vector)), vector)
            stored += 1
        return stored

    def _insert_vector(self, row: tuple[str, str, str, str, bytes], vector: np.ndarray) -> None:
        """One row of `vectors`: (id, user_id, model, text_hash, encoded vector)."""
        self._execute("INSERT INTO vectors (id, user_id, model, text_hash, vector) VALUES (?, ?, ?, ?, ?)", row)

    def delete(self, before: Memory, actor: str, event: str = "DELETE") -> None:
        cursor = self._execute(
            "DELETE FROM memories WHERE id = ? AND user_id = ? AND version = ?",
            (before.id, before.user_id, before.version),
        )
        if cursor.rowcount != 1:
            raise StaleWriteError(f"memory {before.id} changed since it was read")
        self.record(before.user_id, before.id, event, actor, before, None)

    def record(
        self, user_id: str, memory_id: str, event: str, actor: str, before: Memory | None, after: Memory | None
    ) -> None:
        self._execute(
            "INSERT INTO history (memory_id, user_id, event, actor, at, before, after, dream_run_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                memory_id,
                user_id,
                event,
                actor,
                self.now,
                json.dumps(with_version(before), ensure_ascii=False) if before else None,
                json.dumps(with_version(after), ensure_ascii=False) if after else None,
                self.dream_run_id,
            ),
        )

    def purge_history(self, user_id: str, memory_id: str) -> None:
        """Forget a memory's history entirely (only for the health probe's own throwaway rows)."""
        self._execute("DELETE FROM history WHERE user_id = ? AND memory_id = ?", (user_id, memory_id))

    def erase_text(self, user_id: str, memory_id: str, actor: str) -> None:
        """Purge a deleted memory's text: every history record of it (before and after) keeps its
        fields but its text becomes PURGED_TEXT, finished dream runs' plans lose the texts as
        whole values, and a PURGE event says so. Run it in a `write(secure=True)`, then `scrub`."""
        rows = self._execute(
            "SELECT seq, before, after FROM history WHERE user_id = ? AND memory_id = ?", (user_id, memory_id)
        ).fetchall()
        texts = set()
        for seq, before, after in rows:
            for record in map(history_record, (before, after)):
                if record is not None and isinstance(record.get("memory"), str):
                    texts.add(record["memory"])
            self._execute(
                "UPDATE history SET before = ?, after = ? WHERE seq = ?",
                (purged_record(before), purged_record(after), seq),
            )
        for text in texts - {PURGED_TEXT}:
            quoted = json.dumps(text, ensure_ascii=True)  # as plan_to_json writes it
            self._execute(
                "UPDATE dream_runs SET plan = replace(plan, ?, ?) WHERE user_id = ? "
                "AND status != 'applying' AND instr(plan, ?) > 0",
                (quoted, json.dumps(PURGED_TEXT), user_id, quoted),
            )
        self.record(user_id, memory_id, PURGE_EVENT, actor, None, None)

    def purged(self, user_id: str, memory_id: str) -> bool:
        return (
            self._execute(
                "SELECT 1 FROM history WHERE user_id = ? AND memory_id = ? AND event = ? LIMIT 1",
                (user_id, memory_id, PURGE_EVENT),
            ).fetchone()
            is not None
        )

    def last_deleted(self, user_id: str, memory_id: str) -> dict | None:
        row = self._execute(
            "SELECT before FROM history WHERE user_id = ? AND memory_id = ? "
            "AND after IS NULL AND before IS NOT NULL ORDER BY seq DESC LIMIT 1",
            (user_id, memory_id),
        ).fetchone()
        return json.loads(row[0]) if row else None

    # -- the dream journal ------------------------------------------------------

    def journal_start(
        self,
        run_id: str,
        user_id: str,
        app_id: str | None,
        plan_json: str,
        resolutions_json: str,
        mode: str | None = None,
    ) -> None:
        self._execute(
            "INSERT INTO dream_runs (run_id, user_id, app_id, started_at, status, plan, resolutions, mode) "
            "VALUES (?, ?, ?, ?, 'applying', ?, ?, ?)",
            (run_id, user_id, app_id, self.now, plan_json, resolutions_json, mode),
        )

    def journal_step(self, run_id: str, step: int, kind: str, outcome: str, detail: str = "") -> None:
        self._execute(
            "INSERT INTO dream_steps (run_id, step, kind, outcome, detail, at) VALUES (?, ?, ?, ?, ?, ?)",
            (run_id, step, kind, outcome, detail, self.now),
        )

    def journal_finish(self, run_id: str, status: str = "done") -> None:
        """End the run, with the counts of what its journaled steps applied."""
        counts = ", ".join(
            f"{column} = (SELECT count(*) FROM dream_steps s WHERE s.run_id = dream_runs.run_id AND {test})"
            for column, test in RUN_COUNTS.items()
        )
        self._execute(
            f"UPDATE dream_runs SET status = ?, finished_at = ?, {counts} WHERE run_id = ?", (status, self.now, run_id)
        )

    def journal_undone(self, run_id: str) -> bool:
        """Mark a finished run undone; False if it was not finished or already undone."""
        return (
            self._execute(
                "UPDATE dream_runs SET undone_at = ? WHERE run_id = ? AND status = 'done' AND undone_at IS NULL",
                (self.now, run_id),
            ).rowcount
            == 1
        )


def with_version(memory: Memory) -> dict:
    return {**memory.to_dict(), "version": memory.version}
