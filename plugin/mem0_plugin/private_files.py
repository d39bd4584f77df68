"""Files and folders only their owner may read: the store, its folder, exports, plans and logs
hold memories, and memories may hold secrets (docs/safety.md, "Files").

What this creates is 0700 (folders) or 0600 (files) whatever the umask: `os.mkdir` and
`os.open` apply the umask to the mode they are given, so the mode is set again once created.
A folder or file that already exists keeps its mode: it is someone's choice.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO

FOLDER_MODE = 0o700
FILE_MODE = 0o600


def private_folder(path: Path) -> None:
    """Create `path` and each missing folder above it, 0700 (an existing one is left as it is)."""
    missing: list[Path] = []
    for folder in (path, *path.parents):
        if folder.exists():
            break
        missing.append(folder)
    for folder in reversed(missing):
        try:
            os.mkdir(folder, FOLDER_MODE)
        except FileExistsError:  # made meanwhile by another process
            continue
        os.chmod(folder, FOLDER_MODE)


def create_private_file(path: Path) -> bool:
    """Create `path` empty, 0600, unless it exists; whether it was created."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
    except FileExistsError:
        return False
    try:
        _fchmod(fd)
    finally:
        os.close(fd)
    return True


def _fchmod(fd: int) -> None:
    if hasattr(os, "fchmod"):  # POSIX (Windows has no such modes)
        os.fchmod(fd, FILE_MODE)


def open_private(path: Path) -> IO[str]:
    """`path` opened for writing text (UTF-8), truncated, 0600 (an existing file made 0600 too: it
    is being replaced by this content)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    try:
        _fchmod(fd)
        return os.fdopen(fd, "w", encoding="utf-8")
    except BaseException:
        os.close(fd)
        raise
