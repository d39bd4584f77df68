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
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Protocol

from .judging import answered
from .plan import Candidate, Plan

MAX_NOTES = 100  # a long-lived process keeps only the latest


@dataclass
class JudgeTally:
    """What a judge did in one run (`mem0-dream --auto`'s line: docs/judges.md)."""

    asked: int = 0  # calls made to the model
    actions: int = 0  # valid answers asking for a merge, a supersede, a conflict or a synthesis
    dropped: int = 0  # answers refused: not the JSON asked for, invalid, or the memories changed
    failed: int = 0  # calls that raised or timed out
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


def judge_plan(plan: Plan, judge: Judge, problem: Problem, dates: Mapping[str, str] | None = None) -> Plan:
    """`plan` with each candidate the judge answered validly carrying its answer (groups first,
    then pairs, each most similar first as listed); the others unanswered (left alone), in their
    places. `dates`: the groups' observation dates, by id."""
    judged = list(plan.candidates)
    for index in asking_order(plan.candidates):
        answer = _judged(plan.candidates[index], judge, problem, dates)
        if answer is not None:
            judged[index] = answer
    return replace(plan, candidates=tuple(judged))


def asking_order(candidates: tuple[Candidate, ...]) -> list[int]:
    """The indexes of `candidates`: synthesis groups first, then pairs, each in plan order."""
    return sorted(range(len(candidates)), key=lambda i: candidates[i].question != "synthesize")


def _judged(candidate: Candidate, judge: Judge, problem: Problem, dates: Mapping[str, str] | None) -> Candidate | None:
    """The judge's valid answer asking for an action, or None (counted when refused)."""
    answer = judge.answer(candidate, dates)
    if answer is None or not answered(answer):
        return None
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
        f"judge_dropped={tally.dropped}  judge_failed={tally.failed}"
    )


class JudgeSource(Protocol):
    """Where a long-lived process gets its judge: read on first need (None: no judge)."""

    def get(self) -> Judge | None: ...
