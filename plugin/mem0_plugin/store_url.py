"""Store URLs: the one parser of `--store` / `MEM0_STORE` (README, "Where memories are stored").

* ``sqlite:///relative/path`` — three slashes: a path relative to the process's working
  directory (SQLAlchemy's convention; `--cwd` chooses the project, not the store);
* ``sqlite:////absolute/path`` — four slashes: an absolute path;
* a bare path (``/tmp/m.sqlite3``, ``./m.sqlite3``, ``~/m.sqlite3``): the same file;
* ``postgresql://…`` (or ``postgres://…``): a PostgreSQL database, in libpq's URL form
  (docs/stores.md); its `path` is unused;
* ``mem0://…``: recognised, not supported yet (a clear error);
* anything else: an error naming the forms above.

An explicit store (`--store`, `MEM0_STORE`) whose directory does not exist is an error
(`check_directory`), never a new empty store in a new directory; only the default store
(``sqlite:///<MEM0_HOME>/memories.sqlite3``) may create `MEM0_HOME`. Pure: no file is
touched here but for the existence check.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import ConfigError

SQLITE = "sqlite"
POSTGRESQL = "postgresql"
POSTGRES_SCHEMES = ("postgresql", "postgres")
LATER_SCHEMES = {
    "mem0": "stores on the Mem0 platform",
}
FORMS = "sqlite:////<absolute path>, sqlite:///<relative path>, a plain file path or postgresql://…"


@dataclass(frozen=True)
class StoreLocation:
    """Where a store is: its URL as given, and the absolute path of its SQLite file (for a
    PostgreSQL store, `scheme` is "postgresql" and `path` is unused)."""

    url: str
    path: Path
    explicit: bool = True  # named by --store / MEM0_STORE (its directory must exist)
    scheme: str = SQLITE


def sqlite_url(path: Path) -> str:
    """The URL of an SQLite file: ``sqlite:///`` + its absolute path (so four slashes)."""
    return f"sqlite:///{Path(path).absolute()}"


def display_url(url: str) -> str:
    """`url` as it may be shown: a password in it (``postgresql://user:secret@host``) masked."""
    return re.sub(r"(://[^:/@?]+):[^@/?]*@", r"\1:***@", url)


def _scheme(url: str) -> str | None:
    head, sep, _ = url.partition("://")
    return head.lower() if sep and head and "/" not in head and "\\" not in head else None


def parse_store_url(url: str, *, explicit: bool = True) -> StoreLocation:
    """The location `url` names (see the module docstring); `ConfigError` when it names none."""
    if not isinstance(url, str) or not url.strip():
        raise ConfigError(f"the store URL is empty; use {FORMS}")
    scheme = _scheme(url)
    if scheme is None:
        return StoreLocation(url, _absolute(Path(url).expanduser()), explicit)
    if scheme in POSTGRES_SCHEMES:
        return StoreLocation(url, Path(), explicit, POSTGRESQL)
    if scheme in LATER_SCHEMES:
        raise ConfigError(
            f"store URL scheme {scheme!r} is not supported yet ({LATER_SCHEMES[scheme]} "
            f"come in a later release); use {FORMS}"
        )
    if scheme != SQLITE:
        raise ConfigError(f"store URL scheme {scheme!r} is not supported; use {FORMS}")
    rest = url[len("sqlite://") :]
    path = rest[1:]  # sqlite:/// + path: relative, or absolute when path starts with "/"
    if not path.strip("/") or path == ":memory:":
        raise ConfigError(f"store URL {url!r} has no file path; use {FORMS}")
    if not rest.startswith("/"):
        raise ConfigError(f"store URL {url!r} names a host (SQLite has none); use {FORMS}")
    return StoreLocation(url, _absolute(Path(path)), explicit)


def _absolute(path: Path) -> Path:
    return Path(os.path.abspath(path))


def check_directory(location: StoreLocation) -> None:
    """An explicit store's directory must exist: a typo must not start a new empty store."""
    folder = location.path.parent
    if location.scheme != SQLITE or not location.explicit or folder.is_dir():
        return
    raise ConfigError(
        f"the store's directory does not exist: {folder}{_slashes_hint(location.url)}; "
        "create it, or fix --store / MEM0_STORE"
    )


def _slashes_hint(url: str) -> str:
    """For `sqlite:///home/...` whose absolute reading would exist: the four-slash spelling."""
    if not url.startswith("sqlite:///") or url.startswith("sqlite:////"):
        return ""
    absolute = url[len("sqlite://") :]  # "/home/..."
    if not Path(absolute).parent.is_dir():
        return ""
    return f" (sqlite:/// + a path is relative; for an absolute path use four slashes: sqlite:///{absolute})"
