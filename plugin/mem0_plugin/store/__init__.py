"""The embedded store: one SQLite file shared by the MCP server, cron runs and the CLI."""

from .sqlite_store import ReadMode, Page, HistoryEntry, SqliteStore, open_store

__all__ = ["ReadMode", "Page", "HistoryEntry", "SqliteStore", "open_store"]
