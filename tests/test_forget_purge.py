"""`mem0-forget --purge`: a leaked credential leaves the store file entirely — the memory, its
history texts, its vector, its full-text entries, finished dream plans — and nothing else goes.
Checked on the raw bytes of the real SQLite files after the command has exited."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from mem0_plugin.store import SqliteStore

SECRET = "ghp_" + "Zq9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa"
SECRET_ID = "2dfe514e-7a3b-4c1d-9e2f-0123456789ab"
KEEP_ID = "7c0ffee0-1111-4111-8111-111111111111"
TEXT = f"CI deploy token {SECRET} for the release job"
# what of it could sit in the file: the text, and the token as the full-text index stores it (lowercased)
TRACES = (SECRET.encode(), SECRET.lower().encode(), SECRET[4:].lower().encode(), TEXT.encode())


@pytest.fixture
def store_path(mem0_home) -> Path:
    return mem0_home / "memories.sqlite3"


@pytest.fixture
def planted(run_cli, tmp_path, store_path):
    records = [
        {"id": SECRET_ID, "memory": TEXT, "metadata": {"type": "environmental"}},
        {"id": KEEP_ID, "memory": "CI runs the release job on tags", "metadata": {"type": "workflow"}},
    ]
    records += [{"memory": f"filler memory {n} about the build"} for n in range(200)]
    (tmp_path / "in.json").write_text(json.dumps(records))
    assert run_cli("mem0-memories", "import", str(tmp_path / "in.json")).returncode == 0
    with SqliteStore(store_path) as store, store.write() as writer:  # a vector, and a dream plan naming it
        for memory_id, text in ((SECRET_ID, TEXT), (KEEP_ID, records[1]["memory"])):
            writer.store_vectors("alice", "test-model", [(memory_id, text, np.ones(8, dtype=np.float32))])
        plan = {"conflicts": [{"ids": [SECRET_ID, KEEP_ID], "texts": {"A": TEXT, "B": records[1]["memory"]}}]}
        writer.journal_start("run-1", "alice", "acme-api", json.dumps(plan, indent=2), "{}")
        writer.journal_finish("run-1")


def traces_in_files(store_path: Path) -> list[bytes]:
    """Which traces of the secret are in the store's files (the database, and any -wal)."""
    data = b"".join(path.read_bytes() for path in store_path.parent.glob(store_path.name + "*"))
    return [trace for trace in TRACES if trace in data]


def kept_state(run_cli) -> tuple[str, str]:
    """What must survive a purge: the other memory and its history, exactly."""
    return (
        run_cli("mem0-memories", "get", KEEP_ID, "--show-secrets").stdout,
        run_cli("mem0-memories", "history", KEEP_ID, "--json").stdout,
    )


def test_a_plain_forget_leaves_the_secret_in_the_file(planted, run_cli, store_path):
    """The control: without --purge the history keeps the text (restore needs it)."""
    done = run_cli("mem0-forget", "--ids", SECRET_ID, "--yes")
    assert done.returncode == 0, done.stderr
    assert traces_in_files(store_path)
    assert run_cli("mem0-memories", "restore", SECRET_ID).returncode == 0


@pytest.mark.parametrize("how", ["by id", "by short id", "by query", "ids yes"])
def test_purge_leaves_no_trace_of_the_text_and_loses_nothing_else(planted, run_cli, store_path, how):
    kept = kept_state(run_cli)
    args, answer = {
        "by id": ([SECRET_ID], "y\n"),
        "by short id": ([SECRET_ID[:8]], "y\n"),
        "by query": (["deploy", "token"], "1\n"),
        "ids yes": (["--ids", SECRET_ID[:8], "--yes"], None),
    }[how]
    done = run_cli("mem0-forget", *args, "--purge", input=answer)
    assert done.returncode == 0, done.stderr
    if answer:
        assert "--purge: the text is erased from the history too; it cannot be restored.\n" in done.stdout
    assert done.stdout.endswith(
        "Deleted 1 memory.\nPurged: the text is gone from the history too; this cannot be undone.\n"
    )
    assert "restore" not in done.stdout.split("Deleted")[1]

    assert traces_in_files(store_path) == []
    assert kept_state(run_cli) == kept
    with SqliteStore(store_path) as store:
        assert store._query("SELECT count(*) FROM vectors WHERE id = ?", (SECRET_ID,)) == [(0,)]
        assert store._query("SELECT count(*) FROM vectors WHERE id = ?", (KEEP_ID,)) == [(1,)]
        assert store.count("alice") == 201
        plan = json.loads(store._query("SELECT plan FROM dream_runs WHERE run_id = 'run-1'")[0][0])
        assert plan["conflicts"][0]["texts"] == {"A": "[purged]", "B": "CI runs the release job on tags"}
    history = json.loads(run_cli("mem0-memories", "history", SECRET_ID, "--json", "--show-secrets").stdout)
    assert [entry["event"] for entry in history] == ["IMPORT", "DELETE", "PURGE"]
    assert history[1]["before"]["memory"] == "[purged]"
    assert history[1]["before"]["metadata"] == {"type": "environmental"}  # only the text goes
    restore = run_cli("mem0-memories", "restore", SECRET_ID)
    assert restore.returncode == 3 and "forgotten with --purge" in restore.stderr
    assert "deploy" not in run_cli("mem0-memories", "search", "deploy token").stdout


def test_purge_reaches_a_memory_deleted_before(planted, run_cli, store_path):
    assert run_cli("mem0-memories", "delete", SECRET_ID).returncode == 0
    assert traces_in_files(store_path)
    done = run_cli("mem0-forget", "--ids", SECRET_ID[:8], "--yes", "--purge", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"deleted": [SECRET_ID], "purged": True, "scrubbed": True}
    assert traces_in_files(store_path) == []


def test_cancelled_purge_changes_nothing(planted, run_cli, store_path):
    before = run_cli("mem0-memories", "export", "--all-projects").stdout
    done = run_cli("mem0-forget", SECRET_ID, "--purge", input="n\n")
    assert done.stdout.endswith("Cancelled. Nothing deleted.\n")
    assert run_cli("mem0-memories", "export", "--all-projects").stdout == before
    assert traces_in_files(store_path)


def test_purge_with_a_json_listing_is_refused(planted, run_cli):
    done = run_cli("mem0-forget", "deploy", "--json", "--purge")
    assert (done.returncode, done.stderr) == (
        2,
        "mem0-forget: error: --purge goes with a deletion; a search with --json deletes nothing\n",
    )


def test_a_reader_holding_the_log_is_said_and_the_text_leaves_when_it_closes(planted, run_cli, store_path):
    reader = SqliteStore(store_path)
    with reader.read_snapshot():
        reader.count("alice")
        done = run_cli("mem0-forget", "--ids", SECRET_ID, "--yes", "--purge")
        assert done.returncode == 0, done.stderr
        assert done.stdout.endswith(
            "Note: another process has the store open; the purged text leaves the store's "
            "write-ahead log (the -wal file) once it closes the store.\n"
        )
    reader.close()  # the last connection to close empties the log into the file
    assert traces_in_files(store_path) == []
