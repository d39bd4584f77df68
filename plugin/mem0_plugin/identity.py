"""Identity and configuration (docs/identity.md): who, which project, which branch, which store.

The one resolver used by the MCP server, dream, health, forget and memories.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from .errors import ConfigError
from .mem0_config import find_mem0_config, parse_identity
from .store_url import StoreLocation, parse_store_url, sqlite_url


@dataclass(frozen=True)
class Identity:
    user_id: str
    project_id: str
    branch: str
    home: Path
    store_url: str
    cwd: Path
    store_explicit: bool = False  # named by --store or MEM0_STORE, not the default

    @property
    def store_location(self) -> StoreLocation:
        """The parsed `store_url` (`store_url.parse_store_url`); `ConfigError` when it is unusable.
        A hosted store's location also carries the home and the user (its local mirror's)."""
        location = parse_store_url(self.store_url, explicit=self.store_explicit)
        if location.hosted is None:
            return location
        return replace(location, home=self.home, user_id=self.user_id)


def _git(cwd: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    out = done.stdout.strip()
    return out if done.returncode == 0 and out else None


_REMOTE = re.compile(r"(?:[:/])([^/:]+)/([^/]+?)(?:\.git)?/?$")


def remote_slug(url: str) -> str | None:
    """`git@github.com:acme/api.git` → `acme-api`; None when the URL has no owner/repo."""
    match = _REMOTE.search(url.strip())
    return f"{match.group(1)}-{match.group(2)}" if match else None


def resolve_project_id(cwd: Path, explicit: str | None, env: Mapping[str, str]) -> str:
    if explicit:
        return explicit
    if env.get("MEM0_PROJECT_ID"):
        return env["MEM0_PROJECT_ID"]
    config_path = find_mem0_config(str(cwd))
    if config_path:
        try:
            project = parse_identity(Path(config_path).read_text(encoding="utf-8", errors="replace"))
        except OSError:
            project = None
        if project:
            return project
    origin = _git(cwd, "remote", "get-url", "origin")
    slug = remote_slug(origin) if origin else None
    if slug:
        return slug
    top = _git(cwd, "rev-parse", "--show-toplevel")
    return Path(top).name if top else (cwd.resolve().name or "default")


def default_store_url(home: Path) -> str:
    """`sqlite:///<home>/memories.sqlite3`: with `home` absolute, four slashes."""
    return sqlite_url(home / "memories.sqlite3")


def resolve_identity(
    *,
    user_id: str | None = None,
    project_id: str | None = None,
    store: str | None = None,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> Identity:
    env = os.environ if env is None else env
    work = Path(cwd) if cwd else Path.cwd()
    if not work.is_dir():
        raise ConfigError(f"--cwd is not a directory: {work}")
    user = user_id or env.get("MEM0_USER_ID") or env.get("USER") or "default"
    home = Path(env.get("MEM0_HOME") or Path.home() / ".mem0").expanduser().absolute()
    explicit = store or env.get("MEM0_STORE")
    return Identity(
        user_id=user,
        project_id=resolve_project_id(work, project_id, env),
        branch=_git(work, "branch", "--show-current") or "unknown",
        home=home,
        store_url=explicit or default_store_url(home),
        cwd=work,
        store_explicit=bool(explicit),
    )
