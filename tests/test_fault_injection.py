"""Crash safety of dream's apply (docs/dream.md, step 5): kill the process at every point, recover, lose nothing.

A realistic plan — four merges (one of three memories), two resolved conflicts, one skipped,
four prunes: ten journaled steps — is applied with `mem0-dream --apply plan.json --resolve ...
--yes` under `MEM0_DREAM_CRASH_AFTER=N` (the process dies with `os._exit(137)` right after the
N-th journaled step; N=0 right after the plan is journaled) for every N. Then a recovery run,
and the invariants: no memory lost, no dangling `replacement_memory_id`, no half-applied merge,
no merge applied twice, history complete (an unbroken before/after chain for every memory),
no run left open, and the final state equal to that of an uninterrupted run.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from conftest import run_in_process, run_process
from mem0_plugin.records import Memory
from mem0_plugin.store import SqliteStore
from reliability_checks import check_history_chain, check_merges, check_pointers, dream_made, history_by_id, snapshot

USER, PROJECT = "alice", "acme-api"

# (id, text, type, age in days, confidence, extra metadata / flags)
SEED = [
    ("m01", "Use PostgreSQL for auth", "decision", 30, 0.8, {}),
    ("m02", "Auth DB is PostgreSQL", "decision", 20, 0.9, {}),
    ("m03", "Run tests with pytest -q", "convention", 40, 0.7, {}),
    ("m04", "Tests are run with pytest -q", "convention", 30, 0.6, {}),
    ("m05", "Run the tests with pytest -q", "convention", 10, None, {}),
    ("m06", "Use tabs for indentation", "convention", 50, 0.5, {}),
    ("m07", "Tabs are used for indentation", "convention", 5, 0.9, {}),
    ("m08", "Never commit directly to main", "team_norms", 12, 0.9, {}),
    ("m09", "Don't commit directly to main", "team_norms", 11, 0.9, {}),
    ("m10", "Deploy to ECS", "deployment_runbook", 60, 0.8, {}),
    ("m11", "Deploy to Vercel", "deployment_runbook", 6, 0.8, {}),
    ("m12", "API listens on port 8080", "api_contracts", 70, 0.8, {}),
    ("m13", "API listens on port 3000", "api_contracts", 7, 0.8, {}),
    ("m14", "Use Redis", "tooling_setup", 80, 0.8, {}),
    ("m15", "Don't use Redis", "tooling_setup", 8, 0.8, {}),
    ("m16", "Working on the login form refactor", "session_state", 120, 0.9, {}),
    ("m17", "Halfway through the billing migration", "session_state", 200, 0.9, {}),
    ("m18", "Compacted summary of a long session", "compact_summary", 95, 0.9, {}),
    ("m19", "maybe something about stuff", "task_learning", 15, 0.1, {}),
    ("m20", "Prefer small pull requests", "team_norms", 3, 0.9, {}),
    # protected: duplicates and stale entries dream must never touch
    ("p01", "Use PostgreSQL for auth", "decision", 25, 0.8, {"pinned": True}),
    ("p02", "Working on the login form refactor", "session_state", 300, 0.9, {"exclude_from_dream": True}),
    ("p03", "Tabs are used for indentation", "convention", 45, 0.9, {"immutable": True}),
]
MERGES = [("m03", "m04", "m05"), ("m06", "m07"), ("m01", "m02"), ("m08", "m09")]
RESOLVE = {"m13": "A", "m11": "B"}  # m15 vs m14 is left to skip
PRUNES = {"m16", "m17", "m18", "m19"}
STEPS = len(MERGES) + len(RESOLVE) + len(PRUNES)


def seed_memories(now: datetime) -> list[Memory]:
    memories = []
    for memory_id, text, kind, age, confidence, extra in SEED:
        stamp = (now - timedelta(days=age, hours=1)).isoformat()
        metadata = {"type": kind, **{k: v for k, v in extra.items() if k != "immutable"}}
        if confidence is not None:
            metadata["confidence"] = confidence
        memories.append(
            Memory(
                id=memory_id,
                memory=text,
                user_id=USER,
                app_id=PROJECT,
                metadata=metadata,
                created_at=stamp,
                updated_at=stamp,
                immutable=bool(extra.get("immutable")),
            )
        )
    # the same user's other project and another user: never touched by a dream of acme-api
    stamp = (now - timedelta(days=400)).isoformat()
    memories.append(
        Memory(
            id="o01",
            memory="Working on the login form refactor",
            user_id=USER,
            app_id="other",
            metadata={"type": "session_state"},
            created_at=stamp,
            updated_at=stamp,
        )
    )
    memories.append(
        Memory(
            id="b01",
            memory="Working on the login form refactor",
            user_id="bob",
            app_id=PROJECT,
            metadata={"type": "session_state"},
            created_at=stamp,
            updated_at=stamp,
        )
    )
    return memories


def build_store(path: Path, memories: list[Memory]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with SqliteStore(path) as store:
        with store.write() as writer:
            for memory in memories:
                writer.insert(memory, event="IMPORT", actor="test")


# ------------------------------------------------------------------ reading a store back


def check_invariants(before: dict, after: dict, *, finished: bool) -> None:
    """The promises of docs/dream.md, step 5, on a store `after` an apply (interrupted or not) of `before`."""
    memories = after["memories"]
    history = history_by_id(after)

    # no memory lost: present in some state, or deleted by a prune of the plan and kept in the history
    for memory_id in before["memories"]:
        if memory_id in memories:
            continue
        assert memory_id in PRUNES, f"{memory_id} vanished without being pruned"
        last = history[memory_id][-1]
        assert last["event"] == "PRUNE" and last["after"] is None
        assert last["before"]["memory"] == before["memories"][memory_id]["memory"]

    # no dangling pointer
    check_pointers(after)

    # no half-applied merge, none applied twice
    made = dream_made(after)
    for sources in MERGES:
        results = [m for m in made if tuple(m["source_memory_ids"]) == sources]
        states = {memories[s]["lifecycle_state"] for s in sources}
        assert len(results) <= 1, f"merge {sources} applied {len(results)} times"
        if results:
            assert states == {"merged"}
            assert {memories[s]["replacement_memory_id"] for s in sources} == {results[0]["id"]}
            assert results[0]["lifecycle_state"] == "active"
        else:
            assert not finished, f"merge {sources} was never applied"
            assert states == {"active"}, f"merge {sources} half applied: {states}"
    assert len(made) <= len(MERGES)

    # protected and foreign memories are untouched
    for memory_id in ("p01", "p02", "p03", "o01", "b01", "m20"):
        assert memories[memory_id] == before["memories"][memory_id]

    # history complete: for every memory an unbroken chain of before/after ending in its current state
    check_history_chain(after)
    check_merges(after)

    if finished:
        assert after["runs"] and {r["status"] for r in after["runs"]} == {"done"}, after["runs"]
        assert len(made) == len(MERGES)


def journaled_steps(db: Path) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT count(*) FROM dream_steps").fetchone()[0]
    finally:
        conn.close()


def normalised(snap: dict) -> list[dict]:
    """Memories with the ids and timestamps dream makes up replaced by what they stand for."""
    made = {m["id"]: "merge:" + "+".join(m["source_memory_ids"]) for m in dream_made(snap)}
    result = []
    for memory in snap["memories"].values():
        record = {
            **memory,
            "id": made.get(memory["id"], memory["id"]),
            "replacement_memory_id": made.get(memory["replacement_memory_id"], memory["replacement_memory_id"]),
        }
        record.pop("updated_at")
        if memory["id"] in made:
            record.pop("created_at")
        result.append(record)
    return sorted(result, key=lambda r: r["id"])


def history_events(snap: dict) -> list[tuple[str, str, str]]:
    made = {m["id"]: "merge:" + "+".join(m["source_memory_ids"]) for m in dream_made(snap)}
    return sorted((made.get(r["memory_id"], r["memory_id"]), r["event"], r["actor"]) for r in snap["history"])


# ------------------------------------------------------------------ the scenario


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    """The seeded store (closed, ready to copy), the plan file, and an uninterrupted run's result."""
    root = tmp_path_factory.mktemp("fault")
    now = datetime.now(timezone.utc)
    base = root / "base" / "memories.sqlite3"
    build_store(base, seed_memories(now))
    plan_home = fresh_home(root / "plan", base)
    plan_file = root / "plan.json"
    done = dream(plan_home, "--plan", "--json", "-o", str(plan_file), cwd=root)
    assert done.returncode == 0, done.stderr
    plan = json.loads(plan_file.read_text())
    assert sorted(tuple(m["ids"]) for m in plan["merges"]) == sorted(MERGES)
    assert [c["ids"] for c in plan["conflicts"]] == [["m13", "m12"], ["m11", "m10"], ["m15", "m14"]]
    assert {p["id"] for p in plan["prunes"]} == PRUNES
    before = snapshot(base)
    baseline_home = fresh_home(root / "baseline", base)
    done = dream(baseline_home, *apply_args(plan_file), cwd=root)
    assert done.returncode == 0, done.stderr
    assert "merged: 4, pruned: 4, conflicts resolved: 2, skipped: 1" in done.stdout
    baseline = snapshot(baseline_home / "memories.sqlite3")
    check_invariants(before, baseline, finished=True)
    return {"root": root, "base": base, "plan": plan_file, "before": before, "baseline": baseline}


def fresh_home(home: Path, base: Path) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(base, home / "memories.sqlite3")
    return home


def apply_args(plan_file: Path) -> list[str]:
    args = ["--apply", str(plan_file), "--yes"]
    for key, choice in RESOLVE.items():
        args += ["--resolve", f"{key}={choice}"]
    return args


def dream(
    home: Path, *args: str, crash_after: int | None = None, input: str | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess:
    """mem0-dream on `home`: killed by MEM0_DREAM_CRASH_AFTER in a process of its own; the runs that
    recover (a later process in real life) run in this one."""
    env = {"MEM0_HOME": str(home), "MEM0_USER_ID": USER, "MEM0_PROJECT_ID": PROJECT}
    if crash_after is not None:
        env["MEM0_DREAM_CRASH_AFTER"] = str(crash_after)
        return run_process("mem0-dream", *args, input=input, env=env, cwd=cwd, timeout=120)
    return run_in_process("mem0-dream", *args, input=input, env=env, cwd=cwd, timeout=120)


# ------------------------------------------------------------------ the tests


def test_the_plan_has_ten_steps(scenario):
    plan = json.loads(scenario["plan"].read_text())
    assert len(plan["merges"]) + len(RESOLVE) + len(plan["prunes"]) == STEPS == 10
    assert any(len(m["ids"]) == 3 for m in plan["merges"])


@pytest.mark.parametrize("crash_after", range(STEPS + 1))
def test_killed_after_every_step_then_recovered_by_rerunning_the_apply(scenario, crash_after, tmp_path):
    home = fresh_home(tmp_path / "home", scenario["base"])
    db = home / "memories.sqlite3"
    killed = dream(home, *apply_args(scenario["plan"]), crash_after=crash_after, cwd=tmp_path)
    assert killed.returncode == 137, (killed.stdout, killed.stderr)
    assert "Dream complete" not in killed.stdout

    interrupted = snapshot(db)
    check_invariants(scenario["before"], interrupted, finished=False)
    assert [r["status"] for r in interrupted["runs"]] == ["applying"]
    assert len(dream_made(interrupted)) == min(crash_after, len(MERGES))

    again = dream(home, *apply_args(scenario["plan"]), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "completed an interrupted run" in again.stderr
    assert "Traceback" not in again.stderr + again.stdout
    # the re-run applies nothing twice: every action of the plan is reported as no longer applicable
    assert "Dream complete — merged: 0, pruned: 0, conflicts resolved: 0, skipped: 1" in again.stdout

    final = snapshot(db)
    check_invariants(scenario["before"], final, finished=True)
    assert normalised(final) == normalised(scenario["baseline"])
    assert history_events(final) == history_events(scenario["baseline"])


@pytest.mark.parametrize("crash_after", [0, 1, 5, STEPS])
def test_killed_then_recovered_by_an_interactive_run_that_is_cancelled(scenario, crash_after, tmp_path):
    """Recovery happens first, whatever the next run then does (here: skip the last conflict, answer n)."""
    home = fresh_home(tmp_path / "home", scenario["base"])
    db = home / "memories.sqlite3"
    killed = dream(home, *apply_args(scenario["plan"]), crash_after=crash_after, cwd=tmp_path)
    assert killed.returncode == 137
    later = dream(home, input="skip\nn\n", cwd=tmp_path)
    assert later.returncode == 0, later.stderr
    assert "completed an interrupted run" in later.stderr
    assert later.stdout.rstrip().endswith("Cancelled. No changes made.")
    assert "Conflicts (1):" in later.stdout and "Merges" not in later.stdout
    final = snapshot(db)
    check_invariants(scenario["before"], final, finished=True)
    assert normalised(final) == normalised(scenario["baseline"])


def test_killed_then_recovered_by_auto(scenario, tmp_path):
    home = fresh_home(tmp_path / "home", scenario["base"])
    db = home / "memories.sqlite3"
    assert dream(home, *apply_args(scenario["plan"]), crash_after=3, cwd=tmp_path).returncode == 137
    auto = dream(home, "--auto", cwd=tmp_path)
    assert auto.returncode == 0, auto.stderr
    assert "completed an interrupted run" in auto.stderr
    assert auto.stdout.strip() == "[mem0-dream --auto] project=acme-api  merged=0  pruned=0  conflicts_skipped=1"
    final = snapshot(db)
    check_invariants(scenario["before"], final, finished=True)
    reminder = [m for m in final["memories"].values() if m["metadata"].get("source") == "mem0-dream-auto"]
    assert len(reminder) == 1
    without_reminder = {**final, "memories": {k: v for k, v in final["memories"].items() if v not in reminder}}
    assert normalised(without_reminder) == normalised(scenario["baseline"])


def test_killed_inside_a_merge_transaction_leaves_no_trace_of_it(scenario, tmp_path):
    """A kill between the merged memory's insert and the sources' retirement: the transaction never lands."""
    home = fresh_home(tmp_path / "home", scenario["base"])
    db = home / "memories.sqlite3"
    script = textwrap.dedent("""
        import os, sys
        from mem0_plugin.store.sqlite.writer import SqliteWriter
        from mem0_plugin.cli import dream_cli
        original = SqliteWriter.change
        calls = []
        def change(self, before, event, actor, **fields):
            after = original(self, before, event, actor, **fields)
            calls.append(event)
            if event == "MERGE" and len(calls) == 5:  # 3-way merge done, then 1 of the next merge's 2 sources
                os._exit(137)
            return after
        SqliteWriter.change = change
        sys.exit(dream_cli.main(sys.argv[1:]))
    """)
    env = {**os.environ, "MEM0_HOME": str(home), "MEM0_USER_ID": USER, "MEM0_PROJECT_ID": PROJECT}
    killed = subprocess.run(
        [sys.executable, "-c", script, *apply_args(scenario["plan"])],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert killed.returncode == 137, killed.stderr
    interrupted = snapshot(db)
    check_invariants(scenario["before"], interrupted, finished=False)
    # both merges share a batch (one transaction): neither the whole first nor the half second landed
    assert not dream_made(interrupted) and journaled_steps(db) == 0
    again = dream(home, *apply_args(scenario["plan"]), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    final = snapshot(db)
    check_invariants(scenario["before"], final, finished=True)
    assert normalised(final) == normalised(scenario["baseline"])


def test_a_killed_run_of_an_older_plan_never_clobbers_newer_changes(scenario, tmp_path, run_cli):
    """Between the kill and the recovery a user edits a memory the journaled plan still wants to merge:
    recovery skips that merge (its fingerprint no longer matches) and keeps the edit."""
    home = fresh_home(tmp_path / "home", scenario["base"])
    db = home / "memories.sqlite3"
    assert dream(home, *apply_args(scenario["plan"]), crash_after=1, cwd=tmp_path).returncode == 137
    env = {"MEM0_HOME": str(home)}
    deleted = run_cli("mem0-memories", "delete", "m06", env=env)
    assert deleted.returncode == 0, deleted.stderr
    again = dream(home, *apply_args(scenario["plan"]), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    final = snapshot(db)
    assert "m06" not in final["memories"]
    assert final["memories"]["m07"]["lifecycle_state"] == "active"
    assert not [m for m in dream_made(final) if "m07" in m["source_memory_ids"]]
    assert final["runs"] and {r["status"] for r in final["runs"]} == {"done"}
