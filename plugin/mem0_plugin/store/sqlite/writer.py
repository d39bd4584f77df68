"""`SqliteWriter`: the write primitives (`store.sql.writer`) inside one SQLite transaction
(`SqliteStore.write`), with the upkeep of SQLite's full-text index."""

from __future__ import annotations

import sqlite3

from ..sql.dialect import SQLITE
from ..sql.writer import SqlWriter
from .migrations import recount_statistics, reindex_terms


class SqliteWriter(SqlWriter):
    """Write primitives inside one `SqliteStore.write()` transaction."""

    dialect = SQLITE
    _conn: sqlite3.Connection
    SOURCE_SQL = "json_extract(CASE WHEN json_valid(metadata) THEN metadata END, '$.source')"

    def reindex_search(self) -> int:
        """Every memory's search terms written again by the current rules, the full-text index
        rebuilt and BM25's statistics counted again (`mem0-memories reindex`); how many
        memories' terms changed. No memory changes: no history, no version."""
        changed = reindex_terms(self._conn)
        recount_statistics(self._conn)
        return changed

    def optimize_search_index(self) -> None:
        """Merge the full-text index into one segment: entries of deleted rows are dropped."""
        self._execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")
