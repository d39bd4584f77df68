"""The one interface every embedder has: texts in, unit-length float32 vectors out.

An embedder is identified by its `model_id` (stored beside every vector it makes, so a
vector is only ever compared with vectors of the same model) and has `dims` dimensions.
`embed` takes any number of texts and returns a C-contiguous ``(len(texts), dims)``
float32 array whose rows have length 1 (a zero row for a text the model gives nothing for).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from ..errors import Mem0PluginError

MAX_TEXT_CHARS = 4_000  # a memory longer than this is embedded by its beginning


class EmbedderUnavailable(Mem0PluginError):
    """No embedding model can be used (missing package or weights, a bad file, a bad config).
    Never fatal to a command: everything falls back to lexical matching."""

    exit_code = 6


class Embedder(Protocol):
    model_id: str
    dims: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """`matrix` as float32 with every non-zero row scaled to length 1."""
    matrix = np.ascontiguousarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    np.divide(matrix, norms, out=matrix, where=norms > 0)
    return matrix


def capped(text: str) -> str:
    return text if len(text) <= MAX_TEXT_CHARS else text[:MAX_TEXT_CHARS]
