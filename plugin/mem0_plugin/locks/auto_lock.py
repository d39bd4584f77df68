"""The `mem0-dream --auto` lock (docs/dream.md, "--auto"): one run at a time per lock path.

Usage (the CLI prints; this module never does)::

    try:
        with auto_lock(lock_path_from_env()) as info:
            ...  # steps 1-3, apply merges and prunes
    except LockBusyError:
        print("[mem0-dream --auto] Another run in progress — skipping.")  # exit 0

The lock is a regular file created with ``O_RDWR|O_CREAT|O_EXCL|O_NOFOLLOW``, mode
0600, holding ``{"time": <ISO-8601 UTC>, "epoch": <float>, "pid": <int>, "host": <str>,
"token": <hex>}`` (read-write rather than write-only so that release can re-read it
through the descriptor it keeps open). POSIX only (it uses ``fcntl.flock``).

Rules
-----
* **Taking a free lock** is ``O_EXCL`` creation: the kernel lets exactly one of any
  number of simultaneous creators (threads or processes) succeed. Nothing else ever
  creates the file, and proceeding *only* ever happens through that creation.
* **Busy**: an existing lock younger than ``stale_after`` seconds (600 = 10 minutes)
  raises `LockBusyError`. Its age comes from the ``epoch`` it records (else its
  ``time``), or from the file's mtime when the content is unreadable or corrupt — so a
  lock its creator has not finished writing yet counts as fresh. A recorded time more
  than ``stale_after`` in the *future* counts as stale (a clock jump or a forged file
  must not block runs forever). A lock whose ``host`` is this host and whose ``pid`` no
  longer exists (``os.kill(pid, 0)`` → `ProcessLookupError`) is stale at once. As the
  spec says, a lock older than ``stale_after`` is stale even if its holder still runs.
* **Stale takeover** is serialised by ``flock(LOCK_EX|LOCK_NB)`` on the stale file's
  own inode, and only the process holding that flock may unlink the path:

  1. open the existing file with ``O_RDONLY|O_NOFOLLOW|O_NONBLOCK``, judge it stale;
  2. take the flock on that open file; if another process has it (it is taking over
     or releasing the same file) → `LockBusyError`;
  3. under the flock, check the path still names *this* inode (``lstat`` vs
     ``fstat``), re-read and re-judge the content, then ``unlink`` the path;
  4. release the flock and go back to the ``O_EXCL`` creation.

  Why two takers cannot both proceed: every removal of a lock file happens under the
  flock of that very inode after checking that the path still names it, so two
  takers cannot remove the same file twice, and a taker that comes second finds the
  path naming another inode (or nothing) and starts over with ``O_EXCL`` creation,
  which only one of them wins. The inode-number ABA (the stale file is removed, a
  fresh one created that happens to reuse its inode number) is impossible because
  each taker keeps the stale file open while comparing, and the number of an open
  inode is never reused. `flock` (not `fcntl`/`lockf` record locks) is used because
  flock locks belong to the open file description, so they also exclude threads of
  one process.
* **Release** (normal exit, exception, SIGTERM) takes the same flock (blocking; a
  taker holds it for microseconds), and unlinks the path only if it still names the
  inode we created — we keep it open for the whole run — *and* the content still has
  our pid and token. A lock taken over from us because the run exceeded
  ``stale_after`` is therefore never removed by our release.
* **SIGTERM**: in the main thread, a handler is installed for the duration of the
  ``with`` block; the first SIGTERM raises ``SystemExit(143)`` so every ``finally``
  runs, and later ones are ignored while unwinding. SIGTERM is blocked while the lock
  is being taken and while it is being released, and the previous handler and signal
  mask are restored afterwards: a SIGTERM that arrived while the lock was being taken
  reaches our handler (and the lock is released); one that arrived during release
  reaches the previous handler after it. Python only runs signal handlers in the main
  thread, so in other threads none of this is done.

Refusals (all `ConfigError`, exit 2 — a cron job that fails visibly is better than one
that silently skips every night):

* the path is a symbolic link, dangling or not: never followed, written through or
  removed (it may be someone else's, or an attack on a shared ``/tmp``); the message
  says which link to remove. Only the last component is protected by ``O_NOFOLLOW``;
  symlinks among the parent directories are followed as usual.
* the path is a directory or any other non-regular file, or a regular file with more
  than one hard link (not a file this module made);
* the parent directory is missing, not a directory, read-only or not writable;
* a *stale* lock owned by another user (we do not remove other users' files, even as
  root). A *fresh* lock owned by another user is simply busy: another run is in
  progress.
"""

from __future__ import annotations

import errno
import fcntl
import json
import math
import os
import signal
import socket
import stat
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..errors import ConfigError, LockBusyError
from ..timeutil import format_timestamp, parse_timestamp

DEFAULT_LOCK_PATH = "/tmp/mem0_dream_auto.lock"
LOCK_PATH_ENV = "MEM0_DREAM_LOCK"
STALE_AFTER_SECONDS = 600.0
BUSY_MESSAGE = "Another run in progress — skipping."
SIGTERM_EXIT_CODE = 128 + signal.SIGTERM

_CREATE_FLAGS = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_INSPECT_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_MAX_READ = 64 * 1024
_MAX_ATTEMPTS = 8

PathLike = str | os.PathLike


@dataclass(frozen=True)
class LockInfo:
    """What the lock file we hold says."""

    path: Path
    time: str
    epoch: float
    pid: int
    host: str
    token: str

    def to_json(self) -> str:
        return json.dumps(
            {"time": self.time, "epoch": self.epoch, "pid": self.pid, "host": self.host, "token": self.token}
        )


@dataclass(frozen=True)
class Holder:
    """What an existing lock file says; a field is None when missing or malformed."""

    epoch: float | None
    pid: int | None
    host: str | None
    token: str | None


@dataclass
class _Held:
    """The lock we created: its content and the descriptor we keep open until release."""

    info: LockInfo
    fd: int


# ---------------------------------------------------------------- public API


def lock_path_from_env(environ: Mapping[str, str] | None = None) -> Path:
    """`MEM0_DREAM_LOCK` (``~`` expanded) when set and non-empty, else `DEFAULT_LOCK_PATH`."""
    env = os.environ if environ is None else environ
    value = env.get(LOCK_PATH_ENV, "").strip()
    return Path(os.path.expanduser(value)) if value else Path(DEFAULT_LOCK_PATH)


@contextmanager
def auto_lock(
    path: PathLike,
    *,
    now: Callable[[], float] = time.time,
    stale_after: float = STALE_AFTER_SECONDS,
) -> Iterator[LockInfo]:
    """Hold the `--auto` lock at `path` for the ``with`` block (see the module docstring).

    Raises `LockBusyError` when another run holds it, `ConfigError` when the path is
    unusable (symlink, directory, unwritable parent, another user's stale lock).
    `now` returns epoch seconds; it is injectable for tests.
    """
    if not (isinstance(stale_after, (int, float)) and math.isfinite(stale_after) and stale_after > 0):
        raise ValueError(f"stale_after must be a positive number of seconds, not {stale_after!r}")
    lock_path = Path(path)
    handles_signals = threading.current_thread() is threading.main_thread()
    old_mask = _block_sigterm() if handles_signals else None
    try:
        held = _acquire(lock_path, now, float(stale_after))
    except BaseException:
        _restore_mask(old_mask)
        raise
    previous_handler = _install_sigterm_handler() if handles_signals else None
    try:
        _restore_mask(old_mask)  # a SIGTERM that arrived meanwhile raises here, inside the try
        yield held.info
    finally:
        if handles_signals:
            _block_sigterm()
        try:
            _release(held)
        finally:
            _restore_sigterm_handler(previous_handler, handles_signals)
            _restore_mask(old_mask)


# ---------------------------------------------------------------- acquiring


def _acquire(path: Path, now: Callable[[], float], stale_after: float) -> _Held:
    for _ in range(_MAX_ATTEMPTS):
        held = _try_create(path, now)
        if held is not None:
            return held
        _remove_if_stale(path, now, stale_after)  # raises when busy or unusable
    raise _busy(path)  # kept losing creation races to other starters


def _try_create(path: Path, now: Callable[[], float]) -> _Held | None:
    """Create the lock file exclusively; None if something already exists at the path."""
    try:
        fd = os.open(path, _CREATE_FLAGS, 0o600)
    except FileExistsError:
        return None
    except OSError as exc:
        raise ConfigError(_cannot_create_message(path, exc)) from None
    try:
        info = _new_info(path, now())
        _write_all(fd, info.to_json().encode("utf-8"))
    except OSError as exc:
        _discard_own_file(fd, path)
        raise ConfigError(f"cannot write the lock file {path}: {exc.strerror or exc}") from None
    except BaseException:
        _discard_own_file(fd, path)
        raise
    return _Held(info=info, fd=fd)


def _new_info(path: Path, epoch: float) -> LockInfo:
    moment = datetime.fromtimestamp(epoch, timezone.utc)
    return LockInfo(
        path=path,
        time=format_timestamp(moment),
        epoch=epoch,
        pid=os.getpid(),
        host=socket.gethostname(),
        token=uuid.uuid4().hex,
    )


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _discard_own_file(fd: int, path: Path) -> None:
    """Remove a lock file we just created but could not complete."""
    try:
        if _path_names(path, os.fstat(fd)):
            os.unlink(path)
    except OSError:
        pass
    finally:
        os.close(fd)


# ---------------------------------------------------------------- stale takeover


def _remove_if_stale(path: Path, now: Callable[[], float], stale_after: float) -> None:
    """Remove the existing lock at `path` if it is stale and ours to remove.

    Returns normally when the path is free to retry the creation (removed by us, or
    gone meanwhile); raises `LockBusyError` or `ConfigError` otherwise.
    """
    fd = _open_existing(path, now, stale_after)
    if fd is None:
        return
    try:
        st = os.fstat(fd)
        if st.st_nlink == 0:
            return  # removed by another taker since we opened it: start over
        check_is_plain_file(path, st)
        if not is_stale(read_holder(fd), st, now(), stale_after):
            raise _busy(path)
        _check_owned_by_us(path, st)
        if not _try_flock(fd):
            raise _busy(path)  # someone else is taking it over or releasing it
        try:
            _unlink_under_flock(path, fd, now, stale_after)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _unlink_under_flock(path: Path, fd: int, now: Callable[[], float], stale_after: float) -> None:
    st = os.fstat(fd)
    if not _path_names(path, st):
        return  # already replaced or removed by another taker: start over
    if not is_stale(read_holder(fd), st, now(), stale_after):
        raise _busy(path)
    os.unlink(path)


def _open_existing(path: Path, now: Callable[[], float], stale_after: float) -> int | None:
    """Open what exists at `path` for inspection, or None if it vanished meanwhile."""
    try:
        return os.open(path, _INSPECT_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        st = _lstat_or_none(path)
        if st is None:
            return None
        check_is_plain_file(path, st)  # ELOOP from O_NOFOLLOW lands here as "symlink"
        if st.st_uid != os.geteuid():
            if not is_stale(None, st, now(), stale_after):
                raise _busy(path) from None
            _check_owned_by_us(path, st)
        raise ConfigError(f"cannot read the lock file {path}: {exc.strerror or exc}") from None


def check_is_plain_file(path: Path, st: os.stat_result) -> None:
    if stat.S_ISLNK(st.st_mode):
        raise ConfigError(
            f"the lock path {path} is a symbolic link; refusing to follow it. "
            f"Remove the link (rm {path}) or set {LOCK_PATH_ENV} to another path."
        )
    if stat.S_ISDIR(st.st_mode):
        raise ConfigError(f"the lock path {path} is a directory. Remove it or set {LOCK_PATH_ENV} to a file path.")
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError(
            f"the lock path {path} is not a regular file. Remove it or set {LOCK_PATH_ENV} to another path."
        )
    if st.st_nlink != 1:
        raise ConfigError(
            f"the lock path {path} has {st.st_nlink} hard links, so it is not a lock file "
            f"mem0-dream made. Remove it (rm {path}) or set {LOCK_PATH_ENV} to another path."
        )


def _check_owned_by_us(path: Path, st: os.stat_result) -> None:
    if st.st_uid != os.geteuid():
        raise ConfigError(
            f"the lock file {path} is stale but belongs to uid {st.st_uid} (you are uid "
            f"{os.geteuid()}); it is not removed. Remove it or set {LOCK_PATH_ENV} to a path of your own."
        )


def _try_flock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


# ---------------------------------------------------------------- judging a holder


def is_stale(holder: Holder | None, st: os.stat_result, now: float, stale_after: float) -> bool:
    if holder is not None and holder_is_dead(holder):
        return True
    written_at = holder.epoch if holder is not None and holder.epoch is not None else st.st_mtime
    return abs(now - written_at) >= stale_after


def holder_is_dead(holder: Holder) -> bool:
    if holder.pid is None or holder.host != socket.gethostname():
        return False
    return not _pid_alive(holder.pid)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists but belongs to someone else (EPERM), or cannot tell
    return True


def read_holder(fd: int) -> Holder | None:
    """Parse the lock content; None when it is not a JSON object (empty, partial, junk)."""
    try:
        data = json.loads(os.pread(fd, _MAX_READ, 0).decode("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    return Holder(
        epoch=_recorded_epoch(data),
        pid=_positive_int(data.get("pid")),
        host=data.get("host") if isinstance(data.get("host"), str) else None,
        token=data.get("token") if isinstance(data.get("token"), str) else None,
    )


def _recorded_epoch(data: dict) -> float | None:
    epoch = data.get("epoch")
    if isinstance(epoch, (int, float)) and not isinstance(epoch, bool) and math.isfinite(epoch):
        return float(epoch)
    try:
        return parse_timestamp(data.get("time"), "time").timestamp()
    except Exception:  # InvalidInputError, or a datetime out of range
        return None


def _positive_int(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


# ---------------------------------------------------------------- releasing


def _release(held: _Held) -> None:
    """Unlink the lock only if the path still names our inode with our pid and token."""
    try:
        fcntl.flock(held.fd, fcntl.LOCK_EX)
        holder = read_holder(held.fd)
        ours = holder is not None and holder.pid == held.info.pid and holder.token == held.info.token
        if ours and _path_names(held.info.path, os.fstat(held.fd)):
            os.unlink(held.info.path)
    except OSError:
        pass  # never mask the run's own outcome; a leftover lock is stale once our pid is gone
    finally:
        os.close(held.fd)


# ---------------------------------------------------------------- signals


def _block_sigterm() -> set | None:
    return signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})


def _restore_mask(old_mask: set | None) -> None:
    if old_mask is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)


def _install_sigterm_handler() -> Any:
    fired: list[int] = []

    def on_sigterm(signum, frame):
        if fired:
            return  # already unwinding
        fired.append(signum)
        raise SystemExit(SIGTERM_EXIT_CODE)

    return signal.signal(signal.SIGTERM, on_sigterm)


def _restore_sigterm_handler(previous: Any, handles_signals: bool) -> None:
    if handles_signals:
        # None means a handler installed outside Python: the default is the best we can do.
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


# ---------------------------------------------------------------- small helpers


def _busy(path: Path) -> LockBusyError:
    error = LockBusyError(BUSY_MESSAGE)
    error.lock_path = path
    return error


def _same_inode(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _path_names(path: Path, st: os.stat_result) -> bool:
    current = _lstat_or_none(path)
    return current is not None and _same_inode(current, st)


def _lstat_or_none(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def _cannot_create_message(path: Path, exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        hint = "its directory does not exist"
    elif exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        hint = "its directory is not writable"
    else:
        hint = reason
    return f"cannot create the lock file {path}: {hint} ({reason}). Set {LOCK_PATH_ENV} to a writable path."
