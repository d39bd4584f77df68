"""Stored embeddings: their encoding, and the in-memory matrix search ranks them with.

A vector is stored as float16 (half the bytes of float32; cosine changes by < 1e-3) in the
`vectors` table (migration 4), with the model id and the text hash it was made from. Search
compares a query with every vector of the user at once: `VectorIndex` keeps them as one
float32 matrix in memory and brings it up to date cheaply on each use (rows written since
are appended by `seq`; a delete, noticed by the count that triggers keep, reloads it whole).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

Query = Callable[[str, Sequence], list[tuple]]

# (how many vectors, the last seq) of one (user, model): from the count the triggers keep
# (migration 8; one row) or, in a store opened read-only before it, by counting the rows.
_LAST = "SELECT coalesce(max(seq), 0) FROM vectors WHERE user_id = ? AND model = ?"
COUNTED = f"SELECT coalesce((SELECT n FROM vector_counts WHERE user_id = ? AND model = ?), 0), ({_LAST})"
COUNTING = f"SELECT (SELECT count(*) FROM vectors WHERE user_id = ? AND model = ?), ({_LAST})"


def encode_vector(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float16).tobytes()


def stored_rows(blobs: Sequence[bytes]) -> np.ndarray:
    """One float16 row per stored vector, as stored (no float32 copy: at 100,000 vectors that copy
    took 0.15-1.3 s, most of it the first touch of 168 MB). Compute with them in float32:
    `np.asarray(rows, dtype=np.float32)` gives exactly `decode_matrix`'s values."""
    if not blobs:
        return np.zeros((0, 0), dtype=np.float16)
    return np.frombuffer(b"".join(blobs), dtype=np.float16).reshape(len(blobs), -1)


def as_stored(vectors: np.ndarray) -> np.ndarray:
    """`vectors` (float32 rows) at the precision they are stored with: what `decode_matrix`
    gives back once they are stored."""
    return np.asarray(vectors, dtype=np.float16).astype(np.float32)


def decode_matrix(blobs: Sequence[bytes]) -> np.ndarray:
    """One float32 row per stored vector (an empty matrix for none)."""
    if not blobs:
        return np.zeros((0, 0), dtype=np.float32)
    return np.frombuffer(b"".join(blobs), dtype=np.float16).reshape(len(blobs), -1).astype(np.float32)


@dataclass
class _Loaded:
    """The rows read so far, in a buffer with room to grow: appending the vector of each new
    memory (one per write) copies only that row, not the whole matrix."""

    last_seq: int = 0
    count: int = 0
    ids: list[str] = field(default_factory=list)
    position: dict[str, int] = field(default_factory=dict)
    buffer: np.ndarray | None = None

    def add(self, ids: list[str], matrix: np.ndarray) -> None:
        """Append the rows of new ids (as one block); a rewritten id's row is replaced in place."""
        new = []
        for row, memory_id in enumerate(ids):
            at = self.position.get(memory_id)
            if at is not None:
                self._matrix()[at] = matrix[row]
            else:
                self.position[memory_id] = len(self.ids)
                self.ids.append(memory_id)
                new.append(row)
        if new:
            self._append(matrix[new])

    def _append(self, rows: np.ndarray) -> None:
        used = len(self.ids) - len(rows)
        if self.buffer is None or self.buffer.shape[1] != rows.shape[1] or len(self.buffer) < used + len(rows):
            grown = np.empty((max(used + len(rows), used + used // 2 + 16), rows.shape[1]), dtype=np.float32)
            if self.buffer is not None and used:
                grown[:used] = self.buffer[:used]
            self.buffer = grown
        self.buffer[used : used + len(rows)] = rows

    def _matrix(self) -> np.ndarray:
        if self.buffer is None:
            return np.zeros((0, 0), dtype=np.float32)
        return self.buffer[: len(self.ids)]


class VectorIndex:
    """The vectors of one (user, model), kept current against the table (see module docstring)."""

    def __init__(self, user_id: str, model: str):
        self.user_id, self.model = user_id, model
        self._loaded = _Loaded()
        self._lock = threading.Lock()
        self._view: tuple | None = None

    def position(self) -> dict[str, int]:
        """Each id's row in the matrix `current` returned last (read-only)."""
        return self._loaded.position

    def current(
        self, query: Query, view: tuple | None = None, *, counted: bool = False
    ) -> tuple[list[str], np.ndarray]:
        """(ids, matrix) of every vector of the user and model now stored. `view` is the store's
        token of what its connection sees (`SqlReads._view`): while it is unchanged, nothing
        was written, and the matrix is returned without asking the table. `counted`: the store
        keeps the number of vectors in `vector_counts` (migration 8), read instead of counting."""
        with self._lock:
            if view is not None and view == self._view:
                return self._loaded.ids, self._loaded._matrix()
            self._view = view
            return self._refresh(query, counted)

    def _refresh(self, query: Query, counted: bool) -> tuple[list[str], np.ndarray]:
        count, last = query(COUNTED if counted else COUNTING, (self.user_id, self.model, self.user_id, self.model))[0]
        loaded = self._loaded
        if last < loaded.last_seq or (last == loaded.last_seq and count != loaded.count):
            loaded = self._loaded = _Loaded()  # something was deleted: start over
        if last > loaded.last_seq:
            self._read(query, loaded, last)
            if len(loaded.ids) != count:  # some were deleted meanwhile: read them all again
                loaded = self._loaded = _Loaded()
                self._read(query, loaded, last)
        return loaded.ids, loaded._matrix()

    def _read(self, query: Query, loaded: _Loaded, last: int) -> None:
        """Add the vectors written after `loaded.last_seq`, up to `last`."""
        rows = query(
            "SELECT id, vector FROM vectors WHERE user_id = ? AND model = ? AND seq > ? AND seq <= ? ORDER BY seq",
            (self.user_id, self.model, loaded.last_seq, last),
        )
        loaded.add([r[0] for r in rows], decode_matrix([r[1] for r in rows]))
        loaded.last_seq, loaded.count = last, len(loaded.ids)


def similarities(matrix: np.ndarray, query_vector: np.ndarray) -> np.ndarray:
    """The cosine of every row with `query_vector` (all unit vectors), empty for no rows.
    numpy's own loop, not BLAS: OpenBLAS's threads keep spinning after a call and take the
    cores from the embedding model that runs next (twice its time on 2 cores), for a scan that
    is bound by memory anyway."""
    if matrix.size == 0:
        return np.zeros(0, dtype=np.float32)
    return np.einsum("ij,j->i", matrix, np.asarray(query_vector, dtype=np.float32), optimize=False)


def top_scores(scores: np.ndarray, limit: int) -> list[tuple[int, float]]:
    """(row, score) of the `limit` highest `scores`, best first (ties by row)."""
    if scores.size == 0 or limit <= 0:
        return []
    if limit < len(scores):
        chosen = np.argpartition(-scores, limit - 1)[:limit]
    else:
        chosen = np.arange(len(scores))
    chosen = chosen[np.lexsort((chosen, -scores[chosen]))]
    return [(int(i), float(scores[i])) for i in chosen]
