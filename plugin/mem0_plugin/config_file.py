"""``$MEM0_HOME/config.yaml``: its sections are read by the embedder (docs/embeddings.md), the
judge (docs/judges.md) and `mem0-server` (docs/server.md); the file is read here, once per
call, with pyyaml. Each reader checks its own section with pydantic, imported only when there is a
section to check (`first_problem` words its errors)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import ConfigError

if TYPE_CHECKING:
    from pydantic import ValidationError

CONFIG_NAME = "config.yaml"


def read_config(home: str | Path) -> tuple[Path, dict[str, Any]]:
    """(the file's path, its mapping): empty when there is no file. `ConfigError` (one line)
    when the file is not readable YAML or does not hold a mapping."""
    path = Path(home) / CONFIG_NAME
    if not path.is_file():
        return path, {}
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path} is not readable YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must hold a mapping")
    return path, data


def first_problem(exc: ValidationError) -> str:
    """A section's first validation error as ``<key>: <message>`` (one line)."""
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error.get("loc", ())) or "value"
    return f"{where}: {error.get('msg', 'invalid')}"
