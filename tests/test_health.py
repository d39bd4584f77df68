"""`mem0-health` (docs/health.md): exact output on healthy and broken stores, lock states, --json, --deep."""

from __future__ import annotations

import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
from mem0_plugin import health as health_checks
from mem0_plugin.quality import known_types, scan_quality
from mem0_plugin.records import Memory
from mem0_plugin.store import SqliteStore

NOW = "2026-06-01T00:00:00Z"
PLANTED = [
    (
        "00000000-0000-4000-8000-000000000001",
        "Run the test suite with pytest before every commit",
        {"type": "convention"},
        "2026-05-01T10:00:00Z",
    ),
    (
        "00000000-0000-4000-8000-000000000002",
        "Always run the test suite with pytest before every commit",
        {"type": "convention"},
        "2026-05-02T10:00:00Z",
    ),
    (
        "00000000-0000-4000-8000-000000000003",
        "Working on the login refactor in src/auth/login.py",
        {"type": "session_state"},
        "2026-01-10T10:00:00Z",
    ),
    (
        "00000000-0000-4000-8000-000000000004",
        "Maybe caching helps sometimes",
        {"type": "task_learning", "confidence": 0.2},
        "2026-04-01T10:00:00Z",
    ),
    ("00000000-0000-4000-8000-000000000005", "Deploy the API to ECS", {"type": "decision"}, "2026-03-01T10:00:00Z"),
    ("00000000-0000-4000-8000-000000000006", "Deploy the API to Vercel", {"type": "decision"}, "2026-05-20T10:00:00Z"),
    ("00000000-0000-4000-8000-000000000007", "The staging database is called acme-stage", {}, "2026-05-03T10:00:00Z"),
    (
        "00000000-0000-4000-8000-000000000008",
        "CI uploads artifacts with the AWS key AKIAIOSFODNN7EXAMPLE",
        {"type": "environmental"},
        "2026-05-04T10:00:00Z",
    ),
    (
        "00000000-0000-4000-8000-000000000009",
        "Prefer small pull requests",
        {"type": "user_preference", "confidence": 0.4},
        "2026-05-05T10:00:00Z",
    ),
]


def ms_masked(text: str) -> str:
    return re.sub(r"(PASS  Search           )\d+ms", r"\1<N>ms", text)


def store_url(home: Path) -> str:
    """The store the commands use: MEM0_STORE when set (the `backend` fixture), else the default."""
    return os.environ.get("MEM0_STORE") or f"sqlite:///{home}/memories.sqlite3"


def health(run_cli, tmp_path, *args, **kw):
    return run_cli("mem0-health", *args, cwd=str(tmp_path), **kw)


def plant(run_cli, tmp_path, records) -> None:
    lines = [json.dumps({"id": i, "memory": text, "metadata": meta, "created_at": at}) for i, text, meta, at in records]
    source = tmp_path / "planted.jsonl"
    source.write_text("\n".join(lines) + "\n")
    done = run_cli("mem0-memories", "import", str(source), cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr


def checks(home: Path, count: str, *, lock: str = "PASS  Dream lock       free", deep: bool = False) -> list[str]:
    write = (
        "SKIP  Write/Read       skipped: --deep is read-only" if deep else "PASS  Write/Read       write + delete OK"
    )
    return [
        "## mem0 health",
        "",
        f"PASS  Store            {store_url(home)} ({count})",
        "PASS  Identity         user=alice, project=acme-api, branch=unknown",
        "PASS  Search           <N>ms",
        write,
        lock,
        "",
    ]


# ---------------------------------------------------------------- healthy


def test_healthy_store_exact_output(run_cli, tmp_path, mem0_home):
    plant(run_cli, tmp_path, PLANTED[:3])
    done = health(run_cli, tmp_path)
    assert done.returncode == 0, done.stderr
    assert ms_masked(done.stdout) == "\n".join(checks(mem0_home, "3 memories") + ["All checks passed.", ""])
    assert done.stderr == ""


def test_count_uses_thousands_separator_and_the_projects_memories(backend, run_cli, tmp_path, mem0_home):
    records = [
        (None, f"note number {n} about module m{n}", {"type": "decision"}, "2026-05-01T10:00:00Z") for n in range(1204)
    ]
    lines = [json.dumps({"memory": text, "metadata": meta, "created_at": at}) for _, text, meta, at in records]
    lines.append(json.dumps({"memory": "another project's note", "app_id": "other-app"}))
    (tmp_path / "many.jsonl").write_text("\n".join(lines))
    assert run_cli("mem0-memories", "import", str(tmp_path / "many.jsonl"), cwd=str(tmp_path)).returncode == 0
    done = health(run_cli, tmp_path)
    # a PostgreSQL store's line also says how it ranks vectors (docs/stores.md, "Vectors")
    vectors = r"; vectors: (pgvector [\d.]+|ranked in process \(.+\))" if backend == "postgresql" else ""
    assert re.search(
        rf"PASS  Store            {re.escape(store_url(mem0_home))} \(1,204 memories{vectors}\)\n", done.stdout
    )


def test_write_probe_leaves_no_trace(run_cli, tmp_path, mem0_home):
    plant(run_cli, tmp_path, PLANTED[:1])
    for _ in range(2):
        assert health(run_cli, tmp_path).returncode == 0
    with sqlite3.connect(mem0_home / "memories.sqlite3") as conn:
        assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 1
        assert conn.execute("SELECT count(*) FROM memories WHERE app_id = '__mem0_health__'").fetchone()[0] == 0
        history_ids = {row[0] for row in conn.execute("SELECT memory_id FROM history")}
    assert history_ids == {"00000000-0000-4000-8000-000000000001"}
    listed = run_cli("mem0-memories", "list", "--json", cwd=str(tmp_path))
    assert json.loads(listed.stdout)["count"] == 1


def test_write_probe_sweeps_a_leftover_probe(run_cli, tmp_path, mem0_home):
    with SqliteStore(mem0_home / "memories.sqlite3") as store, store.write() as writer:
        writer.insert(
            Memory(
                id="00000000-0000-4000-8000-00000000dead",
                memory="probe",
                user_id="alice",
                app_id="__mem0_health__",
                metadata={"source": "mem0-health"},
                created_at="2026-05-01T00:00:00+00:00",
                updated_at="2026-05-01T00:00:00+00:00",
            ),
            actor="mem0-health",
        )
    assert health(run_cli, tmp_path).returncode == 0
    with sqlite3.connect(mem0_home / "memories.sqlite3") as conn:
        assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM history").fetchone()[0] == 0


# ---------------------------------------------------------------- broken stores


def test_unwritable_home_exact_output(run_cli, tmp_path):
    blocker = tmp_path / "afile"
    blocker.write_text("a regular file where a directory should be\n")
    home = blocker / "home"
    done = health(run_cli, tmp_path, env={"MEM0_HOME": str(home)})
    assert done.returncode == 1
    assert done.stdout == "\n".join(
        [
            "## mem0 health",
            "",
            f"FAIL  Store            cannot create the store directory {home}: Not a directory",
            "PASS  Identity         user=alice, project=acme-api, branch=unknown",
            "FAIL  Search           not run: the store did not open",
            "FAIL  Write/Read       not run: the store did not open",
            "PASS  Dream lock       free",
            "",
            "3 checks failed.",
            "",
            "## Troubleshooting",
            "",
            f"- Store: {blocker} is not a directory, so {home} cannot be created. Set MEM0_HOME to a writable "
            f"directory (or --store <file path>), or move {blocker} aside.",
            "- Search: fix the Store check first; this check needs an open store.",
            "- Write/Read: fix the Store check first; this check needs an open store.",
            "",
        ]
    )


def test_corrupt_database_exact_output(run_cli, tmp_path, mem0_home):
    mem0_home.mkdir()
    db = mem0_home / "memories.sqlite3"
    db.write_bytes(b"\x00junk, not a database\xff" * 100)
    done = health(run_cli, tmp_path)
    assert done.returncode == 1
    assert done.stdout == "\n".join(
        [
            "## mem0 health",
            "",
            f"FAIL  Store            cannot open the store {db}: file is not a database",
            "PASS  Identity         user=alice, project=acme-api, branch=unknown",
            "FAIL  Search           not run: the store did not open",
            "FAIL  Write/Read       not run: the store did not open",
            "PASS  Dream lock       free",
            "",
            "3 checks failed.",
            "",
            "## Troubleshooting",
            "",
            f"- Store: {db} is not a readable SQLite database (corrupt or not a store). Move it aside: "
            f"mv {db} {db}.corrupt and run mem0-health again (a new, empty store is created); then restore your "
            f"memories from a backup written by `mem0-memories export -o FILE` with `mem0-memories import FILE`.",
            "- Search: fix the Store check first; this check needs an open store.",
            "- Write/Read: fix the Store check first; this check needs an open store.",
            "",
        ]
    )
    assert db.read_bytes() == b"\x00junk, not a database\xff" * 100


def test_corrupt_database_deep_still_prints_memory_quality(run_cli, tmp_path, mem0_home):
    mem0_home.mkdir()
    (mem0_home / "memories.sqlite3").write_bytes(b"junk" * 1000)
    done = health(run_cli, tmp_path, "--deep")
    assert done.returncode == 1
    assert "SKIP  Write/Read       skipped: --deep is read-only\n" in done.stdout
    assert done.stdout.endswith("## Memory Quality\n\nNot scanned: the store could not be read (see Store above).\n")


def test_unsupported_store_url(run_cli, tmp_path):
    done = health(run_cli, tmp_path, "--store", "mysql://db/mem0")
    assert done.returncode == 1
    assert (
        "FAIL  Store            store URL scheme 'mysql' is not supported; use sqlite:////<absolute path>, "
        "sqlite:///<relative path>, a plain file path or postgresql://…, or mem0://, "
        "mem0://<host>[:port][/path] (https) or mem0+http://<host>[:port][/path]\n"
    ) in done.stdout
    assert "- Store: set --store or MEM0_STORE to sqlite:////<absolute path> (four slashes)" in done.stdout


def test_an_unreachable_postgresql_store_fails_with_its_password_masked(run_cli, tmp_path):
    done = health(run_cli, tmp_path, "--store", "postgresql://app:secret@127.0.0.1:1/mem0")
    assert done.returncode == 1 and "secret" not in done.stdout
    assert "FAIL  Store            cannot open the store postgresql://app:***@127.0.0.1:1/mem0: " in done.stdout
    assert (
        "- Store: check that the PostgreSQL server of postgresql://app:***@127.0.0.1:1/mem0 is running" in done.stdout
    )


@pytest.mark.parametrize("deep", [False, True])
@pytest.mark.parametrize("where", ["no/such/dir/m.sqlite3", "m.sqlite3"])
def test_an_explicit_store_that_does_not_exist_fails_and_is_not_created(run_cli, tmp_path, deep, where):
    path = tmp_path / where
    done = health(run_cli, tmp_path, "--store", f"sqlite:///{path}", *(["--deep"] if deep else []))
    assert done.returncode == 1
    detail = f"no store at {path}" if path.parent.is_dir() else f"the store's directory does not exist: {path.parent}"
    assert f"FAIL  Store            {detail}\n" in done.stdout
    assert "- Store: check --store / MEM0_STORE: sqlite:////<absolute path> has four slashes" in done.stdout
    assert not path.exists() and not (tmp_path / "no").exists()


def test_a_bare_path_is_a_store(run_cli, tmp_path, mem0_home):
    plant(run_cli, tmp_path, PLANTED[:2])
    done = health(run_cli, tmp_path, "--store", str(mem0_home / "memories.sqlite3"))
    assert done.returncode == 0, done.stdout
    assert f"PASS  Store            {mem0_home / 'memories.sqlite3'} (2 memories)\n" in done.stdout


def test_bad_cwd_fails_identity_but_runs_every_check(run_cli, tmp_path):
    done = health(run_cli, tmp_path, "--cwd", str(tmp_path / "missing"))
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert [line[:22] for line in lines[2:7]] == [
        "FAIL  Store           ",
        "FAIL  Identity        ",
        "FAIL  Search          ",
        "FAIL  Write/Read      ",
        "PASS  Dream lock      ",
    ]
    assert f"FAIL  Identity         --cwd is not a directory: {tmp_path / 'missing'}" in lines


# ---------------------------------------------------------------- the dream lock


def write_lock(path: Path, pid: int, epoch: float, host: str | None = None) -> None:
    path.write_text(
        json.dumps({"time": "x", "epoch": epoch, "pid": pid, "host": host or socket.gethostname(), "token": "t"})
    )


def since(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def test_lock_held_by_a_live_run_passes(run_cli, tmp_path, mem0_home):
    lock = Path(os.environ["MEM0_DREAM_LOCK"])
    epoch = time.time()
    write_lock(lock, os.getpid(), epoch)
    done = health(run_cli, tmp_path)
    assert done.returncode == 0
    line = (
        f"PASS  Dream lock       held by pid {os.getpid()} on host {socket.gethostname()} since "
        f"{since(epoch)} (a mem0-dream --auto run in progress)"
    )
    assert ms_masked(done.stdout) == "\n".join(checks(mem0_home, "0 memories", lock=line) + ["All checks passed.", ""])
    assert lock.exists()


def test_lock_older_than_ten_minutes_is_stale(run_cli, tmp_path):
    lock = Path(os.environ["MEM0_DREAM_LOCK"])
    write_lock(lock, os.getpid(), 1_700_000_000.0)
    done = health(run_cli, tmp_path)
    assert done.returncode == 1
    assert (
        f"FAIL  Dream lock       stale: held by pid {os.getpid()} on host {socket.gethostname()} since "
        f"2023-11-14 22:13:20 UTC (older than 10 minutes)\n"
    ) in done.stdout
    assert done.stdout.endswith(
        "\n1 check failed.\n\n## Troubleshooting\n\n"
        f"- Dream lock: a mem0-dream --auto run was killed or crashed without removing {lock}. Harmless: the next "
        f"--auto run takes the lock over. To clear it now: rm {lock}\n"
    )
    assert lock.exists(), "health only reports; it removes nothing"


def test_lock_of_a_dead_process_is_stale(run_cli, tmp_path):
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(finished.stdout)
    lock = Path(os.environ["MEM0_DREAM_LOCK"])
    epoch = time.time()
    write_lock(lock, dead_pid, epoch)
    done = health(run_cli, tmp_path)
    assert done.returncode == 1
    assert (
        f"FAIL  Dream lock       stale: held by pid {dead_pid} on host {socket.gethostname()} since "
        f"{since(epoch)} (that process no longer exists)\n"
    ) in done.stdout


def test_lock_path_that_is_a_symlink_is_unusable(run_cli, tmp_path):
    lock = Path(os.environ["MEM0_DREAM_LOCK"])
    lock.symlink_to(tmp_path / "elsewhere")
    done = health(run_cli, tmp_path)
    assert done.returncode == 1
    assert f"FAIL  Dream lock       unusable: {lock}\n" in done.stdout
    assert (
        f"- Dream lock: the lock path {lock} is a symbolic link; refusing to follow it. Remove the link "
        f"(rm {lock}) or set MEM0_DREAM_LOCK to another path.\n"
    ) in done.stdout
    assert not (tmp_path / "elsewhere").exists()


def test_lock_in_a_missing_directory_is_unusable(run_cli, tmp_path):
    lock = tmp_path / "no-such-dir" / "dream.lock"
    done = health(run_cli, tmp_path, env={"MEM0_DREAM_LOCK": str(lock)})
    assert done.returncode == 1
    assert f"FAIL  Dream lock       unusable: {lock}\n" in done.stdout
    assert "is missing or not writable. Set MEM0_DREAM_LOCK to a file path in a writable directory." in done.stdout


# ---------------------------------------------------------------- --json


def test_json_shape(run_cli, tmp_path):
    done = health(run_cli, tmp_path, "--json")
    assert done.returncode == 0
    answer = json.loads(done.stdout)
    assert set(answer) == {"ok", "checks", "quality"}
    assert answer["ok"] is True and answer["quality"] is None
    assert [c["name"] for c in answer["checks"]] == ["Store", "Identity", "Search", "Write/Read", "Dream lock"]
    assert all(set(c) == {"name", "status", "ok", "detail", "fix"} for c in answer["checks"])
    assert [c["status"] for c in answer["checks"]] == ["PASS"] * 5


def test_json_failure_exits_one(run_cli, tmp_path, mem0_home):
    mem0_home.mkdir()
    (mem0_home / "memories.sqlite3").write_bytes(b"junk" * 100)
    done = health(run_cli, tmp_path, "--json", "--deep")
    assert done.returncode == 1
    answer = json.loads(done.stdout)
    assert answer["ok"] is False and answer["quality"] is None
    statuses = {c["name"]: c["status"] for c in answer["checks"]}
    assert statuses == {
        "Store": "FAIL",
        "Identity": "PASS",
        "Search": "FAIL",
        "Write/Read": "SKIP",
        "Dream lock": "PASS",
    }
    assert "mv " in answer["checks"][0]["fix"]


# ---------------------------------------------------------------- --deep


def files(home: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(home.iterdir())}


ID = "[mem0:00000000-0000-4000-8000-00000000000{}]"


def test_deep_finds_planted_problems_and_writes_nothing(run_cli, tmp_path, mem0_home):
    plant(run_cli, tmp_path, PLANTED)
    before = files(mem0_home)
    assert list(before) == ["memories.sqlite3"]
    done = health(run_cli, tmp_path, "--deep", "--now", NOW)
    assert done.returncode == 0, done.stderr
    assert files(mem0_home) == before
    assert ms_masked(done.stdout) == "\n".join(
        checks(mem0_home, "9 memories", deep=True)
        + [
            "All checks passed.",
            "",
            "## Quality scan",
            "",
            "Scanned 9 memories of project acme-api.",
            "",
            "Duplicates (1):",
            f"  {ID.format(1)} ≈ {ID.format(2)} — convention, 100% similar: "
            '"Run the test suite with pytest before every commit" / "Always run the test suite with pytest before every commit"',
            "",
            "Stale (2):",
            f'  {ID.format(3)} — session_state, 141d old: "Working on the login refactor in src/auth/login.py"',
            f'  {ID.format(4)} — task_learning, confidence 0.2, 60d old: "Maybe caching helps sometimes"',
            "",
            "Low confidence (2):",
            f'  {ID.format(4)} — task_learning, confidence 0.2: "Maybe caching helps sometimes"',
            f'  {ID.format(9)} — user_preference, confidence 0.4: "Prefer small pull requests"',
            "",
            "Contradictions (1):",
            f'  {ID.format(6)} vs {ID.format(5)} — decision: "Deploy the API"',
            "",
            "Orphans (1):",
            f'  {ID.format(7)} — no type: "The staging database is called acme-stage"',
            "",
            "Credentials (1):",
            f'  {ID.format(8)} — AWS access key: "CI uploads artifacts with the AWS key AKIA****"',
            CREDENTIAL_ADVICE,
            "",
            "## Memory Quality",
            "",
            "Duplicates: 1 · Stale: 2 · Contradictions: 1 · Orphans: 1",
            "Run /mem0:dream (or mem0-dream in a terminal) to fix.",
            "",
        ]
    )
    assert "AKIAIOSFODNN7EXAMPLE" not in done.stdout


CREDENTIAL_ADVICE = (
    "  Rotate these credentials, then erase the memories and their history: "
    "mem0-forget --ids ID,... --purge --yes (a plain delete keeps the text in the store's history)."
)


def test_the_credential_advice_erases_the_text_from_the_history_too(run_cli, tmp_path, mem0_home):
    """The command health --deep advises, run as written with the flagged id, leaves the
    credential nowhere in the store: not as a memory, not in the history."""
    plant(run_cli, tmp_path, PLANTED)
    done = health(run_cli, tmp_path, "--deep", "--json", "--now", NOW)
    [flagged] = json.loads(done.stdout)["quality"]["credentials"]
    command = CREDENTIAL_ADVICE.split(": ", 1)[1].split(" (", 1)[0].replace("ID,...", flagged["id"])
    name, *args = command.split()
    assert run_cli(name, *args).returncode == 0
    history = json.loads(run_cli("mem0-memories", "history", flagged["id"], "--json", "--show-secrets").stdout)
    assert "AKIAIOSFODNN7EXAMPLE" not in json.dumps(history)
    assert b"AKIAIOSFODNN7EXAMPLE" not in (mem0_home / "memories.sqlite3").read_bytes()


def test_deep_json_lists_findings_with_masked_previews(run_cli, tmp_path, mem0_home):
    plant(run_cli, tmp_path, PLANTED)
    before = files(mem0_home)
    done = health(run_cli, tmp_path, "--deep", "--json", "--now", NOW)
    assert files(mem0_home) == before
    quality = json.loads(done.stdout)["quality"]
    assert quality["counts"] == {
        "duplicates": 1,
        "stale": 2,
        "contradictions": 1,
        "orphans": 1,
        "low_confidence": 2,
        "credentials": 1,
    }
    assert quality["clean"] is False
    assert quality["contradictions"] == [
        {
            "ids": ["00000000-0000-4000-8000-000000000006", "00000000-0000-4000-8000-000000000005"],
            "type": "decision",
            "topic": "Deploy the API",
        }
    ]
    assert quality["orphans"] == [{"id": "00000000-0000-4000-8000-000000000007", "type": None}]
    assert quality["credentials"][0]["kinds"] == ["AWS access key"]
    assert "AKIAIOSFODNN7EXAMPLE" not in done.stdout


def test_deep_on_a_clean_store(run_cli, tmp_path, mem0_home):
    plant(run_cli, tmp_path, [PLANTED[0], PLANTED[4]])
    done = health(run_cli, tmp_path, "--deep", "--now", NOW)
    assert done.returncode == 0
    assert done.stdout.endswith(
        "\n## Quality scan\n\nScanned 2 memories of project acme-api.\n\n"
        "## Memory Quality\n\nDuplicates: 0 · Stale: 0 · Contradictions: 0 · Orphans: 0\n"
        "Memory quality: clean.\n"
    )


def test_deep_without_a_store_creates_nothing(run_cli, tmp_path, mem0_home):
    done = health(run_cli, tmp_path, "--deep")
    assert done.returncode == 0
    assert f"PASS  Store            {store_url(mem0_home)} (no store file yet, 0 memories)\n" in done.stdout
    assert "SKIP  Search           skipped: no store file yet\n" in done.stdout
    assert done.stdout.endswith("Memory quality: clean.\n")
    assert not mem0_home.exists()


def test_deep_next_to_a_live_writer_leaves_db_and_wal_identical(run_cli, tmp_path, mem0_home):
    plant(run_cli, tmp_path, PLANTED)
    with SqliteStore(mem0_home / "memories.sqlite3") as writer_store:
        with writer_store.write() as writer:  # a connected writer with un-checkpointed WAL content
            writer.insert(
                Memory(
                    id="00000000-0000-4000-8000-0000000000aa",
                    memory="Use ruff for linting",
                    user_id="alice",
                    app_id="acme-api",
                    metadata={"type": "convention"},
                    created_at="2026-05-10T00:00:00+00:00",
                    updated_at="2026-05-10T00:00:00+00:00",
                ),
                actor="test",
            )
        db, wal = mem0_home / "memories.sqlite3", mem0_home / "memories.sqlite3-wal"
        assert wal.exists() and wal.stat().st_size > 0
        before = (db.read_bytes(), wal.read_bytes())
        done = health(run_cli, tmp_path, "--deep", "--now", NOW)
        assert (db.read_bytes(), wal.read_bytes()) == before
    assert done.returncode == 0
    assert "(10 memories)" in done.stdout, "the WAL content is read"


def test_deep_honours_mem0_md_categories(run_cli, tmp_path):
    (tmp_path / "mem0.md").write_text("# Project\n\n## Categories\n- release_notes: what shipped\n")
    plant(
        run_cli,
        tmp_path,
        [
            (
                "00000000-0000-4000-8000-000000000011",
                "Version 2.1 shipped the importer",
                {"type": "release_notes"},
                "2026-05-01T10:00:00Z",
            ),
            (
                "00000000-0000-4000-8000-000000000012",
                "Random thought about lunch",
                {"type": "random_stuff"},
                "2026-05-01T10:00:00Z",
            ),
        ],
    )
    done = health(run_cli, tmp_path, "--deep", "--now", NOW)
    assert "Orphans (1):\n" in done.stdout
    assert (
        '[mem0:00000000-0000-4000-8000-000000000012] — type "random_stuff" is not a known category: '
        '"Random thought about lunch"'
    ) in done.stdout


# ---------------------------------------------------------------- the scan as a pure function


def memory(mid: str, text: str, created: str, **metadata) -> Memory:
    return Memory(
        id=mid,
        memory=text,
        user_id="alice",
        app_id="acme-api",
        metadata=metadata,
        created_at=created,
        updated_at=created,
    )


def test_scan_vocabulary_covers_plugin_types_and_coding_categories():
    vocabulary = known_types()
    assert {"decision", "health_check", "compact_summary", "task_learnings", "experiment_results"} <= vocabulary
    assert len(vocabulary) == 13 + 17


def test_scan_stale_is_what_dream_prunes():
    now = datetime(2026, 6, 1, tzinfo=timezone.utc)
    memories = [
        memory("a", "kept session notes", "2026-03-03T00:00:00+00:00", type="session_state"),  # 90 days
        memory("b", "old session notes", "2026-03-02T00:00:00+00:00", type="session_state"),  # 91 days
        memory("c", "vague guess", "2026-05-02T00:00:00+00:00", type="decision", confidence=0.1),  # nothing specific
        memory("d", "pinned old notes", "2025-01-01T00:00:00+00:00", type="compact_summary", pinned=True),
        memory("e", "port 8080 maybe", "2026-05-02T00:00:00+00:00", type="decision", confidence=0.1),  # specific
    ]
    report = scan_quality(memories, known_types(), now, user_id="alice", project_id="acme-api")
    assert [(s.id, s.age_days, s.reason) for s in report.stale] == [("c", 30, "low_confidence"), ("b", 91, "retention")]
    assert [c.id for c in report.low_confidence] == ["c", "e"]
    assert report.counts == {"duplicates": 0, "stale": 2, "contradictions": 0, "orphans": 0}
    kept_longer = scan_quality(
        memories, known_types(), now, user_id="alice", project_id="acme-api", policy={"session_state": 120}
    )  # mem0.md's retention, as dream reads it
    assert [s.id for s in kept_longer.stale] == ["c"]


def test_deep_counts_what_dream_would_do_in_the_scope_the_store_line_counts(backend, run_cli, tmp_path, mem0_home):
    """One analysis: --deep's counts are `mem0-dream --plan`'s, over the memories the Store line counts
    (a merged memory is history, not scanned; a pair dream leaves alone is no duplicate)."""
    plant(
        run_cli,
        tmp_path,
        PLANTED
        + [
            (
                "00000000-0000-4000-8000-000000000010",
                "Run the linters with ruff before each push",
                {"type": "convention"},
                "2026-05-06T10:00:00Z",
            ),
            (
                "00000000-0000-4000-8000-000000000011",
                "Run the linters with ruff before every push",
                {"type": "convention"},
                "2026-05-07T10:00:00Z",
            ),
        ],
    )  # overlap above 60%, but each ≠ every: not merged

    def deep_and_plan():
        done = health(run_cli, tmp_path, "--deep", "--json", "--now", NOW)
        report = json.loads(done.stdout)
        store = next(c for c in report["checks"] if c["name"] == "Store")["detail"]
        store = re.sub(r"; vectors: .*\)$", ")", store)  # a PostgreSQL store's vector path (docs/stores.md)
        plan = run_cli("mem0-dream", "--plan", "--now", NOW, cwd=str(tmp_path))
        assert plan.returncode == 0, plan.stderr
        proposed = re.search(r"Proposed: (\d+) merges?, (\d+) prunes?, (\d+) conflicts?\.", plan.stdout)
        return report["quality"], store, tuple(map(int, proposed.groups()))

    quality, store, proposed = deep_and_plan()
    counts = quality["counts"]
    assert (counts["duplicates"], counts["stale"], counts["contradictions"]) == proposed == (1, 2, 1)
    assert store.endswith(f"({quality['scanned']} memories)") and quality["scanned"] == 11

    applied = run_cli("mem0-dream", "--auto", "--now", NOW, cwd=str(tmp_path))
    assert applied.returncode == 0, applied.stderr
    quality, store, proposed = deep_and_plan()
    counts = quality["counts"]
    assert (counts["duplicates"], counts["stale"], counts["contradictions"]) == proposed
    assert store.endswith(f"({quality['scanned']} memories)"), (store, quality["scanned"])


def test_snapshot_notices_a_writer_that_appears_while_reading(tmp_path):
    from mem0_plugin.health_probes import SnapshotStore

    path = tmp_path / "store.sqlite3"
    SqliteStore(path).close()
    assert not path.with_name("store.sqlite3-wal").exists()
    snapshot = SnapshotStore(path, readonly=True)
    assert snapshot.immutable and snapshot.still_valid()
    with SqliteStore(path) as store, store.write() as writer:
        writer.insert(memory("x", "Use ruff", "2026-05-01T00:00:00+00:00"), actor="test")
    assert not snapshot.still_valid()
    snapshot.close()


@pytest.mark.parametrize("counts", [None, (0, 0)])
def test_the_embedder_line_of_a_store_without_memories_counts_nothing(counts):
    """A missing or empty store has nothing to embed: the line says so, not `0/0 memories embedded`."""
    line = health_checks.embedder_check("onnx-local/model", None, counts)
    assert (line.ok, line.detail, line.notes) == (True, "onnx-local/model — no memories to embed yet", ())
    assert (
        health_checks.embedder_check("onnx-local/model", None, (1, 3)).detail
        == "onnx-local/model — 1/3 memories embedded"
    )


# What codex-cli 0.171.0 wrote to config.toml after `codex plugin marketplace add <dir>`,
# `codex plugin add mem0@mem0-dream` and `codex mcp add mem0 -- /usr/bin/env mem0-mcp-server`;
# `codex mcp list` then showed the hand-added server only.
CODEX_CONFIG = """[marketplaces.mem0-dream]
source_type = "local"
source = "/work/codexplug"

[plugins."mem0@mem0-dream"]
enabled = true

[mcp_servers.mem0]
command = "/usr/bin/env"
args = ["mem0-mcp-server"]
"""


@pytest.mark.parametrize(
    "config, clash",
    [
        (CODEX_CONFIG, True),
        (CODEX_CONFIG.replace("enabled = true", "enabled = false"), False),  # the plugin is off
        (CODEX_CONFIG.replace("[mcp_servers.mem0]", "[mcp_servers.mem0-hosted]"), False),  # named apart
        (CODEX_CONFIG.split("[mcp_servers.mem0]")[0], False),  # the plugin's server alone
        ("[mcp_servers.mem0]\ncommand = 'npx'\n", False),  # a hand-added server alone
    ],
)
def test_health_says_when_a_codex_server_named_mem0_hides_the_plugins(run_cli, tmp_path, mem0_home, config, clash):
    codex_home = Path(os.environ["CODEX_HOME"])
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(config, encoding="utf-8")
    done = health(run_cli, tmp_path)
    assert done.returncode == 0, done.stdout
    line = (
        f"Codex: {codex_home / 'config.toml'} has its own MCP server named mem0 (/usr/bin/env mem0-mcp-server); "
        "Codex runs it instead of this plugin's"
    )
    assert (line in done.stdout.splitlines()) is clash
    assert ("codex mcp remove mem0" in done.stdout) is clash
