"""The I/O behind `mem0-health`: open the store, time a search, write a probe, read the lock.

Each probe returns an observation (`health.StoreProbe`, `health.LockProbe`, …) that the
pure functions of `health` judge. Nothing here prints.

Read-only opening (`--deep`): `open_snapshot` opens the file with SQLite's
``mode=ro``. When no ``-wal`` file exists — every change is in the main file, no writer is
connected — it also passes ``immutable=1``, so SQLite creates no ``-wal``/``-shm`` side
files either; `unchanged_since` then lets the caller detect a writer that appeared during
the read and read again without ``immutable``. Either way nothing is written.

The write probe writes one memory in the dedicated scope ``app_id="__mem0_health__"``
(never a user's project, so no listing, search or export of a project shows it), reads
it back, deletes it, and removes the probe's own history rows in the same transaction as
the delete: a health run leaves no trace. Probes left by a run that was killed half-way
are swept by the next run.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from . import health, operations
from .codex_config import Clash, clash_in
from .errors import ConfigError, Mem0PluginError, StoreError
from .identity import Identity
from .locks import auto_lock as autolock
from .records import Memory, new_memory_id
from .store import SqliteStore, Store, open_store
from .store_url import POSTGRESQL, StoreLocation, display_url, parse_store_url
from .timeutil import format_timestamp, utc_now

SEARCH_QUERY = "health check"


# ---------------------------------------------------------------- the store


def _nearest_existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def can_create_in(directory: Path) -> bool:
    """The directory exists and is writable, or could be created (its nearest existing ancestor is)."""
    existing = _nearest_existing(directory)
    return existing.is_dir() and os.access(existing, os.W_OK | os.X_OK)


def diagnose(path: Path | None, error: str) -> str:
    """Why the store at `path` failed with `error`: one of the `health` problem constants (a
    store with no path is a PostgreSQL database)."""
    if path is None:
        return health.DATABASE
    text = error.replace(str(path), "").replace(str(path.parent), "").lower().replace("-", "")
    if "database is locked" in text or "database table is locked" in text or "busy" in text:
        return health.LOCKED
    if "disk is full" in text or "no space left" in text:
        return health.DISK_FULL
    if not can_create_in(path.parent):
        return health.DIR_NOT_WRITABLE if _nearest_existing(path.parent).is_dir() else health.HOME_UNUSABLE
    if path.is_file() and not os.access(path, os.W_OK) and "readonly" in text:
        return health.FILE_NOT_WRITABLE
    if path.is_file() and _header(path) not in (b"", b"SQLite format 3\x00"):
        return health.CORRUPT
    if any(word in text for word in ("not a database", "malformed", "corrupt")):
        return health.CORRUPT
    if "readonly" in text:
        return health.DIR_NOT_WRITABLE
    return health.OTHER


def _header(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            return handle.read(16)
    except OSError:
        return b""


@dataclass(frozen=True)
class FileState:
    """What identifies the store's bytes: the main file's identity, size and mtime, and the -wal's."""

    main: tuple | None
    wal: tuple | None


def _stat_key(path: Path) -> tuple | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def file_state(path: Path) -> FileState:
    return FileState(_stat_key(path), _stat_key(path.with_name(path.name + "-wal")))


class SnapshotStore(SqliteStore):
    """A read-only store; with no -wal present it reads the main file as immutable (no side files).

    `still_valid()` is False when the files changed while it was open (a writer appeared):
    what was read as immutable may be inconsistent, so read again with a plain read-only store.
    """

    def _connect(self):
        self.opened_state = file_state(self.path)
        self.immutable = self.opened_state.wal is None
        if not self.immutable:
            return super()._connect()
        try:
            if not self.path.is_file():
                raise StoreError(f"store file does not exist: {self.path}")
            conn = sqlite3.connect(
                f"{self.path.resolve().as_uri()}?mode=ro&immutable=1",
                uri=True,
                isolation_level=None,
                check_same_thread=False,
            )
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot open the store {self.path}: {exc}") from None

    def still_valid(self) -> bool:
        return not self.immutable or file_state(self.path) == self.opened_state


def open_store_probe(
    url: str, *, readonly: bool, explicit: bool = True, identity: Identity | None = None
) -> tuple[health.StoreProbe, Store | None]:
    """Open the store named by `url` (read-only: as a snapshot, never creating it). An explicit
    store (`--store`, `MEM0_STORE`) that does not exist is a failure, never created here. A
    hosted store (``mem0://``, for `identity`) opens as every command opens it."""
    try:
        location = parse_store_url(url, explicit=explicit)
    except ConfigError as exc:
        return health.StoreProbe(url, None, problem=health.BAD_URL, error=str(exc)), None
    if location.hosted is not None and identity is not None:
        return _open_hosted_probe(url, identity, readonly)
    if location.scheme == POSTGRESQL:
        return _open_database(location, readonly=readonly)
    path = location.path
    blocker = _nearest_existing(path.parent)
    if explicit and not path.exists():
        where = (
            f"no store at {path}" if path.parent.is_dir() else f"the store's directory does not exist: {path.parent}"
        )
        return health.StoreProbe(url, path, problem=health.NO_STORE, error=where, blocker=blocker), None
    if readonly and not path.exists():
        if can_create_in(path.parent):
            return health.StoreProbe(url, path, missing=True), None
        return health.StoreProbe(
            url,
            path,
            problem=diagnose(path, ""),
            blocker=blocker,
            error=f"no store at {path}, and {path.parent} cannot be created",
        ), None
    try:
        store = SnapshotStore(path, readonly=True) if readonly else SqliteStore(path)
    except StoreError as exc:
        return health.StoreProbe(url, path, problem=diagnose(path, str(exc)), error=str(exc), blocker=blocker), None
    return health.StoreProbe(url, path, blocker=blocker), store


def _open_hosted_probe(url: str, identity: Identity, readonly: bool) -> tuple[health.StoreProbe, Store | None]:
    from .store.hosted.store import open_hosted  # httpx and the platform's client: only for a hosted store

    try:
        store = open_hosted(identity.store_location, readonly=readonly)
    except Mem0PluginError as exc:
        return health.StoreProbe(url, None, problem=health.HOSTED, error=str(exc)), None
    return health.StoreProbe(url, store.path), store


def _open_database(location: StoreLocation, *, readonly: bool) -> tuple[health.StoreProbe, Store | None]:
    """Open a PostgreSQL store (docs/stores.md): its URL is shown without its password."""
    shown = display_url(location.url)
    from .store.postgres.store import PostgresStore  # psycopg is loaded only for a PostgreSQL store

    try:
        store = PostgresStore(location.url, readonly=readonly)
    except StoreError as exc:
        return health.StoreProbe(shown, None, problem=health.DATABASE, error=str(exc)), None
    return health.StoreProbe(shown, None, vectors=store.vectors.describe()), store


def open_readonly(location: StoreLocation) -> Store:
    """The store read-only, leaving no file beside an SQLite one (`SnapshotStore`)."""
    if location.scheme == POSTGRESQL or location.hosted is not None:
        return open_store(location, readonly=True)
    return SnapshotStore(location.path, readonly=True)


def count_memories(store: Store, identity: Identity) -> int:
    """The project's memories as `mem0-memories list` counts them (active and superseded)."""
    caller = operations.Caller(store, identity, actor=health.PROBE_SOURCE)
    return operations.get_memories(caller, None, page=1, page_size=1)["count"]


def time_search(store: Store, identity: Identity) -> tuple[float | None, str]:
    """Milliseconds one search of the project took, or (None, the error)."""
    caller = operations.Caller(store, identity, actor=health.PROBE_SOURCE)
    started = time.perf_counter()
    try:
        operations.search_memories(caller, SEARCH_QUERY, top_k=1)
    except Mem0PluginError as exc:
        return None, str(exc)
    return (time.perf_counter() - started) * 1000, ""


# ---------------------------------------------------------------- the write probe


def _purge_history(writer, user_id: str, memory_id: str) -> None:
    # The probe is the tool's own artifact, not a user's memory: its history goes with it.
    writer.purge_history(user_id, memory_id)


def _remove_probe(writer, probe: Memory) -> None:
    writer.delete(probe, health.PROBE_SOURCE)
    _purge_history(writer, probe.user_id, probe.id)


def write_probe(store: Store, identity: Identity) -> tuple[str | None, str]:
    """Write, read back and delete a probe memory; (None, "") when all worked, else (problem, error)."""
    now = format_timestamp(utc_now())
    probe = Memory(
        id=new_memory_id(),
        memory=health.PROBE_TEXT,
        user_id=identity.user_id,
        app_id=health.PROBE_APP_ID,
        created_at=now,
        updated_at=now,
        metadata={"type": "health_check", "source": health.PROBE_SOURCE, "probe": True},
    )
    try:
        with store.write() as writer:
            for leftover in writer.active_by_source(identity.user_id, health.PROBE_APP_ID, health.PROBE_SOURCE):
                _remove_probe(writer, leftover)
            probe = writer.insert(probe, actor=health.PROBE_SOURCE)  # a hosted store gives the platform's id
        try:
            read_back = store.get(identity.user_id, probe.id)
        finally:
            with store.write() as writer:
                current = writer.get(identity.user_id, probe.id)
                if current is not None:
                    _remove_probe(writer, current)
    except Mem0PluginError as exc:
        return (
            health.HOSTED
            if store.scheme == "mem0"
            else diagnose(store.path if isinstance(store, SqliteStore) else None, str(exc))
        ), str(exc)
    if read_back.memory != probe.memory:
        return health.CORRUPT, "the probe memory read back differently from what was written"
    return None, ""


# ---------------------------------------------------------------- the dream lock


def inspect_lock(path: Path, now: Callable[[], float] = time.time) -> health.LockProbe:
    """The state of the `--auto` lock at `path`, judged by the same rules `mem0-dream --auto` uses."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return _free_lock(path)
    except OSError as exc:
        return health.LockProbe(
            path,
            "unusable",
            error=f"cannot inspect {path}: {exc.strerror}. Set {autolock.LOCK_PATH_ENV} to a path you can use.",
        )
    try:
        autolock.check_is_plain_file(path, st)
    except ConfigError as exc:
        return health.LockProbe(path, "unusable", error=str(exc))
    holder = _read_lock(path)
    if holder is False:
        return _free_lock(path)
    stale = autolock.is_stale(holder, st, now(), autolock.STALE_AFTER_SECONDS)
    dead = holder is not None and autolock.holder_is_dead(holder)
    since = holder.epoch if holder is not None and holder.epoch is not None else st.st_mtime
    pid, host = (holder.pid, holder.host) if holder is not None else (None, None)
    if stale and st.st_uid != os.geteuid():
        return health.LockProbe(
            path,
            "unusable",
            pid,
            host,
            since,
            dead,
            error=(
                f"the lock file {path} is stale but belongs to uid {st.st_uid}: mem0-dream --auto does not "
                f"remove other users' files, so every --auto run fails. Ask its owner (or root) to rm {path}, "
                f"or set {autolock.LOCK_PATH_ENV} to a path of your own."
            ),
        )
    return health.LockProbe(path, "stale" if stale else "held", pid, host, since, dead)


def _read_lock(path: Path):
    """The holder recorded in the lock (None: unreadable content); False when the file vanished."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    except OSError:
        return None
    try:
        return autolock.read_holder(fd)
    finally:
        os.close(fd)


def _free_lock(path: Path) -> health.LockProbe:
    parent = path.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        return health.LockProbe(
            path,
            "unusable",
            error=(
                f"mem0-dream --auto cannot create its lock file there: {parent} is missing or not writable. "
                f"Set {autolock.LOCK_PATH_ENV} to a file path in a writable directory."
            ),
        )
    return health.LockProbe(path, "free")


def codex_clash(environ: Mapping[str, str] = os.environ) -> tuple[Path, Clash] | None:
    """Codex's config.toml (`$CODEX_HOME`, else `~/.codex`) and the `mem0` server of its own that
    hides the plugin's, when there is one (`codex_config`)."""
    home = environ.get("CODEX_HOME", "").strip()
    path = (Path(home).expanduser() if home else Path.home() / ".codex") / "config.toml"
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    clash = clash_in(text)
    return (path, clash) if clash is not None else None
