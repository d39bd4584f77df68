"""The stores: one SQLite file shared by the MCP server, cron runs and the CLI (the embedded
default), a PostgreSQL database (docs/stores.md) or a project on the Mem0 platform
(docs/hosted.md). `open_store` picks the backend from the store's URL."""

from ..store_url import POSTGRESQL, StoreLocation, check_directory, parse_store_url
from .base import HistoryEntry, Page, ReadMode, Store, Writer
from .sqlite.store import SqliteStore

__all__ = ["HistoryEntry", "Page", "ReadMode", "SqliteStore", "Store", "Writer", "open_store"]


def open_store(where: str | StoreLocation, *, readonly: bool = False) -> Store:
    """The store at `where` (a URL is explicit: `store_url`; docs/identity.md, "Store URLs"):
    an SQLite file, a PostgreSQL database (docs/stores.md) or a project on the Mem0 platform
    (``mem0://``, docs/hosted.md). An explicit SQLite store's directory must exist; the file
    is created on the first open (not read-only)."""
    location = parse_store_url(where) if isinstance(where, str) else where
    if location.hosted is not None:
        from .hosted.store import open_hosted

        return open_hosted(location, readonly=readonly)
    if location.scheme == POSTGRESQL:
        from .postgres.store import PostgresStore

        return PostgresStore(location.url, readonly=readonly)
    check_directory(location)
    return SqliteStore(location.path, readonly=readonly)
