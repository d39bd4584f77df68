"""Several processes on one store at once (docs/dream.md, "Step 5: confirm and apply"; docs/safety.md): the MCP
server writing while `mem0-dream --auto` applies, a user deleting or editing a memory a confirmed
plan is about to merge, two MCP servers writing at once, ten `--auto` started together.
Conditional writes skip what changed; nothing is clobbered; nobody sees "database is locked".
"""

from __future__ import annotations

import os
import re
import select
import sqlite3
import subprocess
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import anyio
from conftest import command_path
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mem0_plugin import operations
from mem0_plugin.identity import resolve_identity
from mem0_plugin.records import Memory
from mem0_plugin.store import SqliteStore
from reliability_checks import check_history_chain, check_merges, check_pointers, dream_made, history_by_id, snapshot

USER, PROJECT = "alice", "acme-api"
AUTO_LINE = re.compile(r"^\[mem0-dream --auto\] project=acme-api  merged=(\d+)  pruned=(\d+)  conflicts_skipped=(\d+)$")


def word(number: int) -> str:
    """Three letters naming `number` (no digits: a digit would make the text project-specific)."""
    letters = ""
    for _ in range(3):
        letters += chr(97 + number % 26)
        number //= 26
    return letters


def memory(memory_id: str, text: str, kind: str, age_days: float, confidence: float = 0.8) -> Memory:
    stamp = (datetime.now(timezone.utc) - timedelta(days=age_days)).isoformat()
    return Memory(
        id=memory_id,
        memory=text,
        user_id=USER,
        app_id=PROJECT,
        metadata={"type": kind, "confidence": confidence},
        created_at=stamp,
        updated_at=stamp,
    )


def big_store(db: Path, pairs: int, stale: int, plain: int) -> None:
    """`pairs` mergeable pairs (d…a + d…b), `stale` session states past retention, `plain` bystanders."""
    memories = []
    for i in range(pairs):
        tool, job = word(i), word(i + 7000)
        memories.append(memory(f"d{i:05d}a", f"Use {tool}lib for {job}ing", "convention", 30))
        memories.append(memory(f"d{i:05d}b", f"{tool.capitalize()}lib is used for {job}ing", "convention", 20))
    for i in range(stale):
        memories.append(
            memory(
                f"s{i:05d}", f"Working on the {word(i)}zz {word(i + 3000)}yy refactor", "session_state", 100 + i % 50
            )
        )
    for i in range(plain):
        memories.append(
            memory(f"k{i:05d}", f"The {word(i)}qq module owns the {word(i + 9000)}rr {word(i + 500)}pp", "decision", 5)
        )
    db.parent.mkdir(parents=True, exist_ok=True)
    with SqliteStore(db) as store:
        with store.write() as writer:
            for item in memories:
                writer.insert(item, event="IMPORT", actor="test")


def env_for(home: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "MEM0_HOME": str(home), "MEM0_USER_ID": USER, "MEM0_PROJECT_ID": PROJECT, **extra}


def start(name: str, *args: str, env: dict, stdin: bool = False) -> subprocess.Popen:
    return subprocess.Popen(
        [command_path(name), *args],
        stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def no_lock_errors(*texts: str) -> None:
    for text in texts:
        assert "locked" not in text.lower() and "busy" not in text.lower(), text
        assert "Traceback" not in text, text


async def call(session: ClientSession, tool: str, **arguments) -> tuple[bool, object]:
    result = await session.call_tool(tool, arguments)
    if result.is_error:
        return False, result.content[0].text
    return True, result.structured_content


# ------------------------------------------------------------------ the MCP server while --auto applies


def test_mcp_server_adds_deletes_and_updates_while_auto_applies_a_big_plan(tmp_path):
    home = tmp_path / "home"
    db = home / "memories.sqlite3"
    pairs, stale = 300, 300
    big_store(db, pairs=pairs, stale=stale, plain=300)
    before = snapshot(db)
    env = env_for(home)
    # merges apply in id order: deleting from the end makes some deletes land before their merge
    # (the merge is then skipped), some after (the merged source is deleted); prunes likewise
    delete_targets = [f"d{i:05d}b" for i in range(pairs - 1, 0, -7)]
    prune_targets = [f"s{i:05d}" for i in range(0, stale, 5)]
    update_targets = [f"d{i:05d}a" for i in range(pairs - 3, 0, -11)]
    errlog_path = tmp_path / "server.err"

    async def main():
        added, outcomes = [], []
        with errlog_path.open("w") as errlog:
            params = StdioServerParameters(command=command_path("mem0-mcp-server"), env=env)
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    assert (await call(session, "get_memories", page_size=1))[0]
                    auto = start("mem0-dream", "--auto", env=env)
                    step = 0
                    while auto.poll() is None or step < 30:
                        text = f"Note {word(step)}xx about {word(step + 99)}ww"
                        ok, answer = await call(session, "add_memory", text=text, metadata={"type": "decision"})
                        outcomes.append(("add", None, ok, answer))
                        if ok:
                            added.append(answer["results"][0]["id"])
                        for kind, targets in (("delete", delete_targets), ("prune", prune_targets)):
                            if targets:
                                target = targets.pop()
                                ok, answer = await call(session, "delete_memory", memory_id=target)
                                outcomes.append((kind, target, ok, answer))
                        if update_targets:
                            target = update_targets.pop()
                            ok, answer = await call(
                                session, "update_memory", memory_id=target, metadata={"reviewed": True}
                            )
                            outcomes.append(("update", target, ok, answer))
                        step += 1
                    out, err = auto.communicate(timeout=120)
                    ok, page = await call(session, "get_memories", filters={"app_id": PROJECT}, page_size=1000)
                    assert ok, page
        return added, outcomes, auto.returncode, out, err

    added, outcomes, code, out, err = anyio.run(main)
    no_lock_errors(err, errlog_path.read_text(), *(str(o[3]) for o in outcomes))
    assert code == 0, err
    match = AUTO_LINE.match(out.strip())
    assert match, out
    merged, pruned = int(match[1]), int(match[2])
    for kind, target, ok, answer in outcomes:
        # the only refusal possible: deleting a memory dream has just pruned
        assert ok or (kind == "prune" and "not found" in answer), (kind, target, answer)

    after = snapshot(db)
    check_history_chain(after)
    check_pointers(after)
    check_merges(after)
    assert {r["status"] for r in after["runs"]} == {"done"}
    assert len(dream_made(after)) == merged and 0 < merged <= pairs
    history = history_by_id(after)
    assert sum(1 for rows in history.values() for r in rows if r["event"] == "PRUNE") == pruned
    assert all(after["memories"][i]["lifecycle_state"] == "active" for i in added)
    assert len(set(added)) == len(added) >= 30
    for memory_id in before["memories"]:
        if memory_id not in after["memories"]:
            last = history[memory_id][-1]
            assert (last["event"], last["actor"]) in {("DELETE", "mcp"), ("PRUNE", "mem0-dream")}, last
    # every skipped merge is one whose source changed first; its partner is untouched by dream
    merged_sources = {s for m in dream_made(after) for s in m["source_memory_ids"]}
    for i in range(pairs):
        a, b = f"d{i:05d}a", f"d{i:05d}b"
        if a not in merged_sources:
            changed_first = [r for r in history[a] + history[b] if r["actor"] == "mcp"]
            assert changed_first, (f"merge of {a}+{b} skipped although nothing changed", err[:3000])
            assert all(r["actor"] != "mem0-dream" for r in history[a] + history[b])
    # the server's writes happened while dream applied (the run overlapped them)
    run = after["runs"][0]
    during = [r for r in after["history"] if r["actor"] == "mcp" and run["started_at"] <= r["at"] <= run["finished_at"]]
    assert during, "no MCP write landed while --auto applied; the test proved nothing"


# ------------------------------------------------------------------ a change between the report and "Y"


def read_until(process: subprocess.Popen, ending: str, timeout: float = 60) -> str:
    """Read the process's stdout until it ends with `ending` (a prompt has no newline)."""
    fd = process.stdout.fileno()
    data = b""
    deadline = time.monotonic() + timeout
    while not data.decode("utf-8", "replace").endswith(ending):
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"no {ending!r} in {data!r}"
        ready, _, _ = select.select([fd], [], [], remaining)
        if ready:
            chunk = os.read(fd, 65536)
            assert chunk, f"the process ended before {ending!r}: {data!r}"
            data += chunk
    return data.decode("utf-8")


def test_a_memory_deleted_or_edited_after_the_report_is_not_clobbered(tmp_path, run_cli):
    """The user is looking at the report; meanwhile a CLI deletes one source of a merge and an agent
    edits another. At "Y" those two merges are skipped and reported; the third is applied."""
    home = tmp_path / "home"
    db = home / "memories.sqlite3"
    home.mkdir()
    with SqliteStore(db) as store, store.write() as writer:
        for item in (
            memory("m1", "Use PostgreSQL for auth", "decision", 30),
            memory("m2", "Auth DB is PostgreSQL", "decision", 20),
            memory("m3", "Use tabs for indentation", "convention", 30),
            memory("m4", "Tabs are used for indentation", "convention", 20),
            memory("m5", "Run tests with pytest -q", "convention", 30),
            memory("m6", "Tests are run with pytest -q", "convention", 20),
        ):
            writer.insert(item, actor="test")
    env = env_for(home)
    process = subprocess.Popen(
        [command_path("mem0-dream")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    report = read_until(process, "Apply? [Y/n] ")
    assert "Merges (3):" in report

    deleted = run_cli("mem0-memories", "delete", "m1", env=env)
    assert deleted.returncode == 0, deleted.stderr
    identity = resolve_identity(user_id=USER, project_id=PROJECT, store=f"sqlite:///{db}", cwd=str(tmp_path))
    with SqliteStore(db) as store:
        operations.update_memory(operations.Caller(store, identity), "m4", text="Tabs, not spaces, for indentation")

    out, err = process.communicate(b"Y\n", timeout=60)
    out, err = out.decode(), err.decode()
    assert process.returncode == 0, err
    no_lock_errors(err)
    assert "Not applied — merge m1+m2: m1 no longer exists" in out
    assert "Not applied — merge m3+m4: m4 changed since the plan was made" in out
    assert out.rstrip().endswith("Dream complete — merged: 1, pruned: 0, conflicts resolved: 0, skipped: 0")

    after = snapshot(db)
    memories = after["memories"]
    assert "m1" not in memories
    assert (memories["m2"]["lifecycle_state"], memories["m2"]["version"]) == ("active", 1)
    assert (memories["m3"]["lifecycle_state"], memories["m3"]["version"]) == ("active", 1)
    assert memories["m4"]["memory"] == "Tabs, not spaces, for indentation"
    assert memories["m4"]["lifecycle_state"] == "active"
    assert {memories["m5"]["lifecycle_state"], memories["m6"]["lifecycle_state"]} == {"merged"}
    [made] = dream_made(after)
    assert made["source_memory_ids"] == ["m5", "m6"]
    check_history_chain(after)
    check_pointers(after)
    check_merges(after)


def journal_started(db: Path) -> bool:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=60)
    try:
        return conn.execute("SELECT count(*) FROM dream_runs").fetchone()[0] > 0
    finally:
        conn.close()


PAIRS = 600
LAST_A, LAST_B = f"d{PAIRS - 1:05d}a", f"d{PAIRS - 1:05d}b"


def test_auto_reports_a_skipped_merge_on_stderr_and_keeps_its_summary_line(tmp_path, run_cli):
    """--auto applies a plan it made itself; a memory changed between its fetch and its write is skipped
    (and said so on stderr), the stdout summary stays one line."""
    home = tmp_path / "home"
    db = home / "memories.sqlite3"
    big_store(db, pairs=PAIRS, stale=0, plain=0)
    env = env_for(home)
    auto = start("mem0-dream", "--auto", env=env)
    # wait until the run is applying, then delete the source of the last merge of the plan
    deadline = time.monotonic() + 60
    while not journal_started(db):
        assert time.monotonic() < deadline and auto.poll() is None, auto.communicate()
        time.sleep(0.01)
    deleted = run_cli("mem0-memories", "delete", LAST_B, env=env)
    out, err = auto.communicate(timeout=120)
    assert auto.returncode == 0, err
    no_lock_errors(err, deleted.stderr)
    match = AUTO_LINE.match(out.strip())
    assert match, out
    after = snapshot(db)
    check_history_chain(after)
    check_pointers(after)
    check_merges(after)
    assert deleted.returncode == 0, deleted.stderr
    if int(match[1]) == PAIRS - 1:
        assert f"not applied — merge {LAST_A}+{LAST_B}: {LAST_B} no longer exists" in err
        assert after["memories"][LAST_A]["lifecycle_state"] == "active"
    else:  # the run got there first (a very slow machine): the merged source was deleted afterwards
        assert int(match[1]) == PAIRS and after["memories"][LAST_A]["lifecycle_state"] == "merged"


# ------------------------------------------------------------------ two servers, many processes


def test_two_mcp_servers_write_to_one_store_at_once(tmp_path):
    home = tmp_path / "home"
    env = env_for(home)
    errlogs = [tmp_path / "a.err", tmp_path / "b.err"]
    shared_texts = [f"Shared fact {word(i)}ss" for i in range(10)]

    async def server_work(index: int, results: list):
        with errlogs[index].open("w") as errlog:
            params = StdioServerParameters(command=command_path("mem0-mcp-server"), env=env)
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()

                    async def worker(lane: int):
                        for n in range(15):
                            text = f"Server {index} lane {word(lane)} note {word(n)}"
                            ok, answer = await call(session, "add_memory", text=text, metadata={"type": "decision"})
                            results.append(("add", ok, answer))
                            memory_id = answer["results"][0]["id"] if ok else None
                            if ok and n % 3 == 0:
                                edited = f"Server {index} lane {word(lane)} edited {word(n)}"
                                results.append(
                                    ("update", *await call(session, "update_memory", memory_id=memory_id, text=edited))
                                )
                            if ok and n % 5 == 0:
                                results.append(("delete", *await call(session, "delete_memory", memory_id=memory_id)))
                        for text in shared_texts:  # both servers add the same texts at the same time
                            results.append(("shared", *await call(session, "add_memory", text=text)))

                    async with anyio.create_task_group() as group:
                        for lane in range(3):
                            group.start_soon(worker, lane)

    results: list = []

    async def main():
        async with anyio.create_task_group() as group:
            group.start_soon(server_work, 0, results)
            group.start_soon(server_work, 1, results)

    anyio.run(main)
    no_lock_errors(*(str(r[2]) for r in results), *(p.read_text() for p in errlogs))
    assert all(ok for _, ok, _ in results), [r for r in results if not r[1]][:3]
    adds = [r for r in results if r[0] == "add"]
    assert len(adds) == 2 * 3 * 15
    shared = [r[2]["results"][0] for r in results if r[0] == "shared"]
    assert sorted(r["event"] for r in shared).count("ADD") == len(shared_texts)  # identical text: one ADD, then NOOP
    assert len({r["id"] for r in shared}) == len(shared_texts)

    after = snapshot(home / "memories.sqlite3")
    check_history_chain(after)
    deletes = sum(1 for r in results if r[0] == "delete")
    assert len(after["memories"]) == len(adds) - deletes + len(shared_texts)
    edited = [m for m in after["memories"].values() if " edited " in m["memory"]]
    assert len(edited) == 2 * 3 * sum(1 for n in range(15) if n % 3 == 0 and n % 5 != 0)


def test_ten_auto_runs_and_cli_writers_at_once(tmp_path, run_cli):
    home = tmp_path / "home"
    db = home / "memories.sqlite3"
    big_store(db, pairs=40, stale=20, plain=0)
    env = env_for(home)
    autos = [start("mem0-dream", "--auto", env=env) for _ in range(10)]
    writers = [
        start("mem0-memories", "add", f"Parallel note {word(i)}pp", "--type", "decision", env=env) for i in range(6)
    ]
    results = [(p, *p.communicate(timeout=120)) for p in autos + writers]
    for process, out, err in results:
        assert process.returncode == 0, err
        no_lock_errors(out, err)
    lines = [out.strip() for process, out, _ in results[:10]]
    proceeded = [AUTO_LINE.match(line) for line in lines if AUTO_LINE.match(line)]
    skipped = [line for line in lines if line == "[mem0-dream --auto] Another run in progress — skipping."]
    assert len(proceeded) + len(skipped) == 10 and proceeded
    assert sum(int(m[1]) for m in proceeded) == 40 and sum(int(m[2]) for m in proceeded) == 20
    after = snapshot(db)
    check_history_chain(after)
    check_pointers(after)
    check_merges(after)
    assert len(dream_made(after)) == 40
    assert sum(1 for m in after["memories"].values() if m["memory"].startswith("Parallel note")) == 6


def test_dream_fetch_misses_no_memory_while_another_process_deletes_between_pages(tmp_path, monkeypatch):
    """Step 2 pages through 200 at a time; a delete between two pages must not shift a memory out of
    the fetch (offset paging over a moving table would skip one): the pages come from one snapshot."""
    from mem0_plugin.dream import pipeline

    db = tmp_path / "home" / "memories.sqlite3"
    big_store(db, pairs=0, stale=0, plain=450)
    identity = resolve_identity(user_id=USER, project_id=PROJECT, store=f"sqlite:///{db}", cwd=str(tmp_path))
    other = SqliteStore(db)  # another connection: another process as far as SQLite is concerned
    original = SqliteStore.page
    deleted = []

    def page_then_delete(self, *args, **kwargs):
        result = original(self, *args, **kwargs)
        victim = f"k{len(deleted):05d}"  # on the first page, so every later row moves up by one
        operations.delete_memory(operations.Caller(other, identity), victim)
        deleted.append(victim)
        return result

    monkeypatch.setattr(SqliteStore, "page", page_then_delete)
    with SqliteStore(db) as store:
        fetched = pipeline.step2_fetch(store, identity)
    other.close()
    assert len(deleted) == 3
    assert sorted(m.id for m in fetched) == [f"k{i:05d}" for i in range(450)]
