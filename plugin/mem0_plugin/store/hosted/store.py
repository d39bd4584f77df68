"""`HostedStore`: a project on the Mem0 platform, behind the same interface as `SqliteStore`
(docs/hosted.md).

How: a local mirror, an SQLite store file under `<MEM0_HOME>/cache/`, one per platform host
and API key, holds the user's memories as the platform last answered them, plus what the
platform has no place for (the history of every change, dream's journal, vectors). Every read
is a read of the mirror; the mirror is refreshed from the platform (every page of the user's
memories) when the store opens and again before a read once `REFRESH_SECONDS` have passed.
Every write goes to the platform and to the mirror in the same step (`HostedWriter`):

* an add is `MemoryClient.add(infer=False)`; the memory takes the id the platform gives;
* a change (update, merge, supersede, restore) first reads the platform's record again and
  refuses (`StaleWriteError`) when it no longer says what the mirror says, then updates the
  text and the metadata, the lifecycle under `platform_records.LIFECYCLE_KEY`;
* dream's prune and undo never delete: they mark the memory deleted in that key (it stays on
  the platform, out of every read here); other deletes (forget, delete) delete it there.

A write that fails half-way (a later step of the same unit refused) takes back what it did on
the platform in reverse order: an add is deleted, an update is written back. A delete on the
platform cannot be taken back; the next refresh drops the memory from the mirror.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...errors import ConfigError, Mem0PluginError, StaleWriteError
from ...private_files import private_folder
from ...records import Memory
from ...store_url import StoreLocation
from ...timeutil import format_timestamp, utc_now
from ..rows import FROM_THE_TEXT
from ..sqlite.store import SqliteStore
from ..sqlite.writer import SqliteWriter
from .client import Platform
from .records import DELETED, lifecycle_of, memory_of_platform, platform_metadata, same_content

log = logging.getLogger(__name__)

REFRESH_SECONDS = 30.0  # a long-running process (the MCP server) reads the platform again after this
SYNC_EVENT = "SYNC"  # the history event of a change the refresh brought from the platform
PLATFORM_ACTOR = "mem0-platform"
NEW_EVENTS = frozenset({"ADD", "IMPORT"})  # inserts of new memories; any other insert brings one back
SOFT_DELETE_EVENTS = frozenset({"PRUNE", "UNDO"})  # dream's deletes: marked on the platform, never deleted
SYNCED_FIELDS: tuple[str, ...] = (
    "memory",
    "app_id",
    "agent_id",
    "run_id",
    "metadata",
    "updated_at",
    "immutable",
    "lifecycle_state",
    "replacement_memory_id",
    "source_memory_ids",
)


def mirror_path(home: Path, host: str, api_key: str) -> Path:
    """The mirror's file: one per (host, key), the key only as part of a hash."""
    digest = hashlib.sha256(f"{host}\n{api_key}".encode()).hexdigest()[:16]
    return home / "cache" / f"mem0-{digest}.sqlite3"


def _private_directory(folder: Path) -> None:
    try:
        private_folder(folder)
    except OSError as exc:
        raise ConfigError(f"cannot create the hosted store's cache directory {folder}: {exc.strerror}") from None


class HostedWriter(SqliteWriter):
    """The mirror's writer whose inserts, changes and deletes are made on the platform too (module docstring)."""

    def __init__(self, store: HostedStore):
        super().__init__(store._conn)
        self.platform = store.platform
        self._undo: list[tuple[str, Callable[[], None]]] = []

    # -- taking back ------------------------------------------------------------------

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        mark = len(self._undo)
        try:
            with super().savepoint():
                yield
        except BaseException:
            self.take_back(mark)
            raise

    def take_back(self, mark: int = 0) -> None:
        """Undo on the platform what this writer did there since `mark`, newest first."""
        done, self._undo[mark:] = self._undo[mark:], []
        for what, action in reversed(done):
            try:
                action()
            except Mem0PluginError as exc:  # the next refresh shows the platform as it is
                log.warning("could not take back %s on the Mem0 platform: %s", what, exc)

    # -- the platform's current record --------------------------------------------------

    def _check_unchanged(self, before: Memory, *, gone_ok: bool = False) -> dict[str, Any] | None:
        """The platform's record of `before`, refused unless it still says what `before` says."""
        record = self.platform.record(before.id)
        if record is None:
            if gone_ok:
                return None
            raise StaleWriteError(f"memory {before.id} is no longer on the Mem0 platform; run again")
        current = memory_of_platform(record, before.user_id, self.now)
        if current is None or not same_content(current, before):
            raise StaleWriteError(f"memory {before.id} changed on the Mem0 platform since it was read; run again")
        return record

    def _write_back(self, memory_id: str, text: str, metadata: dict[str, Any]) -> None:
        self._undo.append((f"the change of {memory_id}", lambda: self.platform.update(memory_id, text, metadata)))

    # -- writes -----------------------------------------------------------------------

    def insert(self, memory: Memory, *, event: str = "ADD", actor: str, features: object = FROM_THE_TEXT) -> Memory:
        """Add `memory` on the platform (it takes the platform's id: use the memory returned), or,
        for a memory coming back (restore, undo) that the platform still has, mark it active there.
        A platform that answers with a memory it already had (the same text in the same scope)
        returns that memory, as the mirror has it."""
        record = None if event in NEW_EVENTS else self.platform.record(memory.id)
        if record is not None and lifecycle_of(record)["lifecycle_state"] == DELETED:
            old = record.get("metadata")
            self.platform.update(memory.id, memory.memory, platform_metadata(memory))
            self._write_back(
                memory.id, str(record.get("memory") or memory.memory), old if isinstance(old, dict) else {}
            )
        elif record is None:
            new_id, new = self.platform.add(memory)
            existing = self.get(memory.user_id, new_id)
            if new and existing is None:
                self._undo.append((f"the add of {new_id}", lambda: self.platform.delete(new_id)))
            elif existing is not None:  # the platform answered with a memory it had (same text)
                return existing
            memory = replace(memory, id=new_id)
        return super().insert(memory, event=event, actor=actor, features=features)

    def change(self, before: Memory, event: str, actor: str, **fields: Any) -> Memory:
        after = super().change(before, event, actor, **fields)
        self._check_unchanged(before)
        self.platform.update(before.id, after.memory, platform_metadata(after))
        self._write_back(before.id, before.memory, platform_metadata(before))
        return after

    def delete(self, before: Memory, actor: str, event: str = "DELETE") -> None:
        super().delete(before, actor, event)
        if self._check_unchanged(before, gone_ok=True) is None:
            return
        if event in SOFT_DELETE_EVENTS:
            self.platform.update(before.id, before.memory, platform_metadata(before, deleted=True))
            self._write_back(before.id, before.memory, platform_metadata(before))
        else:
            self.platform.delete(before.id)


class HostedStore(SqliteStore):
    """The store of one user's memories on the Mem0 platform (module docstring)."""

    scheme = "mem0"

    def __init__(
        self,
        url: str,
        platform: Platform,
        home: Path,
        user_id: str,
        *,
        readonly: bool = False,
        refresh_seconds: float = REFRESH_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.platform = platform
        self.user_id = user_id
        self.refresh_seconds = refresh_seconds
        self._clock = clock
        self._refreshing = False
        self._refreshed_at: float | None = None
        path = mirror_path(home, platform.host, platform.key)
        _private_directory(path.parent)
        super().__init__(path)
        try:
            os.chmod(path, 0o600)
        except OSError:
            pass
        self.url = url
        self.readonly = readonly  # refused by write(); the refresh writes the mirror all the same
        self.refresh()

    def close(self) -> None:
        try:
            super().close()
        finally:
            self.platform.close()

    def _new_writer(self) -> SqliteWriter:
        return SqliteWriter(self._conn) if self._refreshing else HostedWriter(self)

    @contextmanager
    def write(self, *, secure: bool = False) -> Iterator[SqliteWriter]:
        with super().write(secure=secure) as writer:
            try:
                yield writer
            except BaseException:
                if isinstance(writer, HostedWriter):
                    writer.take_back()
                raise

    # -- the mirror ---------------------------------------------------------------------

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        self._refresh_if_old()
        return super()._query(sql, params)

    def _refresh_if_old(self) -> None:
        if self._refreshing or self._refreshed_at is None or self._conn.in_transaction:
            return
        if self._clock() - self._refreshed_at >= self.refresh_seconds:
            self.refresh()

    def refresh(self) -> int:
        """Bring the mirror to what the platform holds for the user (every page read first);
        returns how many memories changed here."""
        with self._lock:  # no write of this process's other threads between the read and the mirror
            now = format_timestamp(utc_now())
            remote: dict[str, Memory] = {}
            for record in self.platform.records(self.user_id):
                memory = memory_of_platform(record, self.user_id, now)
                if memory is not None:
                    remote[memory.id] = memory
            self._refreshing = True
            try:
                with self._transaction() as writer:
                    changed = _mirror(writer, {m.id: m for m in self.iter_scope(self.user_id, None)}, remote)
            finally:
                self._refreshing = False
            self._refreshed_at = self._clock()
        return changed


def _mirror(writer: SqliteWriter, local: dict[str, Memory], remote: dict[str, Memory]) -> int:
    """Make the mirror's rows (`local`) say what the platform does (`remote`); SYNC history rows."""
    changed = 0
    for memory_id, memory in remote.items():
        old = local.get(memory_id)
        if old is None:
            writer.insert(memory, event=SYNC_EVENT, actor=PLATFORM_ACTOR)
        elif same_content(old, memory) and old.immutable == memory.immutable:
            continue
        else:
            writer.change(old, SYNC_EVENT, PLATFORM_ACTOR, **{f: getattr(memory, f) for f in SYNCED_FIELDS})
        changed += 1
    for memory_id, old in local.items():
        if memory_id not in remote:
            writer.delete(old, PLATFORM_ACTOR, event=SYNC_EVENT)
            changed += 1
    return changed


def open_hosted(location: StoreLocation, *, readonly: bool = False) -> HostedStore:
    """The hosted store `location` names (`store_url`), for the user and home it carries."""
    if location.hosted is None or location.home is None or location.user_id is None:
        raise ConfigError(f"store URL {location.url!r} needs a resolved identity (user and MEM0_HOME)")
    _private_directory(location.home / "cache")  # before mem0ai makes its own folder in it
    platform = Platform(location.hosted, sdk_dir=location.home / "cache" / "mem0ai")
    try:
        return HostedStore(location.url, platform, location.home, location.user_id, readonly=readonly)
    except BaseException:
        platform.close()
        raise
