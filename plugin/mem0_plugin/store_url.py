"""Store URLs: the one parser of `--store` / `MEM0_STORE` (docs/identity.md, "Store URLs").

* ``sqlite:///relative/path`` — three slashes: a path relative to the process's working
  directory (SQLAlchemy's convention; `--cwd` chooses the project, not the store);
* ``sqlite:////absolute/path`` — four slashes: an absolute path;
* a bare path (``/tmp/m.sqlite3``, ``./m.sqlite3``, ``~/m.sqlite3``): the same file;
* ``mem0://`` (the Mem0 platform at the SDK's default host), ``mem0://<host>[:port][/path]``
  (https), ``mem0+http://<host>[:port][/path]`` (plain http, for a server on this machine):
  a project on the Mem0 platform through mem0ai's `MemoryClient` (docs/hosted.md);
* ``postgresql://…`` (or ``postgres://…``): a PostgreSQL database, in libpq's URL form
  (docs/stores.md); its `path` is unused;
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
from urllib.parse import urlsplit

from .errors import ConfigError

SQLITE = "sqlite"
POSTGRESQL = "postgresql"
POSTGRES_SCHEMES = ("postgresql", "postgres")
HOSTED_SCHEMES = {"mem0": "https", "mem0+https": "https", "mem0+http": "http"}
HOSTED_FORMS = "mem0://, mem0://<host>[:port][/path] (https) or mem0+http://<host>[:port][/path]"
FORMS = "sqlite:////<absolute path>, sqlite:///<relative path>, a plain file path or postgresql://…"


@dataclass(frozen=True)
class HostedAddress:
    """Where a Mem0 platform project is (docs/hosted.md, "Store URL"): the base URL handed to
    `MemoryClient(host=...)`, or None for the SDK's own default host."""

    base_url: str | None


@dataclass(frozen=True)
class StoreLocation:
    """Where a store is: its URL as given, and the absolute path of its SQLite file (for a
    PostgreSQL store, `scheme` is "postgresql" and `path` is unused; for a hosted store, `hosted`
    says where the project is and `path` is unused: the local mirror's file is chosen when it
    opens)."""

    url: str
    path: Path
    explicit: bool = True  # named by --store / MEM0_STORE (its directory must exist)
    hosted: HostedAddress | None = None
    home: Path | None = None  # hosted: where the local mirror lives (`<home>/cache/`)
    user_id: str | None = None  # hosted: whose memories the mirror holds
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
    if scheme in HOSTED_SCHEMES:
        return StoreLocation(url, Path(), explicit, hosted=parse_hosted(url, HOSTED_SCHEMES[scheme]))
    if scheme in POSTGRES_SCHEMES:
        return StoreLocation(url, Path(), explicit, scheme=POSTGRESQL)
    if scheme != SQLITE:
        raise ConfigError(f"store URL scheme {scheme!r} is not supported; use {FORMS}, or {HOSTED_FORMS}")
    rest = url[len("sqlite://") :]
    path = rest[1:]  # sqlite:/// + path: relative, or absolute when path starts with "/"
    if not path.strip("/") or path == ":memory:":
        raise ConfigError(f"store URL {url!r} has no file path; use {FORMS}")
    if not rest.startswith("/"):
        raise ConfigError(f"store URL {url!r} names a host (SQLite has none); use {FORMS}")
    return StoreLocation(url, _absolute(Path(path)), explicit)


def parse_hosted(url: str, transport: str) -> HostedAddress:
    """The platform address of a ``mem0://`` URL: no credentials in it (the key is read from
    ``MEM0_API_KEY``), no query; an empty host means the SDK's default."""
    shown = _without_credentials(url)
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise ConfigError(f"store URL {shown!r} is not a valid address; use {HOSTED_FORMS}") from None
    if parts.username is not None or parts.password is not None:
        raise ConfigError(f"store URL {shown!r} carries credentials; put the API key in MEM0_API_KEY instead")
    if parts.query or parts.fragment:
        raise ConfigError(f"store URL {shown!r} has a query or fragment (none is read); use {HOSTED_FORMS}")
    host = parts.hostname
    if not host:
        if parts.path.strip("/") or port is not None or transport == "http":
            raise ConfigError(f"store URL {shown!r} names no host; use {HOSTED_FORMS}")
        return HostedAddress(None)
    shown_host = f"[{host}]" if ":" in host else host
    netloc = f"{shown_host}:{port}" if port is not None else shown_host
    return HostedAddress(f"{transport}://{netloc}{parts.path.rstrip('/')}")


def _without_credentials(url: str) -> str:
    head, sep, rest = url.partition("://")
    return f"{head}{sep}***@{rest.rpartition('@')[2]}" if "@" in rest else url


def _absolute(path: Path) -> Path:
    return Path(os.path.abspath(path))


def check_directory(location: StoreLocation) -> None:
    """An explicit store's directory must exist: a typo must not start a new empty store."""
    folder = location.path.parent
    if location.scheme != SQLITE or not location.explicit or location.hosted is not None or folder.is_dir():
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
