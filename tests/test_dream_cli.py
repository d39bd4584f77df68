"""`mem0-dream` end to end through the installed command (docs/identity.md, docs/records.md, docs/dream.md): the report,
the prompts, apply and its effects, plan/apply for agents, conditional writes, `--auto`
and its reminder and lock, `--demo`, mem0.md, bad input, and a real pseudo-terminal.

Crash recovery and the ten simultaneous `--auto` runs are in test_dream_apply.py.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import command_path
from dream_support import (
    ANSI,
    APPLY,
    APPLY_HINT,
    APPLY_REPORT,
    AUTO_BUSY,
    BASE,
    BRANCH,
    C1,
    C2,
    CANCELLED,
    CONFLICT_HINT,
    DEPLOY_PAIR,
    ECS,
    MERGE_LINE,
    NO_MEMORIES,
    NO_PROPOSALS,
    NOW,
    PG_NEW,
    PG_OLD,
    PLAN_REPORT,
    PRUNE_LINE,
    REDIS_DONT,
    REDIS_USE,
    REMINDER_SOURCE,
    REPORT,
    RUFF,
    SESSION,
    VERCEL,
    active_reminders,
    auto_summary,
    dream_made,
    events,
    export,
    export_text,
    make_project,
    record,
    reminder_text,
    summary,
    uid,
    update_text,
    write_jsonl,
)


@pytest.fixture
def project(tmp_path) -> Path:
    return make_project(tmp_path / "project")


@pytest.fixture
def dream(run_cli, project):
    """Run `mem0-dream ARGS` in the project directory with the clock at NOW."""

    def run(
        *args: str, input: str | None = None, env: dict | None = None, cwd: Path | None = None, timeout: float = 60
    ):
        return run_cli(
            "mem0-dream", *args, "--now", NOW, input=input, env=env, cwd=str(cwd or project), timeout=timeout
        )

    return run


@pytest.fixture
def seed(run_cli, tmp_path):
    """Import records (the docs/records.md shape) with `mem0-memories import`."""
    count = iter(range(1000))

    def do(records: list[dict]) -> None:
        path = write_jsonl(tmp_path / f"seed{next(count)}.jsonl", records)
        done = run_cli("mem0-memories", "import", str(path))
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"Imported {len(records)} memories"), done.stdout

    return do


@pytest.fixture
def base(seed):
    seed(BASE)


def ok(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    return done.stdout


def one_error_line(done: subprocess.CompletedProcess, code: int | None = None) -> str:
    """A refused command: non-zero exit, exactly one line on stderr, no traceback."""
    assert done.returncode != 0, done.stdout
    if code is not None:
        assert done.returncode == code, (done.returncode, done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("mem0-dream: error: "), lines[0]
    assert "Traceback" not in done.stderr
    return lines[0]


# -- nothing to do ------------------------------------------------------------------


@pytest.mark.parametrize("mode", [(), ("--plan",), ("--auto",)])
def test_zero_memories(dream, mode):
    done = dream(*mode, input="")
    assert ok(done) == NO_MEMORIES + "\n"
    assert done.stderr == ""


def test_memories_of_another_project_or_user_do_not_count(backend, dream, seed, run_cli):
    seed(
        [
            record(
                uid(1), "Use PostgreSQL for auth", "decision", 0.8, "2026-10-01T10:00:00+00:00", app_id="other-project"
            ),
            record(
                uid(2), "Auth DB is PostgreSQL", "decision", 0.9, "2026-11-01T10:00:00+00:00", app_id="other-project"
            ),
        ]
    )
    assert ok(dream(input="")) == NO_MEMORIES + "\n"
    assert (
        ok(dream(input="", env={"MEM0_USER_ID": "bob", "MEM0_PROJECT_ID": "other-project"}))
        == "No memories found for project other-project. Nothing to consolidate.\n"
    )


def test_no_proposals_prints_one_line_and_asks_nothing(dream, seed):
    seed([BASE[-1], record(uid(9), "The API listens on port 8080", "environmental", 0.7, "2026-11-20T10:00:00+00:00")])
    assert ok(dream(input="y\n")) == NO_PROPOSALS + "\n"
    assert ok(dream("--plan")) == NO_PROPOSALS + "\n"


def test_memories_that_take_no_part_are_left_alone(dream, seed, run_cli):
    """Pinned, immutable, exclude_from_dream and non-active memories: no action, even as exact duplicates."""
    old = "2026-01-01T10:00:00+00:00"
    seed(
        [
            record(uid(1), "Use PostgreSQL for auth", "decision", 0.1, old, metadata={"pinned": True}),
            record(uid(2), "Use PostgreSQL for auth", "decision", 0.1, old, immutable=True),
            record(uid(3), "Use PostgreSQL for auth", "decision", 0.1, old, metadata={"exclude_from_dream": True}),
            record(uid(4), "Session state: old", "session_state", 0.1, old, metadata={"pinned": True}),
            record(
                uid(5),
                "Use PostgreSQL for auth",
                "decision",
                0.9,
                old,
                lifecycle_state="superseded",
                replacement_memory_id=uid(6),
            ),
            record(uid(6), "Use MySQL for auth", "decision", 0.9, old),
        ]
    )
    before = export_text(run_cli)
    assert ok(dream(input="y\n")) == NO_PROPOSALS + "\n"
    assert ok(dream("--auto")) == auto_summary(0, 0, 0) + "\n"
    assert export_text(run_cli) == before


# -- the report ---------------------------------------------------------------------


def test_full_report_piped_is_plain_text(dream, base):
    plan = ok(dream("--plan"))
    assert plan == PLAN_REPORT + "\n"
    done = dream(input="")
    assert ok(done) == REPORT + "\n" + C1 + "\n" + C2 + "\n" + APPLY + "\n" + CANCELLED + "\n"
    assert "\x1b" not in done.stdout and "\x1b" not in done.stderr
    assert done.stderr == ""


def test_report_neutralises_control_characters_in_memory_text(dream, seed):
    seed(
        [
            record(uid(1), "Use \x1b[31mPostgreSQL\x1b[0m for auth\x07", "decision", 0.8, "2026-10-01T10:00:00+00:00"),
            record(uid(2), "Use \x1b[31mPostgreSQL\x1b[0m for auth", "decision", 0.9, "2026-11-01T10:00:00+00:00"),
        ]
    )
    out = ok(dream("--plan"))
    assert "Merges (1):" in out
    assert "\x1b" not in out and "\x07" not in out
    assert all(line.isprintable() for line in out.splitlines())


def test_merge_preview_is_the_first_100_characters(dream, seed):
    text = "The release checklist for the payments service " + " ".join(f"step{i}" for i in range(40))
    seed(
        [
            record(uid(1), text, "convention", 0.8, "2026-10-01T10:00:00+00:00"),
            record(uid(2), text + ".", "convention", 0.9, "2026-11-01T10:00:00+00:00"),
        ]
    )
    out = ok(dream("--plan"))
    line = next(line for line in out.splitlines() if line.startswith("  [mem0:"))
    preview = line.split(" → ", 1)[1]
    assert preview.startswith('"') and preview.endswith('"')
    assert len(preview) == 102
    assert text.startswith(preview[1:-1])


# -- the conversation ---------------------------------------------------------------


def _superseded(memories: dict, loser: str, winner: str) -> None:
    assert memories[loser]["lifecycle_state"] == "superseded"
    assert memories[loser]["replacement_memory_id"] == winner
    assert memories[winner]["lifecycle_state"] == "active"


@pytest.mark.parametrize(
    "answers, prompts, superseded, counts",
    [
        ("A\nB\n\n", [C1, C2, APPLY], {REDIS_USE: REDIS_DONT, VERCEL: ECS}, (1, 1, 2, 0)),
        ("a\nb\ny\n", [C1, C2, APPLY], {REDIS_USE: REDIS_DONT, VERCEL: ECS}, (1, 1, 2, 0)),
        ("b\n\nY\n", [C1, C2, APPLY], {REDIS_DONT: REDIS_USE}, (1, 1, 1, 1)),
        ("skip\nSKIP\nyes\n", [C1, C2, APPLY], {}, (1, 1, 0, 2)),
        ("Skip\n a \nYES\n", [C1, C2, APPLY], {ECS: VERCEL}, (1, 1, 1, 1)),
        (
            "garbage\nab\nb\n  B  \nYes\n",
            [C1, CONFLICT_HINT, C1, CONFLICT_HINT, C1, C2, APPLY],
            {REDIS_DONT: REDIS_USE, VERCEL: ECS},
            (1, 1, 2, 0),
        ),
        (
            "Y\nY\nA\nb\ny\n",
            [C1, CONFLICT_HINT, C1, CONFLICT_HINT, C1, C2, APPLY],
            {REDIS_USE: REDIS_DONT, VERCEL: ECS},
            (1, 1, 2, 0),
        ),
        ("\n\nmaybe\nnope\n\n", [C1, C2, APPLY, APPLY_HINT, APPLY, APPLY_HINT, APPLY], {}, (1, 1, 0, 2)),
    ],
)
def test_interactive_answers(dream, base, run_cli, answers, prompts, superseded, counts):
    done = dream(input=answers)
    assert ok(done) == REPORT + "\n" + "".join(prompts) + summary(*counts) + "\n"
    assert done.stderr == ""
    after = export(run_cli)
    for loser, winner in superseded.items():
        _superseded(after, loser, winner)
    untouched = {REDIS_USE, REDIS_DONT, ECS, VERCEL} - set(superseded)
    original = {r["id"]: r for r in BASE}
    for memory_id in untouched:
        assert after[memory_id]["lifecycle_state"] == "active"
        assert after[memory_id]["updated_at"] == original[memory_id]["updated_at"]


def test_conflicts_are_asked_first_and_apply_once_at_the_end(dream, base):
    """The report asks nothing when there are conflicts: each conflict is asked, then Apply? [Y/n]
    once; a yes typed at a conflict's question is answered with the valid answers."""
    out = ok(dream(input="y\na\nb\n\n"))
    report, asked = out.split("\n" + C1, 1)
    assert report.endswith("\nProposed: 1 merge, 1 prune, 2 conflicts.")
    assert out.count("Apply?") == 1
    assert asked == CONFLICT_HINT + C1 + C2 + APPLY + summary(1, 1, 2, 0) + "\n"


@pytest.mark.parametrize("no", ["n", "no", "N", "NO", "No", " n "])
def test_no_cancels_and_changes_nothing(dream, base, run_cli, no):
    before = export_text(run_cli)
    done = dream(input=f"a\nb\n{no}\n")
    assert ok(done) == REPORT + "\n" + C1 + C2 + APPLY + CANCELLED + "\n"
    assert export_text(run_cli) == before


@pytest.mark.parametrize(
    "answers, shown",
    [
        ("", C1 + "\n" + C2 + "\n" + APPLY + "\n"),  # end of input everywhere: skip, skip, no
        ("a\n", C1 + C2 + "\n" + APPLY + "\n"),  # end of input at the second conflict
        ("a\nb\n", C1 + C2 + APPLY + "\n"),  # end of input at Apply?: no
        ("a\nb\nwhat\n", C1 + C2 + APPLY + APPLY_HINT + APPLY + "\n"),  # garbage: the hint, again, end of input
    ],
)
def test_end_of_input_is_no(dream, base, run_cli, answers, shown):
    before = export_text(run_cli)
    assert ok(dream(input=answers)) == REPORT + "\n" + shown + CANCELLED + "\n"
    assert export_text(run_cli) == before


NO_CONFLICT_REPORT = "\n".join(
    [
        "## dream — consolidation report",
        "",
        "Merges (1):",
        MERGE_LINE,
        "",
        "Prune (1):",
        PRUNE_LINE,
        "",
        "Proposed: 1 merge, 1 prune, 0 conflicts. Apply? [Y/n]",
    ]
)


@pytest.mark.parametrize(
    "answers, shown, applied",
    [
        ("\n", "", True),
        ("y\n", "", True),
        ("what\nyes\n", APPLY_HINT + APPLY, True),
        ("n\n", "", False),
        ("", "\n", False),
    ],
)
def test_without_conflicts_the_report_ends_with_the_only_prompt(dream, seed, run_cli, answers, shown, applied):
    seed([r for r in BASE if r["id"] in (PG_OLD, PG_NEW, SESSION, RUFF)])
    before = export_text(run_cli)
    out = ok(dream(input=answers))
    tail = summary(1, 1, 0, 0) if applied else CANCELLED
    assert out == NO_CONFLICT_REPORT + " " + shown + tail + "\n"
    assert out.count("Apply?") == 1 + shown.count("Apply?")
    assert (export_text(run_cli) != before) is applied


def test_only_conflicts(backend, dream, seed):
    seed([r for r in BASE if r["id"] in (ECS, VERCEL)])
    expected_report = "\n".join(
        [
            "## dream — consolidation report",
            "",
            "Conflicts (1):",
            f"  {DEPLOY_PAIR}",
            '      A: "Deploy the storefront to Vercel"',
            '      B: "Deploy the storefront to ECS"',
            "",
            "Proposed: 0 merges, 0 prunes, 1 conflict.",
        ]
    )
    assert ok(dream(input="b\n\n")) == (
        expected_report + "\n" + f"Conflict 1/1: {DEPLOY_PAIR}: " + APPLY + summary(0, 0, 1, 0) + "\n"
    )


# -- what apply does ----------------------------------------------------------------


def test_apply_effects_history_and_restore(backend, dream, base, run_cli):
    original = export(run_cli)
    assert ok(dream(input="a\nb\ny\n")) == REPORT + "\n" + C1 + C2 + APPLY + summary(1, 1, 2, 0) + "\n"
    after = export(run_cli)

    made = dream_made(after)
    assert len(made) == 1
    [(new_id, new)] = made.items()
    assert new_id not in original
    assert new["memory"] == "Auth DB is PostgreSQL"
    assert new["metadata"] == {"type": "decision", "branch": BRANCH, "confidence": 0.9, "source": "mem0-dream"}
    assert new["app_id"] == "acme-api" and new["user_id"] == "alice"
    assert new["lifecycle_state"] == "active" and new["replacement_memory_id"] is None
    assert sorted(new["source_memory_ids"]) == sorted([PG_OLD, PG_NEW])
    for source in (PG_OLD, PG_NEW):
        assert after[source]["lifecycle_state"] == "merged"
        assert after[source]["replacement_memory_id"] == new_id
        assert after[source]["memory"] == original[source]["memory"]
        assert events(run_cli, source) == ["IMPORT", "MERGE"]
    assert events(run_cli, new_id) == ["ADD"]

    _superseded(after, REDIS_USE, REDIS_DONT)  # A: the newer "Don't use Redis" wins
    _superseded(after, VERCEL, ECS)  # B: the older ECS wins
    assert events(run_cli, REDIS_USE) == ["IMPORT", "SUPERSEDE"]
    assert events(run_cli, VERCEL) == ["IMPORT", "SUPERSEDE"]
    assert events(run_cli, REDIS_DONT) == ["IMPORT"]

    assert SESSION not in after
    assert events(run_cli, SESSION) == ["IMPORT", "PRUNE"]
    history = run_cli("mem0-memories", "history", SESSION)
    assert "PRUNE" in ok(history) and "mem0-dream" in history.stdout
    assert after[RUFF] == original[RUFF]
    assert set(after) == set(original) - {SESSION} | {new_id}

    assert ok(run_cli("mem0-memories", "restore", SESSION)) == f"Restored {SESSION} (active).\n"
    restored = export(run_cli)[SESSION]
    assert restored["lifecycle_state"] == "active"
    assert restored["memory"] == original[SESSION]["memory"]
    assert restored["created_at"] == original[SESSION]["created_at"]

    # the store is consolidated: the next run proposes the restored prune only
    rerun = ok(dream("--plan"))
    assert (
        rerun
        == "\n".join(
            [
                "## dream — consolidation report",
                "",
                "Prune (1):",
                PRUNE_LINE,
                "",
                "Proposed: 0 merges, 1 prune, 0 conflicts.",
            ]
        )
        + "\n"
    )


def test_merge_of_three_with_unknown_confidence(backend, dream, seed, run_cli):
    seed(
        [
            record(uid(1), "Run the API tests with pytest -q", "convention", None, "2026-10-01T10:00:00+00:00"),
            record(uid(2), "Run the API tests with pytest -q", "convention", 0.4, "2026-10-02T10:00:00+00:00"),
            record(uid(3), "Run the API tests with pytest -q", "convention", "high", "2026-10-03T10:00:00+00:00"),
        ]
    )
    out = ok(dream(input="\n"))
    assert out.startswith(
        "## dream — consolidation report\n\nMerges (1):\n"
        f'  [mem0:{uid(1)}] + [mem0:{uid(2)}] + [mem0:{uid(3)}] → "Run the API tests with pytest -q"\n'
    )
    assert out.endswith(" " + summary(1, 0, 0, 0) + "\n")
    [new] = dream_made(export(run_cli)).values()
    assert new["metadata"]["confidence"] == 0.4  # the highest known one
    assert sorted(new["source_memory_ids"]) == [uid(1), uid(2), uid(3)]


# -- plan / apply for agents ---------------------------------------------------------


def _plan(dream, tmp_path, name="plan.json") -> tuple[Path, dict]:
    path = tmp_path / name
    done = dream("--plan", "--json", "-o", str(path))
    assert ok(done) == "" and done.stderr == ""
    return path, json.loads(path.read_text(encoding="utf-8"))


def test_plan_json_shape(backend, dream, base, tmp_path):
    path, plan = _plan(dream, tmp_path)
    assert list(plan) == [
        "version",
        "user_id",
        "project_id",
        "generated_at",
        "policy",
        "policy_source",
        "memory_count",
        "merges",
        "conflicts",
        "prunes",
        "supersedes",
        "candidates",
        "fingerprints",
    ]
    assert plan["candidates"] == []  # lexical: no pair is put to a judge
    assert plan["version"] == 1 and plan["user_id"] == "alice" and plan["project_id"] == "acme-api"
    assert plan["generated_at"] == NOW
    assert plan["policy"] == {"compact_summary": 90, "session_state": 90}
    assert plan["policy_source"] == "default"
    assert plan["memory_count"] == 8
    assert [m["ids"] for m in plan["merges"]] == [[PG_OLD, PG_NEW]]
    assert plan["merges"][0]["merged_text"] == "Auth DB is PostgreSQL"
    assert plan["merges"][0]["type"] == "decision"
    assert [c["ids"] for c in plan["conflicts"]] == [[REDIS_DONT, REDIS_USE], [VERCEL, ECS]]
    assert [c["likely_winner"] for c in plan["conflicts"]] == [REDIS_DONT, VERCEL]
    assert plan["prunes"] == [{"id": SESSION, "type": "session_state", "age_days": 182, "reason": "retention"}]
    assert plan["supersedes"] == []
    assert set(plan["fingerprints"]) == {PG_OLD, PG_NEW, REDIS_DONT, REDIS_USE, VERCEL, ECS, SESSION}
    stdout = ok(dream("--plan", "--json"))
    assert stdout == path.read_text(encoding="utf-8")  # the same plan, on stdout


def test_apply_plan_with_resolve_and_edited_text(backend, dream, base, run_cli, tmp_path):
    path, plan = _plan(dream, tmp_path)
    plan["merges"][0]["merged_text"] = "Auth uses PostgreSQL (the auth DB)"
    path.write_text(json.dumps(plan), encoding="utf-8")
    done = dream("--apply", str(path), "--resolve", f"{REDIS_DONT}=B", "--yes")
    assert ok(done) == summary(1, 1, 1, 1) + "\n"
    after = export(run_cli)
    [new] = dream_made(after).values()
    assert new["memory"] == "Auth uses PostgreSQL (the auth DB)"
    assert after[PG_OLD]["replacement_memory_id"] == new["id"]
    _superseded(after, REDIS_DONT, REDIS_USE)
    assert after[ECS]["lifecycle_state"] == after[VERCEL]["lifecycle_state"] == "active"
    assert SESSION not in after
    # applying the same plan again changes nothing: every action is stale now
    again = dream("--apply", str(path), "--yes")
    assert ok(again).endswith(summary(0, 0, 0, 2) + "\n")
    assert export(run_cli) == after


@pytest.mark.parametrize(
    "resolve, loser, winner",
    [
        (f"{VERCEL}=a", ECS, VERCEL),
        (f"{ECS}=B", VERCEL, ECS),  # naming a conflict by its B id
        (f"{VERCEL[:8]}=skip", None, None),  # a unique prefix of the A id
    ],
)
def test_resolve_names_a_conflict(dream, base, run_cli, tmp_path, resolve, loser, winner):
    path, _ = _plan(dream, tmp_path)
    out = ok(dream("--apply", str(path), "--resolve", resolve, "--yes"))
    after = export(run_cli)
    if loser:
        assert out == summary(1, 1, 1, 1) + "\n"
        _superseded(after, loser, winner)
    else:
        assert out == summary(1, 1, 0, 2) + "\n"
        assert after[ECS]["lifecycle_state"] == after[VERCEL]["lifecycle_state"] == "active"


@pytest.mark.parametrize(
    "answer, applied", [("y\n", True), ("\n", True), ("n\n", False), ("", False), ("huh\nno\n", False)]
)
def test_apply_without_yes_asks(dream, base, run_cli, tmp_path, answer, applied):
    path, _ = _plan(dream, tmp_path)
    before = export_text(run_cli)
    out = ok(dream("--apply", str(path), input=answer))
    shown = APPLY_HINT + APPLY if answer.startswith("huh") else ("\n" if answer == "" else "")
    assert out == APPLY_REPORT + " " + shown + (summary(1, 1, 0, 2) if applied else CANCELLED) + "\n"
    assert (export_text(run_cli) != before) is applied


def _edit(path: Path, change) -> Path:
    plan = json.loads(path.read_text(encoding="utf-8"))
    change(plan)
    path.write_text(json.dumps(plan), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "case, make, extra, message",
    [
        ("not json", lambda p: p.write_text("{not json", encoding="utf-8"), (), "plan is not valid JSON"),
        ("binary", lambda p: p.write_bytes(b"\xff\xfe\x00garbage"), (), "cannot read the plan"),
        ("empty", lambda p: p.write_text("", encoding="utf-8"), (), "plan is not valid JSON"),
        ("a list", lambda p: p.write_text("[]", encoding="utf-8"), (), "plan"),
        ("missing key", lambda p: _edit(p, lambda d: d.pop("fingerprints")), (), "fingerprints"),
        ("bad version", lambda p: _edit(p, lambda d: d.update(version=2)), (), "version"),
        ("bad ids", lambda p: _edit(p, lambda d: d["merges"][0].update(ids=[PG_OLD])), (), "merges[0].ids"),
        (
            "another user",
            lambda p: _edit(p, lambda d: d.update(user_id="bob")),
            (),
            "the plan belongs to user 'bob', not 'alice'",
        ),
        (
            "another project",
            lambda p: _edit(p, lambda d: d.update(project_id="other")),
            (),
            "the plan is for project 'other'",
        ),
        (
            "unknown resolve id",
            lambda p: p,
            ("--resolve", "deadbeef=A"),
            "--resolve 'deadbeef' names no conflict of the plan",
        ),
        (
            "short resolve id",
            lambda p: p,
            ("--resolve", f"{REDIS_DONT[:7]}=A"),
            f"--resolve '{REDIS_DONT[:7]}': id prefix {REDIS_DONT[:7]} is too short: give at least 8 characters",
        ),
        ("bad resolve choice", lambda p: p, ("--resolve", f"{REDIS_DONT}=C"), "--resolve takes"),
        ("resolve without =", lambda p: p, ("--resolve", REDIS_DONT), "--resolve takes"),
        ("no such file", lambda p: p.unlink(), (), "cannot read the plan"),
        ("a directory", lambda p: (p.unlink(), p.mkdir()), (), "cannot read the plan"),
    ],
)
def test_bad_plan_is_refused_and_changes_nothing(dream, base, run_cli, tmp_path, case, make, extra, message):
    path, _ = _plan(dream, tmp_path)
    make(path)
    before = export_text(run_cli)
    done = dream("--apply", str(path), *extra, "--yes")
    line = one_error_line(done)
    assert message in line, line
    assert done.stdout == ""
    assert export_text(run_cli) == before


def test_edited_plan_cannot_reach_other_projects_or_protected_memories(dream, base, seed, run_cli, tmp_path):
    other, pinned = uid(9), "99999999-0000-4000-8000-000000000001"
    seed(
        [
            record(
                other,
                "Session state: another project's work",
                "session_state",
                0.9,
                "2026-01-01T10:00:00+00:00",
                app_id="other-project",
            ),
            record(
                pinned,
                "Session state: pinned note",
                "session_state",
                0.9,
                "2026-01-01T10:00:00+00:00",
                metadata={"pinned": True},
            ),
        ]
    )
    path, _ = _plan(dream, tmp_path)

    def add_prunes(plan):
        for memory_id in (other, pinned):
            plan["prunes"].append({"id": memory_id, "type": "session_state", "age_days": 334, "reason": "retention"})
            plan["fingerprints"][memory_id] = "1"

    _edit(path, add_prunes)
    out = ok(dream("--apply", str(path), "--yes"))
    assert out.splitlines() == [
        f"Not applied — prune {other}: {other} is not a memory of project acme-api",
        f"Not applied — prune {pinned}: {pinned} is immutable, pinned, excluded from dream or dream's reminder",
        summary(1, 1, 0, 2),
    ]
    everything = run_cli("mem0-memories", "export", "--all-projects")
    assert other in ok(everything) and pinned in everything.stdout


def test_stdin_plan(dream, base, run_cli, tmp_path):
    path, _ = _plan(dream, tmp_path)
    assert ok(dream("--apply", "-", "--yes", input=path.read_text())) == summary(1, 1, 0, 2) + "\n"


# -- conditional writes --------------------------------------------------------------


def test_changed_memories_are_skipped_and_reported(backend, dream, base, run_cli, tmp_path):
    path, _ = _plan(dream, tmp_path)
    update_text(PG_OLD, "Use PostgreSQL 16 for auth")  # changed through the library
    assert ok(run_cli("mem0-memories", "delete", SESSION))  # deleted by the user
    done = dream("--apply", str(path), "--resolve", f"{REDIS_DONT}=A", "--yes")
    assert ok(done).splitlines() == [
        f"Not applied — merge {PG_OLD}+{PG_NEW}: {PG_OLD} changed since the plan was made",
        f"Not applied — prune {SESSION}: {SESSION} no longer exists",
        summary(0, 0, 1, 1),
    ]
    after = export(run_cli)
    assert after[PG_OLD]["memory"] == "Use PostgreSQL 16 for auth"
    assert after[PG_OLD]["lifecycle_state"] == after[PG_NEW]["lifecycle_state"] == "active"
    assert not dream_made(after)  # no half-applied merge
    _superseded(after, REDIS_USE, REDIS_DONT)  # the rest was applied
    assert events(run_cli, SESSION) == ["IMPORT", "DELETE"]


def test_change_while_the_user_is_deciding(base, run_cli, project):
    """Interactive: a memory changed between the fetch and the answer is not written over."""
    proc = subprocess.Popen(
        [command_path("mem0-dream"), "--now", NOW],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=str(project),
    )
    try:
        deadline = time.time() + 30
        raw = b""
        while C1.encode() not in raw and time.time() < deadline:  # wait until the first prompt is out
            chunk = os.read(proc.stdout.fileno(), 65536)
            assert chunk, raw
            raw += chunk
        update_text(REDIS_USE, "Use Redis 7 for session caching")
        stdout, stderr = proc.communicate(b"a\n\ny\n", timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr
    out = (raw + stdout).decode()
    assert out == (
        REPORT + "\n" + C1 + C2 + APPLY + f"Not applied — resolve {REDIS_DONT}+{REDIS_USE}: {REDIS_USE} "
        f"changed since the plan was made\n{summary(1, 1, 0, 1)}\n"
    )
    after = export(run_cli)
    assert after[REDIS_USE]["lifecycle_state"] == after[REDIS_DONT]["lifecycle_state"] == "active"
    assert after[REDIS_USE]["memory"] == "Use Redis 7 for session caching"


# -- --auto ---------------------------------------------------------------------------


def test_auto_applies_merges_and_prunes_and_leaves_one_reminder(backend, dream, base, seed, run_cli):
    done = dream("--auto")
    assert ok(done) == auto_summary(1, 1, 2) + "\n"
    after = export(run_cli)
    assert len(dream_made(after)) == 1 and SESSION not in after
    for memory_id in (REDIS_USE, REDIS_DONT, ECS, VERCEL):
        assert after[memory_id]["lifecycle_state"] == "active"
    [reminder] = active_reminders(after)
    assert reminder["memory"] == reminder_text(2)
    assert reminder["metadata"] == {"type": "task_learning", "source": REMINDER_SOURCE, "branch": BRANCH}
    assert reminder["app_id"] == "acme-api" and reminder["user_id"] == "alice"

    # a second run refreshes nothing: still one reminder, same id, same text
    assert ok(dream("--auto")) == auto_summary(0, 0, 2) + "\n"
    assert [r["id"] for r in active_reminders(export(run_cli))] == [reminder["id"]]

    # the reminder takes part in nothing
    plan = json.loads(ok(dream("--plan", "--json")))
    assert reminder["id"] not in plan["fingerprints"]

    # a third conflict: the count is refreshed in place
    seed(
        [
            record(
                uid(9), "The API dev server listens on port 8080", "environmental", 0.7, "2026-09-01T10:00:00+00:00"
            ),
            record(
                "99999999-0000-4000-8000-000000000002",
                "The API dev server listens on port 3000",
                "environmental",
                0.7,
                "2026-11-01T10:00:00+00:00",
            ),
        ]
    )
    assert ok(dream("--auto")) == auto_summary(0, 0, 3) + "\n"
    reminders = active_reminders(export(run_cli))
    assert [r["id"] for r in reminders] == [reminder["id"]]
    assert reminders[0]["memory"] == reminder_text(3)
    assert events(run_cli, reminder["id"]) == ["ADD", "UPDATE"]

    # an interactive run that resolves every conflict retires it
    out = ok(dream(input="a\na\na\ny\n"))
    assert out.endswith(summary(0, 0, 3, 0) + "\n")
    after = export(run_cli)
    assert not active_reminders(after) and reminder["id"] not in after
    assert events(run_cli, reminder["id"])[-1] == "RETIRE"
    assert ok(dream("--auto")) == auto_summary(0, 0, 0) + "\n"
    assert not active_reminders(export(run_cli))


def test_interactive_run_that_skips_keeps_the_reminder(dream, base, run_cli):
    ok(dream("--auto"))
    [reminder] = active_reminders(export(run_cli))
    assert reminder["memory"] == reminder_text(2)
    assert ok(dream(input="a\nskip\ny\n")).endswith(summary(0, 0, 1, 1) + "\n")
    # the same reminder, counting the one conflict the run left
    assert [(r["id"], r["memory"]) for r in active_reminders(export(run_cli))] == [(reminder["id"], reminder_text(1))]
    runs = json.loads(ok(dream("--runs", "--json")))
    assert [(r["mode"], r["resolved"], r["reminder"]) for r in runs] == [("interactive", 1, 1), ("auto", 0, 2)]


def test_a_run_that_only_writes_the_reminder_is_listed(dream, seed, run_cli):
    """--auto that finds only a conflict writes only the reminder: --runs lists it, with the count
    it left; a run that changes nothing (the same count again) is not recorded."""
    seed([r for r in BASE if r["id"] in (ECS, VERCEL)])
    assert ok(dream("--auto")) == auto_summary(0, 0, 1) + "\n"
    [run] = json.loads(ok(dream("--runs", "--json")))
    assert (run["mode"], run["merged"], run["resolved"], run["reminder"]) == ("auto", 0, 0, 1)
    assert ok(dream("--runs")).endswith("  not_applied=0  reminder=1  done\n")
    ok(dream("--auto"))
    assert len(json.loads(ok(dream("--runs", "--json")))) == 1
    assert ok(dream(input="a\ny\n")).endswith(summary(0, 0, 1, 0) + "\n")  # settled: the reminder retired
    assert [r["reminder"] for r in json.loads(ok(dream("--runs", "--json")))] == [0, 1]


def test_a_settled_conflict_that_could_not_be_applied_keeps_the_reminder(dream, base, run_cli, tmp_path):
    ok(dream("--auto"))
    [reminder] = active_reminders(export(run_cli))
    path, _ = _plan(dream, tmp_path)
    update_text(REDIS_USE, "Use Redis 7 for session caching")  # changed after the plan
    done = ok(dream("--apply", str(path), "--resolve", f"{REDIS_DONT}=A", "--resolve", f"{VERCEL}=A", "--yes"))
    assert done.splitlines()[0].startswith(f"Not applied — resolve {REDIS_DONT}+{REDIS_USE}")
    assert [r["id"] for r in active_reminders(export(run_cli))] == [reminder["id"]]


def test_extra_reminders_from_older_tools_collapse_to_one(dream, base, seed, run_cli):
    legacy = [
        record(
            f"99999999-0000-4000-8000-00000000010{i}",
            reminder_text(i + 1),
            "task_learning",
            0.1,
            f"2026-0{i + 1}-01T10:00:00+00:00",
            metadata={"source": REMINDER_SOURCE},
        )
        for i in range(3)
    ]
    seed(legacy)
    plan = json.loads(ok(dream("--plan", "--json")))
    assert not set(plan["fingerprints"]) & {r["id"] for r in legacy}  # never merged, pruned or in conflict
    assert ok(dream("--auto")) == auto_summary(1, 1, 2) + "\n"
    after = export(run_cli)
    [kept] = active_reminders(after)
    assert kept["id"] == legacy[0]["id"] and kept["memory"] == reminder_text(2)
    for extra in legacy[1:]:
        assert after[extra["id"]]["lifecycle_state"] == "superseded"
        assert after[extra["id"]]["replacement_memory_id"] == kept["id"]


def test_reminder_alone_is_not_a_proposal(dream, seed, run_cli):
    seed(
        [
            record(
                uid(1),
                reminder_text(1),
                "task_learning",
                0.1,
                "2026-01-01T10:00:00+00:00",
                metadata={"source": REMINDER_SOURCE},
            ),
            BASE[-1],
        ]
    )
    assert ok(dream("--plan")) == NO_PROPOSALS + "\n"


def test_the_reminder_is_left_out_of_searches_unless_asked_for(dream, base, run_cli):
    """The --auto reminder is a note for the person, not an answer: a search does not return it,
    whatever the query; a list does, and so does a search that asks for its source."""
    ok(dream("--auto"))
    [reminder] = active_reminders(export(run_cli))

    def found(*args: str) -> list[str]:
        return [r["id"] for r in json.loads(ok(run_cli("mem0-memories", "search", *args, "--json")))["results"]]

    assert reminder["id"] not in found("mem0-dream detected contradictions requiring manual review")
    assert reminder["id"] not in found("Redis session caching")
    assert REDIS_USE in found("Redis session caching")
    assert found("manual review", "--filters", json.dumps({"metadata": {"source": REMINDER_SOURCE}})) == [
        reminder["id"]
    ]
    listed = json.loads(ok(run_cli("mem0-memories", "list", "--json")))["results"]
    assert reminder["id"] in {r["id"] for r in listed}


HOLD_LOCK = r"""
import sys, time
from mem0_plugin.locks.auto_lock import auto_lock, lock_path_from_env
with auto_lock(lock_path_from_env()):
    print("locked", flush=True)
    sys.stdin.read()
"""


def test_auto_skips_while_another_run_holds_the_lock(dream, base, run_cli, tmp_path):
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline() == "locked\n"
        before = export_text(run_cli)
        done = dream("--auto")
        assert ok(done) == AUTO_BUSY + "\n"
        assert done.stderr == ""
        assert export_text(run_cli) == before
    finally:
        holder.communicate("", timeout=30)
    assert not Path(os.environ["MEM0_DREAM_LOCK"]).exists()
    assert ok(dream("--auto")) == auto_summary(1, 1, 2) + "\n"
    assert not Path(os.environ["MEM0_DREAM_LOCK"]).exists()


def test_auto_lock_on_a_symlink_is_refused(dream, base, run_cli, tmp_path):
    lock = Path(os.environ["MEM0_DREAM_LOCK"])
    target = tmp_path / "elsewhere"
    lock.symlink_to(target)
    before = export_text(run_cli)
    done = dream("--auto")
    assert done.returncode != 0
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr
    assert not target.exists() and lock.is_symlink()
    assert export_text(run_cli) == before


# -- --demo ----------------------------------------------------------------------------


def test_demo_uses_a_throwaway_store(run_cli, tmp_path, mem0_home):
    done = run_cli("mem0-dream", "--demo", "--now", NOW, input="a\ny\n", cwd=str(tmp_path))
    out = ok(done)
    assert out.startswith(
        "Demo: a throwaway store with the sample memories of a fictional project "
        "(tidewater-shop); your own memories are not touched.\n\n## dream — consolidation report\n"
    )
    lines = out.splitlines()
    assert "Merges (2):" in lines and "Supersede (1):" in lines and "Conflicts (1):" in lines and "Prune (3):" in lines
    assert re.fullmatch(
        r'  \[mem0:[0-9a-f-]{36}\] → \[mem0:[0-9a-f-]{36}\] — "The API dev server now listens on port 3000"',
        lines[lines.index("Supersede (1):") + 1],
    )
    assert "Proposed: 2 merges, 3 prunes, 1 conflict." in lines
    # three observations of one habit on different days: a pattern for a judge to write (docs/dream.md, "Synthesis")
    synthesis = lines.index("Synthesize (1):")
    assert re.fullmatch(
        r"  \[mem0:[0-9a-f-]{36}\]( \+ \[mem0:[0-9a-f-]{36}\]){2} — user_preference, 3 observations",
        lines[synthesis + 1],
    )
    assert lines[synthesis + 2 : synthesis + 5] == [
        '      1: "The checkout tax bug was fixed only once a failing test showed it"',
        '      2: "Reproduced the checkout coupon bug with a failing test, then fixed it"',
        '      3: "Before touching the checkout shipping code, wrote a failing test for the bug"',
    ]
    assert lines.index("Prune (3):") < synthesis < lines.index("Proposed: 2 merges, 3 prunes, 1 conflict.")
    assert re.search(
        r'Conflict 1/1: \[mem0:[0-9a-f-]{36}\] vs \[mem0:[0-9a-f-]{36}\] — "[^"]+" \[A/B/skip\]: '
        r"Apply\? \[Y/n\] " + re.escape(summary(2, 3, 1, 0, superseded=1)) + "$",
        lines[-1],
    ), lines[-1]
    assert not mem0_home.exists()  # the user's store is not created, let alone touched


def test_demo_cancel(run_cli, tmp_path, mem0_home):
    out = ok(run_cli("mem0-dream", "--demo", "--now", NOW, input="", cwd=str(tmp_path)))
    assert out.endswith(APPLY + "\n" + CANCELLED + "\n")
    assert not mem0_home.exists()


def test_demo_leaves_an_existing_store_alone(dream, base, run_cli):
    before = export_text(run_cli)
    assert ok(dream("--demo", input="skip\ny\n")).endswith(summary(2, 3, 0, 1, superseded=1) + "\n")
    assert export_text(run_cli) == before


# -- mem0.md and retention -------------------------------------------------------------


RETENTION_SEED = [
    record(uid(1), "Session state: refactoring the billing module", "session_state", 0.9, "2026-06-01T10:00:00+00:00"),
    record(uid(2), "Summary: moved order emails to Postmark", "compact_summary", 0.9, "2026-08-01T10:00:00+00:00"),
    record(uid(3), "Chose Stripe for payments", "decision", 0.9, "2026-10-01T10:00:00+00:00"),
    record(uid(4), "Chose Postmark for order emails", "decision", 0.9, "2026-11-25T10:00:00+00:00"),
]


def _policy(dream, cwd=None) -> tuple[dict, str, list]:
    plan = json.loads(ok(dream("--plan", "--json", cwd=cwd)))
    return plan["policy"], plan["policy_source"], [(p["id"], p["age_days"], p["reason"]) for p in plan["prunes"]]


def test_retention_defaults(dream, seed):
    seed(RETENTION_SEED)
    assert _policy(dream) == (
        {"compact_summary": 90, "session_state": 90},
        "default",
        [(uid(2), 121, "retention"), (uid(1), 182, "retention")],
    )


def test_mem0_md_retention_replaces_the_defaults(dream, seed, project):
    seed(RETENTION_SEED)
    (project / "mem0.md").write_text(
        "# Project memory\n\n## Identity\nproject_id: acme-api\n\n"
        "## retention\n"
        "decision: 30d   # decisions go stale fast\n"
        "session_state: forever\n"
        "this line is malformed\n"
        "## Categories\n- decision\n",
        encoding="utf-8",
    )
    assert _policy(dream) == ({"decision": 30, "session_state": None}, "mem0.md", [(uid(3), 60, "retention")])
    out = ok(dream("--plan"))
    assert f"  [mem0:{uid(3)}] — decision, 60d old (30-day retention)" in out.splitlines()


def test_mem0_md_found_from_a_subdirectory_and_with_cwd(dream, seed, project, tmp_path):
    seed(RETENTION_SEED)
    (project / "mem0.md").write_text("## Retention\nsession_state: 200d\n", encoding="utf-8")
    sub = project / "src" / "pkg"
    sub.mkdir(parents=True)
    assert _policy(dream, cwd=sub) == ({"session_state": 200}, "mem0.md", [])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    plan = json.loads(ok(dream("--plan", "--json", "--cwd", str(project), cwd=elsewhere)))
    assert plan["policy_source"] == "mem0.md"


@pytest.mark.parametrize(
    "kind",
    [
        "binary",
        "no retention section",
        "empty retention",
        "directory",
        "dangling symlink",
        "unreadable",
        "read error",
        "huge line",
    ],
)
def test_unusable_mem0_md_means_defaults(dream, seed, project, kind):
    seed(RETENTION_SEED)
    config = project / "mem0.md"
    if kind == "binary":
        config.write_bytes(b"\x00\xff\xfe## Retention\x00\nsession_state: \xff1d\n" + bytes(range(256)))
    elif kind == "no retention section":
        config.write_text("# Notes\nsession_state: 1d\n", encoding="utf-8")
    elif kind == "empty retention":
        config.write_text("## Retention\n# nothing yet\nsession_state: soon\n## Other\n", encoding="utf-8")
    elif kind == "directory":
        config.mkdir()
    elif kind == "dangling symlink":
        config.symlink_to(project / "missing.md")
    elif kind == "unreadable":
        if os.geteuid() == 0:
            pytest.skip("root reads a mode-000 file")
        config.write_text("## Retention\nsession_state: 1d\n", encoding="utf-8")
        config.chmod(0)
    elif kind == "read error":  # a file that exists but fails with EIO on read, even for root
        if not Path("/proc/self/mem").exists():
            pytest.skip("no /proc")
        config.symlink_to("/proc/self/mem")
    else:
        config.write_text("## Retention\nsession_state: " + "9" * 100_000 + "d\n", encoding="utf-8")
    done = dream("--plan", "--json")
    assert done.stderr == ""
    policy, source, prunes = _policy(dream)
    assert (policy, source) == ({"compact_summary": 90, "session_state": 90}, "default")
    assert [p[0] for p in prunes] == [uid(2), uid(1)]


# -- bad input -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["--json"],
        ["-o", "plan.json"],
        ["--plan", "-o", "plan.json"],
        ["--yes"],
        ["--resolve", "x=A"],
        ["--auto", "--plan"],
        ["--demo", "--auto"],
        ["--apply"],
        ["--plan", "--apply", "x.json"],
        ["--bogus"],
        ["--auto", "--json"],
    ],
)
def test_usage_errors_exit_2_with_one_line(dream, base, run_cli, args, project):
    before = export_text(run_cli)
    done = dream(*args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith("mem0-dream: error: "), done.stderr
    assert export_text(run_cli) == before
    assert not (project / "plan.json").exists()


def test_bad_now_and_bad_store(dream, base, run_cli):
    line = one_error_line(run_cli("mem0-dream", "--plan", "--now", "yesterday"), 2)
    assert "--now" in line
    line = one_error_line(dream("--plan", "--store", "mysql://nowhere/db"))
    assert "not supported" in line


@pytest.mark.parametrize("io_encoding", [None, "utf-8:strict"])
def test_invalid_utf8_answers_are_asked_again(base, run_cli, project, io_encoding):
    before = export_text(run_cli)
    env = {**os.environ, "LC_ALL": "C.UTF-8"}
    if io_encoding:  # a strict UTF-8 locale (en_US.UTF-8 on most desktops)
        env["PYTHONIOENCODING"] = io_encoding
    proc = subprocess.run(
        [command_path("mem0-dream"), "--now", NOW],
        input=b"\xff\xfe\n\xc3\n",
        capture_output=True,
        env=env,
        cwd=str(project),
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == b""
    hint = CONFLICT_HINT
    expected = REPORT + "\n" + C1 + hint + C1 + hint + C1 + "\n" + C2 + "\n" + APPLY + "\n" + CANCELLED + "\n"
    assert proc.stdout.decode() == expected
    assert export_text(run_cli) == before


def test_help(run_cli):
    done = run_cli("mem0-dream", "--help")
    assert ok(done).startswith("usage: mem0-dream")
    for flag in ("--auto", "--plan", "--apply", "--demo", "--json", "--resolve", "--yes"):
        assert flag in done.stdout
    assert "--now" not in done.stdout


# -- a real terminal ---------------------------------------------------------------------


PROMPT = re.compile(r"\[A/B/skip\]: |Apply\? \[Y/n\] ")


def run_in_pty(argv: list[str], answers: list[str], cwd: Path, timeout: float = 30) -> tuple[int, str]:
    """Run `argv` on a pseudo-terminal; type each answer once the next prompt is shown.

    Returns (exit code, everything the terminal showed: output and the echo of the typing)."""
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "40"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen(
        argv, stdin=slave, stdout=slave, stderr=slave, cwd=str(cwd), env=env, start_new_session=True, close_fds=True
    )
    os.close(slave)
    raw = b""
    deadline = time.monotonic() + timeout

    def pump(wait: float) -> bool:
        nonlocal raw
        ready, _, _ = select.select([master], [], [], wait)
        if not ready:
            return True
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            return False
        raw += chunk
        return bool(chunk)

    def prompts_seen() -> int:
        return len(PROMPT.findall(ANSI.sub("", raw.decode("utf-8", "replace"))))

    try:
        for count, answer in enumerate(answers, 1):
            while prompts_seen() < count:
                assert time.monotonic() < deadline, f"no prompt {count}: {raw!r}"
                assert pump(0.1) or prompts_seen() >= count, f"terminal closed early: {raw!r}"
            os.write(master, answer.encode() + b"\n")
        while pump(0.2) and (proc.poll() is None or time.monotonic() < deadline):
            if proc.poll() is not None:
                while pump(0.1):
                    pass
                break
        code = proc.wait(timeout=max(1, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    return code, raw.decode("utf-8")


def _with_echo(piped: str, answers: list[str]) -> str:
    """The piped transcript with each answer echoed after its prompt, as a terminal shows it."""
    parts, rest, typed = [], piped, iter(answers)
    while True:
        match = PROMPT.search(rest)
        if not match:
            return "".join(parts) + rest
        parts.append(rest[: match.end()] + next(typed) + "\n")
        rest = rest[match.end() :]


@pytest.mark.parametrize(
    "answers, applied",
    [
        (["garbage", "A", "", "y"], True),
        (["b", "skip", "what", "n"], False),
    ],
)
def test_interactive_run_in_a_pseudo_terminal(base, run_cli, project, answers, applied):
    before = export_text(run_cli)
    code, shown = run_in_pty([command_path("mem0-dream"), "--now", NOW], answers, project)
    assert code == 0, shown
    plain = ANSI.sub("", shown).replace("\r\n", "\n")
    assert "\r" not in plain
    # the same characters as the piped run, plus the echo of what was typed
    piped_prompts = {
        True: C1 + CONFLICT_HINT + C1 + C2 + APPLY + summary(1, 1, 1, 1),
        False: C1 + C2 + APPLY + APPLY_HINT + APPLY + CANCELLED,
    }[applied]
    expected = _with_echo(REPORT + "\n" + piped_prompts + "\n", answers)
    assert plain == expected
    after = export_text(run_cli)
    assert (after != before) is applied
    if applied:
        _superseded(export(run_cli), REDIS_USE, REDIS_DONT)


def test_pseudo_terminal_without_conflicts(seed, run_cli, project):
    seed([r for r in BASE if r["id"] in (PG_OLD, PG_NEW, SESSION, RUFF)])
    code, shown = run_in_pty([command_path("mem0-dream"), "--now", NOW], [""], project)
    assert code == 0, shown
    plain = ANSI.sub("", shown).replace("\r\n", "\n")
    assert plain == NO_CONFLICT_REPORT + " \n" + summary(1, 1, 0, 0) + "\n"
    assert plain.count("Apply?") == 1


def test_pseudo_terminal_demo(run_cli, tmp_path, mem0_home):
    code, shown = run_in_pty([command_path("mem0-dream"), "--demo", "--now", NOW], ["a", "yes"], tmp_path)
    assert code == 0, shown
    plain = ANSI.sub("", shown).replace("\r\n", "\n")
    assert plain.endswith("Apply? [Y/n] yes\n" + summary(2, 3, 1, 0, superseded=1) + "\n")
    assert not mem0_home.exists()


@pytest.mark.parametrize("target", [".", "", "a-directory", "missing-dir/plan.json"])
def test_plan_output_that_cannot_be_a_file(dream, base, project, target):
    (project / "a-directory").mkdir()
    done = dream("--plan", "--json", "-o", target)
    line = one_error_line(done, 2)
    assert line.startswith("mem0-dream: error: cannot write ")
    assert done.stdout == ""
    assert sorted(p.name for p in project.iterdir()) == [".git", "a-directory"]  # no temp file left


def test_plan_output_dash_is_stdout(dream, base, tmp_path):
    _, plan = _plan(dream, tmp_path)
    assert json.loads(ok(dream("--plan", "--json", "-o", "-"))) == plan


def test_two_processes_give_the_same_plan_and_run(backend, dream, base, tmp_path, monkeypatch):
    """The type groups analysed on a forked child (dream/parallel.py, used from 30,000 memories
    on: forced here) give the same plan, on SQLite and on PostgreSQL (whose open connections the
    child inherits and never touches), and an --auto run applies as usual."""
    from mem0_plugin.dream import pipeline

    one_process, _ = _plan(dream, tmp_path, "one.json")
    monkeypatch.setattr(pipeline, "worth_it", lambda count: True)
    two_processes, _ = _plan(dream, tmp_path, "two.json")
    assert two_processes.read_bytes() == one_process.read_bytes()
    assert ok(dream("--auto")).startswith("[mem0-dream --auto] project=acme-api  merged=1")
    assert ok(dream("--runs")).count("auto") == 1
