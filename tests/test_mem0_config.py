"""`mem0.md` parsing (docs/identity.md, "mem0.md") in the package and in `scripts/parse_mem0_config.py`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from mem0_plugin.mem0_config import (
    find_mem0_config,
    load_retention_policies,
    parse_categories,
    parse_identity,
    parse_instructions,
    parse_retention,
)

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "parse_mem0_config.py"

RETENTION = [
    ("## Retention\nsession_state: 90d\ncompact_summary: 30d\n", {"session_state": 90, "compact_summary": 30}),
    ("## Retention\ndecision: forever\n", {"decision": None}),
    ("## Retention\ndecision: FOREVER\nbug_fix: 7D\n", {"decision": None, "bug_fix": 7}),
    ("## retention\na: 1d\n", {"a": 1}),
    ("## RETENTION policies\na: 1d\n", {"a": 1}),
    ("##\tRetention\na: 1d\n", {"a": 1}),
    ("  session_state :  90 d  \n", {}),  # no section at all
    ("## Retention\n  session_state :  90 d  \n", {"session_state": 90}),
    # comments: whole line or trailing
    ("## Retention\n# keep summaries briefly\ncompact_summary: 14d\n", {"compact_summary": 14}),
    ("## Retention\ndecision: 365d  # a year\nconvention: forever # always\n", {"decision": 365, "convention": None}),
    ("## Retention\n# decision: 5d\n", {}),
    # the section ends at the next "## " heading (a deeper heading does not end it)
    ("## Retention\na: 1d\n## Categories\nb: 2d\n", {"a": 1}),
    ("## Retention\na: 1d\n### Notes\nb: 2d\n## Next\nc: 3d\n", {"a": 1, "b": 2}),
    ("# Title\nx: 9d\n## Identity\nproject_id: p\n## Retention\na: 1d\n", {"a": 1}),
    ("## Retention\n\n\na: 1d\n\n", {"a": 1}),
    ("## Retention", {}),
    ("## Retention\r\na: 4d\r\nb: forever\r\n", {"a": 4, "b": None}),
    # malformed lines are skipped silently, the good ones kept
    ("## Retention\na: 10\nb: tend\nc 10d\n: 5d\nd: -5d\ne: 5 days\nf: 1.5d\ng: d\nh: 3d\n", {"h": 3}),
    ("## Retention\n- session_state: 90d\n* decision: forever\n", {}),
    ("## Retention\nwe keep things: 5d\nok: 2d\n", {"ok": 2}),
    ("## Retention\na: 1d\na: 2d\n", {"a": 2}),
    ("## Retention\nzero: 0d\n", {"zero": 0}),
    # huge numbers are skipped, not crashed on
    ("## Retention\na: 99999999999999999999999999999999999999d\nb: 36500d\nc: 36501d\n", {"b": 36500}),
    ("## Retention\na: " + "9" * 5000 + "d\nb: 1d\n", {"b": 1}),
    # junk
    ("\x00\x01\x02\xff\xfe garbage \u202e\x1b[31m", {}),
    ("## Retention\n\x00\x1b[2J: 5d\nok: 5d\n", {"ok": 5}),
    ("", {}),
    ("## Retention\n" + "x" * 100_000 + "\n", {}),
    ("no headings at all\njust: 5d\n", {}),
]


@pytest.mark.parametrize("content, expected", RETENTION, ids=lambda v: repr(v)[:50] if isinstance(v, str) else "")
def test_parse_retention(content, expected):
    assert parse_retention(content) == expected


@pytest.mark.parametrize("value", [None, 5, b"## Retention\na: 1d\n", ["## Retention"]])
def test_parse_retention_of_a_non_string_is_empty(value):
    assert parse_retention(value) == {}


def test_parse_retention_of_many_headings_is_fast():
    content = "## x\n" * 200_000 + "## Retention\na: 1d\n"
    assert parse_retention(content) == {"a": 1}


def test_identity_and_categories_sections():
    content = "## Identity\nproject_id: acme-api # the slug\n\n## Categories\n- infra_note\ndeploy_rule: how we ship\n"
    assert parse_identity(content) == "acme-api"
    assert parse_categories(content) == ["infra_note", "deploy_rule"]
    assert parse_identity("## Retention\na: 1d\n") is None


def test_find_mem0_config(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    project = tmp_path / "proj"
    (project / "src" / "deep").mkdir(parents=True)
    assert find_mem0_config(str(project)) is None
    (project / "mem0.md").write_text("## Retention\na: 1d\n")
    assert find_mem0_config(str(project)) == str(project / "mem0.md")
    # below the project root, the root is the git top level
    assert find_mem0_config(str(project / "src" / "deep")) is None
    (project / ".git").mkdir()
    assert find_mem0_config(str(project / "src" / "deep")) == str(project / "mem0.md")
    monkeypatch.chdir(project)
    assert find_mem0_config() == str(project / "mem0.md")


def test_find_mem0_config_ignores_a_directory_named_mem0_md(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "mem0.md").mkdir()
    assert find_mem0_config(str(tmp_path)) is None
    assert load_retention_policies(str(tmp_path)) == {}


def test_load_retention_policies(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    assert load_retention_policies(str(tmp_path)) == {}
    (tmp_path / "mem0.md").write_text("# Memory\n\n## Instructions\nbe nice\n")
    assert load_retention_policies(str(tmp_path)) == {}
    (tmp_path / "mem0.md").write_text("## Retention\nsession_state: 30d\ndecision: forever\n")
    assert load_retention_policies(str(tmp_path)) == {"session_state": 30, "decision": None}
    monkeypatch.chdir(tmp_path)
    assert load_retention_policies() == {"session_state": 30, "decision": None}


def test_load_retention_policies_of_binary_and_huge_files(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "mem0.md").write_bytes(b"\xff\xfe\x00\n## Retention\n\x80\x81: 5d\nok: 5d\n")
    assert load_retention_policies(str(tmp_path)) == {"ok": 5}
    (tmp_path / "mem0.md").write_bytes(b"## Retention\nok: 5d\n" + b"z" * 3_000_000 + b"\nlate: 1d\n")
    assert load_retention_policies(str(tmp_path)) == {"ok": 5}


# -- the script, with a bare system python3 and no package installed ---------------------


def bare_python(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """`/usr/bin/env python3 ...` with an empty environment: not the venv, no PYTHONPATH."""
    return subprocess.run(
        ["/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "python3", "-B", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_the_system_python_has_no_package():
    done = bare_python("-c", "import sys; print(sys.prefix); import mem0_plugin", cwd=Path("/"))
    assert done.returncode != 0 and "ModuleNotFoundError" in done.stderr
    assert ".venv" not in done.stdout


@pytest.mark.parametrize(
    "content, expected",
    [
        ("## Retention\nsession_state: 90d\ndecision: forever  # keep\n", {"session_state": 90, "decision": None}),
        ("# nothing here\n", {}),
        ("\x00\x01 binary \u202e junk", {}),
        (None, {}),  # no mem0.md
    ],
)
def test_script_prints_the_json_and_exits_0(tmp_path, content, expected):
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    if content is not None:
        (project / "mem0.md").write_text(content, encoding="utf-8")
    done = bare_python(str(SCRIPT), str(project), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert json.loads(done.stdout) == expected
    assert done.stdout.count("\n") == 1


def test_script_defaults_to_the_current_directory(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "mem0.md").write_text("## Retention\ncompact_summary: 45d\n")
    done = bare_python(str(SCRIPT), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"compact_summary": 45}


def test_script_with_a_missing_directory_prints_empty(tmp_path):
    done = bare_python(str(SCRIPT), str(tmp_path / "nope"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {}


def test_script_exposes_the_three_functions(tmp_path):
    code = (
        "import importlib.util, json, sys;"
        f"spec = importlib.util.spec_from_file_location('p', {str(SCRIPT)!r});"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m);"
        "print(json.dumps([m.parse_retention('## Retention\\na: 2d\\n'), m.find_mem0_config(sys.argv[1]),"
        " m.load_retention_policies(sys.argv[1])]))"
    )
    (tmp_path / ".git").mkdir()
    (tmp_path / "mem0.md").write_text("## Retention\nb: forever\n")
    done = bare_python("-c", code, str(tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [{"a": 2}, str(tmp_path / "mem0.md"), {"b": None}]


def test_the_documented_example_parses_as_it_says():
    page = (Path(__file__).resolve().parents[1] / "docs" / "identity.md").read_text(encoding="utf-8")
    example = page.split("## `mem0.md`", 1)[1].split("```markdown\n", 1)[1].split("```", 1)[0]
    assert parse_identity(example) == "acme-api"
    assert parse_retention(example) == {"session_state": 30, "compact_summary": 90, "decision": None}
    assert parse_categories(example) == ["deployment_notes", "incident_review"]
    assert parse_instructions(example).startswith("Remember architecture decisions")
