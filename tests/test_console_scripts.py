"""Each installed console script, run as a real process: the smoke tests behind `run_cli`, which
runs the same `main(argv)` in the test process (tests/conftest.py). What they add: the entry
points of pyproject.toml exist and start, and a process's own stdin, stdout, exit code and
store handling agree with the in-process runs.
"""

from __future__ import annotations

import importlib.metadata
import json
import re

import pytest
from command_parsers import every_parser
from conftest import ENTRY_POINTS, entry_point, run_in_process, run_process


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_every_script_starts_and_shows_its_usage(name):
    done = run_process(name, "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: {name}"), done.stdout[:300]
    assert done.stderr == ""
    assert run_in_process(name, "--help").stdout == done.stdout  # the same main(argv) answers


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_help_speaks_of_what_a_user_does_not_of_internal_steps(name):
    """`--help` of every command and subcommand names no step of dream's pipeline by number
    ("steps 1-3"): a user knows the modes, not the code's order of work."""
    for shown, parser in every_parser(name):
        text = parser.format_help()
        assert not re.search(r"\bsteps? [0-9]", text, re.IGNORECASE), f"{shown} --help: {text}"


def test_entry_points_are_the_mains_of_the_commands():
    """run_cli's table is the installed one (pyproject.toml [project.scripts])."""
    installed = importlib.metadata.distribution("mem0-dream-plugin").entry_points
    assert {ep.name: ep.value for ep in installed if ep.group == "console_scripts"} == ENTRY_POINTS
    for name in ENTRY_POINTS:
        assert callable(entry_point(name)), name


def test_a_memory_added_by_one_process_is_listed_searched_and_forgotten_by_others(mem0_home):
    added = run_process("mem0-memories", "add", "Deploy the storefront with terraform", "--type", "decision")
    assert added.returncode == 0 and added.stdout.startswith("ADD "), added.stderr
    memory_id = added.stdout.split()[1]

    listed = run_process("mem0-memories", "list", "--json")
    assert [r["id"] for r in json.loads(listed.stdout)["results"]] == [memory_id]
    assert run_in_process("mem0-memories", "list", "--json").stdout == listed.stdout

    kept = run_process("mem0-forget", "terraform", input="cancel\n")
    assert kept.returncode == 0, kept.stderr
    assert run_in_process("mem0-forget", "terraform", input="cancel\n").stdout == kept.stdout

    forgotten = run_process("mem0-forget", "--ids", memory_id, "--yes")
    assert forgotten.returncode == 0, forgotten.stderr
    assert json.loads(run_process("mem0-memories", "list", "--json").stdout)["count"] == 0


def test_health_and_dream_in_a_process_of_their_own(mem0_home, tmp_path):
    assert run_process("mem0-memories", "add", "Use pnpm, not npm").returncode == 0
    health = run_process("mem0-health", "--json", cwd=str(tmp_path))
    assert health.returncode == 0, health.stdout + health.stderr
    assert isinstance(json.loads(health.stdout), dict)

    plan = run_process("mem0-dream", "--plan", cwd=str(tmp_path))
    assert plan.returncode == 0, plan.stderr
    assert plan.stdout == run_in_process("mem0-dream", "--plan", cwd=str(tmp_path)).stdout


def test_a_usage_error_is_exit_2_in_a_process_and_in_process():
    done = run_process("mem0-dream", "--no-such-flag")
    assert done.returncode == 2 and done.stdout == ""
    same = run_in_process("mem0-dream", "--no-such-flag")
    assert (same.returncode, same.stdout, same.stderr) == (done.returncode, done.stdout, done.stderr)


def test_mem0_dream_ends_without_teardown_yet_keeps_its_output_and_exit_code(mem0_home, tmp_path):
    # The script ends with os._exit (cli/common.exit_without_teardown): its output to a pipe and
    # its exit code, an error's included, are still those of main(argv).
    for text in ("Deploy the storefront with terraform", "Deploy the storefront with Terraform"):
        assert run_in_process("mem0-memories", "add", text, "--type", "decision").returncode == 0
    args = ("--plan", "--json", "--now", "2026-11-29T12:00:00+00:00")
    plan = run_process("mem0-dream", *args, cwd=str(tmp_path))
    assert plan.returncode == 0, plan.stderr
    assert plan.stdout.endswith("}\n") and json.loads(plan.stdout)["merges"]
    assert plan.stdout == run_in_process("mem0-dream", *args, cwd=str(tmp_path)).stdout

    missing = str(tmp_path / "no-such-dir" / "store.sqlite3")
    failed = run_process("mem0-dream", "--plan", "--store", f"sqlite:///{missing}", cwd=str(tmp_path))
    same = run_in_process("mem0-dream", "--plan", "--store", f"sqlite:///{missing}", cwd=str(tmp_path))
    assert failed.returncode == same.returncode != 0
    assert failed.stderr == same.stderr and failed.stderr.startswith("mem0-dream: error:")
