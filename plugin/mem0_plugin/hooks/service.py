"""The recall service: one long-lived process per user, home and environment that answers hook
calls over a Unix socket, so a prompt's recall finds the store open, the model loaded and the
vectors in memory (docs/hooks.md, "The recall service").

`scripts/hook.py` (the command every hook runs) starts it on demand and talks to it: one JSON
line in (`{"client", "event", "payload", "wait"}`), one JSON line out (`{"out": text}`). With
`"wait": false` (captures) the answer comes at once and the work follows. The service exits
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
from pathlib import Path

from .dispatch import Hooks
from .log import write_line

MAX_REQUEST = 16 * 1024 * 1024
READ_SECONDS = 10.0


def _read_request(conn: socket.socket) -> dict:
    conn.settimeout(READ_SECONDS)
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
        if len(data) > MAX_REQUEST:
            raise ValueError("request too large")
    request = json.loads(data.decode("utf-8"))
    if not isinstance(request, dict):
        raise ValueError("a request is a JSON object")
    return request


def _send(conn: socket.socket, text: str) -> None:
    with contextlib.suppress(OSError):
        conn.sendall(json.dumps({"out": text}, ensure_ascii=False).encode("utf-8") + b"\n")


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
                request = _read_request(conn)
                client, event = str(request.get("client", "")), str(request.get("event", ""))
                if request.get("wait") is False:
                    _send(conn, "")
                    self.hooks.answer(client, event, request.get("payload"))
                else:
                    _send(conn, self.hooks.answer(client, event, request.get("payload")))
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


def serve(path: Path, *, cwd: str, idle_seconds: float, env: dict[str, str] | None = None) -> int:
    """Serve hook calls on the Unix socket `path` until idle; 0 also when another service
    already serves it."""
    lock = _take_lock(path)
    if lock is None:
        return 0
    hooks = Hooks(os.environ if env is None else env, background=True)
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
