"""Each memory's nearest neighbours by vector, without comparing all pairs in Python (docs/dream.md).

Pairs are only ever wanted above a cosine floor, and only a memory's closest few matter (a
memory takes part in one action per run), so each memory keeps its `MAX_NEIGHBOURS` most
similar others at or above the floor; a pair is kept when either side keeps the other.

* Up to `EXACT_LIMIT` vectors (a type group of most projects): exact. The group's matrix is
  multiplied by itself a block of `BLOCK` rows at a time (BLAS does the work; memory holds one
  block of similarities), and each row's best are picked with `argmax` (the first on a tie); the
  pairs stay numpy arrays until the end (no Python per pair).
* Above it: an inverted file. The vectors are clustered by a few rounds of spherical k-means
  (√n cells, seeded deterministically from evenly spaced rows), each vector is listed in its
  `PROBES` nearest cells, and the exact search above runs inside each cell. A pair of close
  vectors nearly always shares a cell; a test bounds what is missed
  (tests/test_relation_meaning.py, `test_neighbours_are_exact_for_small_groups_and_near_exact_above`).
  Work grows as n·√n instead of n².
* BLAS threads: one for the inverted file, whose products are many and small (a cell is a few
  hundred rows): BLAS threads cost more to wake and join than they save on them — two threads
  made that search two to five times slower (docs/dream.md, "By meaning"). Two for an exact
  group of `THREADED_FROM` rows or more, where each product is large: 1.4-1.6 times faster
  from 512 to 4,096 rows (measured 2026-12-01). The limit holds only during the search.
Pure: the same vectors in the same order give the same pairs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from threadpoolctl import threadpool_limits

BLOCK = 1024
MAX_NEIGHBOURS = 2
EXACT_LIMIT = 4096
PROBES = 2
KMEANS_ROUNDS = 4
THREADED_FROM = 512  # rows of an exact group searched with two BLAS threads

Pair = tuple[int, int, float]


def similar_vector_pairs(
    vectors: Sequence[np.ndarray] | np.ndarray, threshold: float, max_neighbours: int = MAX_NEIGHBOURS
) -> list[Pair]:
    """(i, j, cosine), i < j, for each pair where one is among the other's `max_neighbours`
    nearest at or above `threshold` (rows are unit vectors); sorted by (i, j)."""
    if len(vectors) < 2:
        return []
    matrix = np.ascontiguousarray(np.asarray(vectors, dtype=np.float32))
    exact = len(matrix) <= EXACT_LIMIT
    with threadpool_limits(2 if exact and len(matrix) >= THREADED_FROM else 1, user_api="blas"):  # (module docstring)
        if exact:
            found = [_exact(matrix, np.arange(len(matrix)), threshold, max_neighbours)]
        else:
            found = [_exact(matrix[members], members, threshold, max_neighbours) for members in _cells(matrix)]
    return _distinct(found)


Found = tuple[np.ndarray, np.ndarray, np.ndarray]  # (first, second, cosine) of each pair found, first < second


def _exact(matrix: np.ndarray, ids: np.ndarray, threshold: float, keep: int) -> Found:
    """Best `keep` neighbours of each row of `matrix` (whose rows are `ids`) at or above
    `threshold`, in the order found: block by block, each row's nearest first."""
    n = len(matrix)
    keep = min(keep, n - 1)
    found: list[Found] = []
    if keep < 1:
        return _joined(found)
    for start in range(0, n, BLOCK):
        sims = matrix[start : start + BLOCK] @ matrix.T
        rows = np.arange(len(sims))
        sims[rows, start + rows] = -2.0  # never one's own neighbour
        best, chosen = _best(sims, keep)
        r, c = np.nonzero(chosen >= threshold)
        i, j = ids[start + r], ids[best[r, c]]
        found.append((np.minimum(i, j), np.maximum(i, j), chosen[r, c]))
    return _joined(found)


def _best(sims: np.ndarray, keep: int) -> tuple[np.ndarray, np.ndarray]:
    """(columns, values) of each row's `keep` highest, highest first (the first column on a tie).
    A few passes of `argmax` (over the block in place) cost far less than `argpartition`."""
    rows = np.arange(len(sims))
    columns = np.empty((len(sims), keep), dtype=np.intp)
    values = np.empty((len(sims), keep), dtype=sims.dtype)
    for k in range(keep):
        columns[:, k] = sims.argmax(axis=1)
        values[:, k] = sims[rows, columns[:, k]]
        sims[rows, columns[:, k]] = -np.inf
    return columns, values


def _joined(parts: Sequence[Found]) -> Found:
    if not parts:
        empty = np.zeros(0, dtype=np.intp)
        return empty, empty, np.zeros(0, dtype=np.float32)
    return (
        np.concatenate([p[0] for p in parts]),
        np.concatenate([p[1] for p in parts]),
        np.concatenate([p[2] for p in parts]),
    )


def _distinct(parts: Sequence[Found]) -> list[Pair]:
    """Each pair once (with the cosine it was found with last), sorted by (i, j)."""
    first, second, cosine = _joined(parts)
    if not len(first):
        return []
    order = np.lexsort((np.arange(len(first))[::-1], second, first))  # by pair, the last found first
    first, second, cosine = first[order], second[order], cosine[order]
    keep = np.ones(len(first), dtype=bool)
    keep[1:] = (first[1:] != first[:-1]) | (second[1:] != second[:-1])
    return list(zip(first[keep].tolist(), second[keep].tolist(), cosine[keep].tolist()))


def _cells(matrix: np.ndarray, ids: np.ndarray | None = None, depth: int = 0) -> list[np.ndarray]:
    """The `ids` of the rows listed in each cell of a spherical k-means clustering of `matrix`
    (each row in `PROBES` cells); a cell still larger than `EXACT_LIMIT` is split the same way
    once more (near-identical texts cluster tightly)."""
    n = len(matrix)
    ids = np.arange(n) if ids is None else ids
    count = max(2, int(math.sqrt(n)))
    centroids = matrix[np.linspace(0, n - 1, count).astype(int)].copy()
    for _ in range(KMEANS_ROUNDS):
        nearest = np.argmax(matrix @ centroids.T, axis=1)
        order = np.argsort(nearest, kind="stable")
        present, starts = np.unique(nearest[order], return_index=True)
        sums = np.zeros_like(centroids)
        sums[present] = np.add.reduceat(matrix[order], starts, axis=0)  # each cell's rows summed
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        centroids = np.where(norms > 0, sums / np.maximum(norms, 1e-12), centroids)
    scores = matrix @ centroids.T
    probes = np.argpartition(-scores, PROBES - 1, axis=1)[:, :PROBES]
    cell_of = probes.ravel()
    row_of = np.repeat(np.arange(n), PROBES)
    order = np.argsort(cell_of, kind="stable")
    bounds = np.searchsorted(cell_of[order], np.arange(count + 1))
    cells: list[np.ndarray] = []
    for c in range(count):
        rows = row_of[order[bounds[c] : bounds[c + 1]]]
        if len(rows) > EXACT_LIMIT and depth < 1 and len(rows) < n:
            cells += _cells(matrix[rows], ids[rows], depth + 1)
        elif len(rows) > 1:
            cells.append(ids[rows])
    return cells
