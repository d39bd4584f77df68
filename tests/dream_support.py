"""Shared helpers of the end-to-end dream tests (test_dream_cli.py, test_dream_apply.py).

Every dream run goes through the `mem0-dream` command (its `main(argv)` through `run_cli`,
or the installed script where a real process is the point) with the clock fixed by the
hidden `--now`, from a project directory that is a git repository on branch
`feature/dream` (so the branch dream writes into metadata is known).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import time
import uuid
from collections import Counter
from pathlib import Path

from mem0_plugin.store import open_store

NOW = "2026-12-01T00:00:00+00:00"
BRANCH = "feature/dream"
USER = "alice"
PROJECT = "acme-api"
ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]")


def uid(digit: int) -> str:
    """A fixed, valid uuid4 made of one repeated digit: uid(1) = 11111111-1111-4111-8111-111111111111."""
    d = str(digit)
    return f"{d * 8}-{d * 4}-4{d * 3}-8{d * 3}-{d * 12}"


PG_OLD, PG_NEW = uid(1), uid(2)  # "Use PostgreSQL for auth" / "Auth DB is PostgreSQL": a merge
REDIS_USE, REDIS_DONT = uid(3), uid(4)  # "Use Redis ..." / "Don't use Redis ...": a conflict, A = the newer
SESSION = uid(5)  # a session_state 182 days old: a retention prune
ECS, VERCEL = uid(6), uid(7)  # "Deploy ... to ECS" / "... to Vercel": a conflict, A = Vercel (newer)
RUFF = uid(8)  # takes part in nothing


def record(memory_id: str, text: str, type_: str | None, confidence, created_at: str, **extra) -> dict:
    metadata = {"confidence": confidence, "branch": "main"} if confidence is not None else {"branch": "main"}
    if type_ is not None:
        metadata["type"] = type_
    metadata.update(extra.pop("metadata", {}))
    return {
        "id": memory_id,
        "memory": text,
        "metadata": metadata,
        "created_at": created_at,
        "updated_at": created_at,
        **extra,
    }


BASE = [
    record(PG_OLD, "Use PostgreSQL for auth", "decision", 0.8, "2026-10-01T10:00:00+00:00"),
    record(PG_NEW, "Auth DB is PostgreSQL", "decision", 0.9, "2026-11-01T10:00:00+00:00"),
    record(REDIS_USE, "Use Redis for session caching", "decision", 0.7, "2026-09-01T10:00:00+00:00"),
    record(REDIS_DONT, "Don't use Redis for session caching", "decision", 0.6, "2026-11-10T10:00:00+00:00"),
    record(SESSION, "Session state: refactoring the billing module", "session_state", 0.9, "2026-06-01T10:00:00+00:00"),
    record(ECS, "Deploy the storefront to ECS", "decision", 0.6, "2026-08-01T10:00:00+00:00"),
    record(VERCEL, "Deploy the storefront to Vercel", "decision", 0.8, "2026-11-20T10:00:00+00:00"),
    record(RUFF, "Format Python with ruff format", "convention", 0.8, "2026-11-20T10:00:00+00:00"),
]

MERGE_LINE = f'  [mem0:{PG_OLD}] + [mem0:{PG_NEW}] → "Auth DB is PostgreSQL"'
REDIS_PAIR = f'[mem0:{REDIS_DONT}] vs [mem0:{REDIS_USE}] — "use Redis for session caching" [A/B/skip]'
DEPLOY_PAIR = f'[mem0:{VERCEL}] vs [mem0:{ECS}] — "Deploy the storefront" [A/B/skip]'
PRUNE_LINE = f"  [mem0:{SESSION}] — session_state, 182d old (90-day retention)"

REPORT = "\n".join(
    [
        "## dream — consolidation report",
        "",
        "Merges (1):",
        MERGE_LINE,
        "",
        "Conflicts (2):",
        f"  {REDIS_PAIR}",
        '      A: "Don\'t use Redis for session caching"',
        '      B: "Use Redis for session caching"',
        f"  {DEPLOY_PAIR}",
        '      A: "Deploy the storefront to Vercel"',
        '      B: "Deploy the storefront to ECS"',
        "",
        "Prune (1):",
        PRUNE_LINE,
        "",
        "Proposed: 1 merge, 1 prune, 2 conflicts.",
    ]
)
# --plan asks nothing, nor does the report before the conflicts are asked: its last line ends at
# the counts (docs/dream.md, "Step 4: report"); --apply without --yes asks at once
PLAN_REPORT = REPORT
APPLY_REPORT = REPORT + " Apply? [Y/n]"
C1 = f"Conflict 1/2: {REDIS_PAIR}: "
C2 = f"Conflict 2/2: {DEPLOY_PAIR}: "
APPLY = "Apply? [Y/n] "
CONFLICT_HINT = "Answer A to keep A (B is superseded), B to keep B, or skip (or Enter) to leave both.\n"
APPLY_HINT = "Answer Y (or Enter) to apply, or n to cancel.\n"
CANCELLED = "Cancelled. No changes made."
NO_MEMORIES = "No memories found for project acme-api. Nothing to consolidate."
NO_PROPOSALS = "Dream complete. No duplicate, contradictory, or stale memories found."
AUTO_BUSY = "[mem0-dream --auto] Another run in progress — skipping."
REMINDER_SOURCE = "mem0-dream-auto"


def summary(merged: int, pruned: int, resolved: int, skipped: int, superseded: int = 0) -> str:
    line = f"Dream complete — merged: {merged}, pruned: {pruned}, conflicts resolved: {resolved}, skipped: {skipped}"
    return f"{line}, superseded: {superseded}" if superseded else line


def auto_summary(merged: int, pruned: int, skipped: int, project: str = PROJECT) -> str:
    return f"[mem0-dream --auto] project={project}  merged={merged}  pruned={pruned}  conflicts_skipped={skipped}"


def reminder_text(count: int) -> str:
    noun, them = ("contradiction", "it") if count == 1 else ("contradictions", "them")
    return (
        f"mem0-dream detected {count} {noun} requiring manual review. "
        f"Run /mem0:dream (or mem0-dream in a terminal) to resolve {them} interactively."
    )


def earlier_reminder_text(count: int) -> str:
    """The reminder as earlier versions, and the dream skill's fallback, write it."""
    return (
        f"mem0-dream detected {count} contradiction(s) requiring manual review. "
        "Run /mem0:dream to resolve them interactively."
    )


def make_project(path: Path) -> Path:
    """A git repository on branch BRANCH (no commit needed: `git branch --show-current` names it)."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", BRANCH, str(path)], check=True, capture_output=True)
    return path


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def store_url() -> str:
    """The store the commands use: MEM0_STORE (a PostgreSQL test database: the `backend`
    fixture), else the default SQLite file in MEM0_HOME."""
    return os.environ.get("MEM0_STORE") or f"sqlite:///{os.environ['MEM0_HOME']}/memories.sqlite3"


def store_file() -> Path:
    return Path(os.environ["MEM0_HOME"]) / "memories.sqlite3"


def export(run_cli) -> dict[str, dict]:
    """Every memory of the project, every state, by id (through `mem0-memories export`)."""
    done = run_cli("mem0-memories", "export")
    assert done.returncode == 0, done.stderr
    return {r["id"]: r for r in (json.loads(line) for line in done.stdout.splitlines())}


def export_text(run_cli) -> str:
    done = run_cli("mem0-memories", "export")
    assert done.returncode == 0, done.stderr
    return done.stdout


def events(run_cli, memory_id: str) -> list[str]:
    done = run_cli("mem0-memories", "history", memory_id, "--json")
    assert done.returncode == 0, done.stderr
    return [entry["event"] for entry in json.loads(done.stdout)]


def dream_made(memories: dict[str, dict]) -> dict[str, dict]:
    return {i: r for i, r in memories.items() if r["metadata"].get("source") == "mem0-dream"}


def active_reminders(memories: dict[str, dict]) -> list[dict]:
    return [
        r
        for r in memories.values()
        if r["metadata"].get("source") == REMINDER_SOURCE and r["lifecycle_state"] == "active"
    ]


def update_text(memory_id: str, text: str) -> None:
    """Change a memory through the library, as another client would."""
    with open_store(store_url()) as store:
        with store.write() as writer:
            before = writer.get(USER, memory_id)
            writer.change(before, "UPDATE", "test", memory=text)


def _rows(sql: str) -> list[tuple]:
    """Rows of a query of the store the commands use (SQLite file or PostgreSQL database)."""
    url = store_url()
    if url.startswith("postgres"):
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            return conn.execute(sql).fetchall()  # type: ignore[arg-type]
    with sqlite3.connect(f"file:{store_file()}?mode=ro", uri=True, timeout=5) as conn:
        return conn.execute(sql).fetchall()


def open_runs() -> list[str]:
    return [r[0] for r in _rows("SELECT run_id FROM dream_runs WHERE status = 'applying'")]


def journaled_steps() -> int:
    try:
        return _rows("SELECT count(*) FROM dream_steps")[0][0]
    except Exception:
        return 0


def wait_for_steps(proc, steps: int, timeout: float = 120) -> None:
    """Until the apply of `proc` has journaled `steps` steps (or ended, or `timeout` passed)."""
    deadline = time.monotonic() + timeout
    while journaled_steps() < steps and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)


def check_invariants(original: dict[str, dict], final: dict[str, dict]) -> None:
    """Nothing lost, no half-applied or doubled merge, no dangling pointer (docs/dream.md, step 5)."""
    with open_store(store_url()) as store:
        for memory_id in original:
            if memory_id not in final:  # deleted: the history holds it, and restore can bring it back
                history = store.history(USER, memory_id)
                assert history and history[-1].after is None and history[-1].before is not None, memory_id
                assert history[-1].event == "PRUNE", (memory_id, history[-1].event)
    made = dream_made(final)
    for memory in final.values():
        pointer = memory["replacement_memory_id"]
        if pointer is not None:
            assert pointer in final, f"dangling replacement_memory_id of {memory['id']}"
        if memory["lifecycle_state"] == "merged":
            assert pointer in made, f"{memory['id']} is merged into a memory dream did not make"
            assert memory["id"] in made[pointer]["source_memory_ids"]
    sources = Counter()
    for merged in made.values():
        assert merged["lifecycle_state"] == "active"
        assert len(merged["source_memory_ids"]) >= 2
        for source in merged["source_memory_ids"]:
            assert final[source]["lifecycle_state"] == "merged", f"half-applied merge {merged['id']}"
            assert final[source]["replacement_memory_id"] == merged["id"]
            sources[source] += 1
    doubled = [s for s, n in sources.items() if n > 1]
    assert not doubled, f"memories merged twice: {doubled[:5]}"


def big_records(items: int, *, conflicts: int = 0) -> tuple[list[dict], int, int]:
    """A large store: `items // 3` (rounded up) merge pairs, as many retention prunes, and
    as many memories in nothing; plus `conflicts` port conflicts. Returns (records, merges, prunes)."""
    words = [
        "alpha",
        "bravo",
        "charlie",
        "delta",
        "echo",
        "foxtrot",
        "golf",
        "hotel",
        "india",
        "juliet",
        "kilo",
        "lima",
        "mike",
        "november",
        "oscar",
        "papa",
        "quebec",
        "romeo",
        "sierra",
        "tango",
    ]
    records, merges, prunes = [], 0, 0
    counter = iter(range(1, 10**9))

    def add(text, type_, confidence, created):
        records.append(record(str(uuid.UUID(int=next(counter), version=4)), text, type_, confidence, created))

    for i in range(items):
        name = words[i % 20] + words[(i // 20) % 20] + words[(i // 400) % 20]
        if i % 3 == 0:
            add(f"Use PostgreSQL for the {name} service", "decision", 0.8, "2026-10-01T10:00:00+00:00")
            add(f"The {name} service DB is PostgreSQL", "decision", 0.7, "2026-11-01T10:00:00+00:00")
            merges += 1
        elif i % 3 == 1:
            add(f"Session state: refactoring the {name} module", "session_state", 0.9, "2026-06-01T10:00:00+00:00")
            prunes += 1
        else:
            add(
                f"The {name} worker reads jobs from the {name}-queue",
                "project_profile",
                0.8,
                "2026-11-01T10:00:00+00:00",
            )
    for j in range(conflicts):
        name = words[j % 20] + "gateway"
        add(f"The {name} dev server listens on port 8080", "environmental", 0.7, "2026-09-01T10:00:00+00:00")
        add(f"The {name} dev server listens on port 3000", "environmental", 0.7, "2026-11-01T10:00:00+00:00")
    return records, merges, prunes
