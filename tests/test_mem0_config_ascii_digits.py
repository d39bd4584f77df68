"""Retention days in `mem0.md` (docs/identity.md, "mem0.md") are ASCII digits only.

`\\d`, `str.isdigit()` and `int()` also take Arabic-Indic, full-width and other Unicode
digits; a Retention line written with them is malformed and skipped silently, like any
other malformed line, in the package, in `scripts/parse_mem0_config.py` and in dream.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from mem0_plugin.mem0_config import load_retention_policies, parse_retention

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "parse_mem0_config.py"

# (days as written, what they look like in ASCII)
NON_ASCII_DAYS = [
    ("\u0669\u0660", "90, Arabic-Indic"),
    ("\u06f9\u06f0", "90, extended Arabic-Indic"),
    ("\uff19\uff10", "90, full-width"),
    ("\u096f\u0966", "90, Devanagari"),
    ("\u09ef\u09e6", "90, Bengali"),
    ("\u0e59\u0e50", "90, Thai"),
    ("\U0001d7d7\U0001d7ce", "90, mathematical bold"),
    ("\u0663", "3, Arabic-Indic"),
    ("\u0660", "0, Arabic-Indic"),
    ("1\u0660", "10, ASCII and Arabic-Indic mixed"),
    ("\u0661" + "0" * 3, "1000, Arabic-Indic then ASCII"),
    ("\u00b2", "superscript two (isdigit, not a decimal)"),
    ("\u2167", "Roman numeral eight"),
]
DAY_IDS = [label for _, label in NON_ASCII_DAYS]


@pytest.mark.parametrize("days, label", NON_ASCII_DAYS, ids=DAY_IDS)
def test_non_ascii_days_are_skipped_like_any_malformed_line(days, label):
    content = f"## Retention\nsession_state: {days}d\ndecision: forever\nbug_fix: 7d\n"
    assert parse_retention(content) == {"decision": None, "bug_fix": 7}
    # exactly what an ordinary malformed value gives
    assert parse_retention(content) == parse_retention(content.replace(f"{days}d", "tend"))


@pytest.mark.parametrize("days, label", NON_ASCII_DAYS, ids=DAY_IDS)
@pytest.mark.parametrize("spacing", ["{}d", "{} d", "  {}D  ", "{}d  # a comment"])
def test_non_ascii_days_are_skipped_in_every_spelling_of_a_line(days, label, spacing):
    assert parse_retention("## Retention\na: " + spacing.format(days) + "\n") == {}


@pytest.mark.parametrize(
    "line, expected",
    [
        ("a: 90d", {"a": 90}),
        ("a: 0d", {"a": 0}),
        ("a: 007d", {"a": 7}),
        ("a: 36500d", {"a": 36500}),
        ("a: 36501d", {}),
        ("a: forever", {"a": None}),
    ],
)
def test_ascii_days_still_parse(line, expected):
    assert parse_retention(f"## Retention\n{line}\n") == expected


@pytest.mark.parametrize("days, label", NON_ASCII_DAYS, ids=DAY_IDS)
def test_load_retention_policies_skips_non_ascii_days(tmp_path, days, label):
    (tmp_path / ".git").mkdir()
    (tmp_path / "mem0.md").write_text(f"## Retention\nsession_state: {days}d\nok: 5d\n", encoding="utf-8")
    assert load_retention_policies(str(tmp_path)) == {"ok": 5}
    (tmp_path / "mem0.md").write_text(f"## Retention\nsession_state: {days}d\n", encoding="utf-8")
    assert load_retention_policies(str(tmp_path)) == {}


@pytest.mark.parametrize(
    "content, expected",
    [
        ("## Retention\nsession_state: \u0669\u0660d\nok: 5d\n", {"ok": 5}),
        ("## Retention\nsession_state: \uff19\uff10d\n", {}),
        ("## Retention\na: 1\u0660d\nb: 10d\n", {"b": 10}),
    ],
)
def test_the_script_with_a_bare_python_skips_non_ascii_days(tmp_path, content, expected):
    (tmp_path / ".git").mkdir()
    (tmp_path / "mem0.md").write_text(content, encoding="utf-8")
    done = subprocess.run(
        ["/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "python3", "-B", str(SCRIPT), str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout) == expected


@pytest.mark.parametrize(
    "retention, policy, source",
    [
        ("session_state: \u0663d", {"session_state": 90, "compact_summary": 90}, "default"),
        ("session_state: \uff13d", {"session_state": 90, "compact_summary": 90}, "default"),
        ("session_state: \u0663d\ndecision: 30d", {"decision": 30}, "mem0.md"),
        ("session_state: 3d", {"session_state": 3}, "mem0.md"),
    ],
)
def test_dream_treats_non_ascii_days_as_a_skipped_line(run_cli, tmp_path, retention, policy, source):
    """Only malformed lines → the built-in defaults apply; otherwise the valid lines alone."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "mem0.md").write_text(f"## Retention\n{retention}\n", encoding="utf-8")
    assert (
        run_cli("mem0-memories", "add", "Old session notes", "--type", "session_state", cwd=str(tmp_path)).returncode
        == 0
    )
    done = run_cli("mem0-dream", "--plan", "--json", cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert (plan["policy"], plan["policy_source"]) == (policy, source)
