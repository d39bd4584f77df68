"""The dream plan file (docs/dream.md, "Plan file"): exact JSON shape, round trip, and one clear error per defect."""

from __future__ import annotations

import copy
import json

import pytest
from mem0_plugin.dream.judging import answered_plan
from mem0_plugin.dream.plan import (
    Candidate,
    ConflictAction,
    MergeAction,
    Plan,
    PruneAction,
    SupersedeAction,
    plan_to_json,
)
from mem0_plugin.dream.plan_file import plan_from_dict, plan_from_json
from mem0_plugin.errors import InvalidInputError, PlanError

PLAN = Plan(
    user_id="alice",
    project_id="acme-api",
    generated_at="2026-11-29T12:00:00+00:00",
    policy={"session_state": 90, "decision": None},
    policy_source="mem0.md",
    memory_count=123,
    merges=(
        MergeAction(
            ids=("m1", "m2"),
            type="decision",
            merged_text="Auth DB is PostgreSQL — ünïcode",
            confidence=0.9,
            similarity=0.72,
        ),
    ),
    conflicts=(ConflictAction(ids=("c1", "c2"), type="decision", topic="Deploy", likely_winner="c1"),),
    prunes=(PruneAction(id="p1", type="session_state", age_days=142, reason="retention"),),
    supersedes=(
        SupersedeAction(
            old="s1", new="s2", reason='the newer text marks the change: "now"', text="The API now listens on port 5433"
        ),
    ),
    fingerprints={"p1": "1", "m2": "4", "m1": "2", "c1": "1", "c2": "7", "s1": "1", "s2": "1"},
)

EXPECTED = {
    "version": 1,
    "user_id": "alice",
    "project_id": "acme-api",
    "generated_at": "2026-11-29T12:00:00+00:00",
    "policy": {"decision": None, "session_state": 90},
    "policy_source": "mem0.md",
    "memory_count": 123,
    "merges": [
        {
            "ids": ["m1", "m2"],
            "type": "decision",
            "merged_text": "Auth DB is PostgreSQL — ünïcode",
            "confidence": 0.9,
            "similarity": 0.72,
        }
    ],
    "conflicts": [{"ids": ["c1", "c2"], "type": "decision", "topic": "Deploy", "likely_winner": "c1"}],
    "prunes": [{"id": "p1", "type": "session_state", "age_days": 142, "reason": "retention"}],
    "supersedes": [
        {
            "old": "s1",
            "new": "s2",
            "reason": 'the newer text marks the change: "now"',
            "text": "The API now listens on port 5433",
        }
    ],
    "candidates": [],
    "fingerprints": {"c1": "1", "c2": "7", "m1": "2", "m2": "4", "p1": "1", "s1": "1", "s2": "1"},
}


def test_plan_json_has_the_exact_spec_shape_in_spec_key_order():
    text = plan_to_json(PLAN)
    assert json.loads(text) == EXPECTED
    assert list(json.loads(text)) == list(EXPECTED)
    assert list(json.loads(text)["merges"][0]) == ["ids", "type", "merged_text", "confidence", "similarity"]
    assert text.isascii() and not text.endswith("\n")


def test_plan_json_is_deterministic_and_round_trips():
    assert plan_to_json(PLAN) == plan_to_json(copy.deepcopy(PLAN))
    assert plan_from_json(plan_to_json(PLAN)) == PLAN
    assert plan_from_json(plan_to_json(PLAN).encode()) == PLAN


def test_empty_plan():
    plan = Plan(user_id="u", project_id="p", generated_at="2026-11-29T12:00:00+00:00")
    assert plan.is_empty and plan.version == 1 and plan.policy_source == "default"
    assert plan_from_json(plan_to_json(plan)) == plan
    assert not PLAN.is_empty
    assert PLAN.memory_ids == ("m1", "m2", "c1", "c2", "p1", "s1", "s2")


def test_plan_copies_its_dicts():
    policy = {"session_state": 90}
    plan = Plan(user_id="u", project_id="p", generated_at="2026-11-29T12:00:00+00:00", policy=policy)
    policy["decision"] = 1
    assert plan.policy == {"session_state": 90}


def test_null_confidence_and_an_agent_edited_merge_text_are_accepted():
    data = copy.deepcopy(EXPECTED)
    data["merges"][0]["confidence"] = None
    data["merges"][0]["merged_text"] = "Auth uses PostgreSQL 16\nfor tokens and sessions"
    merge = plan_from_json(json.dumps(data)).merges[0]
    assert merge.confidence is None and merge.merged_text.endswith("sessions")


def test_conflict_texts_round_trip_and_whole_numbers_read_as_fractions():
    data = copy.deepcopy(EXPECTED)
    data["conflicts"][0]["texts"] = {"A": "Deploy to ECS", "B": ""}
    data["merges"][0].update(confidence=1, similarity=0)
    plan = plan_from_json(json.dumps(data))
    assert plan.conflicts[0].texts == ("Deploy to ECS", "")
    assert (plan.merges[0].confidence, plan.merges[0].similarity) == (1.0, 0.0)
    assert isinstance(plan.merges[0].similarity, float)
    assert plan_from_json(plan_to_json(plan)) == plan


def test_a_plan_given_as_a_python_object_is_checked_the_same_way():
    with pytest.raises(PlanError, match=r"^plan: merges\[0\].similarity must be a number from 0 to 1$"):
        plan_from_dict({**copy.deepcopy(EXPECTED), "merges": [{**EXPECTED["merges"][0], "similarity": float("nan")}]})
    with pytest.raises(PlanError, match=r"^plan: merges\[0\].ids must be a list of at least 2 distinct memory ids$"):
        plan_from_dict({**copy.deepcopy(EXPECTED), "merges": [{**EXPECTED["merges"][0], "ids": ("m1", "m2")}]})


def test_a_plan_written_before_supersedes_still_reads():
    data = copy.deepcopy(EXPECTED)
    del data["supersedes"]
    assert plan_from_json(json.dumps(data)).supersedes == ()


def test_candidates_and_their_answers_round_trip_and_become_actions():
    data = copy.deepcopy(EXPECTED)
    texts = ["Use the staging cluster for load tests", "Use the staging cluster for load tests on v2.1"]
    asked = {"ids": ["j1", "j2"], "type": "convention", "texts": texts, "similarity": 0.81, "question": "merge"}
    data["candidates"] = [
        asked,
        {**asked, "ids": ["j3", "j4"], "decision": "merge", "merged_text": texts[1]},
        {**asked, "ids": ["j5", "j6"], "decision": "supersede", "winner": "j5"},
        {**asked, "ids": ["j7", "j8"], "decision": "conflict"},
        {**asked, "ids": ["j9", "j0"], "decision": "leave"},
    ]
    data["fingerprints"].update({f"j{i}": "1" for i in range(10)})
    plan = plan_from_json(json.dumps(data))
    assert plan.candidates[0] == Candidate(("j1", "j2"), "convention", tuple(texts), 0.81, "merge")
    assert json.loads(plan_to_json(plan))["candidates"] == data["candidates"]
    applied = answered_plan(plan)
    assert applied.candidates == ()
    assert applied.merges[-1] == MergeAction(("j3", "j4"), "convention", texts[1], None, 0.81)
    assert applied.supersedes[-1] == SupersedeAction(old="j6", new="j5", reason="judged", text=texts[0])
    assert (applied.conflicts[-1].ids, applied.conflicts[-1].likely_winner) == (("j8", "j7"), "j8")
    assert len(applied.memory_ids) == len(plan.memory_ids) + 6  # "leave" and no decision: nothing


def test_a_plan_written_before_candidates_still_reads():
    data = copy.deepcopy(EXPECTED)
    del data["candidates"]
    assert plan_from_json(json.dumps(data)).candidates == ()


def test_a_supersede_without_its_text_round_trips():
    data = copy.deepcopy(EXPECTED)
    del data["supersedes"][0]["text"]
    plan = plan_from_json(json.dumps(data))
    assert plan.supersedes == (SupersedeAction(old="s1", new="s2", reason='the newer text marks the change: "now"'),)
    assert json.loads(plan_to_json(plan))["supersedes"] == data["supersedes"]


def test_removing_an_action_leaves_a_valid_plan_with_extra_fingerprints():
    data = copy.deepcopy(EXPECTED)
    data["conflicts"] = []
    assert plan_from_json(json.dumps(data)).conflicts == ()


def _set(path: str, value):
    """A copy of EXPECTED with the field at a dotted path ("merges.0.ids") replaced (or deleted)."""
    data = copy.deepcopy(EXPECTED)
    *parents, last = path.split(".")
    target = data
    for key in parents:
        target = target[int(key)] if key.isdigit() else target[key]
    if value is DELETE:
        del target[last]
    elif last.isdigit():
        target[int(last)] = value
    else:
        target[last] = value
    return json.dumps(data)


DELETE = object()

MALFORMED = [
    ("version", 2, "plan: unsupported version 2 (this dream reads version 1)"),
    ("version", "1", "plan: unsupported version '1' (this dream reads version 1)"),
    ("version", True, "plan: unsupported version True (this dream reads version 1)"),
    ("version", DELETE, "plan: the plan is missing 'version'"),
    ("extra", 1, "plan: the plan has unknown key 'extra'"),
    ("user_id", "", "plan: user_id must be a non-empty string"),
    ("project_id", 7, "plan: project_id must be a non-empty string"),
    ("generated_at", "yesterday", "plan: generated_at must be an ISO-8601 timestamp"),
    ("policy", [], "plan: policy must be an object"),
    ("policy.session_state", "90d", "plan: policy.session_state must be a whole number of days or null"),
    ("policy.session_state", -1, "plan: policy.session_state must be a whole number of days or null"),
    ("policy_source", "env", "plan: policy_source must be one of default, mem0.md"),
    ("memory_count", -1, "plan: memory_count must be a whole number, 0 or more"),
    ("memory_count", 1.5, "plan: memory_count must be a whole number, 0 or more"),
    ("merges", {}, "plan: merges must be a list"),
    ("merges.0", "m1", "plan: merges[0] must be an object, got a string"),
    ("merges.0.ids", ["m1"], "plan: merges[0].ids must be a list of at least 2 distinct memory ids"),
    ("merges.0.ids", ["m1", "m1"], "plan: merges[0].ids must be a list of at least 2 distinct memory ids"),
    ("merges.0.ids", ["m1", 2], "plan: merges[0].ids must be a list of at least 2 distinct memory ids"),
    ("merges.0.ids", "m1,m2", "plan: merges[0].ids must be a list of at least 2 distinct memory ids"),
    ("merges.0.type", None, "plan: merges[0].type must be a non-empty string"),
    ("merges.0.merged_text", "   ", "plan: merges[0].merged_text must be a non-empty string"),
    ("merges.0.merged_text", "a\x00b", "plan: merges[0].merged_text must not contain a NUL character"),
    ("merges.0.confidence", 1.5, "plan: merges[0].confidence must be a number from 0 to 1 or null"),
    ("merges.0.confidence", "0.9", "plan: merges[0].confidence must be a number from 0 to 1 or null"),
    ("merges.0.similarity", None, "plan: merges[0].similarity must be a number from 0 to 1"),
    ("merges.0.similarity", True, "plan: merges[0].similarity must be a number from 0 to 1"),
    ("merges.0.note", "x", "plan: merges[0] has unknown key 'note'"),
    ("merges.0.type", DELETE, "plan: merges[0] is missing 'type'"),
    ("conflicts.0.ids", ["c1", "c2", "c3"], "plan: conflicts[0].ids must be a list of exactly 2 distinct memory ids"),
    ("conflicts.0.likely_winner", "c2", "plan: conflicts[0].likely_winner must be the first of its ids (A)"),
    ("conflicts.0.topic", 3, "plan: conflicts[0].topic must be a non-empty string"),
    ("prunes.0.age_days", "142", "plan: prunes[0].age_days must be a whole number, 0 or more"),
    ("prunes.0.reason", "stale", "plan: prunes[0].reason must be one of retention, low_confidence"),
    ("prunes.0.id", "m1", "plan: memory 'm1' appears in more than one action"),
    ("conflicts.0.ids", ["m2", "c2"], "plan: conflicts[0].likely_winner must be the first of its ids (A)"),
    ("fingerprints.c1", 1, "plan: fingerprints.c1 must be a string"),
    ("fingerprints", {"m1": "1"}, "plan: fingerprints has no entry for memory 'c1'"),
    ("fingerprints", [], "plan: fingerprints must be an object"),
    ("prunes", None, "plan: prunes must be a list"),
    ("memory_count", True, "plan: memory_count must be a whole number, 0 or more"),
    ("policy.decision", 1.0, "plan: policy.decision must be a whole number of days or null"),
    ("merges.0", {}, "plan: merges[0] is missing 'ids'"),  # the first missing key in the order of the format
    ("merges.0.ids", ["m1", " "], "plan: merges[0].ids must be a list of at least 2 distinct memory ids"),
    ("merges.0.merged_text", "x" * 1_000_001, "plan: merges[0].merged_text is longer than 1,000,000 characters"),
    ("conflicts.0.texts", None, 'plan: conflicts[0].texts must be {"A": text, "B": text}'),
    ("conflicts.0.texts", {"A": "a"}, 'plan: conflicts[0].texts must be {"A": text, "B": text}'),
    ("conflicts.0.texts", {"A": "a", "B": 2}, 'plan: conflicts[0].texts must be {"A": text, "B": text}'),
    ("conflicts.0.texts", {"A": "a", "B": "b", "C": "c"}, 'plan: conflicts[0].texts must be {"A": text, "B": text}'),
    ("supersedes", {}, "plan: supersedes must be a list"),
    ("supersedes.0.old", "", "plan: supersedes[0].old must be a non-empty string"),
    ("supersedes.0.new", 5, "plan: supersedes[0].new must be a non-empty string"),
    ("supersedes.0.new", "s1", "plan: supersedes[0] must name two different memories (old and new)"),
    ("supersedes.0.reason", DELETE, "plan: supersedes[0] is missing 'reason'"),
    ("supersedes.0.text", None, "plan: supersedes[0].text must be a non-empty string"),
    ("supersedes.0.winner", "s2", "plan: supersedes[0] has unknown key 'winner'"),
    ("supersedes.0.old", "p1", "plan: memory 'p1' appears in more than one action"),
    (
        "fingerprints",
        dict.fromkeys(("m1", "m2", "c1", "c2", "p1", "s1"), "1"),
        "plan: fingerprints has no entry for memory 's2'",
    ),
]


@pytest.mark.parametrize(("path", "value", "message"), MALFORMED)
def test_each_malformed_field_is_one_clear_plan_error(path, value, message):
    with pytest.raises(PlanError) as caught:
        plan_from_json(_set(path, value))
    assert str(caught.value) == message
    assert "\n" not in str(caught.value)


def test_a_memory_in_a_merge_and_a_conflict_is_refused():
    data = copy.deepcopy(EXPECTED)
    data["conflicts"][0].update(ids=["m2", "c2"], likely_winner="m2")
    with pytest.raises(PlanError, match=r"^plan: memory 'm2' appears in more than one action$"):
        plan_from_json(json.dumps(data))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "plan is not valid JSON (line 1, column 1: Expecting value)"),
        ("{", "plan is not valid JSON (line 1, column 2: Expecting property name enclosed in double quotes)"),
        ("[]", "plan must be a JSON object, got a list"),
        ("null", "plan must be a JSON object, got null"),
        ('{"version": NaN}', "plan is not valid JSON (NaN is not a number)"),
        (b"\xff\xfe", "plan is not UTF-8 text"),
        ("[" * 100_000, "plan is not valid JSON (nested too deeply)"),
    ],
)
def test_unreadable_plan_files(text, message):
    with pytest.raises(PlanError) as caught:
        plan_from_json(text)
    assert str(caught.value) == message


def test_plan_error_is_an_invalid_input_error():
    assert issubclass(PlanError, InvalidInputError)


def test_the_compact_form_is_the_same_plan_with_the_same_quoted_strings():
    compact = plan_to_json(PLAN, compact=True)
    assert "\n" not in compact and json.loads(compact) == json.loads(plan_to_json(PLAN))
    assert plan_from_json(compact) == PLAN
    for text in (m.merged_text for m in PLAN.merges):  # `forget --purge` replaces them by their quoted form
        assert json.dumps(text, ensure_ascii=True) in compact
