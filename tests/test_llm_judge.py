"""A language model as judge (docs/judges.md), with `ScriptedJudge` — a test double of the
model (tests/judge_support.py) — in the model's place: the prompt, the strict reading of its
JSON, the same validation as an agent's answer, the budget, the timeout and the store checks
are the product's own."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone

import pytest
from dream_support import uid
from judge_support import ScriptedJudge, Sleep
from mem0_plugin.dream.judging import answered_plan
from mem0_plugin.dream.plan import Candidate, Plan
from mem0_plugin.judges.answers import AnswerRefused, messages_for, read_answer
from mem0_plugin.judges.asking import candidate_key, judge_plan
from mem0_plugin.judges.config import JudgeUnavailable, read_settings
from mem0_plugin.judges.left_alone import REMEMBER_DAYS, remember, settled_keys
from mem0_plugin.judges.llm_judge import LlmJudge
from mem0_plugin.judges.settings import JudgeSettings

OLD, NEW = uid(1), uid(2)
TEXTS = (
    "Run the e2e suite with `make e2e` before merging",
    "Run the e2e suite with `make e2e` before merging only when the UI changed",
)
MERGED = "Run the e2e suite with `make e2e` before merging; it is required only when the UI changed"
CANDIDATE = Candidate(ids=(OLD, NEW), type="convention", texts=TEXTS, similarity=0.85, question="merge")
SETTINGS = JudgeSettings.model_validate({"llm": {"provider": "ollama", "config": {"model": "tiny"}}})


def judge_with(*replies, timeout: float = 2.0, budget: int | None = 20) -> tuple[LlmJudge, ScriptedJudge]:
    model = ScriptedJudge(list(replies))
    return LlmJudge(SETTINGS, timeout=timeout, budget=budget, llm=model), model


def test_the_prompt_asks_for_one_json_object_about_both_texts():
    system, user = messages_for(CANDIDATE)
    assert system["role"] == "system" and '"decision"' in system["content"] and "JSON" in system["content"]
    assert json.dumps(TEXTS[0]) in user["content"] and json.dumps(TEXTS[1]) in user["content"]


@pytest.mark.parametrize(
    "reply, decision, merged_text, winner",
    [
        (json.dumps({"decision": "merge", "merged_text": MERGED}), "merge", MERGED, None),
        ('{"decision": "supersede", "winner": "newer"}', "supersede", None, NEW),
        (f'{{"decision": "supersede", "winner": "{OLD}"}}', "supersede", None, OLD),
        ('```json\n{"decision": "leave", "merged_text": null, "reason": "a condition"}\n```', "leave", None, None),
        ('{"decision": "conflict"}', "conflict", None, None),
    ],
)
def test_a_valid_answer_is_read(reply, decision, merged_text, winner):
    answer = read_answer(reply, CANDIDATE)
    assert (answer.decision, answer.merged_text, answer.winner) == (decision, merged_text, winner)
    assert (answer.ids, answer.texts) == (CANDIDATE.ids, CANDIDATE.texts)


@pytest.mark.parametrize(
    "reply, message",
    [
        ("Sure! They are the same.", "not one JSON object"),
        ('{"decision": "merge", "merged_text": "x"', "not one JSON object"),
        ('["merge"]', "not one JSON object"),
        ('{"decision": "maybe"}', "decision must be one of merge, supersede, conflict, leave"),
        ('{"decision": "leave", "confidence": 0.9}', "unknown key 'confidence'"),
        (
            '{"decision": "merge", "merged_text": "Run the suite before merging when the UI changed"}',
            "merged_text drops 'make e2e' of its texts",
        ),
        ('{"decision": "merge"}', "decision merge needs a merged_text"),
        ('{"decision": "supersede", "winner": "the first"}', "needs a winner that is one of its ids"),
        ('{"decision": "leave", "winner": "newer"}', "has a winner but its decision is not supersede"),
        ('{"decision": "merge", "merged_text": NaN}', "not one JSON object"),
        (None, "not text"),
    ],
)
def test_anything_else_is_no_answer(reply, message):
    with pytest.raises(AnswerRefused, match=message):
        read_answer(reply, CANDIDATE)


def test_the_judge_answers_through_the_model():
    judge, model = judge_with(json.dumps({"decision": "merge", "merged_text": MERGED}))
    assert judge.answer(CANDIDATE).merged_text == MERGED
    assert model.asked == [messages_for(CANDIDATE)]
    assert (judge.tally.asked, judge.tally.dropped, judge.tally.failed) == (1, 0, 0)


def test_a_malformed_or_invalid_answer_is_dropped_and_counted():
    judge, _ = judge_with("merge them", '{"decision": "merge", "merged_text": "Run the suite"}')
    assert judge.answer(CANDIDATE) is None and judge.answer(CANDIDATE) is None
    assert (judge.tally.asked, judge.tally.dropped, judge.tally.failed) == (2, 2, 0)
    assert "drops 'make e2e'" in judge.tally.notes[1]


def test_a_call_past_the_timeout_is_abandoned_and_the_judge_rests():
    judge, model = judge_with(Sleep(2.0), '{"decision": "leave"}', timeout=0.2)
    started = time.monotonic()
    assert judge.answer(CANDIDATE) is None
    assert time.monotonic() - started < 1.5
    assert judge.answer(CANDIDATE) is None  # resting: the model is not called again
    assert (judge.tally.asked, judge.tally.failed, len(model.asked)) == (1, 1, 1)
    assert "no answer within 0.2 s" in judge.tally.notes[0]


def test_a_model_that_raises_is_a_failed_call():
    judge, _ = judge_with(ConnectionError("connection refused"))
    assert judge.answer(CANDIDATE) is None
    assert judge.tally.failed == 1 and "connection refused" in judge.tally.notes[0]


def test_the_budget_caps_the_calls_of_a_run():
    judge, model = judge_with(*['{"decision": "leave"}'] * 5, budget=2)
    assert [judge.answer(CANDIDATE) is not None for _ in range(4)] == [True, True, False, False]
    assert len(model.asked) == judge.tally.asked == 2


def test_no_call_starts_after_the_runs_seconds():
    model = ScriptedJudge(['{"decision": "leave"}'])
    judge = LlmJudge(SETTINGS, timeout=1, budget=None, seconds=0, llm=model)
    assert judge.answer(CANDIDATE) is None and model.asked == []


def test_judge_plan_keeps_valid_answers_and_drops_the_others():
    other = Candidate(
        ids=(uid(3), uid(4)), type="convention", texts=("A b 1", "A b 2"), similarity=0.8, question="merge"
    )
    third = Candidate(ids=(uid(5), uid(6)), type="convention", texts=("C d", "C d e"), similarity=0.7, question="merge")
    plan = Plan(
        user_id="alice",
        project_id="acme-api",
        generated_at="2026-12-01T00:00:00Z",
        candidates=(CANDIDATE, other, third),
    )
    judge, _ = judge_with(
        json.dumps({"decision": "merge", "merged_text": MERGED}),
        '{"decision": "supersede", "winner": "newer"}',
        "no idea",
    )
    changed = {uid(3)}  # the store says this memory changed since the plan: its answer is refused
    judged = judge_plan(plan, judge, lambda a: " cannot be applied: changed" if a.ids[0] in changed else None)
    assert [c.decision for c in judged.candidates] == ["merge", None, None]
    assert (judge.tally.actions, judge.tally.dropped) == (1, 2)
    applied = answered_plan(judged)
    assert [m.merged_text for m in applied.merges] == [MERGED] and applied.supersedes == ()


GROUP_IDS = (uid(5), uid(6), uid(7))
GROUP_TEXTS = (
    "The checkout tax bug was fixed only once a failing test showed it",
    "Reproduced the checkout coupon bug with a failing test, then fixed it",
    "Before touching the checkout shipping code, wrote a failing test for the bug",
)
GROUP = Candidate(ids=GROUP_IDS, type="user_preference", texts=GROUP_TEXTS, similarity=0.36, question="synthesize")
PATTERN = "Fixes a bug only after a failing test reproduces it"


def test_a_group_is_asked_with_its_dated_observations_and_answered_with_a_pattern():
    dates = {GROUP_IDS[0]: "2026-11-03", GROUP_IDS[2]: "2026-11-23"}
    system, user = messages_for(GROUP, dates)
    assert '"synthesize" | "leave"' in system["content"] and "independently support" in system["content"]
    assert user["content"].splitlines()[2:5] == [
        f"1. (2026-11-03) {json.dumps(GROUP_TEXTS[0])}",
        f"2. (date unknown) {json.dumps(GROUP_TEXTS[1])}",
        f"3. (2026-11-23) {json.dumps(GROUP_TEXTS[2])}",
    ]
    answer = read_answer(json.dumps({"decision": "synthesize", "text": PATTERN}), GROUP)
    assert (answer.decision, answer.text, answer.ids) == ("synthesize", PATTERN, GROUP_IDS)
    assert read_answer('{"decision": "leave", "text": null}', GROUP).decision == "leave"
    for reply, message in [
        (json.dumps({"decision": "synthesize", "text": GROUP_TEXTS[0] + "."}), "text repeats one of its sources"),
        ('{"decision": "synthesize", "text": ""}', "text must be a non-empty string"),
        ('{"decision": "merge", "merged_text": "x"}', "decision must be one of synthesize, leave"),
        (json.dumps({"decision": "merge", "text": PATTERN}), "decision must be one of synthesize, leave"),
    ]:
        with pytest.raises(AnswerRefused, match=message):
            read_answer(reply, GROUP)
    with pytest.raises(AnswerRefused, match="has a text but its decision is not synthesize"):
        read_answer(json.dumps({"decision": "supersede", "winner": "newer", "text": PATTERN}), CANDIDATE)


def test_groups_are_asked_before_pairs_within_the_budget():
    plan = Plan(
        user_id="alice", project_id="acme-api", generated_at="2026-12-01T00:00:00Z", candidates=(CANDIDATE, GROUP)
    )
    judge, model = judge_with(json.dumps({"decision": "synthesize", "text": PATTERN}), budget=1)
    judged = judge_plan(plan, judge, lambda _: None, {GROUP_IDS[0]: "2026-11-03"})
    assert [c.decision for c in judged.candidates] == [None, "synthesize"]  # in their places
    assert len(model.asked) == 1 and "1. (2026-11-03)" in model.asked[0][1]["content"]
    [synthesis] = answered_plan(judged).synthesizes
    assert (synthesis.ids, synthesis.text) == (GROUP_IDS, PATTERN)


def test_settings_are_read_and_a_bad_section_is_one_line(tmp_path):
    assert read_settings(tmp_path) is None  # no file: no judge
    (tmp_path / "config.yaml").write_text("llm:\n  provider: none\n")
    assert read_settings(tmp_path) is None
    (tmp_path / "config.yaml").write_text(
        "llm:\n  provider: Ollama\n  config: {model: tiny}\njudge:\n  max_calls_per_run: 3\n"
    )
    settings = read_settings(tmp_path)
    assert (settings.label, settings.judge.max_calls_per_run, settings.judge.timeout_seconds) == ("ollama/tiny", 3, 30)
    for text, where in [
        ("llm:\n  provider: ollama\n  confg: {}\n", "llm.confg: Extra inputs are not permitted"),
        (
            "llm: {provider: ollama}\njudge: {timeout_seconds: 0}\n",
            "judge.timeout_seconds: Input should be greater than 0",
        ),
        ("llm: [ollama]\n", "llm: Input should be a valid dictionary"),
        ("llm: {provider: ollama\n", "is not readable YAML"),
    ]:
        (tmp_path / "config.yaml").write_text(text)
        with pytest.raises(JudgeUnavailable, match=where) as raised:
            read_settings(tmp_path)
        assert "\n" not in str(raised.value)


def test_a_provider_mem0_cannot_build_leaves_the_judge_absent(capsys):
    settings = JudgeSettings.model_validate({"llm": {"provider": "no-such-provider"}})
    judge = LlmJudge(settings, timeout=1, budget=5)
    assert judge.answer(CANDIDATE) is None and judge.answer(CANDIDATE) is None
    [line] = capsys.readouterr().err.splitlines()  # said once
    assert line.startswith("mem0: the language-model judge is off (llm provider 'no-such-provider': ")
    assert judge.tally.asked == 0


def test_the_write_path_has_a_judge_only_when_one_is_configured_for_it(tmp_path):
    from mem0_plugin.judges.llm_judge import WritePathJudge

    assert WritePathJudge(tmp_path).get() is None  # no config.yaml: rules only
    (tmp_path / "config.yaml").write_text("llm: {provider: ollama}\njudge: {write_path: false}\n")
    assert WritePathJudge(tmp_path).get() is None
    (tmp_path / "config.yaml").write_text("llm: {provider: ollama}\njudge: {write_timeout_seconds: 4}\n")
    judge = WritePathJudge(tmp_path).get()
    assert judge is not None and judge.timeout == 4 and judge.budget is None and not judge.built


def test_ollama_through_llm_factory_is_built_offline_or_names_its_package(capsys):
    """mem0's real `ollama` provider: built without a call (no server needed) when its package
    is installed; otherwise the judge is absent and the one line says what to install."""
    import importlib.util

    settings = JudgeSettings.model_validate(
        {"llm": {"provider": "ollama", "config": {"model": "llama3.1:8b", "ollama_base_url": "http://127.0.0.1:9"}}}
    )
    judge = LlmJudge(settings, timeout=1, budget=1)
    model = judge.model()
    if importlib.util.find_spec("ollama") is not None:
        assert type(model).__name__ == "OllamaLLM" and judge.built
    else:
        assert model is None and not judge.built
        [line] = capsys.readouterr().err.splitlines()
        assert "llm provider 'ollama'" in line and "pip install ollama" in line


def test_what_was_left_alone_is_remembered_for_thirty_days(tmp_path):
    day = datetime(2026, 12, 1, 3, 17, tzinfo=timezone.utc)
    remember(tmp_path, ["a", "b"], day)
    remember(tmp_path, ["c"], day + timedelta(days=10))
    assert settled_keys(tmp_path, day + timedelta(days=REMEMBER_DAYS)) == {"a", "b", "c"}
    assert settled_keys(tmp_path, day + timedelta(days=REMEMBER_DAYS + 1)) == {"c"}
    remember(tmp_path, ["d"], day + timedelta(days=REMEMBER_DAYS + 1))  # a write drops what expired
    assert set(json.loads((tmp_path / "judge" / "left-alone.json").read_text())) == {"c", "d"}


def test_a_key_names_the_question_the_texts_and_the_model():
    edited = Candidate(
        ids=CANDIDATE.ids, type=CANDIDATE.type, texts=(CANDIDATE.texts[0], "x"), similarity=0.8, question="merge"
    )
    assert candidate_key(CANDIDATE, "openai gpt") == candidate_key(CANDIDATE, "openai gpt")
    assert candidate_key(CANDIDATE, "openai gpt") != candidate_key(CANDIDATE, "ollama llama")
    assert candidate_key(CANDIDATE, "openai gpt") != candidate_key(edited, "openai gpt")
