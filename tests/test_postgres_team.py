"""A team on one PostgreSQL database (docs/stores.md): servers that see each other at once,
one dream apply at a time across hosts, a lost connection that rolls back, moving a store
between SQLite and PostgreSQL. A real PostgreSQL server (`pg_server`), real processes."""

from __future__ import annotations

import json
import os
import subprocess
import time

import anyio
import psycopg
import pytest
from conftest import command_path, mcp_session
from dream_support import (
    NOW,
    big_records,
    check_invariants,
    dream_made,
    export,
    journaled_steps,
    make_project,
    open_runs,
    write_jsonl,
)
from mem0_plugin.store import open_store


@pytest.fixture
def team(monkeypatch, postgres_url) -> str:
    """Every command and server of the test uses one PostgreSQL database."""
    monkeypatch.setenv("MEM0_STORE", postgres_url)
    return postgres_url


@pytest.fixture
def project(tmp_path):
    return make_project(tmp_path / "project")


def _seed(run_cli, tmp_path, records) -> None:
    done = run_cli("mem0-memories", "import", str(write_jsonl(tmp_path / "seed.jsonl", records)), timeout=300)
    assert done.returncode == 0, done.stderr


def test_two_mcp_servers_on_one_database_see_each_others_memories_at_once(team):
    async def main():
        async with mcp_session() as first, mcp_session() as second:
            added = await first.call_tool("add_memory", {"text": "The billing service uses PostgreSQL 15"})
            memory_id = added.structured_content["results"][0]["id"]
            seen = await second.call_tool("get_memory", {"memory_id": memory_id})
            assert seen.structured_content["memory"] == "The billing service uses PostgreSQL 15"
            await second.call_tool("update_memory", {"memory_id": memory_id, "text": "Billing uses PostgreSQL 16"})
            found = await first.call_tool("search_memories", {"query": "billing postgresql"})
            assert [r["memory"] for r in found.structured_content["results"]] == ["Billing uses PostgreSQL 16"]

    anyio.run(main)


def test_dream_from_two_hosts_applies_once(team, run_cli, tmp_path, project):
    """Two hosts: each has its own `--auto` lock file, so only the database's apply lock keeps
    the two runs from applying the same plan twice."""
    records, merges, prunes = big_records(300)
    _seed(run_cli, tmp_path, records)
    original = export(run_cli)
    procs = [
        subprocess.Popen(
            [command_path("mem0-dream"), "--auto", "--now", NOW],
            cwd=str(project),
            env={**os.environ, "MEM0_DREAM_LOCK": str(tmp_path / f"host{n}.lock")},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(2)
    ]
    results = [proc.communicate(timeout=300) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], results
    final = export(run_cli)
    check_invariants(original, final)
    assert len(dream_made(final)) == merges
    assert len(original) - sum(1 for r in final.values() if r["metadata"].get("source") != "mem0-dream") == prunes
    assert not open_runs()


def _terminate_others(url: str, conn: psycopg.Connection | None = None) -> int:
    """End every other connection to the database (what a lost network or a restart does)."""
    if conn is None:
        with psycopg.connect(url, autocommit=True) as own:
            return _terminate_others(url, own)
    rows = conn.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE datname = current_database() AND pid <> pg_backend_pid()"
    ).fetchall()
    return len(rows)


def test_a_lost_connection_during_apply_rolls_back_and_the_next_run_completes_it(team, run_cli, tmp_path, project):
    records, merges, prunes = big_records(600)
    _seed(run_cli, tmp_path, records)
    original = export(run_cli)
    proc = subprocess.Popen(
        [command_path("mem0-dream"), "--auto", "--now", NOW],
        cwd=str(project),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    with psycopg.connect(team, autocommit=True) as watcher:  # one connection: polls every few ms
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            if watcher.execute("SELECT count(*) FROM dream_steps").fetchone()[0] >= 20:
                break
            time.sleep(0.002)
        assert _terminate_others(team, watcher) > 0
    out, err = proc.communicate(timeout=60)
    assert proc.returncode != 0 and "Traceback" not in err, (out, err)
    assert "store" in err.lower()
    done_before = journaled_steps()
    assert 0 < done_before < merges + prunes, "the apply was not interrupted in the middle"

    partial = export(run_cli)
    check_invariants(original, partial)  # whole actions only: the batch in flight rolled back
    assert len(dream_made(partial)) == min(done_before, merges)

    recovered = run_cli("mem0-dream", "--auto", "--now", NOW, cwd=str(project), timeout=300)
    assert recovered.returncode == 0, recovered.stderr
    final = export(run_cli)
    check_invariants(original, final)
    assert len(dream_made(final)) == merges
    assert not open_runs()


def _history(url: str, ids: list[str]) -> dict[str, list[tuple]]:
    with open_store(url) as store:
        return {i: [(e.event, e.actor, e.at, e.before, e.after) for e in store.history("alice", i)] for i in ids}


def _lived_a_little(run_cli, url: str) -> list[str]:
    """Memories with a past: added, changed, superseded, deleted and restored, one deleted."""
    mem = lambda *args: run_cli("mem0-memories", "--store", url, *args)  # noqa: E731
    ids = []
    for text in ("Deploys go through ArgoCD", "Use ruff for linting", "The API runs on port 8080", "Old note"):
        done = mem("add", text, "--json")
        assert done.returncode == 0, done.stderr
        ids.append(json.loads(done.stdout)["results"][0]["id"])
    with open_store(url) as store, store.write() as writer:
        writer.change(writer.get("alice", ids[1]), "UPDATE", "test", memory="Use ruff, not flake8, for linting")
        before = writer.get("alice", ids[2])
        writer.change(before, "SUPERSEDE", "test", lifecycle_state="superseded", replacement_memory_id=ids[0])
    for args in (("delete", ids[0]), ("restore", ids[0]), ("delete", ids[3])):
        assert mem(*args).returncode == 0
    return ids


def test_export_and_import_move_ids_times_and_lifecycle_between_sqlite_and_postgresql(run_cli, tmp_path, postgres_url):
    sqlite_url = f"sqlite:///{tmp_path}/from.sqlite3"
    _lived_a_little(run_cli, sqlite_url)
    exported = run_cli("mem0-memories", "--store", sqlite_url, "export")
    assert exported.returncode == 0, exported.stderr
    (tmp_path / "out.jsonl").write_text(exported.stdout)
    into = run_cli("mem0-memories", "--store", postgres_url, "import", str(tmp_path / "out.jsonl"))
    assert into.returncode == 0, into.stderr
    again = run_cli("mem0-memories", "--store", postgres_url, "export")
    assert again.stdout == exported.stdout  # ids, texts, times, lifecycle, pointers: byte for byte
    back_url = f"sqlite:///{tmp_path}/back.sqlite3"
    (tmp_path / "again.jsonl").write_text(again.stdout)
    assert run_cli("mem0-memories", "--store", back_url, "import", str(tmp_path / "again.jsonl")).returncode == 0
    assert run_cli("mem0-memories", "--store", back_url, "export").stdout == exported.stdout


def test_copy_moves_memories_with_their_history_to_postgresql_and_back(run_cli, tmp_path, postgres_url):
    sqlite_url = f"sqlite:///{tmp_path}/from.sqlite3"
    ids = _lived_a_little(run_cli, sqlite_url)
    original = _history(sqlite_url, ids)
    assert all(original[i] for i in ids)
    done = run_cli("mem0-memories", "--store", sqlite_url, "copy", "--to", postgres_url)
    assert done.returncode == 0, done.stderr
    rows = sum(len(entries) for entries in original.values())
    assert done.stdout.startswith(f"Copied 3 memories with {rows} history rows to postgresql://"), done.stdout
    export = lambda url: run_cli("mem0-memories", "--store", url, "export").stdout  # noqa: E731
    assert export(postgres_url) == export(sqlite_url)
    assert _history(postgres_url, ids) == original
    assert run_cli("mem0-memories", "--store", postgres_url, "restore", ids[3]).returncode == 0  # its history came

    back_url = f"sqlite:///{tmp_path}/back.sqlite3"
    done = run_cli("mem0-memories", "--store", postgres_url, "copy", "--to", back_url)
    assert done.returncode == 0, done.stderr
    assert export(back_url) == export(postgres_url)
    assert _history(back_url, ids) == _history(postgres_url, ids)
    again = run_cli("mem0-memories", "--store", postgres_url, "copy", "--to", back_url)
    assert "Copied 0 memories with 0 history rows" in again.stdout and "(4 already present)" in again.stdout


def test_a_store_outlives_the_server_closing_its_pooled_connections(postgres_url, tmp_path):
    """A server restarted, or its idle connections cut: the next read and write of a long-lived
    store (an MCP server's) take new connections instead of failing."""
    from mem0_plugin import operations
    from mem0_plugin.identity import Identity

    identity = Identity(
        user_id="alice", project_id="acme-api", branch="main", home=tmp_path, store_url=postgres_url, cwd=tmp_path
    )
    with open_store(postgres_url) as store:
        caller = operations.Caller(store, identity, actor="test")
        operations.add_memory(caller, "Staging runs on Fly.io")
        assert _terminate_others(postgres_url) > 0
        assert operations.get_memories(caller, None)["count"] == 1
        assert _terminate_others(postgres_url) > 0
        operations.add_memory(caller, "Production runs on AWS")
        assert operations.get_memories(caller, None)["count"] == 2


def test_forget_purge_erases_the_text_from_every_table_of_a_postgresql_store(team, run_cli):
    secret = "the deploy token is tok_live_4f9a8b7c6d5e"
    added = run_cli("mem0-memories", "add", secret, "--json")
    memory_id = json.loads(added.stdout)["results"][0]["id"]
    assert run_cli("mem0-memories", "add", "Releases are cut on Tuesdays").returncode == 0
    done = run_cli("mem0-forget", "--ids", memory_id[:8], "--yes", "--purge")
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("Purged: the text is gone from the history too; this cannot be undone.\n")
    with psycopg.connect(team, autocommit=True) as conn:
        for table in ("memories", "history", "dream_runs"):
            text = conn.execute(f"SELECT coalesce(string_agg({table}::text, ' '), '') FROM {table}").fetchone()[0]
            assert "tok_live_4f9a8b7c6d5e" not in text, table
    history = json.loads(run_cli("mem0-memories", "history", memory_id, "--json", "--show-secrets").stdout)
    assert [entry["event"] for entry in history] == ["ADD", "DELETE", "PURGE"]
    assert "forgotten with --purge" in run_cli("mem0-memories", "restore", memory_id).stderr


def test_the_apply_lock_is_one_per_project_across_processes(postgres_url):
    """Another process's apply of the same project waits; another project's does not."""
    import threading

    from mem0_plugin.store.postgres.store import apply_lock_key

    with open_store(postgres_url) as store, store.apply_lock(("alice", "acme-api")):
        with psycopg.connect(postgres_url, autocommit=True) as other:
            same = other.execute("SELECT pg_try_advisory_lock(%s)", (apply_lock_key("alice", "acme-api"),))
            assert same.fetchone()[0] is False
            elsewhere = other.execute("SELECT pg_try_advisory_lock(%s)", (apply_lock_key("alice", "acme-web"),))
            assert elsewhere.fetchone()[0] is True
        entered = threading.Event()

        def second() -> None:
            with open_store(postgres_url) as again, again.apply_lock(("alice", "acme-api")):
                entered.set()

        waiting = threading.Thread(target=second)
        waiting.start()
        assert not entered.wait(0.5)  # held here: the second apply of the project waits
    waiting.join(timeout=30)
    assert entered.is_set()
