"""``$MEM0_HOME/config.yaml``: its sections are read by the embedder (docs/embeddings.md), the
judge (docs/judges.md) and `mem0-server` (docs/server.md); the file is read here, once per
call, with pyyaml. Each reader checks its own section with pydantic, imported only when there is a
section to check (`first_problem` words its errors).

A key written twice in one mapping (two pasted `server:` blocks) is refused, naming both lines:
YAML's loaders keep the last one silently, and the first block's keys would be lost."""

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
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_loader()) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path} is not readable YAML: {str(exc).splitlines()[0]}") from None
    except _DuplicateKey as exc:
        raise ConfigError(f"{path}: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must hold a mapping")
    return path, data


class _DuplicateKey(Exception):
    """A mapping of the file names one key twice."""


def _loader() -> Any:
    """pyyaml's safe loader, refusing a key written twice in one mapping."""
    import yaml

    class UniqueKeyLoader(yaml.SafeLoader):
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":  # `<<:` (flattened by pyyaml after)
                    continue
                key = self.construct_object(key_node, deep=True)
                line = key_node.start_mark.line + 1
                if isinstance(key, (str, int, float, bool)) and key in seen:
                    raise _DuplicateKey(
                        f"{key!r} is written twice (lines {seen[key]} and {line}): YAML would keep only the "
                        "second; merge them into one (two pasted server: blocks: one server: with every key "
                        "under its api_keys)"
                    )
                seen.setdefault(key, line)
            return super().construct_mapping(node, deep)

    return UniqueKeyLoader


def first_problem(exc: ValidationError) -> str:
    """A section's first validation error as ``<key>: <message>`` (one line)."""
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error.get("loc", ())) or "value"
    return f"{where}: {error.get('msg', 'invalid')}"
