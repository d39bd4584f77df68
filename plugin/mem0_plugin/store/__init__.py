"""The embedded store: one SQLite file shared by the MCP server, cron runs and the CLI."""

from .sqlite_store import HistoryEntry, Page, ReadMode, SqliteStore, open_store

__all__ = ["HistoryEntry", "Page", "ReadMode", "SqliteStore", "open_store"]
