"""Dream's apply under failure and concurrency, end to end through `mem0-dream` (docs/dream.md, step 5):
a crash after every journaled step (MEM0_DREAM_CRASH_AFTER), a real `kill -9` in the
middle of a large apply, recovery by the next run, ten `--auto` started at once, and an
`--auto` starting while another process is applying.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import command_path
from dream_support import (
    AUTO_BUSY,
    BASE,
    ECS,
    NOW,
    PG_NEW,
    PG_OLD,
    REDIS_DONT,
    REDIS_USE,
    SESSION,
    VERCEL,
    active_reminders,
    auto_summary,
    big_records,
    check_invariants,
    dream_made,
    export,
    journaled_steps,
    make_project,
    open_runs,
    reminder_text,
    summary,
    wait_for_steps,
    write_jsonl,
)

RECOVERED = re.compile(
    r"^mem0-dream: completed an interrupted run [0-9a-f]{8} "
    r"\(merged (\d+), pruned (\d+), conflicts resolved (\d+)\)$"
)


@pytest.fixture
def project(tmp_path) -> Path:
    return make_project(tmp_path / "project")


@pytest.fixture
def dream(run_cli, project):
    def run(*args: str, input: str | None = None, env: dict | None = None, timeout: float = 120):
        return run_cli("mem0-dream", *args, "--now", NOW, input=input, env=env, cwd=str(project), timeout=timeout)

    return run


@pytest.fixture
def seed(run_cli, tmp_path):
    def do(records):
        path = write_jsonl(tmp_path / "seed.jsonl", records)
        done = run_cli("mem0-memories", "import", str(path), timeout=300)
        assert done.returncode == 0, done.stderr

    return do


def _plan(dream, tmp_path) -> tuple[Path, dict]:
    path = tmp_path / "plan.json"
    done = dream("--plan", "--json", "-o", str(path))
    assert done.returncode == 0, done.stderr
    return path, json.loads(path.read_text())


def _state(memories: dict) -> dict:
    """Lifecycle state and pointer of every memory, dream-made ids replaced by a stable name."""
    names = {i: "merge:" + "+".join(sorted(r["source_memory_ids"])) for i, r in dream_made(memories).items()}
    return {
        names.get(i, i): (
            r["lifecycle_state"],
            names.get(r["replacement_memory_id"], r["replacement_memory_id"]),
            r["memory"],
        )
        for i, r in memories.items()
    }


# -- a crash after each journaled step ------------------------------------------------


_REFERENCE: dict = {}


def _reference(run_cli, dream, seed, tmp_path, monkeypatch) -> dict:
    """The state a complete, uninterrupted apply of the same plan leaves (in another home; computed once)."""
    if _REFERENCE:
        return _REFERENCE
    monkeypatch.setenv("MEM0_HOME", str(tmp_path / "reference-home"))
    seed(BASE)
    path, _ = _plan(dream, tmp_path)
    done = dream("--apply", str(path), "--resolve", f"{REDIS_DONT}=A", "--yes")
    assert done.stdout == summary(1, 1, 1, 1) + "\n", done.stderr
    _REFERENCE.update(_state(export(run_cli)))
    monkeypatch.setenv("MEM0_HOME", str(tmp_path / "mem0home"))
    return _REFERENCE


@pytest.mark.parametrize("crash_after", [0, 1, 2, 3])
@pytest.mark.parametrize("recovery", ["interactive", "apply", "auto"])
def test_crash_after_each_step_then_recovery(run_cli, dream, seed, tmp_path, monkeypatch, crash_after, recovery):
    expected = _reference(run_cli, dream, seed, tmp_path, monkeypatch)
    seed(BASE)
    original = export(run_cli)
    path, _ = _plan(dream, tmp_path)
    crashed = dream(
        "--apply", str(path), "--resolve", f"{REDIS_DONT}=A", "--yes", env={"MEM0_DREAM_CRASH_AFTER": str(crash_after)}
    )
    assert crashed.returncode == 137, (crashed.stdout, crashed.stderr)
    assert crashed.stdout == ""  # killed before the summary

    # the state right after the crash: exactly the first `crash_after` steps (merge, resolve, prune)
    partial = export(run_cli)
    check_invariants(original, partial)
    assert len(dream_made(partial)) == (1 if crash_after >= 1 else 0)
    assert partial[REDIS_USE]["lifecycle_state"] == ("superseded" if crash_after >= 2 else "active")
    assert (SESSION in partial) is (crash_after < 3)
    assert len(open_runs()) == 1

    if recovery == "interactive":
        done = dream(input="")
    elif recovery == "apply":  # a later apply of any plan completes the interrupted one first
        other, _ = _plan(dream, tmp_path)
        done = dream("--apply", str(other), "--yes")
    else:
        done = dream("--auto")
    assert done.returncode == 0, done.stderr
    [line] = done.stderr.splitlines()
    assert [int(n) for n in RECOVERED.match(line).groups()] == [1, 1, 1]
    assert not open_runs()
    final = export(run_cli)
    check_invariants(original, final)
    state = _state(final)
    if recovery == "auto":  # the auto run also left its reminder for the conflict it skipped
        [reminder] = active_reminders(final)
        assert reminder["memory"] == reminder_text(1)
        del state[reminder["id"]]
        assert done.stdout == auto_summary(0, 0, 1) + "\n"
    elif recovery == "apply":  # the new plan's actions were done by the recovery: reported, not redone
        assert done.stdout.splitlines()[-1].startswith(summary(0, 0, 0, 0)[: -len(", skipped: 0")])
    assert state == expected
    # a second run has nothing left to recover
    again = dream("--plan")
    assert again.returncode == 0 and again.stderr == ""


def test_auto_crash_leaves_its_lock_and_the_next_auto_recovers(run_cli, dream, seed):
    seed(BASE)
    original = export(run_cli)
    crashed = dream("--auto", env={"MEM0_DREAM_CRASH_AFTER": "1"})
    assert crashed.returncode == 137
    assert Path(os.environ["MEM0_DREAM_LOCK"]).exists()  # os._exit: no cleanup; its holder is gone
    done = dream("--auto")
    assert done.returncode == 0, done.stderr
    assert done.stdout == auto_summary(0, 0, 2) + "\n"
    assert [int(n) for n in RECOVERED.match(done.stderr.strip()).groups()] == [1, 1, 0]
    final = export(run_cli)
    check_invariants(original, final)
    assert len(dream_made(final)) == 1 and SESSION not in final
    assert [r["memory"] for r in active_reminders(final)] == [reminder_text(2)]
    assert not Path(os.environ["MEM0_DREAM_LOCK"]).exists()


# -- a real kill -9 ---------------------------------------------------------------------


@pytest.mark.parametrize("how", ["apply", "auto", "auto-sigterm"])
def test_kill_9_in_the_middle_of_a_large_apply(run_cli, dream, seed, tmp_path, project, how):
    records, merges, prunes = big_records(1500)
    seed(records)
    original = export(run_cli)
    path, plan = _plan(dream, tmp_path)
    assert (len(plan["merges"]), len(plan["prunes"]), len(plan["conflicts"])) == (merges, prunes, 0)
    argv = ["--apply", str(path), "--yes"] if how == "apply" else ["--auto"]
    proc = subprocess.Popen(
        [command_path("mem0-dream"), *argv, "--now", NOW],
        cwd=str(project),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    while journaled_steps() < 50 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGTERM if how == "auto-sigterm" else signal.SIGKILL)
    out, err = proc.communicate(timeout=30)
    if how == "auto-sigterm":  # a clean exit: the lock is removed, the journal stays open for the next run
        assert proc.returncode == 143, err
        assert out == b"" and b"Traceback" not in err
        assert not Path(os.environ["MEM0_DREAM_LOCK"]).exists()
    else:
        assert proc.returncode == -signal.SIGKILL
    done_before = journaled_steps()
    assert 0 < done_before < merges + prunes, "the apply was not interrupted in the middle"

    partial = export(run_cli)
    check_invariants(original, partial)
    assert len(dream_made(partial)) == min(done_before, merges)

    recovered = dream("--auto")
    assert recovered.returncode == 0, recovered.stderr
    assert [int(n) for n in RECOVERED.match(recovered.stderr.strip()).groups()] == [merges, prunes, 0]
    assert recovered.stdout == auto_summary(0, 0, 0) + "\n"
    final = export(run_cli)
    check_invariants(original, final)
    assert len(dream_made(final)) == merges
    assert len(original) - sum(1 for r in final.values() if r["metadata"].get("source") != "mem0-dream") == prunes
    assert not open_runs()


# -- concurrency ------------------------------------------------------------------------


def test_ten_auto_runs_at_once_exactly_one_works(run_cli, seed, project):
    """All ten start while the lock is free; the store is large enough that the winner still
    holds the lock (it does for its whole run) when the last one checks it."""
    records, merges, prunes = big_records(2250, conflicts=2)
    seed(records)
    original = export(run_cli)
    argv = [command_path("mem0-dream"), "--auto", "--now", NOW]
    procs = [
        subprocess.Popen(argv, cwd=str(project), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(10)
    ]
    results = [proc.communicate(timeout=300) for proc in procs]
    assert [proc.returncode for proc in procs] == [0] * 10, results
    outputs = sorted(out for out, _ in results)
    assert all(err == "" for _, err in results), results
    assert outputs == sorted([auto_summary(merges, prunes, 2) + "\n"] + [AUTO_BUSY + "\n"] * 9), outputs

    final = export(run_cli)
    check_invariants(original, final)
    assert len(dream_made(final)) == merges
    assert [r["memory"] for r in active_reminders(final)] == [reminder_text(2)]
    assert not Path(os.environ["MEM0_DREAM_LOCK"]).exists()
    assert not open_runs()


def test_auto_while_another_process_is_applying(run_cli, dream, seed, tmp_path, project):
    """An interactive-style apply in progress is not "interrupted": a concurrent run waits for it
    instead of replaying its steps (which used to fail with a UNIQUE constraint error)."""
    records, merges, prunes = big_records(1500)
    seed(records)
    original = export(run_cli)
    path, _ = _plan(dream, tmp_path)
    applying = subprocess.Popen(
        [command_path("mem0-dream"), "--apply", str(path), "--yes", "--now", NOW],
        cwd=str(project),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_steps(applying, 20)
    assert applying.poll() is None, "the apply finished before the second run started"
    second = dream("--auto")
    out, err = applying.communicate(timeout=300)
    assert (applying.returncode, out, err) == (0, summary(merges, prunes, 0, 0) + "\n", "")
    assert (second.returncode, second.stdout, second.stderr) == (0, auto_summary(0, 0, 0) + "\n", "")
    final = export(run_cli)
    check_invariants(original, final)
    assert len(dream_made(final)) == merges


def test_two_interactive_runs_apply_the_same_merge_once(backend, run_cli, dream, seed, tmp_path, project):
    seed(BASE)
    original = export(run_cli)
    argv = [command_path("mem0-dream"), "--now", NOW]
    procs = [
        subprocess.Popen(
            argv, cwd=str(project), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    reports = [_read_until(proc, "[A/B/skip]: ") for proc in procs]  # both made their plan before either applies
    results = [proc.communicate("a\na\ny\n", timeout=120) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], results
    outputs = [report + out for report, (out, _) in zip(reports, results)]
    winners = [out for out in outputs if out.endswith(summary(1, 1, 2, 0) + "\n")]
    losers = [out for out in outputs if out.endswith(summary(0, 0, 0, 0) + "\n")]
    assert len(winners) == len(losers) == 1, outputs
    assert losers[0].count("Not applied — ") == 4
    final = export(run_cli)
    check_invariants(original, final)
    assert len(dream_made(final)) == 1
    assert final[PG_OLD]["replacement_memory_id"] == final[PG_NEW]["replacement_memory_id"]
    assert final[REDIS_USE]["replacement_memory_id"] == REDIS_DONT and final[ECS]["replacement_memory_id"] == VERCEL


def _read_until(proc: subprocess.Popen, marker: str, timeout: float = 120) -> str:
    """What `proc` printed up to `marker` (a prompt it then waits at), read past the pipe's
    text buffer so that `communicate` gets the rest."""
    fd, data = proc.stdout.fileno(), b""
    deadline = time.monotonic() + timeout
    while marker.encode() not in data:
        ready, _, _ = select.select([fd], [], [], max(deadline - time.monotonic(), 0))
        chunk = os.read(fd, 65536) if ready else b""
        assert chunk, f"the process never printed {marker!r}: {data!r}"
        data += chunk
    return data.decode()
