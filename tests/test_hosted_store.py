"""The hosted store end to end (docs/hosted.md): every command with `--store mem0+http://…` on a
real `mem0-server` on loopback (tests/server_fixture.py), through mem0ai's real `MemoryClient`
over real HTTP; what dream leaves on the platform is read back with `MemoryClient` itself.

The platform's memories are the dream tests' own (tests/dream_support.py): imported into the
server's store (so their dates are known), plus some added through `MemoryClient`.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

import pytest
from conftest import mcp_session
from dream_support import BASE as MEMORIES
from dream_support import (
    NOW,
    PG_NEW,
    PG_OLD,
    PLAN_REPORT,
    PROJECT,
    REDIS_DONT,
    REDIS_USE,
    RUFF,
    SESSION,
    USER,
    VERCEL,
    make_project,
    write_jsonl,
)
from mem0_plugin.errors import StaleWriteError
from mem0_plugin.identity import resolve_identity
from mem0_plugin.store import open_store
from mem0_plugin.store.hosted.records import LIFECYCLE_KEY
from server_fixture import running_server

KEY = "m0-hosted-test-key"


class Hosted:
    """The server's URL as a store, and the SDK's own client on the same project."""

    def __init__(self, base_url: str):
        from mem0 import MemoryClient

        self.url = base_url.replace("http://", "mem0+http://")
        self.client = MemoryClient(api_key=KEY, host=base_url)

    def record(self, memory_id: str) -> dict:
        return self.client.get(memory_id)

    def gone(self, memory_id: str) -> bool:
        from mem0.exceptions import MemoryNotFoundError

        try:
            self.client.get(memory_id)
        except MemoryNotFoundError:
            return True
        return False

    def lifecycle(self, memory_id: str) -> str:
        return (self.record(memory_id).get("metadata") or {}).get(LIFECYCLE_KEY, {}).get("lifecycle_state", "active")


@pytest.fixture
def hosted(tmp_path, run_cli, monkeypatch):
    server_home = tmp_path / "server-home"
    server_home.mkdir()
    seed = write_jsonl(tmp_path / "seed.jsonl", MEMORIES)
    done = run_cli("mem0-memories", "import", str(seed), "--store", f"sqlite:///{server_home}/memories.sqlite3")
    assert done.returncode == 0, done.stderr
    with running_server(server_home, [{"key": KEY, "users": [USER]}], project_id=PROJECT) as base_url:
        monkeypatch.setenv("MEM0_API_KEY", KEY)
        hosted = Hosted(base_url)
        monkeypatch.setenv("MEM0_STORE", hosted.url)
        yield hosted


@pytest.fixture
def dream(run_cli, tmp_path):
    project = make_project(tmp_path / "project")

    def run(*args: str, input: str | None = None):
        return run_cli("mem0-dream", *args, "--now", NOW, input=input, cwd=str(project))

    return run


def test_dream_plans_over_the_platforms_memories(hosted, dream):
    added = hosted.client.add("Deploy with GitHub Actions", user_id=USER, app_id=PROJECT, infer=False)
    assert added["results"][0]["event"] == "ADD"
    done = dream("--plan")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == PLAN_REPORT
    assert hosted.lifecycle(PG_OLD) == "active"  # --plan writes nothing


def test_auto_retires_on_the_platform_and_nothing_is_lost(hosted, dream, run_cli):
    done = dream("--auto")
    assert done.returncode == 0, done.stderr
    assert "merged=1  pruned=1  conflicts_skipped=2" in done.stdout
    old = hosted.record(PG_OLD)
    state = old["metadata"][LIFECYCLE_KEY]
    assert state["lifecycle_state"] == "merged" and old["memory"] == "Use PostgreSQL for auth"
    # mem0-server keeps one memory per text: the merge's text is PG_NEW's, so PG_NEW is the merge
    assert state["replacement_memory_id"] == PG_NEW and hosted.lifecycle(PG_NEW) == "active"
    pruned = hosted.record(SESSION)  # pruned: still there, marked, its text and metadata kept
    assert pruned["memory"].startswith("Session state") and pruned["metadata"]["type"] == "session_state"
    assert pruned["metadata"][LIFECYCLE_KEY]["lifecycle_state"] == "deleted"
    listed = run_cli("mem0-memories", "export")
    shown = {r["id"]: r for r in map(json.loads, listed.stdout.splitlines())}
    assert SESSION not in shown and shown[PG_OLD]["lifecycle_state"] == "merged"
    assert any(r["metadata"].get("source") == "mem0-dream-auto" for r in shown.values())  # the reminder

    runs = run_cli("mem0-dream", "--runs", "--json")
    run_id = json.loads(runs.stdout)[0]["run_id"]
    undone = dream("--undo", run_id, input="Y\n")
    assert undone.returncode == 0, undone.stderr
    assert hosted.lifecycle(PG_OLD) == hosted.lifecycle(SESSION) == "active", (undone.stdout, runs.stdout)


def test_interactive_resolution_supersedes_on_the_platform(hosted, dream):
    done = dream(input="A\nskip\nY\n")
    assert done.returncode == 0, done.stderr
    redis_use = next(m["id"] for m in MEMORIES if m["memory"] == "Use Redis for session caching")
    record = hosted.record(redis_use)["metadata"][LIFECYCLE_KEY]
    assert record == {"lifecycle_state": "superseded", "replacement_memory_id": REDIS_DONT, "source_memory_ids": []}


def test_a_plan_file_applies_on_the_platform(hosted, dream, tmp_path):
    plan = tmp_path / "plan.json"
    done = dream("--plan", "--json", "-o", str(plan))
    assert done.returncode == 0, done.stderr
    applied = dream("--apply", str(plan), "--resolve", f"{REDIS_DONT}=A", "--resolve", f"{VERCEL}=skip", "--yes")
    assert applied.returncode == 0, applied.stderr
    assert hosted.record(REDIS_USE)["metadata"][LIFECYCLE_KEY]["replacement_memory_id"] == REDIS_DONT
    assert [hosted.lifecycle(m) for m in (PG_OLD, REDIS_USE, SESSION, VERCEL)] == [
        "merged",
        "superseded",
        "deleted",
        "active",
    ]
    again = dream("--apply", str(plan), "--resolve", f"{REDIS_DONT}=A", "--resolve", f"{VERCEL}=skip", "--yes")
    assert again.returncode == 0 and hosted.lifecycle(PG_OLD) == "merged"  # the same plan twice: stale, nothing


def test_without_a_key_or_with_a_wrong_one_commands_say_so(hosted, run_cli, monkeypatch):
    monkeypatch.delenv("MEM0_API_KEY")
    done = run_cli("mem0-memories", "list")
    assert (done.returncode, done.stderr.strip()) == (
        2,
        "mem0-memories: error: a mem0:// store needs an API key: set MEM0_API_KEY",
    )
    monkeypatch.setenv("MEM0_API_KEY", "m0-wrong")
    done = run_cli("mem0-dream", "--plan")
    assert done.returncode == 2 and "refused the API key in MEM0_API_KEY" in done.stderr
    assert "m0-wrong" not in done.stderr
    health = run_cli("mem0-health")
    assert health.returncode == 1 and "FAIL  Store" in health.stdout and "check MEM0_API_KEY" in health.stdout


def test_a_user_the_key_may_not_touch_is_exit_4(hosted, run_cli, monkeypatch):
    """The platform answers 403 for a valid key and a user outside it: another user's data,
    exit 4 (docs/safety.md), as mem0-server's own 403; a wrong key stays exit 2."""
    monkeypatch.setenv("MEM0_USER_ID", "mallory")
    done = run_cli("mem0-memories", "list")
    assert done.returncode == 4, done.stderr
    assert "refused reading memories (403): the key in MEM0_API_KEY may not touch this user or project" in done.stderr
    assert KEY not in done.stderr


def test_a_memory_changed_on_the_platform_is_not_overwritten(hosted):
    identity = resolve_identity()
    with open_store(identity.store_location) as store:
        before = store.get(USER, PG_NEW)
        first = store.get(USER, PG_OLD)
        hosted.client.update(PG_NEW, text="Auth DB is PostgreSQL 16")  # another client, meanwhile
        added = []
        with pytest.raises(StaleWriteError, match="changed on the Mem0 platform"):
            with store.write() as writer, writer.savepoint():
                added.append(writer.insert(replace(first, id="x", memory="Merged"), actor="test"))
                writer.change(first, "MERGE", "test", lifecycle_state="merged", replacement_memory_id=added[0].id)
                writer.change(before, "MERGE", "test", lifecycle_state="merged", replacement_memory_id=added[0].id)
    # what the unit did on the platform was taken back: the add deleted, the first change undone
    assert hosted.lifecycle(PG_OLD) == "active"
    assert hosted.gone(added[0].id)
    assert hosted.record(PG_NEW)["memory"] == "Auth DB is PostgreSQL 16"


def test_forget_deletes_on_the_platform(hosted, run_cli):
    done = run_cli("mem0-forget", "--ids", RUFF, "--yes", "--purge")
    assert done.returncode == 0, done.stderr
    assert hosted.gone(RUFF)
    history = run_cli("mem0-memories", "history", RUFF, "--json")  # the mirror's history, purged
    assert "ruff" not in history.stdout and "PURGE" in history.stdout


def test_import_adds_on_the_platform_with_new_ids_and_the_original_dates(hosted, run_cli, tmp_path):
    lines = [{"id": "m1", "memory": "Pin Node 22 in CI", "created_at": "2026-06-01T10:00:00+00:00"}]
    done = run_cli("mem0-memories", "import", str(write_jsonl(tmp_path / "in.jsonl", lines)))
    assert done.returncode == 0, done.stderr
    found = [
        r for r in hosted.client.get_all(filters={"user_id": USER})["results"] if r["memory"] == lines[0]["memory"]
    ]
    assert len(found) == 1 and found[0]["id"] != "m1" and found[0]["created_at"].startswith("2026-06-01T10:00:00")


def test_health_deep_reads_the_platform(hosted, run_cli):
    done = run_cli("mem0-health", "--deep")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{hosted.url} (8 memories)" in done.stdout
    plain = run_cli("mem0-health")  # with the write probe: on the platform and gone again
    assert "write + delete OK" in plain.stdout, plain.stdout
    assert all(r["app_id"] != "__mem0_health__" for r in hosted.client.get_all(filters={"user_id": USER})["results"])


def test_the_mcp_server_works_on_the_platform(hosted):
    async def session_calls():
        async with mcp_session() as session:
            added = await session.call_tool("add_memory", {"text": "Cache invoices in Redis"})  # infer: the write path
            found = await session.call_tool("search_memories", {"query": "invoices Redis"})
            return json.loads(added.content[0].text), json.loads(found.content[0].text)

    added, found = asyncio.run(session_calls())
    memory_id = added["results"][0]["id"]
    assert hosted.record(memory_id)["memory"] == "Cache invoices in Redis"  # the platform's id
    assert found["results"][0]["id"] == memory_id


def test_the_mirror_follows_the_platform_page_by_page(hosted):
    """Reads page through the platform until `next` is null (3 memories a page here), and a
    long-running process reads it again once REFRESH_SECONDS have passed (a clock of the test)."""
    from mem0_plugin.store.hosted.client import Platform
    from mem0_plugin.store.hosted.store import HostedStore

    identity = resolve_identity()
    location = identity.store_location
    ticks = [0.0]
    platform = Platform(location.hosted, page_size=3)
    store = HostedStore(location.url, platform, identity.home, USER, refresh_seconds=30, clock=lambda: ticks[0])
    try:
        assert store.page(USER).count == 8  # 3 pages of the server's answers
        added = hosted.client.add("Pin Node 22 in CI", user_id=USER, app_id=PROJECT, infer=False)["results"][0]["id"]
        hosted.client.update(PG_NEW, text="Auth DB is PostgreSQL 16")
        hosted.client.delete(RUFF)
        assert store.page(USER).count == 8  # not read again yet
        ticks[0] = 30.0
        assert store.get(USER, added).memory == "Pin Node 22 in CI"
        assert store.get(USER, PG_NEW).memory == "Auth DB is PostgreSQL 16"
        assert {m.id for m in store.page(USER).results} == {m["id"] for m in MEMORIES} - {RUFF} | {added}
        assert [e.event for e in store.history(USER, PG_NEW)] == ["SYNC", "SYNC"]
    finally:
        store.close()


def test_a_new_merged_memory_carries_its_sources_and_reads_back_unchanged(hosted):
    """A merge into a new text (what a judge's merged_text makes) on the platform: the new memory
    names its sources, each source points at it; read back, the mirror finds nothing to change."""
    identity = resolve_identity()
    with open_store(identity.store_location) as store:
        sources = [store.get(USER, PG_OLD), store.get(USER, PG_NEW)]
        with store.write() as writer:
            merged = writer.insert(
                replace(sources[1], id="local", memory="Auth uses PostgreSQL 16", source_memory_ids=(PG_OLD, PG_NEW)),
                actor="test",
            )
            for source in sources:
                writer.change(source, "MERGE", "test", lifecycle_state="merged", replacement_memory_id=merged.id)
        assert merged.id != "local"
        assert store.refresh() == 0  # what the platform now says is what the mirror wrote
    record = hosted.record(merged.id)
    assert record["memory"] == "Auth uses PostgreSQL 16"
    assert record["metadata"][LIFECYCLE_KEY]["source_memory_ids"] == [PG_OLD, PG_NEW]
    assert [hosted.record(m)["metadata"][LIFECYCLE_KEY]["replacement_memory_id"] for m in (PG_OLD, PG_NEW)] == [
        merged.id,
        merged.id,
    ]
