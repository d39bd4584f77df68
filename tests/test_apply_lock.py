"""Dream's apply lock: ``<store file>.dream-apply.lock``, a `filelock.FileLock`.

On a real store, with the lock held by another real process through a plain `flock` (what
the plugin's earlier releases took, so a running old version and a new one still exclude
each other): an apply waits without journaling anything, goes on when the holder exits or
is killed with SIGKILL, and a symlink planted at the lock's path is refused with one clear
error and its target left untouched.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from mem0_plugin.dream.apply import apply_plan
from mem0_plugin.errors import StoreError
from mem0_plugin.store import SqliteStore
from test_apply_batches import identity, make_plan, run_statuses, seed

HOLD = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.read()
"""


def lock_path(db: Path) -> Path:
    return Path(f"{db}.dream-apply.lock")


def hold_lock(path: Path) -> subprocess.Popen:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout.readline().strip() == "held"
    return holder


def apply_in_background(db: Path, home: Path) -> tuple[threading.Thread, dict]:
    result: dict = {}

    def run() -> None:
        try:
            with SqliteStore(db) as store:
                result["outcome"] = apply_plan(store, identity(home), make_plan(2, 1), {})
        except BaseException as exc:  # reported by the test, not lost in the thread
            result["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, result


@pytest.mark.parametrize("release", ["exit", "sigkill"])
def test_apply_waits_for_a_holder_and_goes_on_when_it_is_gone(tmp_path, release):
    db = tmp_path / "memories.sqlite3"
    seed(db, pairs=2, prunes=1)
    holder = hold_lock(lock_path(db))
    try:
        thread, result = apply_in_background(db, tmp_path)
        thread.join(1.5)
        assert thread.is_alive() and not result, "the apply must wait for the lock"
        assert run_statuses(db) == []  # nothing journaled while it waits
    finally:
        if release == "exit":
            holder.stdin.close()
        else:
            os.kill(holder.pid, signal.SIGKILL)
        holder.wait(10)
    thread.join(60)
    assert not thread.is_alive()
    assert "error" not in result, result.get("error")
    outcome = result["outcome"]
    assert (outcome.merged, outcome.pruned) == (2, 1)
    assert run_statuses(db) == ["done"]


def test_a_symlink_planted_at_the_lock_path_is_refused(tmp_path):
    db = tmp_path / "memories.sqlite3"
    seed(db, pairs=2, prunes=1)
    target = tmp_path / "precious.txt"
    target.write_text("keep me\n")
    lock_path(db).symlink_to(target)
    with SqliteStore(db) as store:
        with pytest.raises(StoreError, match=r"^cannot open the apply lock .*dream-apply\.lock: "):
            apply_plan(store, identity(tmp_path), make_plan(2, 1), {})
    assert target.read_text() == "keep me\n"
    assert run_statuses(db) == []
    with SqliteStore(db) as store:
        assert all(m.lifecycle_state == "active" for m in store.iter_scope("alice", "acme-api"))
