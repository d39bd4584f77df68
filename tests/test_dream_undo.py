"""`mem0-dream --runs` and `--undo` end to end, on real SQLite files (docs/dream.md, "Runs and undo"):
an undone run gives back the export it started from, a memory changed since is left alone and
named, bad run ids are refused with their exit codes, and a store of the previous schema
upgrades with its runs listed and undoable.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest
from dream_support import (
    APPLY,
    BASE,
    C1,
    C2,
    NOW,
    PG_NEW,
    PG_OLD,
    RUFF,
    SESSION,
    active_reminders,
    dream_made,
    events,
    export,
    export_text,
    make_project,
    record,
    reminder_text,
    store_file,
    store_url,
    summary,
    uid,
    update_text,
    write_jsonl,
)
from mem0_plugin.store import open_store
from mem0_plugin.store.sqlite.migrations import MIGRATIONS

NO_CONFLICTS = [r for r in BASE if r["id"] in (PG_OLD, PG_NEW, SESSION, RUFF)]  # one merge, one prune
SESSION2 = uid(9)  # a second retention prune, younger than SESSION (so pruned after it)
# the schema version before runs and undo: the migrations before the one adding them
BEFORE_RUNS = next(i for i, m in enumerate(MIGRATIONS) if isinstance(m, str) and "dream_run_id" in m)


@pytest.fixture
def project(tmp_path) -> Path:
    return make_project(tmp_path / "project")


@pytest.fixture
def dream(run_cli, project):
    def run(*args: str, input: str | None = None) -> subprocess.CompletedProcess:
        return run_cli("mem0-dream", *args, "--now", NOW, input=input, cwd=str(project))

    return run


@pytest.fixture
def seed(run_cli, tmp_path):
    def do(records: list[dict]) -> None:
        done = run_cli("mem0-memories", "import", str(write_jsonl(tmp_path / "seed.jsonl", records)))
        assert done.returncode == 0, done.stderr

    return do


def ok(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    return done.stdout


def refused(done: subprocess.CompletedProcess, code: int) -> str:
    """Exit `code`, one line on stderr, nothing on stdout."""
    assert (done.returncode, done.stdout) == (code, ""), (done.returncode, done.stdout, done.stderr)
    [line] = done.stderr.splitlines()
    assert line.startswith("mem0-dream: error: "), line
    return line.removeprefix("mem0-dream: error: ")


def runs_json(dream) -> list[dict]:
    return json.loads(ok(dream("--runs", "--json")))


def run_line(run: dict, status: str) -> str:
    """The documented `--runs` line, from the run's JSON."""
    when = run["started_at"][:16].replace("T", " ")
    return (
        f"{run['run_id'][:8]}  {when}  {(run['mode'] or 'unknown'):<11}  merged={run['merged']}  "
        f"superseded={run['superseded']}  pruned={run['pruned']}  resolved={run['resolved']}  "
        f"synthesized={run['synthesized']}  not_applied={run['not_applied']}  "
        + (f"reminder={run['reminder']}  " if run["reminder"] is not None else "")
        + status
    )


def test_auto_run_listed_then_undone_gives_back_the_export_it_started_from(backend, dream, seed, run_cli):
    seed(NO_CONFLICTS)
    before = export_text(run_cli)
    assert ok(dream("--runs")) == "No dream runs recorded for project acme-api.\n"
    ok(dream("--auto"))
    [run] = runs_json(dream)
    assert {k: run[k] for k in ("mode", "status", "merged", "pruned", "resolved", "not_applied", "undone_at")} == {
        "mode": "auto",
        "status": "done",
        "merged": 1,
        "pruned": 1,
        "resolved": 0,
        "not_applied": 0,
        "undone_at": None,
    }
    assert ok(dream("--runs")) == run_line(run, "done") + "\n"
    [made] = dream_made(export(run_cli))

    done = dream("--undo", run["run_id"][:8], input="y\n")
    short = run["run_id"][:8]
    assert (
        ok(done)
        == "\n".join(
            [
                f"## dream — undo of run {short} (auto, {run['started_at'][:16].replace('T', ' ')})",
                "",
                "Restore (3):",
                f'  [mem0:{PG_OLD}] — merged → active: "Use PostgreSQL for auth"',
                f'  [mem0:{PG_NEW}] — merged → active: "Auth DB is PostgreSQL"',
                f'  [mem0:{SESSION}] — pruned → active: "Session state: refactoring the billing module"',
                "",
                "Retire (1):",
                f'  [mem0:{made}] — made by the run → deleted: "Auth DB is PostgreSQL"',
                "",
                "Undo: 3 restores, 1 retires, 0 left alone. Apply? [Y/n] "
                f"Undo complete — run {short}: restored: 3, retired: 1, left alone: 0",
            ]
        )
        + "\n"
    )
    assert export_text(run_cli) == before  # every record as it was, updated_at included
    assert events(run_cli, PG_OLD) == ["IMPORT", "MERGE", "UNDO"]
    assert events(run_cli, SESSION) == ["IMPORT", "PRUNE", "UNDO"]
    assert events(run_cli, made) == ["ADD", "UNDO"]  # deleted with its history: restore can bring it back
    [undone] = runs_json(dream)
    assert undone["status"] == "undone" and undone["undone_at"] is not None
    assert ok(dream("--runs")) == run_line(undone, "undone") + "\n"

    again = refused(dream("--undo", run["run_id"], "--yes"), 2)
    assert again == f"dream run {run['run_id']} was already undone at {undone['undone_at']}"
    assert export_text(run_cli) == before


def test_interactive_run_resolving_conflicts_is_undone_with_yes(dream, seed, run_cli):
    seed(BASE)
    before = export_text(run_cli)
    assert ok(dream(input="a\nb\ny\n")).endswith(C1 + C2 + APPLY + summary(1, 1, 2, 0) + "\n")
    [run] = runs_json(dream)
    assert (run["mode"], run["merged"], run["pruned"], run["resolved"]) == ("interactive", 1, 1, 2)
    done = ok(dream("--undo", run["run_id"], "--yes"))
    assert done == f"Undo complete — run {run['run_id'][:8]}: restored: 5, retired: 1, left alone: 0\n"
    # the two conflicts are a person's to settle again: the reminder counts them
    after = export(run_cli)
    [reminder] = active_reminders(after)
    assert reminder["memory"] == reminder_text(2)
    assert [line for line in export_text(run_cli).splitlines() if reminder["id"] not in line] == before.splitlines()


def test_undo_adds_the_conflicts_it_brings_back_to_the_reminder(dream, seed, run_cli):
    seed(BASE)
    ok(dream("--auto"))  # two conflicts skipped: the reminder counts 2
    ok(dream(input="a\nskip\ny\n"))  # one settled, one left: it counts 1
    [reminder] = active_reminders(export(run_cli))
    assert reminder["memory"] == reminder_text(1)
    interactive = runs_json(dream)[0]
    ok(dream("--undo", interactive["run_id"], "--yes"))
    assert [(r["id"], r["memory"]) for r in active_reminders(export(run_cli))] == [(reminder["id"], reminder_text(2))]
    assert "Proposed: 0 merges, 0 prunes, 2 conflicts." in ok(dream("--plan"))


def test_memories_changed_since_the_run_are_left_alone_and_named(backend, dream, seed, run_cli):
    seed(
        [
            *NO_CONFLICTS,
            record(
                SESSION2, "Session state: moving the invoices job", "session_state", 0.9, "2026-07-01T10:00:00+00:00"
            ),
        ]
    )
    ok(dream("--auto"))
    [run] = runs_json(dream)
    [made] = dream_made(export(run_cli))
    update_text(made, "Auth DB is PostgreSQL 16")  # the merged memory, edited since
    assert ok(run_cli("mem0-memories", "restore", SESSION)) == f"Restored {SESSION} (active).\n"
    changed = export(run_cli)

    done = ok(dream("--undo", run["run_id"][:10], "--yes"))
    assert (
        done
        == "\n".join(
            [
                f"[mem0:{made}] changed since the run — left alone",
                f"[mem0:{PG_OLD}] part of a merge that changed since the run — left alone",
                f"[mem0:{PG_NEW}] part of a merge that changed since the run — left alone",
                f"[mem0:{SESSION}] changed since the run — left alone",
                f"Undo complete — run {run['run_id'][:8]}: restored: 1, retired: 0, left alone: 4",
            ]
        )
        + "\n"
    )
    after = export(run_cli)
    assert after[SESSION2]["lifecycle_state"] == "active"
    assert {i: r for i, r in after.items() if i != SESSION2} == changed  # the rest untouched
    assert events(run_cli, SESSION) == ["IMPORT", "PRUNE", "RESTORE"]


def test_nothing_left_to_undo_writes_nothing_and_keeps_the_run(dream, seed, run_cli):
    seed(NO_CONFLICTS)
    ok(dream("--auto"))
    [run] = runs_json(dream)
    ok(run_cli("mem0-memories", "restore", SESSION))
    [made] = dream_made(export(run_cli))
    update_text(made, "Auth DB is PostgreSQL 16")
    changed = export_text(run_cli)
    assert ok(dream("--undo", run["run_id"], input="y\n")).endswith("— left alone\nNothing to undo.\n")
    assert export_text(run_cli) == changed
    assert runs_json(dream)[0]["status"] == "done"


def _insert_run(run_id: str, started_at: str, *, app_id: str = "acme-api", mode: str | None = None) -> None:
    with sqlite3.connect(store_file()) as conn:
        conn.execute(
            "INSERT INTO dream_runs (run_id, user_id, app_id, started_at, finished_at, status, plan, mode) "
            "VALUES (?, 'alice', ?, ?, ?, 'done', '{}', ?)",
            (run_id, app_id, started_at, started_at, mode),
        )
    conn.close()


def test_run_ids_unknown_ambiguous_too_short_or_of_another_project_are_refused(dream):
    store_file().parent.mkdir(parents=True, exist_ok=True)  # an explicit store needs its directory
    open_store(store_url()).close()  # create the store
    first, second = "abcdef12-0000-4000-8000-000000000001", "abcdef12-0000-4000-8000-000000000002"
    _insert_run(first, "2026-11-01T03:17:00+00:00", mode="apply")
    _insert_run(second, "2026-11-02T03:17:00.250000+00:00")
    _insert_run("0ddba11a-0000-4000-8000-000000000003", "2026-11-03T03:17:00+00:00", app_id="other-project")
    assert ok(dream("--runs")) == (
        "abcdef12  2026-11-02 03:17  unknown      merged=0  superseded=0  pruned=0  resolved=0  synthesized=0  not_applied=0  done\n"
        "abcdef12  2026-11-01 03:17  apply        merged=0  superseded=0  pruned=0  resolved=0  synthesized=0  "
        "not_applied=0  done\n"
    )
    assert (
        refused(dream("--undo", "abcdef12"), 2)
        == "id prefix abcdef12 matches 2 dream runs; give more characters of the id"
    )
    assert (
        refused(dream("--undo", "abcdef1"), 2) == "id prefix abcdef1 is too short: give at least 8 characters of the id"
    )
    assert refused(dream("--undo", "ffffffff"), 3) == "dream run ffffffff not found"
    assert refused(dream("--undo", "0ddba11a"), 3) == "dream run 0ddba11a not found"  # another project's
    assert ok(dream("--undo", first, "--yes")) == "Nothing to undo.\n"  # a run that wrote nothing
    usage = dream("--yes")
    assert (usage.returncode, usage.stderr) == (
        2,
        "mem0-dream: error: --yes goes with --apply or --undo (see mem0-dream --help)\n",
    )


def _table_columns(conn: sqlite3.Connection) -> dict[str, list[tuple]]:
    tables = [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'memories_fts%' "
            "AND name <> 'sqlite_sequence' ORDER BY name"
        )
    ]
    return {t: conn.execute(f"PRAGMA table_info({t})").fetchall() for t in tables}


def test_a_store_of_the_previous_schema_upgrades_with_its_runs_listed_and_undoable(dream, seed, run_cli):
    seed(NO_CONFLICTS)
    before = export_text(run_cli)
    ok(dream("--auto"))
    # Back to the schema before runs and undo (5), as a store written then: its history names no run.
    with sqlite3.connect(store_file()) as conn:
        conn.execute("DROP INDEX history_dream_run")
        for trigger in ("insert", "delete", "update"):  # and the vector counts (migration 8)
            conn.execute(f"DROP TRIGGER vector_counts_{trigger}")
        conn.execute("DROP TABLE vector_counts")
        for trigger in ("insert", "delete", "update"):  # and BM25's statistics (migration 10)
            conn.execute(f"DROP TRIGGER bm25_{trigger}")
        conn.execute("DROP TABLE term_counts")
        conn.execute("DROP TABLE scope_sizes")
        conn.execute("ALTER TABLE history DROP COLUMN dream_run_id")
        for column in ("mode", "merged", "superseded", "pruned", "resolved", "not_applied", "undone_at"):
            conn.execute(f"ALTER TABLE dream_runs DROP COLUMN {column}")
        conn.execute(f"PRAGMA user_version = {BEFORE_RUNS}")
        old = _table_columns(conn)
    conn.close()
    fresh = sqlite3.connect(":memory:")
    for script in MIGRATIONS[:BEFORE_RUNS]:
        script(fresh) if callable(script) else fresh.executescript(script)
    assert _table_columns(fresh) == old  # really the previous schema
    fresh.close()

    [run] = runs_json(dream)  # opening the store upgraded it: counts from the journal, no mode
    assert (run["mode"], run["merged"], run["pruned"], run["status"]) == (None, 1, 1, "done")
    assert ok(dream("--runs")) == run_line(run, "done") + "\n"
    assert "unknown" in run_line(run, "done")
    assert ok(dream("--undo", run["run_id"], "--yes")).startswith("Undo complete")
    assert export_text(run_cli) == before
