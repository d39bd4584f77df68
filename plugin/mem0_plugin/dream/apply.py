"""Step 5's writes: apply a confirmed plan, crash-safe and conditional.

Every action and its journal step commit together, so an action is either wholly
applied and journaled or not at all. The plan is journaled before the first action; a
run killed at any point is completed by the next run (`recover`), which replays only
the steps not yet journaled. Every action first checks that each memory it touches
still has the version fetched (`fingerprints`): a memory changed since is never
written over, and its action is reported as skipped.

Actions are applied in plan order, several per transaction: a commit per action cost
more than the actions themselves. A batch ends after `BATCH_STEPS` actions or
`BATCH_SECONDS` of work, whichever comes first, because it holds the store's write lock
that MCP server writers queue behind; it commits whole or not at all, so a kill loses at
most the batch in progress, none of it journaled. Between batches the run pauses for
`BATCH_PAUSE`: a waiting writer polls the lock (SQLite's busy handler sleeps between
tries, up to 25 ms while its wait is short) and would otherwise find it taken again by
the next batch every time, waiting until the whole apply is done. Inside a batch each action runs in a
savepoint: one that fails halfway (a memory changed, a stored record that cannot be
rewritten) undoes only its own writes and is journaled as stale; its neighbours apply.

Applying, recovering and undoing hold an exclusive lock on ``<store file>.dream-apply.lock`` (a
`filelock.FileLock`: `flock` on POSIX, opened without following a symlink) for their
whole duration: a run's journal is "open" while it applies, so without it a second
process (a cron `--auto` next to an interactive run) would take a live run for an
interrupted one and replay its steps concurrently. The kernel drops the lock when its
holder dies, `kill -9` included, so an interrupted run is recoverable at once.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from ..errors import InvalidInputError, NotFoundError, PlanError, StaleWriteError
from ..identity import Identity
from ..records import ACTIVE, MERGED, SUPERSEDED, Memory, takes_part
from ..store import Store
from ..store.base import Writer
from .judging import answered
from .plan import (
    Candidate,
    ConflictAction,
    MergeAction,
    Plan,
    PruneAction,
    SupersedeAction,
    SynthesizeAction,
    plan_to_json,
)
from .plan_file import plan_from_json
from .reminder import UNCHANGED, remind
from .synthesis import SYNTHESIS_SOURCE, restates_a_source

ACTOR = "mem0-dream"
CHOICES = ("A", "B", "skip")


@dataclass(frozen=True)
class Step:
    kind: str  # "merge" | "supersede" | "resolve" | "prune" | "synthesize"
    action: MergeAction | SupersedeAction | ConflictAction | PruneAction | SynthesizeAction
    choice: str = ""


@dataclass
class ApplyOutcome:
    merged: int = 0
    superseded: int = 0
    pruned: int = 0
    resolved: int = 0
    synthesized: int = 0
    skipped: int = 0  # conflicts the user (or --auto) skipped
    stale: list[str] = field(default_factory=list)  # actions not applied: a memory changed since the plan
    stale_resolutions: int = 0  # conflicts the user settled that could not be applied
    written: list[str] = field(default_factory=list)  # ids of the memories the run wrote (merges, patterns)
    reminder: str = UNCHANGED  # what the run did to the reminder of conflicts left (`reminder.remind`)

    @property
    def conflicts_left(self) -> int:
        """The contradictions this run leaves unresolved: skipped, or settled but not applied."""
        return self.skipped + self.stale_resolutions


def plan_steps(plan: Plan, resolutions: Mapping[str, str]) -> list[Step]:
    """The apply order of docs/dream.md, step 5: merges, supersedes, resolved conflicts, prunes,
    syntheses (last: a run journaled before syntheses keeps its step numbers)."""
    steps = [Step("merge", m) for m in plan.merges]
    steps += [Step("supersede", s) for s in plan.supersedes]
    steps += [
        Step("resolve", c, resolutions[c.ids[0]]) for c in plan.conflicts if resolutions.get(c.ids[0]) in ("A", "B")
    ]
    steps += [Step("prune", p) for p in plan.prunes]
    steps += [Step("synthesize", s) for s in plan.synthesizes]
    return steps


def _current(writer: Writer, plan: Plan, ids: tuple[str, ...]) -> list[Memory] | str:
    """The memories as they are now, or why the action must be skipped."""
    return _as_planned(writer.get, plan, ids)


def _as_planned(get: Callable[[str, str], Memory | None], plan: Plan, ids: tuple[str, ...]) -> list[Memory] | str:
    """The memories `get` finds now, or why they cannot be acted on as the plan says."""
    found = []
    for memory_id in ids:
        memory = get(plan.user_id, memory_id)
        if memory is None:
            return f"{memory_id} no longer exists"
        if memory.app_id != plan.project_id:  # an edited plan must not reach another project
            return f"{memory_id} is not a memory of project {plan.project_id}"
        expected = plan.fingerprints.get(memory_id)
        if expected is not None and str(memory.version) != expected:
            return f"{memory_id} changed since the plan was made"
        if memory.lifecycle_state != ACTIVE:
            return f"{memory_id} is {memory.lifecycle_state}"
        if not takes_part(memory):  # a plan file may name anything; docs/dream.md "Who takes part" holds
            return f"{memory_id} is immutable, pinned, excluded from dream or dream's reminder"
        found.append(memory)
    return found


def check_answers(store: Store, plan: Plan) -> None:
    """Refuse, before anything is written, a judge's answer about memories that are not as the
    plan showed them: gone, changed (fingerprints), protected, or with another text than the
    candidate's (docs/dream.md, "Candidates"). One `PlanError` line names the candidate."""

    for index, candidate in enumerate(plan.candidates):
        problem = answer_problem(store, plan, candidate)
        if problem is not None:
            raise PlanError(f"plan: candidates[{index}]{problem}")


def answer_problem(store: Store, plan: Plan, candidate: Candidate) -> str | None:
    """Why an answered candidate cannot be applied as the store is now (`check_answers`; a
    language model's answers in `--auto` too: docs/judges.md), as the end of a line after the
    candidate's name; None when it can (or when it asks for nothing)."""

    def get(user_id: str, memory_id: str) -> Memory | None:
        try:
            return store.get(user_id, memory_id)
        except NotFoundError:
            return None

    if not answered(candidate):
        return None
    current = _as_planned(get, plan, candidate.ids)
    if isinstance(current, str):
        return f" cannot be applied: {current}"
    for memory, text in zip(current, candidate.texts):
        if memory.memory != text:
            return f".texts do not match memory {memory.id}"
    return None


def _merge(writer: Writer, plan: Plan, identity: Identity, action: MergeAction, sources: list[Memory]) -> str:
    metadata: dict[str, object] = {"type": action.type, "branch": identity.branch, "source": ACTOR}
    confidences = [m.confidence for m in sources if m.confidence is not None]
    if confidences:
        metadata["confidence"] = max(confidences)
    merged = Memory(
        id=str(uuid.uuid4()),
        memory=action.merged_text,
        user_id=plan.user_id,
        app_id=plan.project_id,
        metadata=metadata,
        created_at=writer.now,
        updated_at=writer.now,
        source_memory_ids=tuple(m.id for m in sources),
    )
    merged = writer.insert(merged, event="ADD", actor=ACTOR)  # a hosted store gives it the platform's id
    for source in sources:
        if source.id != merged.id:  # a platform that keeps one memory per text kept this source (docs/hosted.md)
            writer.change(source, "MERGE", ACTOR, lifecycle_state=MERGED, replacement_memory_id=merged.id)
    return merged.id


def _synthesize(writer: Writer, plan: Plan, identity: Identity, action: SynthesizeAction, sources: list[Memory]) -> str:
    """One new memory stating the pattern, citing its sources, which stay as they are."""
    if restates_a_source(action.text, [m.memory for m in sources]):
        raise InvalidInputError("the pattern's text repeats one of its sources")
    made = Memory(
        id=str(uuid.uuid4()),
        memory=action.text,
        user_id=plan.user_id,
        app_id=plan.project_id,
        metadata={"type": action.type, "branch": identity.branch, "source": SYNTHESIS_SOURCE},
        created_at=writer.now,
        updated_at=writer.now,
        source_memory_ids=tuple(m.id for m in sources),
    )
    return writer.insert(made, event="ADD", actor=ACTOR).id


def _resolve(writer: Writer, action: ConflictAction, choice: str, memories: list[Memory]) -> None:
    winner, loser = (memories[0], memories[1]) if choice == "A" else (memories[1], memories[0])
    writer.change(loser, "SUPERSEDE", ACTOR, lifecycle_state=SUPERSEDED, replacement_memory_id=winner.id)


def _supersede(writer: Writer, memories: list[Memory]) -> None:
    old, new = memories
    writer.change(old, "SUPERSEDE", ACTOR, lifecycle_state=SUPERSEDED, replacement_memory_id=new.id)


def _run_step(writer: Writer, plan: Plan, identity: Identity, step: Step, written: list[str]) -> str:
    """Apply one step; returns why it was not applied ("" if it was). The id of a memory it
    writes is added to `written`."""
    action = step.action
    ids = (action.id,) if isinstance(action, PruneAction) else tuple(action.ids)
    current = _current(writer, plan, ids)
    if isinstance(current, str):
        return current
    if isinstance(action, MergeAction):
        written.append(_merge(writer, plan, identity, action, current))
    elif isinstance(action, SupersedeAction):
        _supersede(writer, current)
    elif isinstance(action, ConflictAction):
        _resolve(writer, action, step.choice, current)
    elif isinstance(action, SynthesizeAction):
        written.append(_synthesize(writer, plan, identity, action, current))
    else:
        writer.delete(current[0], ACTOR, event="PRUNE")
    return ""


REMIND = "remind"  # the journal step of a run that wrote the reminder; its detail is the count it left


BATCH_STEPS = 200  # see the module docstring
BATCH_SECONDS = 0.1
BATCH_PAUSE = 0.025


@dataclass(frozen=True)
class CrashPoint:
    """Fault injection for tests: MEM0_DREAM_CRASH_AFTER=N kills the process (exit 137, no cleanup)
    right after the N-th step is journaled and committed; N=0 right after the plan is journaled."""

    after: int | None = None

    @classmethod
    def from_env(cls) -> CrashPoint:
        limit = os.environ.get("MEM0_DREAM_CRASH_AFTER")
        return cls(int(limit) if limit and limit.isascii() and limit.isdigit() else None)

    def __call__(self, done: int) -> None:
        if self.after is not None and done >= self.after:
            os._exit(137)

    def ends_batch(self, done: int) -> bool:
        """Whether a batch must commit once `done` steps are journaled: the crash comes right after."""
        return done == self.after


NO_CRASH = CrashPoint()


@dataclass(frozen=True)
class _Run:
    """What every batch of one run needs: where to write, what to apply, what is already journaled."""

    store: Store
    plan: Plan
    identity: Identity
    run_id: str
    steps: list[Step]
    done: Mapping[int, str]
    written: list[str]  # (a step undone by its savepoint may leave an id of a memory not kept)


def _execute(run: _Run, outcome: ApplyOutcome, crash: CrashPoint) -> None:
    index = 0
    while index < len(run.steps):
        if index in run.done:  # nothing to write: no transaction for it
            _count(outcome, run.steps[index], run.done[index])
            index += 1
            continue
        results, index = _apply_batch(run, index, crash)
        for step, result, reason in results:  # counted once committed, in step order
            _count(outcome, step, result, reason)
        crash(index)
        if index < len(run.steps):
            time.sleep(BATCH_PAUSE)  # let a writer waiting on the lock in (see the module docstring)


def _apply_batch(run: _Run, index: int, crash: CrashPoint) -> tuple[list[tuple[Step, str, str]], int]:
    """Apply steps from `index` (not yet journaled) on in one transaction until the batch is
    full, the crash point is reached or a journaled step comes (`_execute` counts those);
    returns (step, result, reason) of every step applied, and the index of the next step."""
    results: list[tuple[Step, str, str]] = []
    deadline = time.monotonic() + BATCH_SECONDS
    with run.store.write() as writer:
        writer.dream_run_id = run.run_id  # the history rows name the run (what `undo` reads)
        while index < len(run.steps) and index not in run.done:
            step = run.steps[index]
            reason = _apply_step(writer, run, index, step)
            results.append((step, "stale" if reason else "applied", reason))
            index += 1
            if len(results) >= BATCH_STEPS or time.monotonic() >= deadline or crash.ends_batch(index):
                break
    return results, index


def _apply_step(writer: Writer, run: _Run, index: int, step: Step) -> str:
    """One step and its journal row; returns why it was not applied ("" if it was)."""
    try:
        with writer.savepoint():  # a step skipped halfway (a merge's second source stale) undoes only itself
            reason = _run_step(writer, run.plan, run.identity, step, run.written)
    except (StaleWriteError, InvalidInputError) as exc:  # changed meanwhile, or a stored record that cannot
        reason = str(exc)  # be rewritten (corrupt timestamp): skip, never abort
    writer.journal_step(run.run_id, index, step.kind, "stale" if reason else "applied", reason)
    return reason


def _count(outcome: ApplyOutcome, step: Step, result: str, reason: str = "") -> None:
    if result != "applied":
        outcome.stale.append(f"{step.kind} {_label(step)}: {reason or 'skipped'}")
        outcome.stale_resolutions += step.kind == "resolve"
    elif step.kind == "merge":
        outcome.merged += 1
    elif step.kind == "supersede":
        outcome.superseded += 1
    elif step.kind == "resolve":
        outcome.resolved += 1
    elif step.kind == "synthesize":
        outcome.synthesized += 1
    else:
        outcome.pruned += 1


def _label(step: Step) -> str:
    action = step.action
    return action.id if isinstance(action, PruneAction) else "+".join(action.ids)


def apply_plan(
    store: Store,
    identity: Identity,
    plan: Plan,
    resolutions: Mapping[str, str],
    *,
    mode: str = "apply",
    crash: CrashPoint | None = None,
) -> ApplyOutcome:
    """Journal the plan, then apply its steps in batches (see the module docstring), then make
    the reminder count the conflicts the run leaves (`reminder.remind`: `--auto` adds one, the
    other modes refresh or retire the one there is). `mode` (interactive, auto, apply) is
    recorded with the run (docs/dream.md, "Runs and undo"); a run that wrote only the reminder
    is recorded too, one that wrote nothing is not."""
    steps = plan_steps(plan, resolutions)
    outcome = ApplyOutcome(skipped=sum(1 for c in plan.conflicts if resolutions.get(c.ids[0]) not in ("A", "B")))
    run_id = str(uuid.uuid4())
    journal = (
        run_id,
        plan.user_id,
        plan.project_id,
        plan_to_json(plan, compact=True),
        json.dumps(dict(resolutions), sort_keys=True),
        mode,
    )
    with store.apply_lock((identity.user_id, identity.project_id)):
        if steps:
            with store.write() as writer:
                writer.journal_start(*journal)
            crash = crash or CrashPoint.from_env()
            crash(0)
            _execute(_Run(store, plan, identity, run_id, steps, {}, outcome.written), outcome, crash)
        with store.write() as writer:
            outcome.reminder = remind(writer, identity, outcome.conflicts_left, add=mode == "auto")
            if outcome.reminder != UNCHANGED:
                if not steps:
                    writer.journal_start(*journal)
                writer.journal_step(run_id, len(steps), REMIND, "applied", str(outcome.conflicts_left))
            if steps or outcome.reminder != UNCHANGED:
                writer.journal_finish(run_id)
    return outcome


def recover(store: Store, identity: Identity) -> Iterator[tuple[str, ApplyOutcome]]:
    """Complete every run of this scope that was interrupted while applying.

    Waits for a run another process is applying right now (see the module docstring):
    that one is not interrupted, and finds nothing left open once it is done."""
    with store.apply_lock((identity.user_id, identity.project_id)):
        for run_id, plan_json, resolutions_json in store.journal_open_runs(identity.user_id, identity.project_id):
            plan = plan_from_json(plan_json)
            resolutions = json.loads(resolutions_json)
            outcome = ApplyOutcome()
            run = _Run(store, plan, identity, run_id, plan_steps(plan, resolutions), store.journal_steps(run_id), [])
            _execute(run, outcome, NO_CRASH)
            with store.write() as writer:
                writer.journal_finish(run_id)
            yield run_id, outcome
