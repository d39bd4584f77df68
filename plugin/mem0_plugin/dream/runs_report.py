"""The words of `--runs` and `--undo` on the terminal (docs/dream.md, "Runs and undo"). Pure
functions, no I/O; everything taken from memories goes through `sanitize.printable`."""

from __future__ import annotations

from ..sanitize import printable
from ..store.journal import DreamRun
from .report import MERGED_PREVIEW_CHARS, PROMPT, SECTION, TITLE, Line
from .undo import LeftAlone, Reversal, UndoPlan

SHORT_ID = 8
MODE_WIDTH = 11  # "interactive"
NOTHING_TO_UNDO = "Nothing to undo."


def no_runs_message(project_id: str) -> str:
    return f"No dream runs recorded for project {printable(project_id)}."


def when(timestamp: str | None) -> str:
    """`2026-12-01T03:17:00.123+00:00` → `2026-12-01 03:17` (UTC)."""
    return (timestamp or "")[:16].replace("T", " ")


def run_line(run: DreamRun) -> str:
    """`<id8>  <date time>  <mode>  merged=<N>  superseded=<N>  pruned=<N>  resolved=<N>  synthesized=<N>
    not_applied=<N>  [reminder=<N>  ]<status>` (one line; `reminder=` when the run wrote the
    reminder of conflicts: the count it left, 0 when it retired it)."""
    mode = run.mode or "unknown"
    reminder = f"reminder={run.reminder}  " if run.reminder is not None else ""
    return (
        f"{printable(run.run_id[:SHORT_ID])}  {when(run.started_at)}  {printable(mode):<{MODE_WIDTH}}  "
        f"merged={run.merged}  superseded={run.superseded}  pruned={run.pruned}  resolved={run.resolved}  "
        f"synthesized={run.synthesized}  not_applied={run.not_applied}  {reminder}{run.state}"
    )


def _ref(memory_id: str) -> str:
    return f"[mem0:{printable(memory_id)}]"


def reversal_line(reversal: Reversal) -> str:
    memory = reversal.target if reversal.target is not None else reversal.current
    preview = printable(memory.memory[:MERGED_PREVIEW_CHARS]) if memory is not None else ""
    change = "made by the run → deleted" if not reversal.restores else f"{reversal.left_as} → active"
    return f'  {_ref(reversal.memory_id)} — {change}: "{preview}"'


def left_alone_line(left: LeftAlone) -> str:
    return f"  {_ref(left.memory_id)} {left.reason} — left alone"


def undo_pieces(plan: UndoPlan, *, asking: bool = True) -> Line:
    """The undo's report as (text, role) pieces, styled like dream's own report; its last
    line is the question (when `asking`)."""
    run = plan.run
    title = f"## dream — undo of run {printable(run.run_id[:SHORT_ID])} ({printable(run.mode or 'unknown')}, {when(run.started_at)})"
    pieces: Line = [(title, TITLE), ("\n\n", "")]
    restores = [reversal_line(r) for r in plan.reversals if r.restores]
    retires = [reversal_line(r) for r in plan.reversals if not r.restores]
    for heading, items in (
        ("Restore", restores),
        ("Retire", retires),
        ("Left alone", [left_alone_line(x) for x in plan.left_alone]),
    ):
        if items:
            pieces += [(f"{heading} ({len(items)}):", SECTION), ("\n" + "".join(i + "\n" for i in items) + "\n", "")]
    pieces.append((f"Undo: {plan.restored} restores, {plan.retired} retires, {len(plan.left_alone)} left alone.", ""))
    if asking:
        pieces += [(" ", ""), ("Apply? [Y/n]", PROMPT)]
    return pieces


def undo_summary(plan: UndoPlan) -> str:
    return (
        f"Undo complete — run {printable(plan.run.run_id[:SHORT_ID])}: restored: {plan.restored}, "
        f"retired: {plan.retired}, left alone: {len(plan.left_alone)}"
    )
