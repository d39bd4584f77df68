"""The pydantic models of the `embedder:` section (`config.read_section` reads it only when
the section is there; docs/embeddings.md has the keys)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .onnx_local import DEFAULT_DIMS, DEFAULT_MODEL


class OnnxLocalConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str = DEFAULT_MODEL
    model_path: str | None = None
    tokenizer_path: str | None = None
    model_url: str | None = None
    tokenizer_url: str | None = None
    model_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    tokenizer_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    embedding_dims: int = Field(default=DEFAULT_DIMS, ge=1, le=8192)


class EmbedderSection(BaseModel):
    model_config = ConfigDict(extra="ignore")

    provider: str = "onnx-local"  # (`config.LOCAL`)
    config: dict[str, Any] = Field(default_factory=dict)

    @field_validator("provider")
    @classmethod
    def _lower(cls, value: str) -> str:
        return value.strip().lower()
