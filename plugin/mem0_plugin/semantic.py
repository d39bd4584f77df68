"""Semantic matching as the commands and the servers use it: the configured embedder, loaded
on first need, and what to do when there is none (docs/embeddings.md).

`Semantic` never raises for a missing or broken model: the first failure turns it off for
the rest of the process, and one line on stderr says so
(``mem0: semantic matching is off (<reason>); see mem0-health``). Everything then works
lexically. It writes vectors into the store (`backfill`) after the memory's own write has
committed: never on a plain write's critical path. (The write path of `add_memory(infer=true)`
embeds the new text here and stores its vector with the memory: `write_path`.)
"""

from __future__ import annotations

import queue
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from .embeddings import Embedder, EmbedderUnavailable, embedder_from_config
from .language.gloss import english_rendering
from .store import Store
from .store.vectors import as_stored

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor


class Backfilled(NamedTuple):
    """What a backfill stored: `stored` vectors, of which the model made `embedded` (texts
    repeated within a batch are embedded once)."""

    stored: int
    embedded: int


BACKFILL_BATCH = 256
INLINE_BACKFILL = 256  # a search embeds at most this many memories that lack a vector
# A glossed query's vector: this much of its English rendering's, the rest of its own. Tuned on
# the development set's search questions: 0.5–0.9 give hit@5 0.908–0.917, 0.7 the best, the
# questions in a query's own language kept (docs/search.md, "Across languages").
RENDERING_WEIGHT = 0.7
RENDERED = "+en"  # after an English-only model's id: memories' vectors hold their English rendering
_warned: set[str] = set()
TURNED_OFF = "turned off by configuration"


def _blend(own: np.ndarray, rendering: np.ndarray) -> np.ndarray:
    """A text's vector with its English rendering's (`RENDERING_WEIGHT`), unit length."""
    blended = (1 - RENDERING_WEIGHT) * own + RENDERING_WEIGHT * rendering
    return (blended / np.linalg.norm(blended)).astype(np.float32)


def off_notice(reason: str) -> str:
    return f"mem0: semantic matching is off ({reason}); see mem0-health"


class Semantic:
    """The embedder of a process, or the reason there is none."""

    def __init__(self, embedder: Embedder | None, reason: str | None = None, *, quiet: bool = False):
        self.embedder = embedder
        self.reason = reason if embedder is None else None
        self.quiet = quiet
        self._loaded = False
        self._lock = threading.Lock()
        self._queue: queue.Queue | None = None
        self._prepared: set[tuple] = set()
        self._pool: ThreadPoolExecutor | None = None  # the worker that embeds queries (`query_vector_soon`)

    @classmethod
    def from_home(cls, home: Path, *, quiet: bool = False) -> Semantic:
        try:
            embedder = embedder_from_config(home)
        except EmbedderUnavailable as exc:
            return cls(None, str(exc), quiet=quiet)
        return cls(embedder, TURNED_OFF if embedder is None else None, quiet=quiet)

    @property
    def english_only(self) -> bool:
        return bool(getattr(self.embedder, "english_only", False))

    @property
    def model_name(self) -> str | None:
        """The embedder's own name, as the commands show it (`model_id` is what vectors store)."""
        return self.embedder.model_id if self.embedder is not None else None

    @property
    def model_id(self) -> str | None:
        """The name stored beside every vector made here: the embedder's, and for an
        English-only model `RENDERED` after it (its memories' vectors hold their English
        rendering, `memory_vectors`: vectors made before are of another kind, and made again)."""
        if self.embedder is None:
            return None
        return self.embedder.model_id + (RENDERED if self.english_only else "")

    def available(self) -> bool:
        """Whether vectors can be made: loads the model the first time (False, once said, after)."""
        if self.embedder is None:
            if self.reason and self.reason != TURNED_OFF:
                self._notice(self.reason)
            return False
        with self._lock:
            if not self._loaded:
                try:
                    load = getattr(self.embedder, "load", None)
                    if load is not None:
                        load()
                    self._loaded = True
                except EmbedderUnavailable as exc:
                    self._turn_off(str(exc))
                    return False
        return True

    def load_soon(self) -> None:
        """Start loading the model on a thread of its own, for a caller that will soon need it and
        has other work first (dream reads the memories meanwhile: onnxruntime builds its session
        without holding the interpreter lock). `available` and `embed` wait for it. A failure is
        not said here: `available` retries and says it when the model is actually needed. The
        thread is not a daemon, so a process never exits in the middle of a load
        (docs/embeddings.md, "Where vectors are made")."""
        load = getattr(self.embedder, "load", None)
        if load is None or self._loaded:
            return

        def run() -> None:
            try:
                load()
            except EmbedderUnavailable:
                pass

        threading.Thread(target=run, name="mem0-model-load").start()

    def embed(self, texts: Sequence[str]) -> np.ndarray | None:
        """Vectors for `texts`, or None when semantic matching is (or just turned) off."""
        if not self.available():
            return None
        assert self.embedder is not None
        try:
            return self.embedder.embed(list(texts))
        except EmbedderUnavailable as exc:
            self._turn_off(str(exc))
            return None

    def vectors_for(self, store: Store, user_id: str, texts: list[str]) -> list[np.ndarray] | None:
        """A vector for each text: reused where another memory of the user with the same text
        has one (`Store.vectors_by_text`), embedded otherwise — at the precision vectors
        are stored with, so what is computed with them now (dream's cosines) is what it will be
        once they are read back. A text with nothing to render in English also reuses a vector
        stored under the model's own id (before memories' vectors held their rendering: the same
        vector), so an upgrade embeds again only the texts whose vector changed. None when
        semantic matching is off."""
        found = self._vectors_for(store, user_id, texts)
        return None if found is None else found[0]

    def _vectors_for(self, store: Store, user_id: str, texts: list[str]) -> tuple[list[np.ndarray], int] | None:
        """`vectors_for`, and how many of the texts the model embedded (the rest reused a vector)."""
        if self.model_id is None:
            return None
        known = store.vectors_by_text(user_id, self.model_id, texts)
        new = sorted({text for text in texts if text not in known})
        plain = [text for text in new if english_rendering(text) is None] if self.english_only else []
        if plain:
            known.update(store.vectors_by_text(user_id, self.model_name or "", plain))
            new = [text for text in new if text not in known]
        if new:
            made = self.memory_vectors(new)
            if made is None:
                return None
            known.update(zip(new, as_stored(made)))
        return [known[text] for text in texts], len(new)

    def memory_vectors(self, texts: Sequence[str]) -> np.ndarray | None:
        """The vectors stored for memories' texts: for an English-only model, a text with glossed
        terms gets the vector a query of the same text gets (`query_vector`), so a memory written
        in Russian, Chinese or Japanese meets its English restatement; otherwise as embedded."""
        renderings = [english_rendering(text) if self.english_only else None for text in texts]
        extra = [rendering for rendering in renderings if rendering]
        made = self.embed([*texts, *extra])
        if made is None or not extra:
            return made
        vectors = np.array(made[: len(texts)], dtype=np.float32)
        rendered = iter(made[len(texts) :])
        for row, rendering in enumerate(renderings):
            if rendering:
                vectors[row] = _blend(vectors[row], next(rendered))
        return vectors

    def query_vector(self, text: str) -> np.ndarray | None:
        """A search query's vector. For an English-only model (the default), a query with
        glossed terms (`gloss`: Russian, Chinese, Japanese) is embedded as written and in its
        English rendering, in one batch, and the two are blended (`RENDERING_WEIGHT`): the model
        then finds English memories by the rendering and memories in the query's own language by
        its own words. A multilingual model gets the query as written."""
        vectors = self.memory_vectors([text])
        return None if vectors is None else vectors[0]

    def query_vector_soon(self, text: str) -> Callable[[], np.ndarray | None]:
        """Start embedding `text` on a worker thread; the function returned waits for the vector
        (None if semantic matching turned off meanwhile). A search reads its lexical candidates
        while the model runs: onnxruntime and SQLite both let go of the interpreter lock."""
        with self._lock:
            if self._pool is None:
                from concurrent.futures import ThreadPoolExecutor

                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mem0-query")
        return self._pool.submit(self.query_vector, text).result

    def backfill(
        self,
        store: Store,
        user_id: str,
        app_id: str | None = None,
        *,
        ids: list[str] | None = None,
        limit: int | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> Backfilled:
        """Embed and store the vectors the user's memories (of one project, or `ids`) lack: how
        many were stored, and how many of them the model embedded (the others reused a vector of
        a memory with the same text, or one the model made before). Nothing when semantic
        matching is off."""
        if self.embedder is None:
            return Backfilled(0, 0)
        model = self.model_id
        assert model is not None
        missing = store.without_vectors(user_id, model, app_id, ids=ids, limit=limit)
        stored = embedded = 0
        for start in range(0, len(missing), BACKFILL_BATCH):
            chunk = missing[start : start + BACKFILL_BATCH]
            found = self._vectors_for(store, user_id, [text for _, text in chunk])
            if found is None:
                break
            vectors, made = found
            with store.write() as writer:
                stored += writer.store_vectors(user_id, model, [(i, t, v) for (i, t), v in zip(chunk, vectors)])
            embedded += made
            if progress is not None:
                progress(min(start + len(chunk), len(missing)), len(missing))
        return Backfilled(stored, min(embedded, stored))

    def prepare_search(self, store: Store, user_id: str, app_id: str | None, *, background: bool) -> None:
        """Before the first search of a project in this process: embed up to `INLINE_BACKFILL`
        memories that lack a vector (a new or imported store); with `background`, the rest on
        the background thread. Later searches rely on `schedule` after each write."""
        key = (id(store), user_id, app_id)
        if key in self._prepared or store.readonly or not self.available():
            return
        self._prepared.add(key)
        self.backfill(store, user_id, app_id, limit=INLINE_BACKFILL)
        if background:
            self.schedule(store, user_id, None, app_id=app_id)

    def schedule(self, store: Store, user_id: str, ids: list[str] | None, *, app_id: str | None = None) -> None:
        """Embed `ids` soon, on a background thread (the MCP server after each write)."""
        if self.embedder is None or self.reason is not None:
            return
        with self._lock:
            if self._queue is None:
                self._queue = queue.Queue()
                threading.Thread(target=self._work, name="mem0-embed", daemon=True).start()
        self._queue.put((store, user_id, ids, app_id))

    def drain(self, timeout: float = 30) -> None:
        """Wait until every scheduled embedding is done (tests; a server shutting down)."""
        if self._queue is not None:
            done = threading.Event()
            self._queue.put(done)
            done.wait(timeout)

    def _work(self) -> None:
        assert self._queue is not None
        while True:
            item = self._queue.get()
            if isinstance(item, threading.Event):
                item.set()
                continue
            store, user_id, ids, app_id = item
            try:
                self.backfill(store, user_id, app_id, ids=ids)
            except Exception as exc:  # a closed or broken store must not kill the worker
                print(f"mem0: background embedding failed: {exc}", file=sys.stderr)

    def _turn_off(self, reason: str) -> None:
        self.embedder, self.reason = None, reason
        self._notice(reason)

    def _notice(self, reason: str) -> None:
        if not self.quiet and reason not in _warned:
            _warned.add(reason)
            print(off_notice(reason), file=sys.stderr)
