"""A language model as judge, end to end (docs/judges.md): mem0's `LlmFactory` builds its real
`openai` provider from `$MEM0_HOME/config.yaml`, pointed at a loopback chat-completions server
whose replies are scripted (`judge_support.ChatServer`: a test double of the model); the
commands, the MCP server's write path, the model of meaning and the store are real."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest
from dream_support import NOW, auto_summary, export, make_project, record, uid, write_jsonl
from judge_support import ChatServer
from mem0_plugin import operations
from mem0_plugin.identity import resolve_identity
from mem0_plugin.judges.llm_judge import WritePathJudge
from mem0_plugin.semantic import Semantic
from mem0_plugin.server import Resources
from mem0_plugin.store import open_store
from test_dream_synthesis import COUPON, HABIT, PATTERN, SHIPPING, TAX
from test_dream_synthesis import RECORDS as HABIT_RECORDS

E2E_OLD, E2E_NEW, STAGE_OLD, STAGE_NEW = uid(1), uid(2), uid(3), uid(4)
E2E_TEXTS = (
    "Run the e2e suite with `make e2e` before merging",
    "Run the e2e suite with `make e2e` before merging only when the UI changed",
)
STAGE_TEXTS = ("Use the staging cluster for load tests", "Use the staging cluster for load tests only on weekends")
MERGED = "Run the e2e suite with `make e2e` before merging; it is required only when the UI changed"
RECORDS = [
    record(E2E_OLD, E2E_TEXTS[0], "convention", 0.8, "2026-10-01T10:00:00+00:00"),
    record(E2E_NEW, E2E_TEXTS[1], "convention", 0.9, "2026-11-01T10:00:00+00:00"),
    record(STAGE_OLD, STAGE_TEXTS[0], "convention", 0.8, "2026-09-01T10:00:00+00:00"),
    record(STAGE_NEW, STAGE_TEXTS[1], "convention", 0.8, "2026-11-15T10:00:00+00:00"),
]


def scripted(user_message: str) -> str:
    """The model's replies: merge the e2e pair, supersede the staging pair."""
    if "make e2e" in user_message:
        return json.dumps({"decision": "merge", "merged_text": MERGED})
    return '```json\n{"decision": "supersede", "winner": "newer"}\n```'


@pytest.fixture
def chat():
    server = ChatServer(scripted)
    yield server
    server.close()


@pytest.fixture
def project(tmp_path, mem0_home, monkeypatch, run_cli):
    monkeypatch.delenv("MEM0_EMBEDDER")  # the model of meaning on: candidates come from it
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    path = make_project(tmp_path / "project")
    done = run_cli("mem0-memories", "import", str(write_jsonl(tmp_path / "seed.jsonl", RECORDS)), cwd=str(path))
    assert done.returncode == 0, done.stderr
    return path


def auto(run_cli, project):
    return run_cli("mem0-dream", "--auto", "--now", NOW, cwd=str(project), timeout=300)


def test_auto_applies_the_models_validated_answers(run_cli, project, mem0_home, chat):
    (mem0_home / "config.yaml").write_text(chat.config_yaml(max_calls_per_run=5))
    done = auto(run_cli, project)
    assert done.returncode == 0, done.stderr
    judged = "  judge_asked=2  judge_actions=2  judge_dropped=0  judge_failed=0  judge_remembered=0"
    assert done.stdout.strip() == auto_summary(1, 0, 0) + "  superseded=1" + judged
    assert [r["path"] for r in chat.requests] == ["/v1/chat/completions"] * 2
    assert chat.requests[0]["body"]["response_format"] == {"type": "json_object"}
    memories = export(run_cli)
    [merged] = [m for m in memories.values() if m["memory"] == MERGED]
    assert sorted(merged["source_memory_ids"]) == sorted([E2E_OLD, E2E_NEW])
    assert (memories[STAGE_OLD]["lifecycle_state"], memories[STAGE_OLD]["replacement_memory_id"]) == (
        "superseded",
        STAGE_NEW,
    )


def test_auto_drops_a_bad_answer_and_keeps_to_its_budget(run_cli, project, mem0_home):
    server = ChatServer(lambda _: '{"decision": "merge", "merged_text": "Run the suite only when the UI changed"}')
    try:
        (mem0_home / "config.yaml").write_text(server.config_yaml(max_calls_per_run=1))
        done = auto(run_cli, project)
    finally:
        server.close()
    assert done.returncode == 0, done.stderr
    judged = "  judge_asked=1  judge_actions=0  judge_dropped=1  judge_failed=0  judge_remembered=0"
    assert done.stdout.strip() == auto_summary(0, 0, 0) + judged
    assert "merged_text drops 'make e2e'" in done.stderr and len(server.requests) == 1
    assert {m["lifecycle_state"] for m in export(run_cli).values()} == {"active"}


def test_without_a_language_model_auto_leaves_the_candidates_and_its_line_unchanged(run_cli, project, mem0_home):
    (mem0_home / "config.yaml").write_text("llm: {provider: none}\n")
    done = auto(run_cli, project)
    assert (done.returncode, done.stdout.strip(), done.stderr) == (0, auto_summary(0, 0, 0), "")
    assert {m["lifecycle_state"] for m in export(run_cli).values()} == {"active"}


def test_a_bad_llm_section_is_one_line_and_the_rules_run_alone(run_cli, mem0_home, tmp_path, monkeypatch):
    project = make_project(tmp_path / "lexical")  # lexical (MEM0_EMBEDDER=none): no model needed
    mem0_home.mkdir(parents=True, exist_ok=True)
    (mem0_home / "config.yaml").write_text("llm:\n  provider: openai\n  settings: {model: x}\n")
    done = run_cli("mem0-dream", "--auto", "--now", NOW, cwd=str(project))
    assert done.returncode == 0
    assert done.stdout.strip() == "No memories found for project acme-api. Nothing to consolidate."
    [line] = done.stderr.splitlines()  # said once per process, before the memories are read
    assert line.startswith("mem0: the language-model judge is off (") and "llm.settings: Extra inputs" in line
    run_cli("mem0-memories", "add", "Use ruff for linting", cwd=str(project))
    done = run_cli("mem0-dream", "--auto", "--now", NOW, cwd=str(project))
    assert done.stdout.strip() == auto_summary(0, 0, 0)  # the line of a run without a judge


def test_the_write_path_asks_the_model_about_the_nearest_uncertain_pair(mem0_home, project, chat):
    (mem0_home / "config.yaml").write_text(chat.config_yaml())
    identity = resolve_identity(cwd=str(project))
    caller = operations.Caller(
        open_store(identity.store_location),
        identity,
        semantic=Semantic.from_home(mem0_home, quiet=True),
        judge=WritePathJudge(mem0_home),
    )

    def add(text: str, app: str, infer: bool = True) -> list[tuple]:
        answer = operations.add_memory(caller, text, app_id=app, metadata={"type": "convention"}, infer=infer)
        return [(e["memory"], e["event"], e.get("replacement_memory_id")) for e in answer["results"]]

    try:
        for app in ("ops", "qa"):
            add(STAGE_TEXTS[0], app, infer=False)
        add(E2E_TEXTS[0], "ci", infer=False)
        # the rules leave each pair alone (a condition added); the first add finds no model yet:
        # it is built on a background thread, and the add is not kept waiting
        assert add(STAGE_TEXTS[1], "ops") == [(STAGE_TEXTS[1], "ADD", None)] and chat.requests == []
        judge = caller.judge.get()
        judge._builder.join(60)
        assert judge.built
        superseded = add(STAGE_TEXTS[1], "qa")
        merged = add(E2E_TEXTS[1], "ci")
    finally:
        caller.store.close()
    assert [(text, event) for text, event, _ in superseded] == [(STAGE_TEXTS[1], "ADD"), (STAGE_TEXTS[0], "SUPERSEDE")]
    assert [(text, event) for text, event, _ in merged] == [(E2E_TEXTS[1], "ADD"), (E2E_TEXTS[0], "MERGE")]
    assert len(chat.requests) == 2 and STAGE_TEXTS[1] in chat.requests[0]["body"]["messages"][-1]["content"]


def test_server_start_reads_no_llm_configuration_and_builds_no_model(mem0_home, project, chat):
    (mem0_home / "config.yaml").write_text(chat.config_yaml())
    resources = Resources(resolve_identity(cwd=str(project)))
    assert resources._judge is None  # nothing at start
    caller = resources.caller()
    try:
        assert caller.judge is not None and not caller.judge.built
        operations.get_memories(caller)
        assert not caller.judge.built and chat.requests == []
    finally:
        caller.store.close()


# -- synthesis groups (docs/judges.md, "Synthesis groups") --------------------------------


MIGRATION = (uid(5), uid(6), uid(7))
MIGRATION_TEXTS = (
    "Ran the database migration on staging before the production deploy",
    "Tested the schema migration on staging first, then the production deploy",
    "Tried the orders migration on staging a day before the production deploy",
)
MIGRATION_RECORDS = [
    record(memory_id, text, "task_learning", 0.8, created)
    for memory_id, text, created in zip(
        MIGRATION,
        MIGRATION_TEXTS,
        ("2026-11-05T10:00:00+00:00", "2026-11-16T10:00:00+00:00", "2026-11-25T10:00:00+00:00"),
    )
]


@pytest.fixture
def habits(tmp_path, mem0_home, run_cli):
    """A project whose candidates are habit groups (words find them: no model of meaning)."""

    def make(records: list[dict]):
        path = make_project(tmp_path / "habits")
        done = run_cli("mem0-memories", "import", str(write_jsonl(tmp_path / "habits.jsonl", records)), cwd=str(path))
        assert done.returncode == 0, done.stderr
        return path

    return make


def judged_line(asked: int, actions: int, dropped: int, failed: int = 0, remembered: int = 0) -> str:
    return (
        f"  judge_asked={asked}  judge_actions={actions}  judge_dropped={dropped}  judge_failed={failed}"
        f"  judge_remembered={remembered}"
    )


def habit_or_leave(user_message: str) -> str:
    """The model's replies: the failing-test group is a habit; the migration group is left."""
    if "failing test" in user_message:
        return json.dumps({"decision": "synthesize", "text": PATTERN})
    return '{"decision": "leave", "reason": "one routine, maybe"}'


def test_auto_has_the_model_write_a_habit_once_a_week_and_undo_retires_it(run_cli, habits, mem0_home):
    project = habits(HABIT_RECORDS + MIGRATION_RECORDS)
    server = ChatServer(habit_or_leave)

    def auto_at(now: str) -> str:
        done = run_cli("mem0-dream", "--auto", "--now", now, cwd=str(project))
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    try:
        (mem0_home / "config.yaml").write_text(server.config_yaml())
        first = auto_at(NOW)
        asked_first = len(server.requests)
        memories = export(run_cli)
        [made] = [m for m in memories.values() if m["memory"] == PATTERN]
        same_week = auto_at("2026-12-04T00:00:00+00:00")  # (the synthesis is dated by the clock)
        week_later = auto_at((datetime.fromisoformat(made["created_at"]) + timedelta(days=7)).isoformat())
    finally:
        server.close()
    assert first == auto_summary(0, 0, 0) + "  synthesized=1" + judged_line(2, 1, 0)
    assert same_week == auto_summary(0, 0, 0) + judged_line(0, 0, 0)  # the week's synthesis is done
    # the group left alone is remembered: not asked again while its texts are unchanged
    assert week_later == auto_summary(0, 0, 0) + judged_line(0, 0, 0, remembered=1)
    assert asked_first == 2 and len(server.requests) == 2
    system, user = server.requests[1]["body"]["messages"]
    assert '"synthesize" | "leave"' in system["content"] and "must not restate one observation" in system["content"]
    assert f"1. (2026-11-03) {json.dumps(HABIT[0])}" in user["content"]
    assert f"3. (2026-11-23) {json.dumps(HABIT[2])}" in user["content"]
    assert MIGRATION_TEXTS[0] in server.requests[0]["body"]["messages"][1]["content"]

    assert made["source_memory_ids"] == [TAX, COUPON, SHIPPING]
    assert made["metadata"]["source"] == "mem0-dream-synthesis" and made["metadata"]["type"] == "user_preference"
    assert {memories[i]["lifecycle_state"] for i in (TAX, COUPON, SHIPPING, *MIGRATION)} == {"active"}

    [run] = json.loads(run_cli("mem0-dream", "--runs", "--json", cwd=str(project)).stdout)
    assert (run["mode"], run["synthesized"]) == ("auto", 1)
    undone = run_cli("mem0-dream", "--undo", run["run_id"], "--yes", cwd=str(project))
    assert undone.returncode == 0 and undone.stdout.endswith("restored: 0, retired: 1, left alone: 0\n")
    assert PATTERN not in {m["memory"] for m in export(run_cli).values()}


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (json.dumps({"decision": "synthesize", "text": HABIT[1].upper() + "."}), "text repeats one of its sources"),
        (json.dumps({"decision": "synthesize", "text": "  "}), "text must be a non-empty string"),
        (json.dumps({"decision": "synthesize"}), "decision synthesize needs a text"),
        (json.dumps({"decision": "merge", "merged_text": PATTERN}), "decision must be one of synthesize, leave"),
    ],
)
def test_auto_drops_a_bad_answer_about_a_group(run_cli, habits, mem0_home, reply, why):
    project = habits(HABIT_RECORDS)
    server = ChatServer(lambda _: reply)
    try:
        (mem0_home / "config.yaml").write_text(server.config_yaml())
        done = run_cli("mem0-dream", "--auto", "--now", NOW, cwd=str(project))
    finally:
        server.close()
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == auto_summary(0, 0, 0) + judged_line(1, 0, 1)
    [note] = done.stderr.splitlines()
    assert note.startswith(f"mem0-dream: the judge's answer about {TAX} was dropped") and why in note
    assert len(export(run_cli)) == len(HABIT_RECORDS)  # nothing written


def test_a_pair_left_alone_is_not_asked_again_until_a_text_changes(run_cli, project, mem0_home):
    server = ChatServer(lambda _: '{"decision": "leave"}')
    try:
        (mem0_home / "config.yaml").write_text(server.config_yaml())
        first, second = auto(run_cli, project), auto(run_cli, project)
        identity = resolve_identity(cwd=str(project))
        with open_store(identity.store_location) as store:  # an agent edits one text of a pair
            caller = operations.Caller(store, identity, actor="mcp")
            operations.update_memory(caller, STAGE_NEW, "Use the staging cluster for load tests on Sundays")
        third = auto(run_cli, project)
    finally:
        server.close()
    assert first.stdout.strip() == auto_summary(0, 0, 0) + judged_line(2, 0, 0)
    assert second.stdout.strip() == auto_summary(0, 0, 0) + judged_line(0, 0, 0, remembered=2)
    assert third.stdout.strip() == auto_summary(0, 0, 0) + judged_line(1, 0, 0, remembered=1)  # the edited pair
    assert len(server.requests) == 3 and "on Sundays" in server.requests[2]["body"]["messages"][1]["content"]
    assert {m["lifecycle_state"] for m in export(run_cli).values()} == {"active"}


def test_an_unreadable_record_of_what_was_left_alone_only_costs_a_call(run_cli, project, mem0_home):
    server = ChatServer(lambda _: '{"decision": "leave"}')
    try:
        (mem0_home / "config.yaml").write_text(server.config_yaml(max_calls_per_run=1))
        auto(run_cli, project)
        left = mem0_home / "judge" / "left-alone.json"
        assert len(json.loads(left.read_text())) == 1
        left.write_text("{not json")
        again = auto(run_cli, project)
    finally:
        server.close()
    assert again.returncode == 0 and again.stdout.strip() == auto_summary(0, 0, 0) + judged_line(1, 0, 0)
    assert len(json.loads(left.read_text())) == 1  # rewritten whole
