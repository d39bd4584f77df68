"""The hooks' log: `$MEM0_HOME/hooks.log`, one line per failure, never on the agent's screen
(docs/hooks.md, "Never in the way"). Kept under `MAX_BYTES` by moving it to `hooks.log.1`."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from ..private_files import private_folder
from ..sanitize import printable

LOG_NAME = "hooks.log"
MAX_BYTES = 1_000_000
_lock = threading.Lock()


def log_path(home: str | Path) -> Path:
    return Path(home) / LOG_NAME


def write_line(home: str | Path, what: str, message: str) -> None:
    """Append `<UTC time> <what>: <message>` as one inert line; any failure to write is ignored
    (a hook never fails for its log)."""
    line = printable(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {what}: {message}")[:2000]
    path = log_path(home)
    try:
        with _lock:
            private_folder(path.parent)
            if path.exists() and path.stat().st_size > MAX_BYTES:
                os.replace(path, path.with_name(LOG_NAME + ".1"))
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            with os.fdopen(fd, "a", encoding="utf-8") as handle:
                handle.write(line + "\n")
    except OSError:
        pass
