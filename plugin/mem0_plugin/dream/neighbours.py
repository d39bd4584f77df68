"""Pairs of memories whose vectors are similar, without a loop over all pairs in Python.

Within one type group the vectors are one float32 matrix; it is multiplied by itself a
block of `BLOCK` rows at a time (BLAS does the work, and the memory held is one block's
row of similarities, not the whole square), and the pairs at or above the threshold are
kept. Exact: no pair above the threshold is missed. The work grows with the square of the
group's size, which at 100,000 memories split over a dozen types is a few seconds
(benchmarks/, docs/dream.md). Pure.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

BLOCK = 1024


def similar_vector_pairs(vectors: Sequence[np.ndarray], threshold: float) -> list[tuple[int, int, float]]:
    """Every (i, j, cosine), i < j, with cosine ≥ `threshold` (rows are unit vectors); sorted."""
    if len(vectors) < 2:
        return []
    matrix = np.ascontiguousarray(np.stack(vectors), dtype=np.float32)
    pairs: list[tuple[int, int, float]] = []
    for start in range(0, len(matrix), BLOCK):
        block = matrix[start:start + BLOCK] @ matrix[start:].T
        rows, cols = np.nonzero(block >= threshold)
        for r, c in zip(rows.tolist(), cols.tolist()):
            i, j = start + r, start + c
            if i < j:
                pairs.append((i, j, float(block[r, c])))
    pairs.sort()
    return pairs
