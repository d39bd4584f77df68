"""The agent as judge (docs/dream.md, "Candidates"): with the model on, `mem0-dream --plan --json`
lists the pairs its rules left alone but that are close in meaning; a judge answers them in the
plan file and `--apply` applies exactly those answers, or refuses a bad one with one line and
writes nothing. The judge here is `ScriptedJudge`, a test double that edits the plan JSON the
way the agent of skills/dream/SKILL.md does, deterministically.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from dream_support import NOW, export, export_text, make_project, record, summary, uid, update_text, write_jsonl
from mem0_plugin.dream.judging import MAX_CANDIDATES, open_candidates
from mem0_plugin.language.analysed import analysed
from mem0_plugin.records import Memory
from mem0_plugin.relation.meaning import open_question

E2E_OLD, E2E_NEW = uid(1), uid(2)  # a condition only one has: the rules leave them alone (cosine ≈ 0.85)
STAGE_OLD, STAGE_NEW = uid(3), uid(4)  # a condition again (cosine ≈ 0.79)
OTHER = uid(5)  # takes part in nothing
PINNED = uid(6)  # pinned: dream never acts on it
E2E_TEXTS = (
    "Run the e2e suite with `make e2e` before merging",
    "Run the e2e suite with `make e2e` before merging only when the UI changed",
)
STAGE_TEXTS = ("Use the staging cluster for load tests", "Use the staging cluster for load tests only on weekends")
RECORDS = [
    record(E2E_OLD, E2E_TEXTS[0], "convention", 0.8, "2026-10-01T10:00:00+00:00"),
    record(E2E_NEW, E2E_TEXTS[1], "convention", 0.9, "2026-11-01T10:00:00+00:00"),
    record(STAGE_OLD, STAGE_TEXTS[0], "convention", 0.8, "2026-09-01T10:00:00+00:00"),
    record(STAGE_NEW, STAGE_TEXTS[1], "convention", 0.8, "2026-11-15T10:00:00+00:00"),
    record(OTHER, "Format Python with ruff format", "convention", 0.8, "2026-11-20T10:00:00+00:00"),
    record(PINNED, STAGE_TEXTS[0], "convention", 0.8, "2026-11-21T10:00:00+00:00", metadata={"pinned": True}),
]
MERGED = "Run the e2e suite with `make e2e` before merging; it is required only when the UI changed"


@dataclass
class ScriptedJudge:
    """A stand-in for the agent: answers the candidate holding a given memory id as told."""

    answers: dict[str, dict] = field(default_factory=dict)  # a memory id → the keys to add

    def judge(self, plan: dict) -> dict:
        for candidate in plan["candidates"]:
            for memory_id in candidate["ids"]:
                if memory_id in self.answers:
                    candidate.update(self.answers[memory_id])
        return plan


@pytest.fixture
def project(tmp_path, mem0_home, monkeypatch) -> Path:
    monkeypatch.delenv("MEM0_EMBEDDER")  # the model on: candidates come from meaning
    return make_project(tmp_path / "project")


@pytest.fixture
def dream(run_cli, project):
    def run(*args: str) -> subprocess.CompletedProcess:
        return run_cli("mem0-dream", *args, "--now", NOW, cwd=str(project), timeout=300)

    return run


@pytest.fixture
def seeded(run_cli, tmp_path, project) -> None:
    done = run_cli("mem0-memories", "import", str(write_jsonl(tmp_path / "seed.jsonl", RECORDS)), cwd=str(project))
    assert done.returncode == 0, done.stderr


def plan_of(dream) -> dict:
    done = dream("--plan", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def write_plan(tmp_path: Path, plan: dict) -> Path:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan), encoding="utf-8")
    return path


def candidate_of(plan: dict, memory_id: str) -> dict:
    [found] = [c for c in plan["candidates"] if memory_id in c["ids"]]
    return found


def test_plan_lists_the_pairs_the_rules_left_alone(dream, seeded):
    plan = plan_of(dream)
    assert (plan["merges"], plan["conflicts"], plan["supersedes"], plan["prunes"]) == ([], [], [], [])
    e2e, config = candidate_of(plan, E2E_OLD), candidate_of(plan, STAGE_OLD)
    assert (e2e["ids"], e2e["texts"], e2e["question"], e2e["type"]) == (
        [E2E_OLD, E2E_NEW],
        list(E2E_TEXTS),
        "conflict",  # the newer restricts the older: does the older still hold?
        "convention",
    )
    assert (config["ids"], config["texts"], config["question"]) == (
        [STAGE_OLD, STAGE_NEW],
        list(STAGE_TEXTS),
        "conflict",
    )
    assert 0.7 <= config["similarity"] < e2e["similarity"] <= 1
    assert plan["candidates"] == sorted(plan["candidates"], key=lambda c: -c["similarity"])
    assert set(plan["fingerprints"]) == {E2E_OLD, E2E_NEW, STAGE_OLD, STAGE_NEW}
    assert "decision" not in e2e  # unanswered
    human = dream("--plan")  # the report of docs/dream.md is unchanged: candidates are in the JSON only
    assert human.stdout.strip() == "Dream complete. No duplicate, contradictory, or stale memories found."


def test_a_judge_answers_and_apply_does_exactly_that(dream, seeded, run_cli, tmp_path):
    judge = ScriptedJudge(
        {
            E2E_NEW: {"decision": "merge", "merged_text": MERGED},
            STAGE_OLD: {"decision": "supersede", "winner": STAGE_NEW},
        }
    )
    done = dream("--apply", str(write_plan(tmp_path, judge.judge(plan_of(dream)))), "--yes")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == summary(1, 0, 0, 0, superseded=1)
    memories = export(run_cli)
    [merged] = [m for m in memories.values() if m["memory"] == MERGED]
    assert sorted(merged["source_memory_ids"]) == sorted([E2E_OLD, E2E_NEW])
    assert {memories[i]["lifecycle_state"] for i in (E2E_OLD, E2E_NEW)} == {"merged"}
    assert (memories[STAGE_OLD]["lifecycle_state"], memories[STAGE_OLD]["replacement_memory_id"]) == (
        "superseded",
        STAGE_NEW,
    )
    assert memories[STAGE_NEW]["lifecycle_state"] == memories[OTHER]["lifecycle_state"] == "active"


def test_the_older_may_win_a_supersede_and_leave_changes_nothing(dream, seeded, run_cli, tmp_path):
    judge = ScriptedJudge({E2E_OLD: {"decision": "leave"}, STAGE_NEW: {"decision": "supersede", "winner": STAGE_OLD}})
    assert dream("--apply", str(write_plan(tmp_path, judge.judge(plan_of(dream)))), "--yes").returncode == 0
    memories = export(run_cli)
    assert memories[STAGE_NEW]["replacement_memory_id"] == STAGE_OLD
    assert {memories[i]["lifecycle_state"] for i in (E2E_OLD, E2E_NEW, STAGE_OLD)} == {"active"}


def test_a_conflict_answer_is_a_conflict_settled_with_resolve(dream, seeded, run_cli, tmp_path):
    path = write_plan(tmp_path, ScriptedJudge({STAGE_OLD: {"decision": "conflict"}}).judge(plan_of(dream)))
    skipped = dream("--apply", str(path), "--yes")  # unresolved: skipped, as every conflict of a plan file
    assert skipped.stdout.strip() == summary(0, 0, 0, 1)
    assert export(run_cli)[STAGE_OLD]["lifecycle_state"] == "active"
    done = dream("--apply", str(path), "--resolve", f"{STAGE_NEW}=A", "--yes")  # A: the newer
    assert done.stdout.strip() == summary(0, 0, 1, 0), done.stderr
    assert export(run_cli)[STAGE_OLD]["replacement_memory_id"] == STAGE_NEW


def _foreign_id(memory_id: str):
    def edit(plan: dict) -> None:
        candidate_of(plan, STAGE_OLD)["ids"][0] = memory_id
        plan["fingerprints"][memory_id] = "1"

    return edit


@pytest.mark.parametrize(
    "answer, message",
    [
        (
            {E2E_OLD: {"decision": "merge", "merged_text": "Run the suite before merging when the UI changed"}},
            "merged_text drops 'make e2e' of its texts (a merge keeps every literal)",
        ),
        ({E2E_OLD: {"decision": "merge"}}, "decision merge needs a merged_text"),
        ({E2E_OLD: {"decision": "maybe"}}, "decision must be one of merge, supersede, conflict, synthesize, leave"),
        ({E2E_OLD: {"decision": "supersede", "winner": OTHER}}, "needs a winner that is one of its ids"),
        ({E2E_OLD: {"decision": "supersede"}}, "needs a winner that is one of its ids"),
        ({E2E_OLD: {"decision": "leave", "winner": E2E_OLD}}, "has a winner but its decision is not supersede"),
        ({E2E_OLD: {"decision": "leave", "because": "why"}}, "candidates[0] has unknown key 'because'"),
    ],
)
def test_a_bad_answer_is_refused_and_nothing_is_written(dream, seeded, run_cli, tmp_path, answer, message):
    ok = {STAGE_OLD: {"decision": "supersede", "winner": STAGE_NEW}}  # a good answer beside: not applied either
    path = write_plan(tmp_path, ScriptedJudge({**ok, **answer}).judge(plan_of(dream)))
    before = export_text(run_cli)
    done = dream("--apply", str(path), "--yes")
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("mem0-dream: error: plan: candidates[") and message in line, line
    assert export_text(run_cli) == before


@pytest.mark.parametrize(
    "edit, message",
    [
        (_foreign_id(OTHER), f"candidates[1].texts do not match memory {OTHER}"),
        (_foreign_id(PINNED), f"{PINNED} is immutable, pinned, excluded from dream or dream's reminder"),
        (
            lambda plan: candidate_of(plan, STAGE_OLD).update(ids=[uid(9), STAGE_NEW]),
            f"fingerprints has no entry for memory '{uid(9)}'",
        ),
        (
            lambda plan: plan["merges"].append(
                {"ids": [STAGE_OLD, OTHER], "type": "x", "merged_text": "x", "confidence": None, "similarity": 1}
            ),
            "appears in an action or another candidate",
        ),
        (
            lambda plan: update_text(STAGE_NEW, "Use the staging cluster for load tests on Sundays"),
            "changed since the plan was made",
        ),
    ],
)
def test_an_answer_about_other_or_changed_memories_is_refused(dream, seeded, run_cli, tmp_path, edit, message):
    plan = ScriptedJudge({STAGE_OLD: {"decision": "supersede", "winner": STAGE_NEW}}).judge(plan_of(dream))
    edit(plan)
    path = write_plan(tmp_path, plan)
    before = export_text(run_cli)
    done = dream("--apply", str(path), "--yes")
    assert done.returncode == 2 and done.stdout == "", done.stderr
    [line] = done.stderr.splitlines()
    assert message in line, line
    assert export_text(run_cli) == before


def test_plans_without_candidates_still_apply(run_cli, tmp_path, mem0_home):
    """Lexical plans list none; a plan written before candidates has no key at all."""
    project = make_project(tmp_path / "lexical")
    records = [
        record(uid(6), "Use PostgreSQL for auth", "decision", 0.8, "2026-10-01T10:00:00+00:00"),
        record(uid(7), "Auth DB is PostgreSQL", "decision", 0.9, "2026-11-01T10:00:00+00:00"),
    ]
    assert run_cli("mem0-memories", "import", str(write_jsonl(tmp_path / "s.jsonl", records))).returncode == 0
    plan = json.loads(run_cli("mem0-dream", "--plan", "--json", "--now", NOW, cwd=str(project)).stdout)
    assert plan["candidates"] == [] and len(plan["merges"]) == 1
    del plan["candidates"]
    done = run_cli("mem0-dream", "--apply", str(write_plan(tmp_path, plan)), "--yes", "--now", NOW, cwd=str(project))
    assert done.stdout.strip() == summary(1, 0, 0, 0), done.stderr


def _item(number: int, text: str = "Use the staging cluster for load tests", type_: str = "convention"):
    stamp = f"2026-01-{number % 28 + 1:02d}T10:00:00+00:00"
    return analysed(Memory(id=f"m{number:03d}", memory=text, user_id="u", metadata={"type": type_}, created_at=stamp))


@pytest.mark.parametrize(
    "older, newer, cosine, question",
    [
        # a restriction one text adds: does the older still hold? (never a merge)
        ("Use the staging cluster", "Use the staging cluster only on weekends", 0.79, "conflict"),
        ("Use the staging cluster", "Use the staging cluster only on weekends", 0.54, "conflict"),
        ("Use the staging cluster", "Use the staging cluster only on weekends", 0.49, None),
        ("Use the staging cluster", "Use the staging cluster for load tests", 0.79, "merge"),
        ("The API uses JWT tokens", "The API now uses session cookies", 0.55, "supersede"),
        ("Cache the catalog in Redis", "Never cache the catalog in Redis", 0.55, "conflict"),
        ("Cache the catalog in Redis", "Never cache the catalog in Redis", 0.49, None),
    ],
)
def test_what_a_judge_is_asked(older, newer, cosine, question):
    assert open_question(_item(1, older), _item(2, newer), cosine) == question


def test_events_are_only_asked_about_merging():
    crashed, fixed = (
        _item(1, "The importer crashed on empty files", "bug_fix"),
        _item(2, "The importer no longer crashes", "bug_fix"),
    )
    assert open_question(crashed, fixed, 0.6) is None
    assert open_question(crashed, fixed, 0.75) == "merge"


def test_candidates_are_capped_best_first_and_name_each_memory_once():
    items = [_item(i) for i in range(2 * MAX_CANDIDATES + 10)]
    pairs = [(0.7 + i / 1000, items[2 * i], items[2 * i + 1], None, "merge") for i in range(MAX_CANDIDATES + 5)]
    pairs += [(0.99, items[0], items[3], None, "merge"), (0.98, items[4], items[5], "merge", None)]
    found = open_candidates({"convention": pairs}, taken={items[1].id})
    assert len(found) == MAX_CANDIDATES
    assert found[0].ids == (items[0].id, items[3].id)  # the most similar first; m001 is taken
    assert all(c.similarity >= 0.71 for c in found) and [c.similarity for c in found] == sorted(
        (c.similarity for c in found), reverse=True
    )
    named = [i for c in found for i in c.ids]
    assert len(named) == len(set(named)) and items[4].id not in named  # a decided pair is not asked about
