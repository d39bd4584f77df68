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
from typing import TYPE_CHECKING, Any

from ..config_file import first_problem, read_config
from ..errors import ConfigError
from .base import Embedder, EmbedderUnavailable
from .onnx_local import DEFAULT_MODEL, KNOWN_MODELS, OnnxEmbedder
from .weights import ModelFiles, PinnedFile

if TYPE_CHECKING:
    from .settings import OnnxLocalConfig

OFF = frozenset({"none", "off", "lexical", "disabled"})
LOCAL = "onnx-local"


def read_section(home: Path) -> tuple[str, dict[str, Any]]:
    """The `embedder:` section as (provider, its config); (`onnx-local`, {}) when the file or the
    section is absent, without importing pydantic (most users have no section to check)."""
    try:
        path, data = read_config(home)
    except ConfigError as exc:
        raise EmbedderUnavailable(str(exc)) from None
    section = data.get("embedder") or {}
    override = os.environ.get("MEM0_EMBEDDER", "").strip()
    if override:
        section = {"provider": override} if override.lower() != section.get("provider") else section
    if not section:
        return LOCAL, {}
    from pydantic import ValidationError

    from .settings import EmbedderSection

    try:
        checked = EmbedderSection.model_validate(section)
    except ValidationError as exc:
        raise EmbedderUnavailable(f"embedder in {path}: {first_problem(exc)}") from None
    return checked.provider, checked.config


def embedder_from_config(home: Path) -> Embedder | None:
    """The configured embedder, not loaded yet; None when semantic matching is turned off.
    Raises `EmbedderUnavailable` for a configuration that cannot work."""
    provider, config = read_section(home)
    if provider in OFF:
        return None
    if provider in (LOCAL, "onnx"):
        return _local(config, Path(home) / "models")
    from .mem0_provider import Mem0ProviderEmbedder

    return Mem0ProviderEmbedder(provider, config)


def _local(raw: dict[str, Any], models_dir: Path) -> OnnxEmbedder:
    if not raw:  # the default model (what `OnnxLocalConfig` gives for an empty config)
        return OnnxEmbedder(KNOWN_MODELS[DEFAULT_MODEL], models_dir)
    from pydantic import ValidationError

    from .settings import OnnxLocalConfig

    try:
        config = OnnxLocalConfig.model_validate(raw)
    except ValidationError as exc:
        raise EmbedderUnavailable(f"onnx-local config: {first_problem(exc)}") from None
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
