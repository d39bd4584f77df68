"""What every store is to its callers: the `Store` and `Writer` protocols, and the values they
share (`ReadMode`, `Page`, `HistoryEntry`). Each method's contract is its docstring in the SQL
stores' shared code (`store.sql.reads`, `store.sql.writer`) or in the SQLite store; the
SQLite, PostgreSQL and hosted stores implement the same protocols (mypy checks each against
them where it is opened, `store.open_store`)."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ..filters import CompiledFilter
from ..records import ACTIVE, MERGED, SUPERSEDED, Memory

if TYPE_CHECKING:
    import numpy as np

    from .bm25 import Statistics
    from .journal import DreamRun
    from .vectors import VectorIndex

T = TypeVar("T")


class ReadMode(enum.Enum):
    """Which lifecycle states a read returns (docs/reads.md, "Lifecycle modes")."""

    DEFAULT = (ACTIVE, SUPERSEDED)
    LATEST_ONLY = (ACTIVE,)
    INCLUDE_MERGED = (ACTIVE, SUPERSEDED, MERGED)

    @classmethod
    def from_flags(cls, latest_only: bool = False, include_merged: bool = False) -> ReadMode:
        if latest_only and include_merged:
            from ..errors import InvalidInputError

            raise InvalidInputError("latest_only and include_merged cannot both be true")
        if latest_only:
            return cls.LATEST_ONLY
        return cls.INCLUDE_MERGED if include_merged else cls.DEFAULT


@dataclass(frozen=True)
class Page:
    count: int
    page: int
    page_size: int
    results: tuple[Memory, ...]
    features: tuple[str | None, ...] = ()  # with_features: each result's `features` column

    @property
    def next(self) -> int | None:
        return self.page + 1 if self.page * self.page_size < self.count else None

    @property
    def previous(self) -> int | None:
        return self.page - 1 if self.page > 1 else None


@dataclass(frozen=True)
class HistoryEntry:
    seq: int
    memory_id: str
    event: str
    actor: str
    at: str
    before: dict | None
    after: dict | None


class Writer(Protocol):
    """One write transaction of a store (`Store.write`): reads inside it see its own changes."""

    now: str  # the transaction's time, written as `updated_at` and in history rows
    dream_run_id: str | None  # set while a dream run writes: its history rows name it

    def savepoint(self) -> AbstractContextManager[None]: ...

    def get(self, user_id: str, memory_id: str) -> Memory | None: ...

    def resolve_id(self, user_id: str, key: str, *, deleted: bool = ...) -> str: ...

    def find_identical(self, memory: Memory) -> Memory | None: ...

    def active_by_source(self, user_id: str, app_id: str | None, source: str) -> list[Memory]: ...

    def replaced_by(self, user_id: str, app_id: str | None, memory_id: str) -> list[Memory]: ...

    def exists(self, memory_id: str) -> bool: ...

    def insert(self, memory: Memory, *, event: str = ..., actor: str, features: object = ...) -> Memory: ...

    def put(self, memory: Memory) -> None: ...

    def copy_history(self, user_id: str, entries: Iterable[HistoryEntry]) -> int: ...

    def has_history(self, user_id: str, memory_id: str) -> bool: ...

    def change(self, before: Memory, event: str, actor: str, **fields: Any) -> Memory: ...

    def store_features(self, user_id: str, values: Iterable[tuple[str, str, str]]) -> int: ...

    def store_vectors(self, user_id: str, model: str, vectors: Iterable[tuple[str, str, np.ndarray]]) -> int: ...

    def delete(self, before: Memory, actor: str, event: str = ...) -> None: ...

    def record(
        self, user_id: str, memory_id: str, event: str, actor: str, before: Memory | None, after: Memory | None
    ) -> None: ...

    def purge_history(self, user_id: str, memory_id: str) -> None: ...

    def erase_text(self, user_id: str, memory_id: str, actor: str) -> None: ...

    def purged(self, user_id: str, memory_id: str) -> bool: ...

    def reindex_search(self) -> int: ...

    def optimize_search_index(self) -> None: ...

    def last_deleted(self, user_id: str, memory_id: str) -> dict | None: ...

    def journal_start(
        self,
        run_id: str,
        user_id: str,
        app_id: str | None,
        plan_json: str,
        resolutions_json: str,
        mode: str | None = ...,
    ) -> None: ...

    def journal_step(self, run_id: str, step: int, kind: str, outcome: str, detail: str = ...) -> None: ...

    def journal_finish(self, run_id: str, status: str = ...) -> None: ...

    def journal_undone(self, run_id: str) -> bool: ...


class Store(Protocol):
    """A store of memories: reads, searches, the journal of dream runs, and writes through `write`."""

    url: str  # the store's URL (docs/identity.md, "Store URLs")
    readonly: bool

    def __enter__(self) -> Store: ...

    def __exit__(self, *exc: object) -> None: ...

    def apply_lock(self, scope: tuple[str, str | None] = ...) -> AbstractContextManager[None]: ...

    scheme: str

    def close(self) -> None: ...

    def write(self, *, secure: bool = ...) -> AbstractContextManager[Writer]: ...

    def transact(self, work: Callable[[Writer], T], *, secure: bool = ...) -> T: ...

    def scrub(self) -> bool: ...

    def read_snapshot(self) -> AbstractContextManager[None]: ...

    def get(self, user_id: str, memory_id: str) -> Memory: ...

    def resolve_id(self, user_id: str, key: str, *, deleted: bool = ...) -> str: ...

    def id_candidates(self, user_id: str, key: str, *, deleted: bool = ...) -> list[str]: ...

    def get_many(self, user_id: str, ids: list[str]) -> dict[str, Memory]: ...

    def page(
        self,
        user_id: str,
        where: CompiledFilter = ...,
        mode: ReadMode = ...,
        page: int = ...,
        page_size: int = ...,
        *,
        app_id: str | None = ...,
        with_features: bool = ...,
    ) -> Page: ...

    def features_of(self, user_id: str, memory_ids: Sequence[str]) -> dict[str, str]: ...

    def search(
        self,
        user_id: str,
        query: str,
        where: CompiledFilter = ...,
        mode: ReadMode = ...,
        top_k: int = ...,
        threshold: float | None = ...,
        *,
        query_vector: np.ndarray | Callable[[], np.ndarray | None] | None = ...,
        model: str | None = ...,
        app_id: str | None = ...,
    ) -> list[tuple[Memory, float]]: ...

    def nearest(
        self,
        user_id: str,
        vector: np.ndarray,
        model: str,
        where: CompiledFilter = ...,
        mode: ReadMode = ...,
        top_k: int = ...,
    ) -> list[tuple[Memory, float]]: ...

    def lexical_search(
        self,
        user_id: str,
        query: str,
        where: CompiledFilter = ...,
        mode: ReadMode = ...,
        top_k: int = ...,
        threshold: float | None = ...,
        app_id: str | None = ...,
    ) -> list[tuple[Memory, float]]: ...

    def statistics(self, user_id: str, app_id: str | None, terms: Iterable[str]) -> Statistics: ...

    def vector_index(self, user_id: str, model: str) -> VectorIndex: ...

    def without_vectors(
        self,
        user_id: str,
        model: str,
        app_id: str | None = ...,
        *,
        ids: list[str] | None = ...,
        limit: int | None = ...,
        newest: int | None = ...,
    ) -> list[tuple[str, str]]: ...

    MANY_IDS: int

    def vectors_of(
        self, user_id: str, model: str, ids: list[str], text_hashes: Mapping[str, str] | None = ...
    ) -> dict[str, np.ndarray]: ...

    def vectors_by_text(self, user_id: str, model: str, texts: list[str]) -> dict[str, np.ndarray]: ...

    def vector_counts(self, user_id: str, model: str, app_id: str | None = ...) -> tuple[int, int]: ...

    def count(self, user_id: str | None = ..., app_id: str | None = ...) -> int: ...

    def iter_scope(self, user_id: str, app_id: str | None, batch: int = ...) -> Iterator[Memory]: ...

    def owner_of(self, memory_id: str) -> tuple[str, str | None] | None: ...

    def user_ids(self) -> list[str]: ...

    def scope_rows(self, user_id: str) -> list[tuple[str | None, str | None, str | None, int, str, str]]: ...

    def history(self, user_id: str, memory_id: str) -> list[HistoryEntry]: ...

    def history_ids(self, user_id: str) -> list[str]: ...

    def journal_open_runs(self, user_id: str, app_id: str | None) -> list[tuple[str, str, str]]: ...

    def journal_plan(self, run_id: str) -> tuple[str, str]: ...

    def journal_steps(self, run_id: str) -> dict[int, str]: ...

    def dream_runs(self, user_id: str, app_id: str | None) -> list[DreamRun]: ...

    def dream_run(self, user_id: str, app_id: str | None, key: str) -> DreamRun: ...

    def run_history(self, user_id: str, run_id: str) -> list[HistoryEntry]: ...

    def last_history_seqs(self, user_id: str, ids: list[str]) -> dict[str, int]: ...
