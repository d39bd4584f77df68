"""Dream's words on the terminal, exactly as docs/dream.md writes them. Pure functions, no I/O.

Details (docs/dream.md, "Step 4: report"):

* `render_report` returns the block from ``## dream — consolidation report`` to the
  ``Proposed: ... Apply? [Y/n]`` line, lines joined by ``\\n``, one blank line between
  sections, no trailing newline and no trailing space. When the plan has no conflicts
  that last line is the prompt itself: write the report followed by ``" "`` and read the
  answer (no second prompt is printed).
* Under each conflict, its two texts (first 100 characters), A then B.
* Supersedes get their own section, ``Supersede (<N>):``, one line each:
  ``  [mem0:<old>] → [mem0:<new>] — "<new text, first 100 chars>"``. The ``Proposed:`` line
  keeps its three counts (merges, prunes, conflicts): the section header counts supersedes.
* Synthesis gets a section of its own, ``Synthesize (<N>):``, after Prune: each group a judge
  may turn into a pattern, ``  [mem0:<a>] + [mem0:<b>] + [mem0:<c>] — <type>, <N> observations``
  with each source's text under it (``      1: "<text, first 100 chars>"``); once a judge wrote
  the pattern (``--apply`` without ``--yes``), ``  [mem0:<a>] + … → "<pattern, first 100 chars>"``.
  The ``Proposed:`` line does not count them (docs/decisions.md).
* With ``--plan``, and interactively when there are conflicts (`asking` False), the last line
  asks nothing: ``Proposed: ... conflicts.``; the conflicts are asked one by one after the
  report, then ``Apply? [Y/n]`` once.
* A prune line ends with its reason: ``(90-day retention)`` or ``(confidence 0.1)``.
* Counts agree with their number: ``1 merge``, ``2 merges``.
* A merge of more than two memories lists every id: ``[mem0:a] + [mem0:b] + [mem0:c] → "..."``.
* "first 100 chars" is the first 100 characters of the stored text, then sanitised; no
  ellipsis is added.
* Everything that comes from memories or identity (ids, types, topics, texts, the project
  id) goes through `sanitize.printable`, so the report is always one line per item and
  can carry no terminal escape sequence.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ..sanitize import printable
from ..wording import plural
from .plan import (
    REASON_LOW_CONFIDENCE,
    Candidate,
    ConflictAction,
    MergeAction,
    Plan,
    PruneAction,
    SupersedeAction,
    SynthesizeAction,
)

REPORT_TITLE = "## dream — consolidation report"
NO_PROPOSALS = "Dream complete. No duplicate, contradictory, or stale memories found."
APPLY_PROMPT = "Apply? [Y/n] "
CANCELLED = "Cancelled. No changes made."
CONFLICT_HINT = "Answer A to keep A (B is superseded), B to keep B, or skip (or Enter) to leave both."
APPLY_HINT = "Answer Y (or Enter) to apply, or n to cancel."
AUTO_LOCK_BUSY = "[mem0-dream --auto] Another run in progress — skipping."
MERGED_PREVIEW_CHARS = 100

# What each piece of the report is, for a terminal to style (`cli.terminal` names the styles).
Piece = tuple[str, str]  # (text, role); the role "" is plain text
Line = list[Piece]
TITLE, SECTION, REF, PROMPT = "dream.title", "dream.section", "dream.ref", "dream.prompt"


def no_memories_message(project_id: str) -> str:
    return f"No memories found for project {printable(project_id)}. Nothing to consolidate."


def plain(pieces: Iterable[Piece]) -> str:
    return "".join(text for text, _ in pieces)


def _ref(memory_id: str) -> Piece:
    return f"[mem0:{printable(memory_id)}]", REF


def _pair(conflict: ConflictAction) -> Line:
    first, second = conflict.ids
    return [_ref(first), (" vs ", ""), _ref(second), (f' — "{printable(conflict.topic)}" ', ""), ("[A/B/skip]", PROMPT)]


def merge_pieces(merge: MergeAction) -> Line:
    preview = printable(merge.merged_text[:MERGED_PREVIEW_CHARS])
    refs: Line = []
    for memory_id in merge.ids:
        refs += [(" + ", ""), _ref(memory_id)] if refs else [_ref(memory_id)]
    return [("  ", ""), *refs, (f' → "{preview}"', "")]


def merge_line(merge: MergeAction) -> str:
    return plain(merge_pieces(merge))


def conflict_lines(conflict: ConflictAction) -> list[Line]:
    """The conflict's line, then its two texts when the plan has them."""
    lines = [[("  ", ""), *_pair(conflict)]]
    if conflict.texts is not None:
        for label, text in zip("AB", conflict.texts):
            lines.append([(f'      {label}: "{printable(text[:MERGED_PREVIEW_CHARS])}"', "")])
    return lines


def supersede_pieces(supersede: SupersedeAction) -> Line:
    preview = printable((supersede.text or "")[:MERGED_PREVIEW_CHARS])
    return [("  ", ""), _ref(supersede.old), (" → ", ""), _ref(supersede.new), (f' — "{preview}"', "")]


def synthesis_candidate_lines(candidate: Candidate) -> list[Line]:
    """A group a judge may turn into a pattern: its ids, then each source's text."""
    refs: Line = []
    for memory_id in candidate.ids:
        refs += [(" + ", ""), _ref(memory_id)] if refs else [_ref(memory_id)]
    head = f" — {printable(candidate.type)}, {len(candidate.ids)} observations"
    lines: list[Line] = [[("  ", ""), *refs, (head, "")]]
    for number, text in enumerate(candidate.texts, start=1):
        lines.append([(f'      {number}: "{printable(text[:MERGED_PREVIEW_CHARS])}"', "")])
    return lines


def synthesize_pieces(synthesis: SynthesizeAction) -> Line:
    """An answered synthesis: its sources and the pattern a judge wrote."""
    refs: Line = []
    for memory_id in synthesis.ids:
        refs += [(" + ", ""), _ref(memory_id)] if refs else [_ref(memory_id)]
    return [("  ", ""), *refs, (f' → "{printable(synthesis.text[:MERGED_PREVIEW_CHARS])}"', "")]


def _synthesis_section(plan: Plan) -> list[Line]:
    groups = [c for c in plan.candidates if c.question == "synthesize"]
    count = len(groups) + len(plan.synthesizes)
    if not count:
        return []
    lines = [synthesize_pieces(s) for s in plan.synthesizes]
    lines += [line for c in groups for line in synthesis_candidate_lines(c)]
    return [[(f"Synthesize ({count}):", SECTION)], *lines, []]


def prune_why(prune: PruneAction, policy: dict[str, int | None]) -> str:
    """Why the memory is pruned: ``90-day retention`` (its type's policy) or ``confidence 0.1``."""
    if prune.reason == REASON_LOW_CONFIDENCE:
        return f"confidence {prune.confidence:g}" if prune.confidence is not None else "low confidence"
    days = policy.get(prune.type)
    return f"{days}-day retention" if isinstance(days, int) else "retention"


def prune_pieces(prune: PruneAction, policy: dict[str, int | None] | None = None) -> Line:
    why = prune_why(prune, policy or {})
    return [("  ", ""), _ref(prune.id), (f" — {printable(prune.type)}, {prune.age_days}d old ({printable(why)})", "")]


def proposed_counts(plan: Plan) -> str:
    """``Proposed: 1 merge, 2 prunes, 1 conflict.``"""
    merges = plural(len(plan.merges), "merge", "merges")
    prunes = plural(len(plan.prunes), "prune", "prunes")
    conflicts = plural(len(plan.conflicts), "conflict", "conflicts")
    return f"Proposed: {merges}, {prunes}, {conflicts}."


def proposed_pieces(plan: Plan, *, asking: bool = True) -> Line:
    """The last line; `asking` False when it asks nothing (--plan; conflicts to ask first)."""
    counts = proposed_counts(plan)
    return [(counts, ""), (" ", ""), ("Apply? [Y/n]", PROMPT)] if asking else [(counts, "")]


def proposed_line(plan: Plan, *, asking: bool = True) -> str:
    return plain(proposed_pieces(plan, asking=asking))


def _section(title: str, lines: Sequence[Line]) -> list[Line]:
    return [[(f"{title} ({len(lines)}):", SECTION)], *lines, []] if lines else []


def _lines(plan: Plan, *, asking: bool) -> list[Line]:
    """The report (docs/dream.md, "Step 4: report"), line by line; sections with no items are left out."""
    lines: list[Line] = [[(REPORT_TITLE, TITLE)], []]
    lines += _section("Merges", [merge_pieces(m) for m in plan.merges])
    lines += _section("Supersede", [supersede_pieces(s) for s in plan.supersedes])
    if plan.conflicts:
        conflicts = [line for c in plan.conflicts for line in conflict_lines(c)]
        lines += [[(f"Conflicts ({len(plan.conflicts)}):", SECTION)], *conflicts, []]
    lines += _section("Prune", [prune_pieces(p, dict(plan.policy)) for p in plan.prunes])
    lines += _synthesis_section(plan)
    lines.append(proposed_pieces(plan, asking=asking))
    return lines


def report_pieces(plan: Plan, *, asking: bool = True) -> Line:
    """The report as (text, role) pieces, lines separated by a ``"\\n"`` piece; joined, `render_report`."""
    pieces: Line = []
    for index, line in enumerate(_lines(plan, asking=asking)):
        pieces += [("\n", ""), *line] if index else line
    return pieces


def render_report(plan: Plan, *, asking: bool = True) -> str:
    """The report (docs/dream.md, "Step 4: report") as plain text."""
    return plain(report_pieces(plan, asking=asking))


def conflict_prompt(index: int, total: int, conflict: ConflictAction) -> str:
    """``Conflict <i>/<N>: [mem0:<A>] vs [mem0:<B>] — "<topic>" [A/B/skip]: `` (no newline)."""
    return f"Conflict {index}/{total}: {plain(_pair(conflict))}: "


def summary_line(
    merged: int, pruned: int, resolved: int, skipped: int, synthesized: int = 0, superseded: int = 0
) -> str:
    """The summary; ``, superseded: <N>`` and ``, synthesized: <N>`` are appended only when the
    run superseded or synthesized something (as the ``--auto`` line does)."""
    line = f"Dream complete — merged: {merged}, pruned: {pruned}, conflicts resolved: {resolved}, skipped: {skipped}"
    if superseded:
        line += f", superseded: {superseded}"
    return f"{line}, synthesized: {synthesized}" if synthesized else line


def auto_summary_line(
    project: str, merged: int, pruned: int, conflicts_skipped: int, superseded: int = 0, synthesized: int = 0
) -> str:
    """The --auto line; ``  superseded=<N>`` and ``  synthesized=<N>`` are appended only when the
    run superseded or synthesized something (docs/decisions.md)."""
    line = (
        f"[mem0-dream --auto] project={printable(project)}  merged={merged}  pruned={pruned}  "
        f"conflicts_skipped={conflicts_skipped}"
    )
    if superseded:
        line += f"  superseded={superseded}"
    return f"{line}  synthesized={synthesized}" if synthesized else line


_REMINDER_HEAD = "mem0-dream detected "
# the reminder's text for any count, as this version writes it and as earlier ones (and the dream
# skill's fallback) wrote it: "<N> contradiction(s) ... Run /mem0:dream to resolve them ..."
_REMINDER = re.compile(
    r"mem0-dream detected ([0-9]+) contradiction(?:s|\(s\))? requiring manual review\. "
    r"Run /mem0:dream (?:\(or mem0-dream in a terminal\) )?to resolve (?:it|them) interactively\."
)


def reminder_text(count: int) -> str:
    """``mem0-dream detected 1 contradiction requiring manual review. Run /mem0:dream (or
    mem0-dream in a terminal) to resolve it interactively.`` (``2 contradictions``, ``them``)."""
    noun, them = ("contradiction", "it") if count == 1 else ("contradictions", "them")
    return (
        f"{_REMINDER_HEAD}{count} {noun} requiring manual review. "
        f"Run /mem0:dream (or mem0-dream in a terminal) to resolve {them} interactively."
    )


def reminder_count(text: str) -> int:
    """The count a reminder's text gives (`reminder_text`); 1 when it gives none (a reminder
    another tool wrote)."""
    found = _REMINDER.fullmatch(text)
    return int(found.group(1)) if found else 1


def is_reminder_text(text: str) -> bool:
    """Whether `text` is the reminder's (`reminder_text`, or an earlier wording), for any count."""
    return _REMINDER.fullmatch(text) is not None
