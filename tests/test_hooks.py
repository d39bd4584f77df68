"""The memory loop (docs/hooks.md): every hook driven with the payloads Claude Code, Codex and
Cursor document, against a real store — `mem0-hook`'s `main(argv)` in this process, and
`scripts/hook.py` with the recall service as real processes at the end.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mem0_plugin import operations
from mem0_plugin.identity import resolve_identity
from mem0_plugin.store import open_store

ROOT = Path(__file__).resolve().parent.parent
HOOK_SCRIPT = ROOT / "scripts" / "hook.py"


# -- a project with memories ----------------------------------------------------------


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A git repository on branch feature/ledger with CLAUDE.md and mem0.md, and a store holding
    this project's memories, another project's, and dream's reminder."""
    folder = tmp_path / "ledger"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "feature/ledger", str(folder)], check=True)
    (folder / "CLAUDE.md").write_text(
        "# Ledger\n\n## Testing\nRun `pytest -n 2` before pushing; unit tests never reach the network.\n\n"
        "## Deploy\nDeploys go through the Helm chart in deploy/helm, never kubectl apply by hand.\n",
        encoding="utf-8",
    )
    (folder / "mem0.md").write_text(
        "## Instructions\nRemember architecture decisions and conventions; ignore one-off debugging output.\n",
        encoding="utf-8",
    )
    monkeypatch.delenv("MEM0_PROJECT_ID")  # the project is the folder: every hook passes its cwd
    monkeypatch.chdir(tmp_path)
    add = _adder(folder)
    add("Money amounts are stored as integer cents in amount_cents columns, never as floats", "convention")
    add("We deploy the ledger API to ECS with blue/green task sets", "decision")
    add("Never call the payments API without a timeout; it hung for ten minutes once", "anti_pattern", pinned=True)
    add("The double-post race in posting.py was fixed by row-locking the account before writing entries", "bug_fix")
    add(
        "ModuleNotFoundError: No module named 'psycopg2' means the env lacks the driver: install psycopg[binary]",
        "bug_fix",
    )
    add("Alice prefers small pull requests with one change each", "user_preference")
    add(
        "mem0-dream detected 3 contradiction(s) requiring manual review. Run /mem0:dream to resolve them interactively.",
        "task_learning",
        source="mem0-dream-auto",
    )
    _adder(folder, project="other-project")("Money amounts in the other project are floats in dollars", "convention")
    return folder


def _adder(folder: Path, project: str | None = None):
    identity = resolve_identity(cwd=folder, project_id=project)

    def add(text: str, kind: str, *, pinned: bool = False, source: str | None = None) -> str:
        metadata: dict = {"type": kind}
        if pinned:
            metadata["pinned"] = True
        if source:
            metadata["source"] = source
        with open_store(identity.store_location) as store:
            answer = operations.add_memory(operations.Caller(store, identity), text, metadata=metadata, infer=False)
        return answer["results"][0]["id"]

    return add


def memories_of(folder: Path, **filters) -> list[dict]:
    identity = resolve_identity(cwd=folder)
    with open_store(identity.store_location) as store:
        caller = operations.Caller(store, identity)
        return operations.get_memories(caller, filters or None, page_size=1000, include_merged=True)["results"]


def hook(run_cli, client: str, event: str, payload, *args: str):
    """One hook call as the client makes it: the payload as JSON on standard input."""
    text = payload if isinstance(payload, str) else json.dumps(payload)
    done = run_cli("mem0-hook", client, event, *args, input=text)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout


def context_of(out: str, event: str) -> str:
    answer = json.loads(out)
    assert answer == {
        "hookSpecificOutput": {
            "hookEventName": event,
            "additionalContext": answer["hookSpecificOutput"]["additionalContext"],
        }
    }
    return answer["hookSpecificOutput"]["additionalContext"]


def log_lines(mem0_home: Path) -> list[str]:
    path = mem0_home / "hooks.log"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


# -- Claude Code payloads, as its hooks reference gives them ------------------------------


def claude(event: str, folder: Path, **fields) -> dict:
    base = {
        "session_id": "abc123",
        "transcript_path": str(folder / "transcript.jsonl"),
        "cwd": str(folder),
        "hook_event_name": event,
    }
    if event not in ("SessionStart", "PreCompact", "SessionEnd", "PostCompact"):
        base["permission_mode"] = "default"
    return {**base, **fields}


def test_session_start_gives_the_agent_its_context(run_cli, project):
    out = hook(
        run_cli, "claude", "SessionStart", claude("SessionStart", project, source="startup", model="claude-sonnet-5")
    )
    text = context_of(out, "SessionStart")
    first = text.splitlines()[0]
    assert first.startswith("## mem0 memory: user=alice · project=ledger · branch=feature/ledger · ")
    assert "store sqlite:///" in first
    assert "Remember architecture decisions and conventions" in text  # mem0.md's Instructions
    assert "Pending: 3 contradictions wait for you to decide: /mem0:dream" in text
    listed = [line for line in text.splitlines() if line.startswith("- [")]
    assert listed[0].startswith("- [pinned anti_pattern] Never call the payments API")
    assert any("[convention] Money amounts are stored as integer cents" in line for line in listed)
    assert all(line.rstrip().endswith("]") and "[mem0:" in line for line in listed)
    assert not any("other project" in line or "mem0-dream detected" in line for line in listed)
    assert "Never write a MEMORY.md" in text
    from mem0_plugin.hooks.opening import MAX_TOKENS, tokens

    assert tokens(text) <= MAX_TOKENS


def test_the_opening_context_stays_within_its_budget_however_many_memories(run_cli, project):
    add = _adder(project)
    for n in range(60):
        add(
            f"Decision {n}: the reconciliation job {n} runs nightly at 0{n % 10}:00 UTC " + "and more words " * 20,
            "decision",
        )
    text = context_of(
        hook(run_cli, "claude", "SessionStart", claude("SessionStart", project, source="startup")), "SessionStart"
    )
    from mem0_plugin.hooks.opening import MAX_TOKENS, tokens

    assert tokens(text) <= MAX_TOKENS
    assert "Decision 59:" in text and "Never write a MEMORY.md" in text  # newest first, protocol kept


def test_claude_md_is_imported_once_and_a_change_supersedes_it(run_cli, project, mem0_home):
    start = claude("SessionStart", project, source="startup")
    hook(run_cli, "claude", "SessionStart", start)
    imported = [m for m in memories_of(project) if m["metadata"].get("source") == "mem0-bootstrap"]
    assert {m["metadata"]["section"] for m in imported} == {"Ledger > Testing", "Ledger > Deploy"}
    assert all(m["metadata"]["type"] == "project_profile" and m["metadata"]["file"] == "CLAUDE.md" for m in imported)
    versions = {m["id"]: m for m in memories_of(project)}

    hook(run_cli, "claude", "SessionStart", start)  # unchanged: nothing written
    assert {m["id"]: m for m in memories_of(project)} == versions

    claude_md = project / "CLAUDE.md"
    claude_md.write_text(claude_md.read_text().replace("pytest -n 2", "pytest -n 4"), encoding="utf-8")
    hook(run_cli, "claude", "SessionStart", start)
    now = [m for m in memories_of(project) if m["metadata"].get("source") == "mem0-bootstrap"]
    testing = [m for m in now if m["metadata"]["section"] == "Ledger > Testing"]
    old = next(m for m in testing if m["lifecycle_state"] == "superseded")
    new = next(m for m in testing if m["lifecycle_state"] == "active")
    assert "pytest -n 4" in new["memory"] and old["replacement_memory_id"] == new["id"]
    deploy = [m for m in now if m["metadata"]["section"] == "Ledger > Deploy"]
    assert len(deploy) == 1 and deploy[0]["lifecycle_state"] == "active"  # unchanged section kept

    claude_md.write_text(
        "# Ledger\n\n## Testing\nRun `pytest -n 4` before pushing; unit tests never reach the network.\n"
    )
    hook(run_cli, "claude", "SessionStart", start)
    active = [
        m
        for m in memories_of(project)
        if m["metadata"].get("source") == "mem0-bootstrap" and m["lifecycle_state"] == "active"
    ]
    assert [m["metadata"]["section"] for m in active] == ["Ledger > Testing"]  # the removed section superseded


def test_a_relevant_prompt_recalls_and_an_unrelated_or_trivial_one_adds_nothing(run_cli, project):
    asked = claude(
        "UserPromptSubmit", project, prompt="the double-post race in posting.py is back: how did we fix it last time?"
    )
    text = context_of(hook(run_cli, "claude", "UserPromptSubmit", asked), "UserPromptSubmit")
    lines = [line for line in text.splitlines() if line.startswith("- [")]
    assert lines and "[bug_fix] The double-post race in posting.py was fixed" in lines[0]
    assert len(lines) <= 5 and "(score " in lines[0]
    assert not any("mem0-dream detected" in line for line in lines)

    for prompt in ("write a haiku about autumn leaves", "ok", "continue", "yes go ahead", "好的", "thanks!"):
        assert hook(run_cli, "claude", "UserPromptSubmit", claude("UserPromptSubmit", project, prompt=prompt)) == "", (
            prompt
        )


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("可以，就这么办", True),
        ("はい、お願いします", True),
        ("続けてください", True),
        ("没问题，开始吧", True),
        ("продолжай пожалуйста", True),
        ("可以用redis吗", False),
        ("推送用的是什么服务？", False),
        ("はい、テストを追加して", False),
        ("go ahead and add the migration", False),
    ],
)
def test_acknowledgements_in_any_language_are_trivial(prompt, expected):
    from mem0_plugin.hooks.recall import trivial

    assert trivial(prompt) is expected


def test_without_the_model_a_prompt_is_recalled_by_words(run_cli, project, mem0_home):
    mem0_home.mkdir(exist_ok=True)
    missing = mem0_home / "gone"
    (mem0_home / "config.yaml").write_text(
        "embedder:\n  provider: onnx-local\n  config:\n"
        f"    model_path: {missing / 'model.onnx'}\n    model_sha256: '{'0' * 64}'\n"
        f"    tokenizer_path: {missing / 'tokenizer.json'}\n    tokenizer_sha256: '{'0' * 64}'\n",
        encoding="utf-8",
    )
    asked = claude("UserPromptSubmit", project, prompt="the double-post race in posting.py is back, how was it fixed?")
    done = run_cli("mem0-hook", "claude", "UserPromptSubmit", input=json.dumps(asked))
    assert done.returncode == 0 and done.stderr == ""
    assert "double-post race" in context_of(done.stdout, "UserPromptSubmit")


def test_a_prompt_never_recalls_another_projects_memory(run_cli, project):
    asked = claude(
        "UserPromptSubmit", project, session_id="s-money", prompt="how are money amounts stored, cents or dollars?"
    )
    text = context_of(hook(run_cli, "claude", "UserPromptSubmit", asked), "UserPromptSubmit")
    assert "integer cents" in text and "floats in dollars" not in text


def test_a_failing_command_recalls_the_fix(run_cli, project):
    failed = claude(
        "PostToolUseFailure",
        project,
        tool_name="Bash",
        tool_input={"command": "python -m ledger.migrate", "description": "Run the migration"},
        tool_use_id="toolu_01ABC123",
        error='Exit code 1\nTraceback (most recent call last):\n  File "ledger/db.py", line 3, in <module>\n'
        "ModuleNotFoundError: No module named 'psycopg2'",
        is_interrupt=False,
        duration_ms=4187,
    )
    text = context_of(hook(run_cli, "claude", "PostToolUseFailure", failed), "PostToolUseFailure")
    assert text.startswith("mem0 recalled fixes for this error (ModuleNotFoundError: No module named 'psycopg2')")
    assert "[bug_fix] ModuleNotFoundError: No module named 'psycopg2' means" in text
    assert len([line for line in text.splitlines() if line.startswith("- [")]) <= 3

    passed = claude(
        "PostToolUse",
        project,
        session_id="s2",
        tool_name="Bash",
        tool_input={"command": "npm test", "description": "Run test suite"},
        tool_response={"stdout": "All tests passed\n", "stderr": "", "interrupted": False, "isImage": False},
        tool_use_id="toolu_01ABC124",
        duration_ms=4187,
    )
    assert hook(run_cli, "claude", "PostToolUse", passed) == ""


def test_reading_a_file_recalls_the_memories_that_name_it(run_cli, project):
    read = claude(
        "PostToolUse",
        project,
        tool_name="Read",
        tool_input={"file_path": str(project / "ledger" / "posting.py")},
        tool_response={"type": "text", "file": {"filePath": str(project / "ledger" / "posting.py"), "content": "..."}},
        tool_use_id="toolu_01ABC125",
    )
    text = context_of(hook(run_cli, "claude", "PostToolUse", read), "PostToolUse")
    assert text.startswith("mem0 recalled memories that name posting.py:")
    assert "double-post race in posting.py" in text


def transcript(path: Path, n: int) -> Path:
    """A Claude Code transcript: a request, a failing test run, an edit, the test passing."""
    lines = [
        {
            "type": "user",
            "isSidechain": False,
            "message": {"role": "user", "content": f"Fix the invoice total test, round {n}"},
        },
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": f"t{n}a",
                        "name": "Bash",
                        "input": {"command": "pytest tests/test_invoices.py -x"},
                    }
                ],
            },
        },
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"t{n}a", "content": "Exit code 1\nFAILED", "is_error": True}
                ],
            },
        },
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": f"t{n}b", "name": "Edit", "input": {"file_path": f"app/invoices_{n}.py"}}
                ],
            },
        },
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"t{n}b", "content": "ok", "is_error": False}],
            },
        },
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": f"t{n}c",
                        "name": "Bash",
                        "input": {"command": "pytest tests/test_invoices.py"},
                    }
                ],
            },
        },
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"t{n}c", "content": "3 passed", "is_error": False}],
            },
        },
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": f"Round {n} done; token ghp_{'a' * 36} untouched."}],
            },
        },
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def test_twenty_compactions_leave_one_active_state_and_lose_none(run_cli, project):
    for n in range(20):
        path = transcript(project / "transcript.jsonl", n)
        hook(
            run_cli,
            "claude",
            "PreCompact",
            claude("PreCompact", project, transcript_path=str(path), trigger="auto", custom_instructions=""),
        )
    states = [m for m in memories_of(project) if m["metadata"].get("type") == "session_state"]
    active = [m for m in states if m["lifecycle_state"] == "active"]
    assert len(states) == 20 and len(active) == 1
    assert all(m["replacement_memory_id"] == active[0]["id"] for m in states if m is not active[0])
    text = active[0]["memory"]
    assert len(text) <= 1000 and "branch feature/ledger" in text and "round 19" in text
    assert "app/invoices_19.py" in text and "Failed, then passed: `pytest tests/test_invoices.py -x`" in text
    assert "ghp_aaaa" not in text  # the token masked
    assert active[0]["metadata"] | {"type": "session_state"} == active[0]["metadata"]
    assert active[0]["metadata"]["branch"] == "feature/ledger" and active[0]["metadata"]["source"] == "mem0-capture"

    resumed = context_of(
        hook(run_cli, "claude", "SessionStart", claude("SessionStart", project, source="resume")), "SessionStart"
    )
    assert "Where this branch left off" in resumed and "round 19" in resumed


def test_post_compact_keeps_the_summary_and_session_end_the_state(run_cli, project):
    summary = "This session is being continued from a previous conversation. The ledger export now streams rows."
    hook(run_cli, "claude", "PostCompact", claude("PostCompact", project, trigger="manual", compact_summary=summary))
    kept = [m for m in memories_of(project) if m["metadata"].get("type") == "compact_summary"]
    assert len(kept) == 1 and "ledger export now streams rows" in kept[0]["memory"]

    path = transcript(project / "transcript.jsonl", 7)
    hook(run_cli, "claude", "SessionEnd", claude("SessionEnd", project, transcript_path=str(path), reason="other"))
    assert [m["metadata"]["trigger"] for m in memories_of(project) if m["metadata"].get("type") == "session_state"] == [
        "session-end"
    ]

    sub = claude(
        "SessionEnd", project, transcript_path=str(transcript(project / "t2.jsonl", 8)), reason="other", agent_id="a1"
    )
    hook(run_cli, "claude", "SessionEnd", sub)  # a subagent's end captures nothing
    assert len([m for m in memories_of(project) if m["metadata"].get("type") == "session_state"]) == 1


# -- Codex payloads (its generated input schemas) -----------------------------------------


def codex(event: str, folder: Path, **fields) -> dict:
    base = {
        "session_id": "019a1b2c-3d4e-7f00-8000-000000000001",
        "transcript_path": str(folder / "rollout.jsonl"),
        "cwd": str(folder),
        "hook_event_name": event,
        "model": "gpt-5.5",
    }
    if event in ("UserPromptSubmit", "PostToolUse", "SessionStart"):
        base["permission_mode"] = "default"
    if event in ("UserPromptSubmit", "PostToolUse", "PreCompact"):
        base["turn_id"] = "019a1b2d-0000-7000-8000-000000000002"
    return {**base, **fields}


def test_codex_hooks(run_cli, project):
    start = hook(run_cli, "codex", "SessionStart", codex("SessionStart", project, source="startup"))
    assert "Never call the payments API" in context_of(start, "SessionStart")  # only the two keys Codex allows

    asked = codex("UserPromptSubmit", project, prompt="which AWS service do we deploy the ledger API to, and how?")
    assert "ECS with blue/green" in context_of(hook(run_cli, "codex", "UserPromptSubmit", asked), "UserPromptSubmit")

    # Codex sends what the command printed; its exit code is in the rollout, on the item of that id
    ran_log = project / "ran.jsonl"
    ran = codex(
        "PostToolUse",
        project,
        transcript_path=str(ran_log),
        tool_name="Bash",
        tool_input={"command": "python -m ledger.migrate"},
        tool_response="Traceback is off here\npsycopg2 missing: No module named 'psycopg2'\n",
        tool_use_id="call_abc123",
    )

    def executed(code: int) -> None:
        item = {"type": "CommandExecution", "id": "call_abc123", "exit_code": code, "aggregated_output": "…"}
        line = {
            "timestamp": "2026-12-01T10:00:01Z",
            "type": "event_msg",
            "payload": {"type": "item_completed", "item": item},
        }
        ran_log.write_text(json.dumps({"type": "session_meta", "payload": {}}) + "\n" + json.dumps(line) + "\n")

    executed(1)
    assert "install psycopg[binary]" in context_of(hook(run_cli, "codex", "PostToolUse", ran), "PostToolUse")
    executed(0)
    assert hook(run_cli, "codex", "PostToolUse", {**ran, "session_id": "another"}) == ""  # exit 0: nothing

    rollout = project / "rollout.jsonl"
    rollout.write_text(
        "\n".join(
            json.dumps(line)
            for line in [
                {
                    "timestamp": "2026-12-01T10:00:00Z",
                    "type": "session_meta",
                    "payload": {"id": "019a", "cwd": str(project)},
                },
                {
                    "type": "response_item",
                    "payload": {
                        "type": "message",
                        "role": "user",
                        "content": [{"type": "input_text", "text": "Make the ledger export stream rows"}],
                    },
                },
                {
                    "type": "response_item",
                    "payload": {
                        "type": "function_call",
                        "name": "shell",
                        "call_id": "c1",
                        "arguments": json.dumps({"command": ["bash", "-lc", "pytest tests/test_export.py"]}),
                    },
                },
                {
                    "type": "response_item",
                    "payload": {
                        "type": "function_call_output",
                        "call_id": "c1",
                        "output": json.dumps({"output": "1 failed", "metadata": {"exit_code": 1}}),
                    },
                },
                {
                    "type": "response_item",
                    "payload": {
                        "type": "custom_tool_call",
                        "name": "apply_patch",
                        "call_id": "c2",
                        "input": "*** Begin Patch\n*** Update File: ledger/export.py\n@@\n*** End Patch",
                    },
                },
                {
                    "type": "response_item",
                    "payload": {
                        "type": "function_call",
                        "name": "shell",
                        "call_id": "c3",
                        "arguments": json.dumps({"command": ["bash", "-lc", "pytest tests/test_export.py"]}),
                    },
                },
                {
                    "type": "response_item",
                    "payload": {
                        "type": "function_call_output",
                        "call_id": "c3",
                        "output": json.dumps({"output": "4 passed", "metadata": {"exit_code": 0}}),
                    },
                },
                {
                    "type": "response_item",
                    "payload": {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": "The export now streams rows."}],
                    },
                },
            ]
        ),
        encoding="utf-8",
    )
    hook(run_cli, "codex", "PreCompact", codex("PreCompact", project, trigger="auto"))
    [state] = [m for m in memories_of(project) if m["metadata"].get("type") == "session_state"]
    assert "Make the ledger export stream rows" in state["memory"] and "ledger/export.py" in state["memory"]
    assert "Failed, then passed: `pytest tests/test_export.py`" in state["memory"]
    hook(
        run_cli,
        "codex",
        "SessionEnd",
        {k: v for k, v in codex("SessionEnd", project, reason="other").items() if k != "model"},
    )


# -- Cursor payloads (cursor.com/docs/hooks) ------------------------------------------------


def cursor(event: str, folder: Path, **fields) -> dict:
    base = {
        "conversation_id": "conv-1",
        "generation_id": "gen-1",
        "model": "claude-opus-4-7",
        "hook_event_name": event,
        "cursor_version": "2.4.0",
        "workspace_roots": [str(folder)],
        "user_email": None,
        "transcript_path": None,
    }
    return {**base, **fields}


def test_cursor_hooks(run_cli, project):
    start = json.loads(
        hook(
            run_cli,
            "cursor",
            "sessionStart",
            cursor("sessionStart", project, session_id="conv-1", is_background_agent=False, composer_mode="agent"),
        )
    )
    assert list(start) == ["additional_context"] and "Never call the payments API" in start["additional_context"]
    ran = cursor(
        "postToolUse",
        project,
        tool_name="Shell",
        tool_input={"command": "python -m ledger.migrate"},
        tool_output=json.dumps({"exitCode": 1, "stdout": "ModuleNotFoundError: No module named 'psycopg2'"}),
        tool_use_id="abc123",
        cwd=str(project),
        duration=5432,
    )
    answer = json.loads(hook(run_cli, "cursor", "postToolUse", ran))
    assert list(answer) == ["additional_context"] and "psycopg[binary]" in answer["additional_context"]
    failed = cursor(
        "postToolUseFailure",
        project,
        conversation_id="conv-2",
        tool_name="Shell",
        tool_input={"command": "python -m ledger.migrate", "cwd": str(project)},
        error_message="ModuleNotFoundError: No module named 'psycopg2'",
        tool_use_id="abc124",
        cwd=str(project),
    )
    answer = json.loads(hook(run_cli, "cursor", "postToolUseFailure", failed))
    assert list(answer) == ["additional_context"] and "psycopg[binary]" in answer["additional_context"]
    ended = cursor(
        "sessionEnd",
        project,
        session_id="conv-1",
        reason="completed",
        duration_ms=45000,
        is_background_agent=False,
        final_status="completed",
    )
    assert hook(run_cli, "cursor", "sessionEnd", ended) == ""  # no transcript: nothing to capture
    assert (
        hook(
            run_cli,
            "cursor",
            "beforeSubmitPrompt",
            cursor("beforeSubmitPrompt", project, prompt="how are money amounts stored?", attachments=[]),
        )
        == ""
    )


# -- never in the way ---------------------------------------------------------------------


@pytest.mark.parametrize("payload", ["", "not json", "[1, 2]", "null", "{" * 10_000, '"\\ud800"'])
def test_a_payload_that_is_no_object_adds_nothing_and_exits_0(run_cli, project, mem0_home, payload):
    for event in ("SessionStart", "UserPromptSubmit", "PostToolUse", "PreCompact"):
        assert hook(run_cli, "claude", event, payload) == ""
    assert len(log_lines(mem0_home)) == 4


def test_fields_of_the_wrong_type_are_read_as_missing(run_cli, project, monkeypatch):
    monkeypatch.chdir(project)  # no usable cwd in the payload: the hook's own directory
    odd = {"cwd": 12, "prompt": ["x"], "source": None, "tool_name": 3, "transcript_path": {"a": 1}}
    assert hook(run_cli, "claude", "UserPromptSubmit", odd) == ""
    assert hook(run_cli, "claude", "PreCompact", odd) == ""
    assert "project=ledger" in context_of(hook(run_cli, "claude", "SessionStart", odd), "SessionStart")


def test_an_unreachable_database_is_a_log_line(run_cli, project, mem0_home):
    payload = claude("UserPromptSubmit", project, prompt="how do we store money amounts in the ledger?")
    done = run_cli(
        "mem0-hook",
        "claude",
        "UserPromptSubmit",
        input=json.dumps(payload),
        env={"MEM0_STORE": "postgresql://mem0@127.0.0.1:9/none?connect_timeout=1"},
    )
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""
    [line] = log_lines(mem0_home)
    assert "claude UserPromptSubmit: StoreError: cannot open the store postgresql://" in line


def test_a_locked_store_ends_the_call_within_its_budget(project, mem0_home):
    db = sqlite3.connect(mem0_home / "memories.sqlite3", isolation_level=None)
    db.execute("BEGIN EXCLUSIVE")  # another process holds the write lock
    try:
        payload = claude(
            "PreCompact",
            project,
            transcript_path=str(transcript(project / "t.jsonl", 1)),
            trigger="auto",
            custom_instructions="",
        )
        started = time.monotonic()
        done = subprocess.run(
            [str(Path(sys.executable).parent / "mem0-hook"), "claude", "PreCompact", "--budget", "1"],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert time.monotonic() - started < 5
    finally:
        db.execute("ROLLBACK")
        db.close()
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""
    assert "no answer within 1 s; nothing added" in log_lines(mem0_home)[-1]
    assert not [m for m in memories_of(project) if m["metadata"].get("type") == "session_state"]


def test_hooks_turn_off_by_environment_and_by_config(run_cli, project, mem0_home):
    asked = claude("UserPromptSubmit", project, prompt="the double-post race in posting.py is back, how was it fixed?")
    assert (
        run_cli(
            "mem0-hook", "claude", "UserPromptSubmit", input=json.dumps(asked), env={"MEM0_HOOK_PROMPT": "off"}
        ).stdout
        == ""
    )
    mem0_home.mkdir(exist_ok=True)
    (mem0_home / "config.yaml").write_text("hooks:\n  session_start: false\n", encoding="utf-8")
    assert hook(run_cli, "claude", "SessionStart", claude("SessionStart", project, source="startup")) == ""
    assert hook(run_cli, "claude", "UserPromptSubmit", asked) != ""
    (mem0_home / "config.yaml").write_text("hooks:\n  prompt: sometimes\n", encoding="utf-8")
    assert hook(run_cli, "claude", "UserPromptSubmit", {**asked, "session_id": "new"}) == ""
    assert "hooks: prompt: Input should be a valid boolean" in log_lines(mem0_home)[-1]


# -- the real processes: scripts/hook.py and the recall service ---------------------------


def hook_module():
    """scripts/hook.py as a module (it runs with a bare python3: it is no part of the package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("mem0_hook_script", HOOK_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def script(event: str, payload: dict, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    full = {
        **os.environ,
        "MEM0_PLUGIN_USE_PATH": "1",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        **(env or {}),
    }
    return subprocess.run(
        [sys.executable, str(HOOK_SCRIPT), "claude", event, *args],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=full,
        timeout=60,
    )


def test_the_hook_script_starts_the_service_and_the_service_goes_when_idle(project, mem0_home):
    mem0_home.mkdir(exist_ok=True)
    (mem0_home / "config.yaml").write_text("hooks:\n  idle_minutes: 0.05\n", encoding="utf-8")
    asked = claude("UserPromptSubmit", project, prompt="the double-post race in posting.py is back, how was it fixed?")
    first = script("UserPromptSubmit", asked, "--budget", "20")
    assert first.returncode == 0 and first.stderr == ""
    assert "double-post race" in context_of(first.stdout, "UserPromptSubmit")
    sock = Path(hook_module().socket_path({**os.environ, "MEM0_PLUGIN_USE_PATH": "1"}))
    assert sock.exists()
    assert oct(sock.stat().st_mode & 0o777) == "0o600"
    assert script("UserPromptSubmit", asked, "--budget", "20").stdout == ""  # this session has it already
    again = script("UserPromptSubmit", {**asked, "session_id": "other"}, "--budget", "20")
    assert "double-post race" in again.stdout  # from the running service, to another session
    ended = script(
        "SessionEnd",
        claude("SessionEnd", project, transcript_path=str(transcript(project / "t.jsonl", 3)), reason="other"),
        "--no-wait",
    )
    assert ended.returncode == 0 and ended.stdout == ""
    deadline = time.monotonic() + 30
    while sock.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not sock.exists()  # idle: the service removed its socket and exited
    assert [m["metadata"]["trigger"] for m in memories_of(project) if m["metadata"].get("type") == "session_state"] == [
        "session-end"
    ]


def test_the_hook_script_before_the_plugin_is_installed(project, mem0_home, tmp_path):
    env = {"MEM0_PLUGIN_USE_PATH": "", "CLAUDE_PLUGIN_DATA": str(tmp_path / "no-venv-yet")}
    done = script("SessionStart", claude("SessionStart", project, source="startup"), env=env)
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""
    assert "the plugin is not installed yet" in log_lines(mem0_home)[-1]
    off = script("SessionStart", claude("SessionStart", project, source="startup"), env={"MEM0_HOOKS": "off"})
    assert off.returncode == 0 and off.stdout == ""
