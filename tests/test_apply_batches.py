"""Dream's apply in batches (docs/dream.md, step 5): several steps per transaction, each in a savepoint.

On a real SQLite store: a step that fails halfway inside a batch (a merge whose second source
cannot be rewritten, after the merged memory was inserted) is undone alone while its
neighbours in the same transaction apply; a large plan spans several batches; and
`MEM0_DREAM_CRASH_AFTER=N` with N inside what would be one batch leaves exactly N steps
applied, which the next run completes. The transactions are read off the SQL the
connection really runs (sqlite3's trace callback), not simulated.
"""

from __future__ import annotations

import re
import sqlite3
import subprocess
from pathlib import Path

import pytest
from conftest import run_in_process, run_process
from mem0_plugin.dream.apply import BATCH_STEPS, apply_plan
from mem0_plugin.dream.plan import MergeAction, Plan, PruneAction, plan_to_json
from mem0_plugin.identity import Identity
from mem0_plugin.records import Memory
from mem0_plugin.store import SqliteStore

USER, PROJECT = "alice", "acme-api"
OLD, NEW, STALE = "2026-09-01T10:00:00+00:00", "2026-11-01T10:00:00+00:00", "2026-03-01T10:00:00+00:00"
RECOVERED = re.compile(
    r"^mem0-dream: completed an interrupted run [0-9a-f]{8} "
    r"\(merged (\d+), pruned (\d+), conflicts resolved (\d+)\)$"
)


def pair(i: int) -> tuple[str, str]:
    return f"p{i:03d}a", f"p{i:03d}b"


def seed(path: Path, pairs: int, prunes: int) -> None:
    """`pairs` merge pairs and `prunes` old session states, written as a real store."""
    memories = []
    for i in range(pairs):
        a, b = pair(i)
        memories.append(memory(a, f"Use PostgreSQL for service {i}", "decision", OLD))
        memories.append(memory(b, f"Service {i} DB is PostgreSQL", "decision", NEW))
    memories += [memory(f"s{i:03d}", f"Session state {i}", "session_state", STALE) for i in range(prunes)]
    path.parent.mkdir(parents=True, exist_ok=True)
    with SqliteStore(path) as store, store.write() as writer:
        for item in memories:
            writer.insert(item, event="IMPORT", actor="test")


def memory(memory_id: str, text: str, kind: str, created: str) -> Memory:
    return Memory(
        id=memory_id,
        memory=text,
        user_id=USER,
        app_id=PROJECT,
        metadata={"type": kind},
        created_at=created,
        updated_at=created,
    )


def make_plan(pairs: int, prunes: int) -> Plan:
    merges = [
        MergeAction(
            ids=pair(i), type="decision", merged_text=f"Service {i} DB is PostgreSQL", confidence=None, similarity=0.9
        )
        for i in range(pairs)
    ]
    pruned = [
        PruneAction(id=f"s{i:03d}", type="session_state", age_days=275, reason="retention") for i in range(prunes)
    ]
    ids = [i for m in merges for i in m.ids] + [p.id for p in pruned]
    return Plan(
        user_id=USER,
        project_id=PROJECT,
        generated_at="2026-12-01T00:00:00+00:00",
        memory_count=len(ids),
        merges=merges,
        prunes=pruned,
        fingerprints=dict.fromkeys(ids, "1"),
    )


def identity(home: Path) -> Identity:
    return Identity(
        user_id=USER,
        project_id=PROJECT,
        branch="main",
        home=home,
        store_url=f"sqlite:///{home / 'memories.sqlite3'}",
        cwd=home,
    )


def transactions(statements: list[str]) -> list[list[str]]:
    """The statements of each write transaction, in order."""
    found: list[list[str]] = []
    for sql in statements:
        if sql == "BEGIN IMMEDIATE":
            found.append([])
        elif found:
            found[-1].append(sql)
    return found


def journal(db: Path) -> list[tuple[int, str, str, str]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT step, kind, outcome, detail FROM dream_steps ORDER BY step").fetchall()
    finally:
        conn.close()


def run_statuses(db: Path) -> list[str]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return [row[0] for row in conn.execute("SELECT status FROM dream_runs ORDER BY started_at")]
    finally:
        conn.close()


def dream_made(store: SqliteStore) -> list[Memory]:
    return [m for m in store.iter_scope(USER, PROJECT) if m.source == "mem0-dream"]


# -- in one process, on a real store -----------------------------------------------------------


def test_a_step_failing_halfway_is_undone_alone_inside_its_batch(tmp_path):
    db = tmp_path / "memories.sqlite3"
    seed(db, pairs=5, prunes=3)
    conn = sqlite3.connect(db)  # a row another tool left unreadable: the merge fails on its second source
    with conn:
        conn.execute("UPDATE memories SET created_at = 'garbage' WHERE id = 'p002b'")
    conn.close()
    statements: list[str] = []
    with SqliteStore(db) as store:
        store._conn.set_trace_callback(statements.append)
        outcome = apply_plan(store, identity(tmp_path), make_plan(5, 3), {})
        store._conn.set_trace_callback(None)

        assert (outcome.merged, outcome.pruned, outcome.resolved) == (4, 3, 0)
        [stale] = outcome.stale
        assert stale.startswith("merge p002a+p002b: ") and "created_at" in stale
        # the merged memory it inserted and the first source it retired are gone with it
        assert {m.source_memory_ids for m in dream_made(store)} == {pair(i) for i in (0, 1, 3, 4)}
        first = store.get(USER, "p002a")
        assert (first.lifecycle_state, first.version, first.replacement_memory_id) == ("active", 1, None)
        assert [h.event for h in store.history(USER, "p002a")] == ["IMPORT"]
        assert store.get(USER, "p001a").lifecycle_state == store.get(USER, "p003b").lifecycle_state == "merged"

    steps = journal(db)
    assert [s[:3] for s in steps] == [(i, "merge", "stale" if i == 2 else "applied") for i in range(5)] + [
        (i, "prune", "applied") for i in range(5, 8)
    ]
    assert steps[2][3] == stale.removeprefix("merge p002a+p002b: ")
    # the failed step shared its transaction with the steps on either side; only its savepoint was undone
    [batch] = [t for t in transactions(statements) if "ROLLBACK TO unit" in t]
    assert batch.count("SAVEPOINT unit") >= 3 and batch.count("ROLLBACK TO unit") == 1
    assert batch[-1] == "COMMIT" and "ROLLBACK" not in batch
    assert batch.index("ROLLBACK TO unit") not in (batch.index("SAVEPOINT unit"), len(batch) - 1)


def test_a_large_plan_applies_across_several_batches(tmp_path):
    pairs = prunes = 330
    steps = pairs + prunes
    db = tmp_path / "memories.sqlite3"
    seed(db, pairs, prunes)
    statements: list[str] = []
    with SqliteStore(db) as store:
        store._conn.set_trace_callback(statements.append)
        outcome = apply_plan(store, identity(tmp_path), make_plan(pairs, prunes), {})
        store._conn.set_trace_callback(None)

        assert (outcome.merged, outcome.pruned, outcome.stale) == (pairs, prunes, [])
        made = {m.source_memory_ids: m for m in dream_made(store)}
        assert set(made) == {pair(i) for i in range(pairs)}
        for sources, merged in made.items():
            assert merged.lifecycle_state == "active"
            for source in sources:
                assert store.get(USER, source).replacement_memory_id == merged.id
        # each step is stamped with its own time, as when every step was a transaction: the merged
        # memories list in plan order
        in_plan_order = [made[pair(i)].created_at for i in range(pairs)]
        assert in_plan_order == sorted(in_plan_order)
        assert store.count(USER, PROJECT) == 2 * pairs + pairs
        assert all(store.history(USER, f"s{i:03d}")[-1].event == "PRUNE" for i in range(prunes))

    assert [s[:3] for s in journal(db)] == [(i, "merge" if i < pairs else "prune", "applied") for i in range(steps)]
    assert run_statuses(db) == ["done"]
    # the journal start, the batches, the finish; every batch commits, none rolls back
    writes = transactions(statements)
    batches = writes[1:-1]
    assert -(-steps // BATCH_STEPS) <= len(batches) <= steps // 4
    assert all(t[-1] == "COMMIT" and "ROLLBACK" not in t for t in writes)
    assert sum(t.count("SAVEPOINT unit") for t in batches) == steps
    assert max(t.count("SAVEPOINT unit") for t in batches) <= BATCH_STEPS


# -- the installed command, killed by MEM0_DREAM_CRASH_AFTER -------------------------------------


def dream(home: Path, *args: str, crash_after: int | None = None) -> subprocess.CompletedProcess:
    """mem0-dream on `home`: killed in a process of its own; the run that recovers in this one."""
    env = {"MEM0_HOME": str(home), "MEM0_USER_ID": USER, "MEM0_PROJECT_ID": PROJECT}
    if crash_after is not None:
        env["MEM0_DREAM_CRASH_AFTER"] = str(crash_after)
        return run_process("mem0-dream", *args, env=env, cwd=str(home), timeout=120)
    return run_in_process("mem0-dream", *args, env=env, cwd=str(home), timeout=120)


@pytest.mark.parametrize("crash_after", [37, 230])
def test_a_crash_inside_a_batch_leaves_exactly_n_steps_and_the_next_run_completes(tmp_path, crash_after):
    """37: inside what would be the first batch; 230: inside the second, after a full one."""
    pairs = prunes = 130
    home = tmp_path / "home"
    db = home / "memories.sqlite3"
    seed(db, pairs, prunes)
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(plan_to_json(make_plan(pairs, prunes)))

    killed = dream(home, "--apply", str(plan_file), "--yes", crash_after=crash_after)
    assert killed.returncode == 137, (killed.stdout, killed.stderr)
    assert "Dream complete" not in killed.stdout
    assert [s[:3] for s in journal(db)] == [
        (i, "merge" if i < pairs else "prune", "applied") for i in range(crash_after)
    ]
    with SqliteStore(db, readonly=True) as store:
        assert len(dream_made(store)) == min(crash_after, pairs)
        assert store.count(USER, PROJECT) == 2 * pairs + prunes + min(crash_after, pairs) - max(crash_after - pairs, 0)
    assert run_statuses(db) == ["applying"]

    again = dream(home, "--apply", str(plan_file), "--yes")
    assert again.returncode == 0, again.stderr
    assert [int(n) for n in RECOVERED.match(again.stderr.strip()).groups()] == [pairs, prunes, 0]
    assert again.stdout.splitlines()[-1] == "Dream complete — merged: 0, pruned: 0, conflicts resolved: 0, skipped: 0"
    assert len(journal(db)) == 2 * (pairs + prunes)  # the recovered run, then the re-run finding all stale
    with SqliteStore(db, readonly=True) as store:
        assert {m.source_memory_ids for m in dream_made(store)} == {pair(i) for i in range(pairs)}
        assert store.count(USER, PROJECT) == 3 * pairs
    assert run_statuses(db) == ["done", "done"]
