"""A judge that is not the agent: something that answers one candidate at a time (a language
model, docs/judges.md), and `judge_plan`, which puts a plan's candidates to it.

Synthesis groups (docs/dream.md, "Synthesis") are asked first, then the pairs, each in the plan's
order (most similar first): the groups are few (at most 10) and listed only on the weeks a
synthesis is due, while pairs come every night, so a budget spent on pairs first would starve
them. The judge returns the candidate with its answer — already read strictly and checked as an
agent's answer in a plan file is (`answers.read_answer`) — or None (no answer: it failed, timed
out, is over its budget, or said something invalid). `judge_plan` then checks each answer
against the store as `--apply` does (`apply.answer_problem`: the memories still exist, are
unchanged and may be acted on, with the texts that were asked about); a refused answer is
dropped and counted, never applied. What is left is an ordinary answered plan
(`judging.answered_plan` turns it into actions).

A candidate the judge answered with "leave" is remembered by the caller (`candidate_key`:
the question, the ids and the texts as asked, and the model's label), and `judge_plan` does
not ask about a remembered candidate again: the same pair, unchanged, would cost a call every
night for the same answer (docs/judges.md, "Left alone").
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass, field, replace
from typing import Protocol

from ..dream.judging import answered
from ..dream.plan import Candidate, Plan

MAX_NOTES = 100  # a long-lived process keeps only the latest


@dataclass
class JudgeTally:
    """What a judge did in one run (`mem0-dream --auto`'s line: docs/judges.md)."""

    asked: int = 0  # calls made to the model
    actions: int = 0  # valid answers asking for a merge, a supersede, a conflict or a synthesis
    dropped: int = 0  # answers refused: not the JSON asked for, invalid, or the memories changed
    failed: int = 0  # calls that raised or timed out
    remembered: int = 0  # candidates not asked: the judge left them alone before, unchanged
    left: list[str] = field(default_factory=list)  # `candidate_key` of each candidate answered "leave"
    notes: list[str] = field(default_factory=list)  # one line per dropped or failed call (the last MAX_NOTES)

    def note(self, line: str) -> None:
        self.notes.append(line)
        del self.notes[:-MAX_NOTES]


class Judge(Protocol):
    """Answers a candidate: the candidate with `decision` (and `merged_text`, `winner` or
    `text`), or None. `dates` (by id, ``YYYY-MM-DD``) dates a synthesis group's observations."""

    tally: JudgeTally

    def answer(self, candidate: Candidate, dates: Mapping[str, str] | None = None) -> Candidate | None: ...


Problem = Callable[[Candidate], "str | None"]  # why an answer cannot be applied now, else None


def candidate_key(candidate: Candidate, label: str) -> str:
    """What identifies a question put to one model: its kind, the memories and their texts as
    asked (a changed text is a new question), and the model's `label`."""
    asked = [label, candidate.question, list(candidate.ids), list(candidate.texts)]
    return hashlib.sha256(json.dumps(asked, ensure_ascii=False).encode()).hexdigest()


def judge_plan(
    plan: Plan,
    judge: Judge,
    problem: Problem,
    dates: Mapping[str, str] | None = None,
    *,
    key: Callable[[Candidate], str] | None = None,
    settled: Container[str] = frozenset(),
) -> Plan:
    """`plan` with each candidate the judge answered validly carrying its answer (groups first,
    then pairs, each most similar first as listed); the others unanswered (left alone), in their
    places. `dates`: the groups' observation dates, by id. With `key`, a candidate whose key is
    in `settled` is not asked (counted in `tally.remembered`) and the key of each candidate the
    judge answers "leave" is added to `tally.left`."""
    judged = list(plan.candidates)
    for index in asking_order(plan.candidates):
        candidate = plan.candidates[index]
        candidate_id = key(candidate) if key is not None else None
        if candidate_id is not None and candidate_id in settled:
            judge.tally.remembered += 1
            continue
        answer = _judged(candidate, judge, problem, dates)
        if answer is None:
            continue
        if answered(answer):
            judged[index] = answer
        elif candidate_id is not None and answer.decision == "leave":
            judge.tally.left.append(candidate_id)
    return replace(plan, candidates=tuple(judged))


def asking_order(candidates: tuple[Candidate, ...]) -> list[int]:
    """The indexes of `candidates`: synthesis groups first, then pairs, each in plan order."""
    return sorted(range(len(candidates)), key=lambda i: candidates[i].question != "synthesize")


def _judged(candidate: Candidate, judge: Judge, problem: Problem, dates: Mapping[str, str] | None) -> Candidate | None:
    """The judge's valid answer (an action, checked against the store, or "leave"), or None (no
    answer, or an action refused: counted)."""
    answer = judge.answer(candidate, dates)
    if answer is None or not answered(answer):
        return answer
    refused = problem(answer)
    if refused is not None:
        judge.tally.dropped += 1
        judge.tally.note(f"the judge's answer about {candidate.ids[0]} was dropped: it{refused}")
        return None
    judge.tally.actions += 1
    return answer


def tally_fields(tally: JudgeTally) -> str:
    """What `mem0-dream --auto` appends to its line when a language model is configured."""
    return (
        f"  judge_asked={tally.asked}  judge_actions={tally.actions}  "
        f"judge_dropped={tally.dropped}  judge_failed={tally.failed}  judge_remembered={tally.remembered}"
    )


class JudgeSource(Protocol):
    """Where a long-lived process gets its judge: read on first need (None: no judge)."""

    def get(self) -> Judge | None: ...
