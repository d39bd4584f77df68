"""The `mem0-dream --auto` lock (docs/dream.md, "--auto"): real files, real processes, no mocks of os."""

from __future__ import annotations

import errno
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import pytest
from mem0_plugin.errors import ConfigError, LockBusyError, Mem0PluginError
from mem0_plugin.locks.auto_lock import (
    BUSY_MESSAGE,
    DEFAULT_LOCK_PATH,
    LOCK_PATH_ENV,
    SIGTERM_EXIT_CODE,
    auto_lock,
    lock_path_from_env,
)

IS_ROOT = os.geteuid() == 0
HOST = socket.gethostname()
RACERS = 10
ROUNDS = 3

# A racer says it is ready, then for each round is given a lock path and a shared start time
# (once every racer is ready), waits for it, tries the lock once and prints the outcome; if it
# won, it holds the lock until the test ends the round (so no later starter can win after it
# legitimately released), then says it released it. The racers live for all of a test's rounds.
RACE_SCRIPT = r"""
import sys, time
from mem0_plugin.locks.auto_lock import auto_lock
from mem0_plugin.errors import LockBusyError
print("ready", flush=True)
while line := sys.stdin.readline():
    path, start_at = line.rstrip("\n").rsplit("\t", 1)
    start_at = float(start_at)
    while time.time() < start_at - 0.02:
        time.sleep(0.005)
    while time.time() < start_at:
        pass
    try:
        with auto_lock(path):
            print("acquired", flush=True)
            sys.stdin.readline()
        print("released", flush=True)
    except LockBusyError:
        print("busy", flush=True)
"""

HOLD_SCRIPT = r"""
import sys, time
from mem0_plugin.locks.auto_lock import auto_lock
with auto_lock(sys.argv[1]):
    print("locked", flush=True)
    time.sleep(60)
"""


# ------------------------------------------------------------------ helpers


def write_lock(path: Path, *, epoch: float, pid: int, host: str = HOST) -> str:
    text = json.dumps({"time": "2020-01-01T00:00:00+00:00", "epoch": epoch, "pid": pid, "host": host})
    path.write_text(text)
    return text


def dead_pid() -> int:
    """The pid of a process that has exited and been reaped (no zombie)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@contextmanager
def racers(count: int = RACERS):
    """`count` racing processes, started once; yields `race(path)` → each racer's outcome."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACE_SCRIPT],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(count)
    ]

    def say(proc: subprocess.Popen, line: str) -> None:
        proc.stdin.write(line + "\n")
        proc.stdin.flush()

    def race(path: Path) -> list[str]:
        start_at = time.time() + 0.1  # every racer is waiting: they all try at this instant
        for proc in procs:
            say(proc, f"{path}\t{start_at!r}")
        outcomes = [proc.stdout.readline().strip() for proc in procs]
        assert all(outcome in ("acquired", "busy") for outcome in outcomes), (outcomes, errors())
        for proc, outcome in zip(procs, outcomes):
            if outcome == "acquired":  # the round is over: the winner lets go
                say(proc, "")
                assert proc.stdout.readline().strip() == "released", errors()
        return outcomes

    def errors() -> list[str]:
        for proc in procs:
            proc.stdin.close()
        return [proc.stderr.read() for proc in procs]

    try:
        assert [proc.stdout.readline().strip() for proc in procs] == ["ready"] * count, errors()
        yield race
    finally:
        for proc in procs:
            if not proc.stdin.closed:
                proc.stdin.close()
        for proc in procs:
            proc.wait(timeout=30)


# ------------------------------------------------------------------ the path


def test_lock_path_defaults_to_tmp_and_env_overrides(tmp_path):
    assert lock_path_from_env({}) == Path(DEFAULT_LOCK_PATH) == Path("/tmp/mem0_dream_auto.lock")
    assert lock_path_from_env({LOCK_PATH_ENV: ""}) == Path(DEFAULT_LOCK_PATH)
    assert lock_path_from_env({LOCK_PATH_ENV: str(tmp_path / "x.lock")}) == tmp_path / "x.lock"


# ------------------------------------------------------------------ taking and releasing


def test_free_lock_is_taken_with_time_pid_host_and_released(tmp_path):
    path = tmp_path / "auto.lock"
    with auto_lock(path) as info:
        content = json.loads(path.read_text())
        assert content["pid"] == os.getpid() == info.pid
        assert content["host"] == HOST == info.host
        assert abs(content["epoch"] - time.time()) < 5
        assert content["time"] == info.time
        assert datetime.fromisoformat(content["time"]).timestamp() == pytest.approx(content["epoch"])
        assert stat.S_IMODE(path.lstat().st_mode) == 0o600
    assert not path.exists()


def test_fresh_lock_is_busy_with_the_spec_message(tmp_path):
    path = tmp_path / "auto.lock"
    text = write_lock(path, epoch=time.time() - 60, pid=os.getpid())
    with pytest.raises(LockBusyError) as caught:
        with auto_lock(path):
            pytest.fail("must not proceed")
    assert str(caught.value) == BUSY_MESSAGE == "Another run in progress — skipping."
    assert caught.value.exit_code == 0
    assert path.read_text() == text


def test_second_take_in_the_same_process_is_busy(tmp_path):
    path = tmp_path / "auto.lock"
    with auto_lock(path):
        with pytest.raises(LockBusyError):
            with auto_lock(path):
                pass
        assert path.exists()
    assert not path.exists()


def test_lock_older_than_ten_minutes_is_taken(tmp_path):
    path = tmp_path / "auto.lock"
    write_lock(path, epoch=time.time() - 601, pid=os.getpid())  # holder alive, but stale
    with auto_lock(path) as info:
        assert json.loads(path.read_text())["epoch"] == info.epoch
    assert not path.exists()


def test_staleness_follows_the_injected_clock(tmp_path):
    path = tmp_path / "auto.lock"
    write_lock(path, epoch=1_000_000.0, pid=os.getpid())
    with pytest.raises(LockBusyError):
        with auto_lock(path, now=lambda: 1_000_000.0 + 599):
            pass
    with auto_lock(path, now=lambda: 1_000_000.0 + 600) as info:
        assert info.epoch == 1_000_600.0
    assert not path.exists()


def test_custom_stale_after(tmp_path):
    path = tmp_path / "auto.lock"
    write_lock(path, epoch=time.time() - 30, pid=os.getpid())
    with auto_lock(path, stale_after=10):
        pass
    with pytest.raises(ValueError):
        with auto_lock(path, stale_after=0):
            pass


def test_lock_dated_far_in_the_future_is_stale_but_small_skew_is_not(tmp_path):
    path = tmp_path / "auto.lock"
    write_lock(path, epoch=time.time() + 30, pid=os.getpid())
    with pytest.raises(LockBusyError):
        with auto_lock(path):
            pass
    write_lock(path, epoch=time.time() + 3600, pid=os.getpid())
    with auto_lock(path):
        pass


def test_holder_dead_on_this_host_is_taken_at_once(tmp_path):
    path = tmp_path / "auto.lock"
    write_lock(path, epoch=time.time(), pid=dead_pid())
    with auto_lock(path) as info:
        assert json.loads(path.read_text())["pid"] == info.pid == os.getpid()
    assert not path.exists()


def test_fresh_holder_on_another_host_is_busy_even_with_a_dead_pid(tmp_path):
    path = tmp_path / "auto.lock"
    text = write_lock(path, epoch=time.time(), pid=dead_pid(), host=HOST + "-elsewhere")
    with pytest.raises(LockBusyError):
        with auto_lock(path):
            pass
    assert path.read_text() == text


@pytest.mark.parametrize("junk", ["", "{", "not json", "[1, 2]", '{"epoch": "soon", "pid": -1}'])
def test_corrupt_lock_is_judged_by_mtime(tmp_path, junk):
    path = tmp_path / "auto.lock"
    path.write_text(junk)
    with pytest.raises(LockBusyError):
        with auto_lock(path):
            pass
    assert path.read_text() == junk
    old = time.time() - 700
    os.utime(path, (old, old))
    with auto_lock(path):
        assert json.loads(path.read_text())["pid"] == os.getpid()
    assert not path.exists()


def test_released_after_an_exception_and_handler_restored(tmp_path):
    path = tmp_path / "auto.lock"
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(RuntimeError):
        with auto_lock(path):
            assert signal.getsignal(signal.SIGTERM) is not before
            raise RuntimeError("boom")
    assert not path.exists()
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_lock_taken_over_from_us_is_not_removed_by_our_release(tmp_path):
    path = tmp_path / "auto.lock"
    with auto_lock(path):
        path.unlink()  # as a taker would after judging us stale ...
        text = write_lock(path, epoch=time.time(), pid=os.getpid())  # ... and its new lock
    assert path.read_text() == text


def test_released_after_sigterm_to_the_holding_process(tmp_path):
    path = tmp_path / "auto.lock"
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD_SCRIPT, str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline().strip() == "locked", proc.stderr.read()
        assert json.loads(path.read_text())["pid"] == proc.pid
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == SIGTERM_EXIT_CODE == 143
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not path.exists()


# ------------------------------------------------------------------ refusals


def test_symlink_to_a_file_is_refused_and_target_untouched(tmp_path):
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    before = target.stat()
    path = tmp_path / "auto.lock"
    path.symlink_to(target)
    with pytest.raises(ConfigError, match="symbolic link") as caught:
        with auto_lock(path):
            pytest.fail("must not proceed")
    assert f"rm {path}" in str(caught.value)
    assert path.is_symlink() and target.read_text() == "keep me"
    assert target.stat().st_mtime_ns == before.st_mtime_ns


def test_symlink_to_an_old_file_is_still_refused(tmp_path):
    target = tmp_path / "old.txt"
    target.write_text("ancient")
    os.utime(target, (0, 0))
    path = tmp_path / "auto.lock"
    path.symlink_to(target)
    with pytest.raises(ConfigError, match="symbolic link"):
        with auto_lock(path, now=lambda: time.time() + 10_000):
            pass
    assert path.is_symlink() and target.read_text() == "ancient"


def test_dangling_symlink_is_refused_and_target_not_created(tmp_path):
    target = tmp_path / "nowhere" / "made.lock"
    path = tmp_path / "auto.lock"
    path.symlink_to(target)
    with pytest.raises(ConfigError, match="symbolic link"):
        with auto_lock(path):
            pass
    assert path.is_symlink() and not os.path.lexists(target)
    target.parent.mkdir()
    with pytest.raises(ConfigError, match="symbolic link"):
        with auto_lock(path):
            pass
    assert not os.path.lexists(target)


def test_symlink_to_dev_null_is_refused(tmp_path):
    path = tmp_path / "auto.lock"
    path.symlink_to("/dev/null")
    with pytest.raises(ConfigError, match="symbolic link"):
        with auto_lock(path):
            pass
    assert path.is_symlink()
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_directory_is_refused(tmp_path):
    path = tmp_path / "auto.lock"
    path.mkdir()
    (path / "inside").write_text("x")
    with pytest.raises(ConfigError, match="is a directory"):
        with auto_lock(path):
            pass
    assert (path / "inside").read_text() == "x"


def test_fifo_is_refused(tmp_path):
    path = tmp_path / "auto.lock"
    os.mkfifo(path)
    with pytest.raises(ConfigError, match="not a regular file"):
        with auto_lock(path):
            pass
    assert stat.S_ISFIFO(path.lstat().st_mode)


def test_hard_link_to_another_file_is_refused(tmp_path):
    other = tmp_path / "other.txt"
    other.write_text("not a lock")
    os.utime(other, (0, 0))
    path = tmp_path / "auto.lock"
    os.link(other, path)
    with pytest.raises(ConfigError, match="hard links"):
        with auto_lock(path):
            pass
    assert other.read_text() == "not a lock" and path.exists()


def test_missing_parent_or_parent_that_is_a_file_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        with auto_lock(tmp_path / "missing" / "auto.lock"):
            pass
    (tmp_path / "file").write_text("")
    with pytest.raises(ConfigError, match=LOCK_PATH_ENV):
        with auto_lock(tmp_path / "file" / "auto.lock"):
            pass


def test_unwritable_parent_is_an_error(tmp_path):
    # chmod does not stop root, so as root use a directory where even root cannot
    # create files (sysfs here); skip when this machine has none.
    if IS_ROOT:
        path = Path("/sys/mem0_dream_auto_test.lock")
        if _creation_errno(path) not in (errno.EACCES, errno.EPERM, errno.EROFS):
            pytest.skip("running as root and no directory here refuses root's writes")
    else:
        parent = tmp_path / "ro"
        parent.mkdir()
        parent.chmod(0o555)
        path = parent / "auto.lock"
    with pytest.raises(ConfigError, match="not writable"):
        with auto_lock(path):
            pass
    assert not os.path.lexists(path)


def _creation_errno(path: Path):
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        return exc.errno
    os.close(fd)
    os.unlink(path)
    return None


@pytest.mark.skipif(not IS_ROOT, reason="giving a file to another user needs root")
def test_lock_of_another_user_is_busy_when_fresh_and_an_error_when_stale(tmp_path):
    path = tmp_path / "auto.lock"
    text = write_lock(path, epoch=time.time(), pid=os.getpid())
    os.chown(path, 65534, 65534)
    with pytest.raises(LockBusyError):
        with auto_lock(path):
            pass
    with pytest.raises(ConfigError, match="belongs to uid 65534"):
        with auto_lock(path, now=lambda: time.time() + 3600):
            pass
    assert path.read_text() == text and path.stat().st_uid == 65534


# ------------------------------------------------------------------ races


def test_threads_started_together_exactly_one_proceeds(tmp_path):
    for round_no in range(ROUNDS):
        path = tmp_path / f"threads{round_no}.lock"
        barrier = threading.Barrier(RACERS)
        hold = threading.Event()
        outcomes: list[str] = []

        def racer(barrier=barrier, path=path, outcomes=outcomes, hold=hold):  # this round's, bound now
            barrier.wait()
            try:
                with auto_lock(path):
                    outcomes.append("acquired")
                    hold.wait(timeout=30)
            except LockBusyError:
                outcomes.append("busy")
            except Mem0PluginError as exc:  # pragma: no cover - reported by the assert
                outcomes.append(repr(exc))

        threads = [threading.Thread(target=racer) for _ in range(RACERS)]
        for thread in threads:
            thread.start()
        deadline = time.time() + 30
        while len(outcomes) < RACERS and time.time() < deadline:
            time.sleep(0.01)
        hold.set()
        for thread in threads:
            thread.join(timeout=30)
        assert sorted(outcomes) == ["acquired"] + ["busy"] * (RACERS - 1)
        assert not path.exists()


def test_processes_started_together_exactly_one_proceeds(tmp_path):
    with racers() as race:
        for round_no in range(ROUNDS):
            path = tmp_path / f"procs{round_no}.lock"
            assert race(path).count("acquired") == 1
            assert not path.exists()


@pytest.mark.parametrize("kind", ["old_epoch", "dead_pid", "corrupt_old_mtime"])
def test_stale_takeover_race_exactly_one_proceeds(tmp_path, kind):
    with racers() as race:
        for round_no in range(ROUNDS):
            path = tmp_path / f"stale{round_no}.lock"
            if kind == "old_epoch":
                write_lock(path, epoch=time.time() - 3600, pid=1, host=HOST + "-elsewhere")
            elif kind == "dead_pid":
                write_lock(path, epoch=time.time(), pid=dead_pid())
            else:
                path.write_text("garbage")
                os.utime(path, (0, 0))
            assert race(path).count("acquired") == 1
            assert not path.exists()
