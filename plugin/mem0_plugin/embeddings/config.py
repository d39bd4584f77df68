"""The `embedder:` section of ``$MEM0_HOME/config.yaml`` (mem0's own config shape), read
with pyyaml and checked with pydantic, and the embedder it names.

```yaml
embedder:
  provider: onnx-local          # the default; or any mem0 provider: openai, ollama, fastembed, …
  config:
    model: all-MiniLM-L6-v2-int8
```

``provider: none`` (or the environment variable ``MEM0_EMBEDDER=none``) turns semantic
matching off. ``onnx-local`` also takes a model of your own: ``model_path`` and
``tokenizer_path`` (files), or ``model_url`` and ``tokenizer_url`` (downloaded into
``$MEM0_HOME/models/<model>/``), each with its ``*_sha256``. docs/embeddings.md has more.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..config_file import read_config
from ..errors import ConfigError
from .base import Embedder, EmbedderUnavailable
from .onnx_local import DEFAULT_MODEL, KNOWN_MODELS, OnnxEmbedder
from .weights import ModelFiles, PinnedFile

OFF = frozenset({"none", "off", "lexical", "disabled"})
LOCAL = "onnx-local"


class OnnxLocalConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str = DEFAULT_MODEL
    model_path: str | None = None
    tokenizer_path: str | None = None
    model_url: str | None = None
    tokenizer_url: str | None = None
    model_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    tokenizer_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    embedding_dims: int = Field(default=384, ge=1, le=8192)


class EmbedderSection(BaseModel):
    model_config = ConfigDict(extra="ignore")

    provider: str = LOCAL
    config: dict[str, Any] = Field(default_factory=dict)

    @field_validator("provider")
    @classmethod
    def _lower(cls, value: str) -> str:
        return value.strip().lower()


def read_section(home: Path) -> EmbedderSection:
    """The `embedder:` section (defaults when the file or the section is absent)."""
    try:
        path, data = read_config(home)
    except ConfigError as exc:
        raise EmbedderUnavailable(str(exc)) from None
    section = data.get("embedder") or {}
    override = os.environ.get("MEM0_EMBEDDER", "").strip()
    if override:
        section = {"provider": override} if override.lower() != section.get("provider") else section
    try:
        return EmbedderSection.model_validate(section)
    except ValidationError as exc:
        raise EmbedderUnavailable(f"embedder in {path}: {_describe(exc)}") from None


def embedder_from_config(home: Path) -> Embedder | None:
    """The configured embedder, not loaded yet; None when semantic matching is turned off.
    Raises `EmbedderUnavailable` for a configuration that cannot work."""
    section = read_section(home)
    if section.provider in OFF:
        return None
    if section.provider in (LOCAL, "onnx"):
        return _local(section.config, Path(home) / "models")
    from .mem0_provider import Mem0ProviderEmbedder

    return Mem0ProviderEmbedder(section.provider, section.config)


def _local(raw: dict[str, Any], models_dir: Path) -> OnnxEmbedder:
    try:
        config = OnnxLocalConfig.model_validate(raw)
    except ValidationError as exc:
        raise EmbedderUnavailable(f"onnx-local config: {_describe(exc)}") from None
    if config.model_path or config.model_url:
        return OnnxEmbedder(_custom_files(config), models_dir, dims=config.embedding_dims)
    if config.model not in KNOWN_MODELS:
        known = ", ".join(sorted(KNOWN_MODELS))
        raise EmbedderUnavailable(
            f"unknown onnx-local model {config.model!r} (known: {known}; "
            "or give model_path/model_url with their sha256)"
        )
    return OnnxEmbedder(KNOWN_MODELS[config.model], models_dir, dims=config.embedding_dims)


def _custom_files(config: OnnxLocalConfig) -> ModelFiles:
    for kind in ("model", "tokenizer"):
        if not (getattr(config, f"{kind}_path") or getattr(config, f"{kind}_url")):
            raise EmbedderUnavailable(f"onnx-local config: {kind}_path or {kind}_url is required")
        if getattr(config, f"{kind}_url") and not getattr(config, f"{kind}_sha256"):
            raise EmbedderUnavailable(f"onnx-local config: {kind}_url needs {kind}_sha256")
    return ModelFiles(
        config.model,
        _pinned(config.model_path, config.model_url, config.model_sha256, "model.onnx"),
        _pinned(config.tokenizer_path, config.tokenizer_url, config.tokenizer_sha256, "tokenizer.json"),
    )


def _pinned(path: str | None, url: str | None, sha256: str | None, name: str) -> PinnedFile:
    return PinnedFile(name, sha256 or "", url=None if path else url, path=Path(path).expanduser() if path else None)


def _describe(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error.get("loc", ())) or "value"
    return f"{where}: {error.get('msg', 'invalid')}"
