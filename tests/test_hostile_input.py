"""Hostile and malformed input (docs/safety.md): a clear error or a documented skip, never a
traceback, a hang, a lost memory or a raw escape sequence on the user's terminal.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import stat
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import anyio
import pytest
from conftest import command_path, mcp_session
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mem0_plugin.records import MAX_TEXT_CHARS

ROOT = Path(__file__).resolve().parent.parent
IS_ROOT = os.geteuid() == 0

# what must never reach a terminal raw: ESC (CSI/OSC/DCS...), the 8-bit CSI/OSC/ST, BEL, a lone CR,
# DEL, and the bidirectional controls that reorder what is displayed
RAW = [
    "\x1b",
    "\x9b",
    "\x9d",
    "\x9c",
    "\x07",
    "\r",
    "\x7f",
    "\u202e",
    "\u202d",
    "\u202c",
    "\u2066",
    "\u2067",
    "\u2068",
    "\u2069",
    "\u200f",
    "\u061c",
    "\u2028",
]
EVIL = (
    "Use \x1b[31mred\x1b[0m tabs\r\x1b[2Kfor \u202eindentation\u202c \x9b31m \x07 "
    "\x1b]0;pwned\x07 \x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\ \u2066x\u2069 \x7f"
)


def assert_inert(*outputs: str) -> None:
    for output in outputs:
        leaked = sorted({hex(ord(c)) for c in RAW if c in output})
        assert not leaked, f"raw control characters {leaked} reached the terminal: {output[:300]!r}"
        assert "Traceback" not in output and "internal error" not in output, output[-2000:]


def write_jsonl(path: Path, records: list) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def days_ago(days: float) -> str:
    return (datetime.now(timezone.utc) - timedelta(days=days)).isoformat()


def one_line_error(done: subprocess.CompletedProcess, prog: str) -> str:
    assert done.returncode not in (0, 70), (done.returncode, done.stdout, done.stderr)
    err = done.stderr.strip()
    assert err.startswith(f"{prog}: error: ") and "\n" not in err, done.stderr
    assert "Traceback" not in done.stderr
    return err


# ------------------------------------------------------------------ escape sequences never reach the terminal


@pytest.fixture
def evil_store(run_cli, tmp_path):
    """Memories whose texts, types and metadata carry escape sequences, CR and bidi overrides, shaped so
    that every report has something to say about them (a merge, a conflict, a prune, an orphan, a secret)."""
    records = [
        {"id": "e1", "memory": EVIL, "metadata": {"type": "convention", "confidence": 0.9}, "created_at": days_ago(20)},
        {"id": "e2", "memory": EVIL + " ", "metadata": {"type": "convention"}, "created_at": days_ago(10)},
        {"id": "e3", "memory": "Use Redis \x1b[5m\u202e", "metadata": {"type": "decision"}, "created_at": days_ago(30)},
        {
            "id": "e4",
            "memory": "Don't use Redis \x1b[5m\u202e",
            "metadata": {"type": "decision"},
            "created_at": days_ago(3),
        },
        {
            "id": "e5",
            "memory": "Working on \x1b[8mhidden\x1b[0m refactor\r",
            "metadata": {"type": "session_state"},
            "created_at": days_ago(200),
        },
        {
            "id": "e6",
            "memory": "Deploy \x1b]52;c;cm0gLXJmIH4=\x07 now",
            "metadata": {"type": "\x1b[31mtype\u202e", "confidence": 0.2},
            "created_at": days_ago(40),
        },
        {
            "id": "e7",
            "memory": "api key sk-ABCDEFGHIJKLMNOPQRSTUVWX123 \u202e",
            "metadata": {"type": "environmental"},
            "created_at": days_ago(5),
        },
    ]
    done = run_cli("mem0-memories", "import", str(write_jsonl(tmp_path / "evil.jsonl", records)))
    assert done.returncode == 0, done.stderr
    return records


COMMANDS = [
    ("mem0-memories", "list"),
    ("mem0-memories", "list", "--json"),
    ("mem0-memories", "list", "--include-merged"),
    ("mem0-memories", "search", "red tabs indentation"),
    ("mem0-memories", "search", "red tabs", "--json"),
    ("mem0-memories", "get", "e1"),
    ("mem0-memories", "history", "e1"),
    ("mem0-memories", "history", "e1", "--json"),
    ("mem0-memories", "export"),
    ("mem0-dream", "--plan"),
    ("mem0-dream", "--plan", "--json"),
    ("mem0-forget", "red tabs indentation"),
    ("mem0-forget", "e1"),
    ("mem0-forget", "Redis", "--json"),
    ("mem0-health", "--deep"),
    ("mem0-health", "--deep", "--json"),
    ("mem0-memories", "get", "\x1b[2J\u202eno-such-id"),
    ("mem0-memories", "list", "--filters", '{"app_id": {"like": "\\u001b[2J\\u202e"}}'),
    ("mem0-forget", "--ids", "\x1b[2Jx", "--yes"),
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c)[:40])
def test_no_command_prints_control_or_bidi_characters_raw(evil_store, run_cli, command):
    done = run_cli(*command, input="cancel\n")
    assert done.returncode in (0, 1, 2, 3), (done.returncode, done.stderr)
    assert_inert(done.stdout, done.stderr)
    if command[-1] == "--json" or command[1:] == ("export",):
        text = done.stdout
        values = [json.loads(line) for line in text.splitlines()] if command[1:] == ("export",) else [json.loads(text)]
        assert values  # still JSON, and the escapes decode back to the very characters stored
        if command[1:] in (("export",), ("get", "e1")):
            stored = {r["id"]: r["memory"] for r in values}
            assert stored["e1"] == EVIL


def test_interactive_dream_report_prompts_and_summary_are_inert(evil_store, run_cli):
    done = run_cli("mem0-dream", input="B\ny\n")
    assert done.returncode == 0, done.stderr
    assert_inert(done.stdout, done.stderr)
    assert "Conflict 1/1: [mem0:e4] vs [mem0:e3]" in done.stdout
    assert "\\x1b[31mred\\x1b[0m" in done.stdout  # visible, not acted on
    assert "Dream complete — merged: 1, pruned: " in done.stdout and "conflicts resolved: 1" in done.stdout


def test_auto_and_apply_notes_are_inert(evil_store, run_cli, tmp_path):
    plan = tmp_path / "plan.json"
    assert run_cli("mem0-dream", "--plan", "--json", "-o", str(plan)).returncode == 0
    data = json.loads(plan.read_text())
    data["merges"][0]["merged_text"] = "edited \x1b[31m by an agent \u202e"
    data["prunes"].append({"id": "\x1b[2Jghost\u202e", "type": "x", "age_days": 1, "reason": "retention"})
    data["fingerprints"]["\x1b[2Jghost\u202e"] = "1"
    plan.write_text(json.dumps(data))
    done = run_cli("mem0-dream", "--apply", str(plan), "--yes")
    assert done.returncode == 0, done.stderr
    assert_inert(done.stdout, done.stderr)
    assert "Not applied — prune \\x1b[2Jghost\\u202e" in done.stdout
    auto = run_cli("mem0-dream", "--auto")
    assert_inert(auto.stdout, auto.stderr)


def test_ids_and_scopes_with_control_characters_are_refused_at_import(run_cli, tmp_path):
    for field in ("id", "app_id", "agent_id", "run_id", "replacement_memory_id"):
        path = write_jsonl(tmp_path / f"{field}.jsonl", [{"memory": "ok"}, {"memory": "fine", field: "x\x1b[2J\u202e"}])
        err = one_line_error(run_cli("mem0-memories", "import", str(path)), "mem0-memories")
        assert f"{field} must be one line of printable text" in err and "line 2" in err
        assert_inert(err)
    path = write_jsonl(tmp_path / "sources.jsonl", [{"memory": "fine", "source_memory_ids": ["ok", "a\nb"]}])
    assert "source_memory_ids" in one_line_error(run_cli("mem0-memories", "import", str(path)), "mem0-memories")


def test_mcp_add_memory_refuses_scopes_with_control_characters():
    async def main():
        async with mcp_session() as session:
            result = await session.call_tool("add_memory", {"text": "fine", "agent_id": "\x1b]0;x\x07"})
            assert result.is_error and "agent_id must be one line of printable text" in result.content[0].text

    anyio.run(main)


# ------------------------------------------------------------------ 1 MB texts


def big_text(chars: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    vocabulary = [
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9))) for _ in range(20000)
    ]
    words, total = [], 0
    while total < chars:
        word = rng.choice(vocabulary)
        words.append(word)
        total += len(word) + 1
    return " ".join(words)[:chars].rstrip() + "x" * (chars - len(" ".join(words)[:chars].rstrip()))


def test_one_megabyte_texts_through_mcp_up_to_the_limit_and_a_clear_error_above():
    """Over a real server process's stdio: the transport carries a 1 MB text both ways."""
    exact = big_text(MAX_TEXT_CHARS)
    assert len(exact) == MAX_TEXT_CHARS == 1_000_000

    async def main():
        params = StdioServerParameters(command=command_path("mem0-mcp-server"), env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                added = await session.call_tool("add_memory", {"text": exact, "metadata": {"type": "decision"}})
                assert not added.is_error, added.content[0].text[:300]
                memory_id = added.structured_content["results"][0]["id"]
                got = await session.call_tool("get_memory", {"memory_id": memory_id})
                assert got.structured_content["memory"] == exact
                for call, args in (
                    ("add_memory", {"text": exact + "y"}),
                    ("update_memory", {"memory_id": memory_id, "text": exact + "y"}),
                ):
                    refused = await session.call_tool(call, args)
                    assert refused.is_error and "longer than 1,000,000 characters" in refused.content[0].text
                hits = await session.call_tool("search_memories", {"query": exact[:2000]})
                assert not hits.is_error and hits.structured_content["results"][0]["id"] == memory_id

    anyio.run(main)


def test_one_megabyte_texts_import_list_and_dream(run_cli, tmp_path):
    text = big_text(MAX_TEXT_CHARS - 10)
    records = [
        {"id": "big1", "memory": text, "metadata": {"type": "decision"}, "created_at": days_ago(9)},
        {"id": "big2", "memory": text + " again", "metadata": {"type": "decision"}, "created_at": days_ago(8)},
    ]
    too_big = write_jsonl(tmp_path / "too_big.jsonl", [{"memory": "small"}, {"memory": big_text(MAX_TEXT_CHARS + 1)}])
    err = one_line_error(run_cli("mem0-memories", "import", str(too_big)), "mem0-memories")
    assert "line 2" in err and "longer than 1,000,000 characters" in err and len(err) < 400
    done = run_cli("mem0-memories", "import", str(write_jsonl(tmp_path / "big.jsonl", records)))
    assert done.returncode == 0, done.stderr
    listed = run_cli("mem0-memories", "list")
    assert listed.returncode == 0 and len(listed.stdout) < 2000
    started = time.monotonic()
    plan = run_cli("mem0-dream", "--plan", "--json", timeout=180)
    assert plan.returncode == 0, plan.stderr
    assert time.monotonic() - started < 120
    assert [m["ids"] for m in json.loads(plan.stdout)["merges"]] == [["big1", "big2"]]
    report = run_cli("mem0-dream", "--plan")
    assert max(len(line) for line in report.stdout.splitlines()) < 300


def test_a_search_query_of_a_whole_document_answers(run_cli, tmp_path):
    """An agent may search with a whole file as the query: thousands of distinct words."""
    words = big_text(60_000, seed=3).split()
    records = [{"memory": " ".join(words[i : i + 40]), "metadata": {"type": "decision"}} for i in range(0, 4000, 40)]
    assert run_cli("mem0-memories", "import", str(write_jsonl(tmp_path / "docs.jsonl", records))).returncode == 0
    query = " ".join(words[:8000])
    done = run_cli("mem0-memories", "search", query[:120_000], "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["results"]


# ------------------------------------------------------------------ mem0.md of any content


def parse_script(cwd: Path) -> subprocess.CompletedProcess:
    python = shutil.which("python3") or sys.executable
    return subprocess.run(
        [python, str(ROOT / "scripts" / "parse_mem0_config.py"), str(cwd)], capture_output=True, text=True, timeout=60
    )


def plan_policy(run_cli, cwd: Path) -> tuple[dict, str]:
    done = run_cli("mem0-dream", "--plan", "--json", "--cwd", str(cwd), timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    plan = json.loads(done.stdout)
    return plan["policy"], plan["policy_source"]


@pytest.mark.parametrize(
    "content, expected",
    [
        (bytes(range(256)) * 400, {}),
        (b"\x00\xff\xfe\n## Retention\nsession_state: 3d\n\x80\x81", {"session_state": 3}),
        (b"## Retention\n" + b"junk line \x1b[31m\n" * 100_000, {}),
        (b"## Retention\n" + b"".join(b"type%d: %dd\n" % (i, i) for i in range(100_000)), "many"),
        (b"## Retention\nsession_state: 99999999999d\ndecision: 36501d\n", {}),
        (b"## Retention\nsession_state: 99999999999d\ncompact_summary: 36500d\n", {"compact_summary": 36500}),
        (b"## Retention\n" + b"a" * 2_000_000, {}),
    ],
    ids=[
        "binary",
        "binary-around-a-valid-line",
        "100k-junk-lines",
        "100k-valid-lines",
        "overflow",
        "overflow-and-century",
        "2MB-one-line",
    ],
)
def test_mem0_md_of_any_content_gives_defaults_or_parsed_values(run_cli, tmp_path, content, expected):
    project = tmp_path / "project"
    project.mkdir()
    (project / "mem0.md").write_bytes(content)
    started = time.monotonic()
    script = parse_script(project)
    assert script.returncode == 0 and script.stderr == "", script.stderr
    parsed = json.loads(script.stdout)
    policy, source = plan_policy(run_cli, project)
    assert time.monotonic() - started < 60
    if expected == "many":
        assert len(parsed) == 36_501 and parsed["type36500"] == 36_500 and "type36501" not in parsed
        assert source == "mem0.md" and policy == parsed
    elif expected:
        assert parsed == expected and (policy, source) == (expected, "mem0.md")
    else:
        assert parsed == {} and (policy, source) == ({"compact_summary": 90, "session_state": 90}, "default")


@pytest.mark.parametrize("kind", ["directory", "fifo", "dangling-symlink", "symlink-to-dev-zero", "unreadable"])
def test_mem0_md_that_is_not_a_readable_file_is_skipped_without_hanging(run_cli, tmp_path, kind):
    project = tmp_path / "project"
    project.mkdir()
    path = project / "mem0.md"
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "dangling-symlink":
        path.symlink_to(tmp_path / "missing")
    elif kind == "symlink-to-dev-zero":
        path.symlink_to("/dev/zero")
    else:
        if IS_ROOT:
            pytest.skip("root reads any file")
        path.write_text("## Retention\nsession_state: 3d\n")
        path.chmod(0)
    assert json.loads(parse_script(project).stdout) == {}
    assert plan_policy(run_cli, project) == ({"compact_summary": 90, "session_state": 90}, "default")


def test_retention_against_extreme_dates_never_crashes(run_cli, tmp_path):
    """A century-long policy against memories from year 1 and from tomorrow: pruned / kept, no overflow."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "mem0.md").write_text("## Retention\ndecision: 36500d\nsession_state: 0d\nnote: forever\n")
    records = [
        {
            "id": "ancient",
            "memory": "Ancient decision",
            "metadata": {"type": "decision"},
            "created_at": "0001-01-01T00:00:00+00:00",
        },
        {
            "id": "tomorrow",
            "memory": "Session from the near future",
            "metadata": {"type": "session_state"},
            "created_at": (datetime.now(timezone.utc) + timedelta(hours=12)).isoformat(),
        },
        {"id": "forever", "memory": "Kept forever", "metadata": {"type": "note"}, "created_at": "0001-01-02T00:00:00Z"},
    ]
    done = run_cli("mem0-memories", "import", str(write_jsonl(tmp_path / "dates.jsonl", records)))
    assert done.returncode == 0, done.stderr
    plan = json.loads(run_cli("mem0-dream", "--plan", "--json", "--cwd", str(project)).stdout)
    assert [(p["id"], p["reason"]) for p in plan["prunes"]] == [("ancient", "retention")]
    assert plan["prunes"][0]["age_days"] > 700_000
    for command in (
        ("mem0-dream", "--auto", "--cwd", str(project)),
        ("mem0-health", "--deep"),
        ("mem0-memories", "list"),
    ):
        done = run_cli(*command)
        assert done.returncode == 0, (command, done.stderr)
        assert_inert(done.stdout, done.stderr)


# ------------------------------------------------------------------ malformed records


@pytest.mark.parametrize(
    "record, message",
    [
        ({}, "memory text must be a string"),
        ({"memory": None}, "memory text must be a string"),
        ({"memory": ["a"]}, "memory text must be a string, got list"),
        ({"memory": {"text": "a"}}, "memory text must be a string, got dict"),
        ({"memory": True}, "memory text must be a string, got bool"),
        ({"memory": "   "}, "memory text is empty"),
        ({"memory": "a\u0000b"}, "NUL"),
        ({"memory": "x", "metadata": [1, 2]}, "metadata must be a JSON object, got list"),
        ({"memory": "x", "metadata": 5}, "metadata must be a JSON object, got int"),
        ({"memory": "x", "created_at": []}, "created_at is not an ISO-8601 timestamp"),
        ({"memory": "x", "created_at": "2026-02-30T00:00:00Z"}, "created_at is not an ISO-8601 timestamp"),
        ({"memory": "x", "created_at": "9999-12-31T23:59:59-23:00"}, "created_at is out of range"),
        ({"memory": "x", "created_at": "0001-01-01T00:00:00+05:00"}, "created_at is out of range"),
        ({"memory": "x", "created_at": days_ago(-3)}, "created_at is in the future"),
        ({"memory": "x", "updated_at": {"y": 1}}, "updated_at is not an ISO-8601 timestamp"),
        ({"memory": "x", "lifecycle_state": 5}, "lifecycle_state must be one of"),
        ({"memory": "x", "lifecycle_state": ["active"]}, "lifecycle_state must be one of"),
        ({"memory": "x", "immutable": 1}, "immutable must be true or false"),
        ({"memory": "x", "source_memory_ids": [1, 2]}, "source_memory_ids must be a list"),
        ({"memory": "x", "id": 42}, "id must be a string, got int"),
        ({"memory": "x", "user_id": ["alice"]}, "user_id must be a string, got list"),
        ({"memory": "x", "replacement_memory_id": {}}, "replacement_memory_id must be a string"),
        ({"memory": "x", "agent_id": 1.5}, "agent_id must be a string, got float"),
        (42, "a record must be a JSON object, got int"),
        (None, "a record must be a JSON object, got NoneType"),
        ([{"memory": "x"}], "a record must be a JSON object, got list"),
    ],
)
def test_a_malformed_record_is_a_clear_error_naming_its_line(run_cli, tmp_path, record, message):
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps({"memory": "a good record"}) + "\n" + json.dumps(record) + "\n", encoding="utf-8")
    err = one_line_error(run_cli("mem0-memories", "import", str(path)), "mem0-memories")
    assert "line 2" in err and message in err, err
    assert json.loads(run_cli("mem0-memories", "list", "--json").stdout)["count"] == 0
    skipped = run_cli("mem0-memories", "import", str(path), "--skip-invalid")
    assert skipped.returncode == 0 and "1 invalid skipped" in skipped.stdout and "line 2" in skipped.stderr


def test_import_files_with_broken_lines(run_cli, tmp_path):
    lines = [
        '{"memory": "one"}',
        '{"memory": "two"',
        "",
        "\x00\x01garbage",
        '{"memory": "three"}',
        '{"memory": "four", "metadata": {"n": NaN}}',
        "[1, 2",
        '"just text"',
        '{"memory": "five"}   ',
    ]
    path = tmp_path / "broken.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    err = one_line_error(run_cli("mem0-memories", "import", str(path)), "mem0-memories")
    assert "line 2" in err and "nothing imported" in err
    done = run_cli("mem0-memories", "import", str(path), "--skip-invalid")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Imported 3 memories (0 already present, 5 invalid skipped)."
    for number in (2, 4, 6, 7, 8):
        assert f"line {number}" in done.stderr
    assert_inert(done.stderr)
    texts = sorted(r["memory"] for r in json.loads(run_cli("mem0-memories", "list", "--json").stdout)["results"])
    assert texts == ["five", "one", "three"]


@pytest.mark.parametrize("content", [b"\xff\xfe\x00\x01" * 1000, b"[" + b'{"memory": "x"},' * 3, b"\xef\xbb\xbf"])
def test_import_of_binary_truncated_or_empty_files(run_cli, tmp_path, content):
    path = tmp_path / "in.json"
    path.write_bytes(content)
    done = run_cli("mem0-memories", "import", str(path))
    if content == b"\xef\xbb\xbf":  # a byte-order mark and nothing else: an empty file
        assert done.returncode == 0 and "Imported 0 memories" in done.stdout
    else:
        one_line_error(done, "mem0-memories")
    assert json.loads(run_cli("mem0-memories", "list", "--json").stdout)["count"] == 0


def test_export_then_import_round_trips_hostile_text(run_cli, tmp_path, evil_store):
    exported = run_cli("mem0-memories", "export")
    assert exported.returncode == 0
    other_home = tmp_path / "other-home"
    path = tmp_path / "backup.jsonl"
    path.write_text(exported.stdout, encoding="utf-8")
    done = run_cli("mem0-memories", "import", str(path), env={"MEM0_HOME": str(other_home)})
    assert done.returncode == 0, done.stderr
    again = run_cli("mem0-memories", "export", env={"MEM0_HOME": str(other_home)})
    assert again.stdout == exported.stdout
    assert {json.loads(line)["id"]: json.loads(line)["memory"] for line in again.stdout.splitlines()}["e1"] == EVIL


# ------------------------------------------------------------------ odd metadata already in the store


ODD_METADATA = [
    "[1, 2]",
    "not json at all",
    '"a string"',
    "null",
    '{"type": 42, "confidence": "high"}',
    '{"type": ["decision"], "confidence": NaN}',
    '{"type": "decision", "confidence": Infinity}',
    '{"type": "decision", "confidence": true, "pinned": "yes"}',
    '{"type": "decision", "confidence": -5}',
    '{"type": "decision", "confidence": 7}',
    '{"type": {"nested": 1}, "exclude_from_dream": "true"}',
    '{"type": "", "source": 12}',
]


def test_odd_metadata_written_by_another_tool_never_crashes_dream_health_or_listing(run_cli, tmp_path, mem0_home):
    """Rows whose metadata is not what this plugin writes (a list, broken JSON, confidence "high" or
    NaN, type 42): every reader copes, and a confidence outside 0..1 is unknown, never "low"."""
    records = [
        {
            "id": f"odd{i}",
            "memory": "Use PostgreSQL for auth" if i % 2 else "Auth DB is PostgreSQL",
            "metadata": {"type": "decision"},
            "created_at": days_ago(10 + i),
        }
        for i in range(len(ODD_METADATA))
    ]
    records.append(
        {"id": "stale", "memory": "Old session", "metadata": {"type": "session_state"}, "created_at": days_ago(300)}
    )
    assert run_cli("mem0-memories", "import", str(write_jsonl(tmp_path / "odd.jsonl", records))).returncode == 0
    conn = sqlite3.connect(mem0_home / "memories.sqlite3")
    with conn:
        for i, metadata in enumerate(ODD_METADATA):
            conn.execute("UPDATE memories SET metadata = ? WHERE id = ?", (metadata, f"odd{i}"))
        conn.execute("UPDATE memories SET created_at = 'garbage' WHERE id = 'odd0'")
    conn.close()
    for command in (
        ("mem0-dream", "--plan", "--json"),
        ("mem0-dream", "--plan"),
        ("mem0-health", "--deep"),
        ("mem0-health", "--deep", "--json"),
        ("mem0-memories", "list"),
        ("mem0-memories", "export"),
        ("mem0-memories", "search", "PostgreSQL auth"),
        ("mem0-forget", "PostgreSQL"),
    ):
        done = run_cli(*command, input="cancel\n")
        assert done.returncode == 0, (command, done.stderr)
        assert_inert(done.stdout, done.stderr)
    plan = json.loads(run_cli("mem0-dream", "--plan", "--json").stdout)
    assert not [p for p in plan["prunes"] if p["reason"] == "low_confidence"]
    assert all(m["confidence"] is None or 0 <= m["confidence"] <= 1 for m in plan["merges"])
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan))
    applied = run_cli("mem0-dream", "--apply", str(plan_file), "--yes")
    assert applied.returncode == 0, applied.stderr
    # the merge that would rewrite the row with the corrupt created_at is skipped, the rest applied
    assert "Not applied — merge odd0+" in applied.stdout and "created_at" in applied.stdout, applied.stdout
    assert "merged: 0" not in applied.stdout
    assert run_cli("mem0-dream", "--auto").returncode == 0
    assert run_cli("mem0-memories", "get", "odd0").returncode == 0


def test_out_of_range_confidence_is_unknown_end_to_end(run_cli, tmp_path):
    """confidence 5 or -1 (docs/records.md: 0..1) is neither "low" (no prune) nor copied into a merged memory."""
    records = [
        {"id": "c1", "memory": "maybe something about stuff", "metadata": {"type": "decision", "confidence": -1}},
        {"id": "c2", "memory": "Use tabs for indentation", "metadata": {"type": "convention", "confidence": 5}},
        {"id": "c3", "memory": "Tabs are used for indentation", "metadata": {"type": "convention", "confidence": 7}},
    ]
    assert run_cli("mem0-memories", "import", str(write_jsonl(tmp_path / "c.jsonl", records))).returncode == 0
    plan_file = tmp_path / "plan.json"
    assert run_cli("mem0-dream", "--plan", "--json", "-o", str(plan_file)).returncode == 0
    plan = json.loads(plan_file.read_text())
    assert plan["prunes"] == [] and [(m["ids"], m["confidence"]) for m in plan["merges"]] == [(["c2", "c3"], None)]
    applied = run_cli("mem0-dream", "--apply", str(plan_file), "--yes")
    assert applied.returncode == 0, applied.stderr
    merged = [
        r
        for r in json.loads(run_cli("mem0-memories", "list", "--json").stdout)["results"]
        if r["metadata"].get("source") == "mem0-dream"
    ]
    assert len(merged) == 1 and "confidence" not in merged[0]["metadata"]


# ------------------------------------------------------------------ the --auto lock path


def auto_refused(run_cli, lock: Path, mem0_home: Path) -> str:
    done = run_cli("mem0-dream", "--auto", env={"MEM0_DREAM_LOCK": str(lock)})
    err = one_line_error(done, "mem0-dream")
    assert done.stdout == ""
    assert not (mem0_home / "memories.sqlite3").exists(), "the run went on without its lock"
    return err


def test_lock_path_that_is_a_symlink_is_never_followed(run_cli, tmp_path, mem0_home):
    target = tmp_path / "victim"
    lock = tmp_path / "auto.lock"
    lock.symlink_to(target)
    err = auto_refused(run_cli, lock, mem0_home)
    assert "symbolic link" in err and not os.path.lexists(target)
    target.write_text("precious")
    auto_refused(run_cli, lock, mem0_home)
    assert target.read_text() == "precious" and lock.is_symlink()


def test_lock_path_that_is_a_directory(run_cli, tmp_path, mem0_home):
    lock = tmp_path / "auto.lock"
    lock.mkdir()
    assert "is a directory" in auto_refused(run_cli, lock, mem0_home)
    assert lock.is_dir()


def test_lock_path_in_an_unwritable_place(run_cli, tmp_path, mem0_home):
    if IS_ROOT:
        lock = Path("/sys/mem0_dream_hostile_test.lock")
        try:
            os.close(os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            os.unlink(lock)
            pytest.skip("running as root and /sys accepts root's writes here")
        except OSError:
            pass
    else:
        parent = tmp_path / "ro"
        parent.mkdir()
        parent.chmod(stat.S_IRUSR | stat.S_IXUSR)
        lock = parent / "auto.lock"
    assert "not writable" in auto_refused(run_cli, lock, mem0_home)


@pytest.mark.skipif(not IS_ROOT, reason="giving a file to another user needs root")
def test_lock_file_owned_by_another_user(run_cli, tmp_path, mem0_home):
    lock = tmp_path / "auto.lock"
    lock.write_text(json.dumps({"time": "2020-01-01T00:00:00+00:00", "epoch": 1577836800.0, "pid": 1, "host": "x"}))
    os.chown(lock, 65534, 65534)
    old = time.time() - 3600
    os.utime(lock, (old, old))
    err = auto_refused(run_cli, lock, mem0_home)  # stale, but not ours to remove
    assert "belongs to uid 65534" in err and lock.stat().st_uid == 65534
    lock.write_text(
        json.dumps(
            {"time": datetime.now(timezone.utc).isoformat(), "epoch": time.time(), "pid": 1, "host": "elsewhere"}
        )
    )
    fresh = run_cli("mem0-dream", "--auto", env={"MEM0_DREAM_LOCK": str(lock)})  # fresh: another run is going on
    assert (fresh.returncode, fresh.stdout.strip()) == (0, "[mem0-dream --auto] Another run in progress — skipping.")
    assert lock.exists()
