"""Embeddings: one small interface (`base.Embedder`), the local ONNX default, mem0's providers,
and the configuration that picks one (docs/embeddings.md)."""

from .base import Embedder, EmbedderUnavailable, unit_rows
from .config import embedder_from_config

__all__ = ["Embedder", "EmbedderUnavailable", "embedder_from_config", "unit_rows"]
