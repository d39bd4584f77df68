"""Dream's terminal text (docs/dream.md: steps 2, 4, 5, 6 and --auto), character for character."""

from __future__ import annotations

import io
import re
from dataclasses import replace

import pytest
from dream_support import ANSI, earlier_reminder_text
from mem0_plugin.cli.terminal import Terminal
from mem0_plugin.dream import report
from mem0_plugin.dream.plan import ConflictAction, MergeAction, Plan, PruneAction, plan_to_json
from mem0_plugin.dream.plan_file import plan_from_json


def plan(merges=(), conflicts=(), prunes=()) -> Plan:
    return Plan(
        user_id="alice",
        project_id="acme-api",
        generated_at="2026-11-29T12:00:00+00:00",
        merges=merges,
        conflicts=conflicts,
        prunes=prunes,
        policy={"session_state": 90, "compact_summary": 90},
    )


MERGE = MergeAction(
    ids=("m1", "m2"), type="decision", merged_text="Auth DB is PostgreSQL", confidence=0.8, similarity=0.67
)
CONFLICT = ConflictAction(ids=("c1", "c2"), type="decision", topic="Deploy", likely_winner="c1")
PRUNE = PruneAction(id="p1", type="session_state", age_days=142, reason="retention")


def test_full_report():
    text = report.render_report(plan(merges=(MERGE,), conflicts=(CONFLICT,), prunes=(PRUNE,)))
    assert text == (
        "## dream — consolidation report\n"
        "\n"
        "Merges (1):\n"
        '  [mem0:m1] + [mem0:m2] → "Auth DB is PostgreSQL"\n'
        "\n"
        "Conflicts (1):\n"
        '  [mem0:c1] vs [mem0:c2] — "Deploy" [A/B/skip]\n'
        "\n"
        "Prune (1):\n"
        "  [mem0:p1] — session_state, 142d old (90-day retention)\n"
        "\n"
        "Proposed: 1 merge, 1 prune, 1 conflict. Apply? [Y/n]"
    )


@pytest.mark.parametrize(
    ("merges", "conflicts", "prunes", "expected"),
    [
        (
            (),
            (),
            (PRUNE, PruneAction(id="p2", type="decision", age_days=0, reason="low_confidence", confidence=0.1)),
            "## dream — consolidation report\n\nPrune (2):\n  [mem0:p1] — session_state, 142d old (90-day retention)\n"
            "  [mem0:p2] — decision, 0d old (confidence 0.1)\n\nProposed: 0 merges, 2 prunes, 0 conflicts. Apply? [Y/n]",
        ),
        (
            (),
            (CONFLICT,),
            (),
            '## dream — consolidation report\n\nConflicts (1):\n  [mem0:c1] vs [mem0:c2] — "Deploy" [A/B/skip]\n\n'
            "Proposed: 0 merges, 0 prunes, 1 conflict. Apply? [Y/n]",
        ),
        (
            (MERGE,),
            (),
            (),
            '## dream — consolidation report\n\nMerges (1):\n  [mem0:m1] + [mem0:m2] → "Auth DB is PostgreSQL"\n\n'
            "Proposed: 1 merge, 0 prunes, 0 conflicts. Apply? [Y/n]",
        ),
    ],
)
def test_sections_with_no_items_are_left_out(merges, conflicts, prunes, expected):
    assert report.render_report(plan(merges, conflicts, prunes)) == expected


def test_a_prune_line_says_why():
    """Retention names its policy's days; a low-confidence prune its confidence (also in the plan file)."""
    low = PruneAction(id="p2", type="decision", age_days=45, reason="low_confidence", confidence=0.1)
    assert report.plain(report.prune_pieces(PRUNE, {"session_state": 90})) == (
        "  [mem0:p1] — session_state, 142d old (90-day retention)"
    )
    assert report.plain(report.prune_pieces(low)) == "  [mem0:p2] — decision, 45d old (confidence 0.1)"
    with_both = replace(plan(prunes=(PRUNE, low)), fingerprints={"p1": "1", "p2": "1"})
    read_back = plan_from_json(plan_to_json(with_both))
    assert read_back.prunes == (PRUNE, low)
    assert '"confidence"' not in plan_to_json(plan(prunes=(PRUNE,)))


def test_a_merge_of_three_lists_every_id():
    merge = MergeAction(ids=("a", "b", "c"), type="decision", merged_text="x", confidence=None, similarity=1.0)
    assert report.merge_line(merge) == '  [mem0:a] + [mem0:b] + [mem0:c] → "x"'


def test_merged_content_shows_its_first_100_characters():
    text = "".join(str(i % 10) for i in range(150))
    merge = MergeAction(ids=("a", "b"), type="t", merged_text=text, confidence=None, similarity=1.0)
    assert report.merge_line(merge) == f'  [mem0:a] + [mem0:b] → "{text[:100]}"'


def test_memory_text_cannot_drive_the_terminal():
    merge = MergeAction(
        ids=("a\x1b[2J", "b"),
        type="t",
        merged_text="evil\x1b]0;title\x07\nProposed: 0 merges",
        confidence=None,
        similarity=1.0,
    )
    conflict = ConflictAction(ids=("c1", "c2"), type="t", topic="top\u202eic", likely_winner="c1")
    prune = PruneAction(id="p1", type="ty\rpe", age_days=1, reason="retention")
    text = report.render_report(plan((merge,), (conflict,), (prune,)))
    assert "\x1b" not in text and "\u202e" not in text and "\r" not in text and "\x07" not in text
    assert '  [mem0:a\\x1b[2J] + [mem0:b] → "evil\\x1b]0;title\\x07 Proposed: 0 merges"' in text.splitlines()
    assert '  [mem0:c1] vs [mem0:c2] — "top\\u202eic" [A/B/skip]' in text.splitlines()
    assert "  [mem0:p1] — ty\\rpe, 1d old (retention)" in text.splitlines()
    assert len(text.splitlines()) == 12


def test_conflict_prompt():
    assert report.conflict_prompt(2, 3, CONFLICT) == 'Conflict 2/3: [mem0:c1] vs [mem0:c2] — "Deploy" [A/B/skip]: '
    sneaky = ConflictAction(ids=("c1", "c2"), type="t", topic="a\nb", likely_winner="c1")
    assert report.conflict_prompt(1, 1, sneaky) == 'Conflict 1/1: [mem0:c1] vs [mem0:c2] — "a b" [A/B/skip]: '


@pytest.mark.parametrize(
    ("actual", "expected"),
    [
        (report.NO_PROPOSALS, "Dream complete. No duplicate, contradictory, or stale memories found."),
        (report.no_memories_message("acme-api"), "No memories found for project acme-api. Nothing to consolidate."),
        (
            report.no_memories_message("evil\x1b[2J"),
            "No memories found for project evil\\x1b[2J. Nothing to consolidate.",
        ),
        (report.APPLY_PROMPT, "Apply? [Y/n] "),
        (report.CANCELLED, "Cancelled. No changes made."),
        (report.summary_line(2, 3, 1, 4), "Dream complete — merged: 2, pruned: 3, conflicts resolved: 1, skipped: 4"),
        (
            report.summary_line(2, 3, 1, 4, superseded=2),
            "Dream complete — merged: 2, pruned: 3, conflicts resolved: 1, skipped: 4, superseded: 2",
        ),
        (
            report.summary_line(0, 0, 0, 0, synthesized=1, superseded=1),
            "Dream complete — merged: 0, pruned: 0, conflicts resolved: 0, skipped: 0, superseded: 1, synthesized: 1",
        ),
        (
            report.auto_summary_line("acme-api", 2, 5, 1),
            "[mem0-dream --auto] project=acme-api  merged=2  pruned=5  conflicts_skipped=1",
        ),
        (
            report.reminder_text(3),
            "mem0-dream detected 3 contradictions requiring manual review. "
            "Run /mem0:dream (or mem0-dream in a terminal) to resolve them interactively.",
        ),
        (
            report.reminder_text(1),
            "mem0-dream detected 1 contradiction requiring manual review. "
            "Run /mem0:dream (or mem0-dream in a terminal) to resolve it interactively.",
        ),
        (report.proposed_line(plan(conflicts=(CONFLICT,))), "Proposed: 0 merges, 0 prunes, 1 conflict. Apply? [Y/n]"),
        (report.AUTO_LOCK_BUSY, "[mem0-dream --auto] Another run in progress — skipping."),
        (report.proposed_line(plan()), "Proposed: 0 merges, 0 prunes, 0 conflicts. Apply? [Y/n]"),
    ],
)
def test_messages(actual, expected):
    assert actual == expected


class _TerminalText(io.StringIO):
    """Text written to what claims to be a terminal (rich then styles it)."""

    def isatty(self) -> bool:
        return True


def test_on_a_terminal_the_report_is_styled_by_role_with_the_same_characters(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    lookalike = MergeAction(
        ids=("m1", "m2"),
        type="decision",
        merged_text="see [mem0:zz] then Apply? [Y/n]",
        confidence=None,
        similarity=1.0,
    )
    the_plan = plan(merges=(lookalike,), conflicts=(CONFLICT,), prunes=(PRUNE,))
    shown = _TerminalText()
    Terminal(io.StringIO(), shown, io.StringIO(), colour=True).report(
        report.report_pieces(the_plan), ends_with_prompt=True
    )
    assert ANSI.sub("", shown.getvalue()) == report.render_report(the_plan) + " "
    styled = re.findall(r"\x1b\[([0-9;]+)m([^\x1b]*)\x1b\[0m", shown.getvalue())
    assert styled == [
        ("1", "## dream — consolidation report"),
        ("1;36", "Merges (1):"),
        ("2", "[mem0:m1]"),
        ("2", "[mem0:m2]"),
        ("1;36", "Conflicts (1):"),
        ("2", "[mem0:c1]"),
        ("2", "[mem0:c2]"),
        ("1;33", "[A/B/skip]"),
        ("1;36", "Prune (1):"),
        ("2", "[mem0:p1]"),
        ("1;33", "Apply? [Y/n]"),
    ]


def test_piped_the_report_is_its_plain_text():
    the_plan = plan(merges=(MERGE,), conflicts=(CONFLICT,))
    shown = io.StringIO()
    Terminal(io.StringIO(), shown, io.StringIO(), colour=False).report(
        report.report_pieces(the_plan), ends_with_prompt=False
    )
    assert shown.getvalue() == report.render_report(the_plan) + "\n"


@pytest.mark.parametrize("count", [1, 2, 12])
def test_the_reminder_is_recognised_in_this_wording_and_the_earlier_one(count):
    """Reminders an earlier version (or the dream skill's fallback) wrote, `contradiction(s)` and
    `/mem0:dream` alone, are still the reminder, with their count."""
    for text in (report.reminder_text(count), earlier_reminder_text(count)):
        assert report.is_reminder_text(text) and report.reminder_count(text) == count
    assert not report.is_reminder_text(report.reminder_text(count) + " Also: use Redis.")
    assert report.reminder_count("Remember to review contradictions") == 1
