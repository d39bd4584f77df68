"""Any embedder provider of mem0 (openai, ollama, huggingface, fastembed, …) as an `Embedder`,
made by `mem0ai`'s own `EmbedderFactory` from the `embedder:` section of config.yaml.

mem0 is imported on the first `embed` call only (it is slow to import), and whatever the
provider raises then (a missing package, a refused connection, a bad key) becomes
`EmbedderUnavailable`: everything goes on lexically. `mem0ai` itself is the optional extra
``mem0`` (docs/decisions.md): without it the reason says how to install it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..mem0_factories import first_line, mem0_factory
from .base import EmbedderUnavailable, capped, unit_rows

BATCH_SIZE = 64


class Mem0ProviderEmbedder:
    def __init__(self, provider: str, config: dict[str, Any]):
        self.provider = provider
        self.config = dict(config)
        model = self.config.get("model") or "default"
        self.model_id = f"{provider}/{model}"
        self.dims = int(self.config.get("embedding_dims") or 0)
        self.english_only = False
        self._instance: Any = None
        self._lock = threading.Lock()

    def load(self) -> None:
        with self._lock:
            if self._instance is None:
                self._instance = self._create()

    def _create(self) -> Any:
        factory = embedder_factory(self.provider)
        try:
            return factory.create(self.provider, self.config, None)
        except Exception as exc:  # the provider's own errors: missing packages, bad config
            raise EmbedderUnavailable(f"mem0 embedder {self.provider!r}: {first_line(exc)}") from None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self._instance is None:
            self.load()
        rows: list[list[float]] = []
        try:
            for start in range(0, len(texts), BATCH_SIZE):
                chunk = [capped(t).replace("\n", " ") for t in texts[start : start + BATCH_SIZE]]
                rows += [list(v) for v in self._instance.embed_batch(chunk, "add")]
        except Exception as exc:  # network, quota, model errors of the provider
            raise EmbedderUnavailable(f"mem0 embedder {self.provider!r} failed: {first_line(exc)}") from None
        if not rows:
            return np.zeros((0, self.dims), dtype=np.float32)
        matrix = unit_rows(np.asarray(rows, dtype=np.float32))
        self.dims = matrix.shape[1]
        return matrix


def embedder_factory(provider: str) -> Any:
    """mem0's `EmbedderFactory`; `EmbedderUnavailable` naming the extra when mem0ai is not installed."""
    return mem0_factory(
        "EmbedderFactory", EmbedderUnavailable, f"mem0 embedder {provider!r}", f"embedder provider {provider!r}"
    )
