"""Where a local model's files come from, and the proof that they are the files we expect.

A `ModelFiles` names a model's two files (the ONNX graph and the tokenizer's
``tokenizer.json``), each pinned by SHA-256. They are found, in this order:

1. in ``$MEM0_HOME/models/<name>/`` (a download made earlier, or files a user put there);
2. in an installed Python package that ships them (`PackagedFile`): nothing to download;
3. downloaded from the pinned URL into ``$MEM0_HOME/models/<name>/`` on first use, with a
   progress bar on stderr when it is a terminal, written to a temporary name and renamed
   only once its SHA-256 matches (a cut download or a wrong file never becomes the model).

A file whose SHA-256 differs from the pin is refused wherever it was found: the embedder
is then unavailable and everything works lexically (docs/embeddings.md).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..private_files import private_folder
from ..progress import downloading
from .base import EmbedderUnavailable

CHUNK = 1 << 20
DOWNLOAD_TIMEOUT_S = 60


@dataclass(frozen=True)
class PackagedFile:
    """A file inside an installed distribution: `package` (import name) and the path under it.
    The package is located without being imported (none of its code runs)."""

    package: str
    relative: str

    def path(self) -> Path | None:
        try:
            spec = importlib.util.find_spec(self.package)
        except (ImportError, ValueError):
            return None
        if spec is None or not spec.submodule_search_locations:
            return None
        for folder in spec.submodule_search_locations:
            candidate = Path(folder) / self.relative
            if candidate.is_file():
                return candidate
        return None


@dataclass(frozen=True)
class PinnedFile:
    name: str  # the file name under $MEM0_HOME/models/<model>/
    sha256: str
    packaged: PackagedFile | None = None
    url: str | None = None
    path: Path | None = None  # a file the user named: used as it is, verified when sha256 is set


@dataclass(frozen=True)
class ModelFiles:
    name: str
    model: PinnedFile
    tokenizer: PinnedFile


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def locate(pinned: PinnedFile, folder: Path, *, download: bool = True) -> Path:
    """The verified path of `pinned` (see the module docstring for the order)."""
    if pinned.path is not None:
        if not pinned.path.is_file():
            raise EmbedderUnavailable(f"model file {pinned.path} does not exist")
        return _verified(pinned.path, pinned) if pinned.sha256 else pinned.path
    local = folder / pinned.name
    if local.is_file():
        return _verified(local, pinned)
    packaged = pinned.packaged.path() if pinned.packaged else None
    if packaged is not None:
        return _verified(packaged, pinned)
    if pinned.url and download:
        return fetch(pinned, local)
    where = f"pip install {pinned.packaged.package}" if pinned.packaged else f"put it in {folder}"
    raise EmbedderUnavailable(f"model file {pinned.name} is not installed ({where})")


def _verified(path: Path, pinned: PinnedFile) -> Path:
    try:
        actual = sha256_of(path)
    except OSError as exc:
        raise EmbedderUnavailable(f"cannot read the model file {path}: {exc.strerror}") from None
    if actual != pinned.sha256:
        raise EmbedderUnavailable(f"model file {path} has SHA-256 {actual[:12]}…, expected {pinned.sha256[:12]}…")
    return path


def fetch(pinned: PinnedFile, destination: Path) -> Path:
    """Download `pinned.url` to `destination`, verified, with a progress bar on stderr."""
    import urllib.request  # here: only a download needs it, and it imports http and ssl (slow)

    try:
        private_folder(destination.parent)
        handle, temporary = tempfile.mkstemp(dir=destination.parent, prefix=f".{pinned.name}.", suffix=".part")
    except OSError as exc:
        raise EmbedderUnavailable(f"cannot write into {destination.parent}: {exc.strerror}") from None
    digest = hashlib.sha256()
    try:
        with (
            os.fdopen(handle, "wb") as out,
            urllib.request.urlopen(str(pinned.url), timeout=DOWNLOAD_TIMEOUT_S) as response,
        ):
            total = int(response.headers.get("Content-Length") or 0) or None
            with downloading(f"mem0: downloading {pinned.name}", total) as advance:
                for block in iter(lambda: response.read(CHUNK), b""):
                    out.write(block)
                    digest.update(block)
                    advance(len(block))
        if digest.hexdigest() != pinned.sha256:
            raise EmbedderUnavailable(f"download of {pinned.name} has the wrong SHA-256; not used")
        os.replace(temporary, destination)
        return destination
    except EmbedderUnavailable:
        _remove(temporary)
        raise
    except (OSError, ValueError) as exc:
        _remove(temporary)
        reason = getattr(exc, "reason", None) or getattr(exc, "strerror", None) or exc
        raise EmbedderUnavailable(f"cannot download {pinned.name}: {reason}") from None


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
