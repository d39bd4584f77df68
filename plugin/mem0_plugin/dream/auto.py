"""One `mem0-dream --auto` run (docs/dream.md, "`--auto`"), after the command has completed any
interrupted apply (as every mode does): plan with the memories' vectors (stored as they are made) and the remembered pair decisions,
let a configured language model answer the candidates, apply with no one watching, then keep
what the next night reuses (features, vectors, pairs). The command takes the lock, parses and
prints; this module decides and writes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from ..identity import Identity
from ..judges.asking import Judge, candidate_key, judge_plan
from ..judges.left_alone import remember, settled_keys
from ..relation.pair_file import memo_path, read_memo, write_memo
from ..store import Store
from .apply import ApplyOutcome, answer_problem, apply_plan
from .judging import answered_plan
from .pipeline import Prepared, embed_written, prepare_plan, store_new_features
from .plan import Plan
from .synthesis import observation_dates

if TYPE_CHECKING:
    from ..judges.settings import JudgeSettings  # pydantic: loaded only when a judge is configured
    from ..semantic import Semantic


class ModelJudge(Judge, Protocol):
    """A language model as judge: what it leaves alone is remembered under its label."""

    settings: JudgeSettings


@dataclass(frozen=True)
class AutoRun:
    """What one run did: its plan (with the judge's answers as actions) and what applying it
    wrote (None when the scope holds no memory)."""

    plan: Plan
    outcome: ApplyOutcome | None


def run(
    store: Store, identity: Identity, now: datetime, semantic: Semantic | None, judge: ModelJudge | None
) -> AutoRun:
    """The run. Without a judge no synthesis group is looked for: no pattern could be written."""
    pairs = read_memo(memo_path(identity))
    prepared = prepare_plan(
        store,
        identity,
        now,
        semantic=semantic,
        store_vectors=True,
        weekly_synthesis=True,
        synthesis=judge is not None,
        pairs=pairs,
    )
    write_memo(memo_path(identity), pairs)
    plan = prepared.plan
    if plan.memory_count == 0:
        return AutoRun(plan, None)
    if judge is not None and plan.candidates:
        plan = judged_plan(store, identity, prepared, judge, now)
    outcome = apply_plan(store, identity, plan, {}, mode="auto")  # and leaves the reminder of the conflicts
    store_new_features(store, prepared)  # so the next night need not read these texts again
    embed_written(store, identity, semantic, outcome.written)  # nor embed them
    return AutoRun(plan, outcome)


def judged_plan(store: Store, identity: Identity, prepared: Prepared, judge: ModelJudge, now: datetime) -> Plan:
    """The plan with the model's answers as actions; what it leaves alone is remembered so the
    next nights do not ask again (docs/judges.md, "Left alone")."""
    plan = prepared.plan
    dates = observation_dates(prepared.fetched.memories, plan.candidates)
    label = judge.settings.label
    judged = judge_plan(
        plan,
        judge,
        lambda answer: answer_problem(store, plan, answer),
        dates,
        key=lambda candidate: candidate_key(candidate, label),
        settled=settled_keys(identity.home, now),
    )
    remember(identity.home, judge.tally.left, now)
    return answered_plan(judged)
