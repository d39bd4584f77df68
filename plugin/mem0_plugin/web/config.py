"""The `server:` section of ``$MEM0_HOME/config.yaml`` (docs/server.md, "Configuration"),
read with pyyaml and checked with pydantic:

```yaml
server:
  api_keys:
    - {key: "m0-…", users: ["alice"]}                  # the users this key may touch; "*" for all
    - {key: "m0-…", users: ["bob"], projects: ["web"]}  # and only these projects (app_id)
  max_body_bytes: 1048576
```
"""

from __future__ import annotations

import secrets
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..config_file import read_config
from ..errors import ConfigError

ALL = "*"
KEY_PREFIX = "m0-"
MIN_KEY_CHARS = 16
DEFAULT_MAX_BODY = 1024 * 1024


class ApiKey(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str = Field(min_length=MIN_KEY_CHARS, repr=False)  # never shown: not in repr, not in errors
    users: tuple[str, ...] = Field(min_length=1)
    projects: tuple[str, ...] | None = None  # None: every project

    @field_validator("key")
    @classmethod
    def _printable(cls, value: str) -> str:
        if not value.isascii() or not value.isprintable() or " " in value:
            raise ValueError("a key is printable ASCII without spaces")
        return value

    @field_validator("users", "projects")
    @classmethod
    def _names(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is not None and any(not isinstance(v, str) or not v.strip() for v in value):
            raise ValueError("names must be non-empty strings")
        return value

    @property
    def all_users(self) -> bool:
        return ALL in self.users

    @property
    def all_projects(self) -> bool:
        return self.projects is None or ALL in self.projects


class ServerSection(BaseModel):
    model_config = ConfigDict(extra="forbid")

    api_keys: tuple[ApiKey, ...] = ()
    max_body_bytes: int = Field(default=DEFAULT_MAX_BODY, ge=1024, le=64 * 1024 * 1024)

    @field_validator("api_keys")
    @classmethod
    def _distinct(cls, value: tuple[ApiKey, ...]) -> tuple[ApiKey, ...]:
        if len({k.key for k in value}) != len(value):
            raise ValueError("the same key is listed twice")
        return value


def read_server_section(home: Path) -> ServerSection:
    """The `server:` section (no keys when the file or the section is absent)."""
    path, data = read_config(home)
    try:
        return ServerSection.model_validate(data.get("server") or {})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'server'}: {e['msg']}" for e in exc.errors(include_input=False)
        )
        raise ConfigError(f"server in {path}: {problems}") from None


def new_key() -> str:
    """A fresh random API key (`mem0-server --new-key`)."""
    return KEY_PREFIX + secrets.token_urlsafe(32)
