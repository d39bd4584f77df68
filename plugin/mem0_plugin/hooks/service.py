"""The recall service: one long-lived process per user, home and environment that answers hook
calls over a Unix socket, so a prompt's recall finds the store open, the model loaded and the
vectors in memory (docs/hooks.md, "The recall service").

`scripts/hook.py` (the command every hook runs) starts it on demand and talks to it, one call per
connection: a JSON line (`{"client", "event", "wait"}`) and the payload's bytes in, the text to
print out. With `"wait": false` (captures) the connection ends at once and the work follows. The service exits
after `idle_seconds` without a call, on SIGTERM, and removes its socket; a second service
started for the same socket finds the lock taken and exits at once.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from .dispatch import Hooks

if TYPE_CHECKING:
    from ..semantic import Semantic
from .log import write_line

MAX_REQUEST = 16 * 1024 * 1024
READ_SECONDS = 10.0


def _read_request(conn: socket.socket) -> tuple[dict, object]:
    """(the header, the payload): a JSON line, then the payload's bytes to the end of input."""
    conn.settimeout(READ_SECONDS)
    chunks, size = [], 0
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_REQUEST:
            raise ValueError("request too large")
    head, _, body = b"".join(chunks).partition(b"\n")
    header = json.loads(head.decode("utf-8"))
    if not isinstance(header, dict):
        raise ValueError("a request starts with a JSON object")
    try:
        payload = json.loads(body.decode("utf-8", errors="replace"))
    except ValueError:
        payload = None  # not JSON: answered as such (nothing, and a line in the log)
    return header, payload


def _send(conn: socket.socket, text: str) -> None:
    with contextlib.suppress(OSError):
        conn.sendall(text.encode("utf-8"))


class Service:
    """The socket, the lock that makes it this process's, and the calls in progress."""

    def __init__(self, path: Path, hooks: Hooks, idle_seconds: float):
        self.path = path
        self.hooks = hooks
        self.idle_seconds = idle_seconds
        self.busy = 0
        self.last = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()

    def handle(self, conn: socket.socket) -> None:
        with self._lock:
            self.busy += 1
        try:
            with conn:
                header, payload = _read_request(conn)
                client, event = str(header.get("client", "")), str(header.get("event", ""))
                if header.get("wait") is False:
                    conn.close()
                    self.hooks.answer(client, event, payload)
                else:
                    _send(conn, self.hooks.answer(client, event, payload))
        except Exception as exc:
            write_line(self.hooks.home, "service", f"{type(exc).__name__}: {exc}")
        finally:
            with self._lock:
                self.busy -= 1
                self.last = time.monotonic()

    def idle(self) -> bool:
        with self._lock:
            return self.busy == 0 and time.monotonic() - self.last > self.idle_seconds

    def stop(self, *_: object) -> None:
        self._stop.set()

    def run(self, server: socket.socket) -> None:
        server.settimeout(0.5)
        while not self._stop.is_set() and not self.idle():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                break
            with self._lock:
                self.last = time.monotonic()
            threading.Thread(target=self.handle, args=(conn,), daemon=True).start()


def _take_lock(path: Path):
    """The service's lock file, held for its life; None when another service holds it."""
    import fcntl

    handle = open(f"{path}.lock", "a")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    return handle


def serve(
    path: Path,
    *,
    cwd: str,
    idle_seconds: float,
    env: dict[str, str] | None = None,
    loading: tuple[Path, Callable[[], Semantic]] | None = None,
) -> int:
    """Serve hook calls on the Unix socket `path` until idle; 0 also when another service
    already serves it. `loading`: the embedder of a home, being loaded meanwhile."""
    lock = _take_lock(path)
    if lock is None:
        return 0
    hooks = Hooks(os.environ if env is None else env, background=True)
    if loading is not None:
        hooks.adopt(*loading)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    previous = os.umask(0o177)  # the socket: this user only
    try:
        server.bind(str(path))
    finally:
        os.umask(previous)
    server.listen(64)
    service = Service(path, hooks, idle_seconds)
    signal.signal(signal.SIGTERM, service.stop)
    threading.Thread(target=hooks.warm, args=(cwd,), daemon=True).start()
    try:
        service.run(server)
    finally:
        server.close()
        with contextlib.suppress(OSError):
            path.unlink()
        hooks.close()
        lock.close()
    return 0
