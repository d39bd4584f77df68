"""Supersede in dream (docs/dream.md, "Supersede"): a contradiction whose newer text marks the
change itself is a supersede, which `--auto` applies; unmarked, it stays a conflict; a scope or
condition added is neither. The rule on pairs, the report's lines, and the commands end to end
on real SQLite files: --plan, --auto, --apply, the interactive run, reads, search and undo."""

from __future__ import annotations

import json
import subprocess

import pytest
from dream_support import NOW, events, export, export_text, make_project, record, summary, uid, update_text, write_jsonl
from mem0_plugin.dream import report
from mem0_plugin.dream.plan import Plan, SupersedeAction
from mem0_plugin.dream.supersedes import supersede_of
from mem0_plugin.language.analysed import analysed
from mem0_plugin.language.negation import change_marker
from mem0_plugin.records import Memory
from mem0_plugin.relation.meaning import relation


def item(text: str, day: int):
    stamp = f"2026-{day // 28 + 1:02d}-{day % 28 + 1:02d}T10:00:00+00:00"
    return analysed(
        Memory(
            id=f"m{day}", memory=text, user_id="u", metadata={"type": "decision"}, created_at=stamp, updated_at=stamp
        )
    )


def judged(older: str, newer: str, cosine: float) -> str | None:
    """What dream makes of the pair: the meaning rule, then the supersede rule on a conflict."""
    old, new = item(older, 1), item(newer, 40)
    kind = relation(old, new, cosine)
    if kind == "conflict" and supersede_of(new, old) is not None:
        return "supersede"
    return kind


@pytest.mark.parametrize(
    "older, newer, cosine, expected",
    [
        # the newer text marks the change: a supersede
        (
            "Local Postgres from docker-compose listens on port 5432.",
            "Local Postgres from docker-compose listens on port 5433 now (5432 clashes with Homebrew postgres).",
            0.92,
            "supersede",
        ),
        (
            "Sales tax is calculated with TaxJar (app/billing/tax/taxjar_client.py).",
            "Sales tax is calculated with Stripe Tax now; the TaxJar client was removed.",
            0.76,
            "supersede",
        ),
        (
            "Unit tests run with Jest (jest.config.ts).",
            "Unit tests migrated from Jest to Vitest; run pnpm vitest, config in vitest.config.ts.",
            0.80,
            "supersede",
        ),
        ("Hermes engine is enabled on iOS.", "Hermes engine was turned off on iOS builds.", 0.85, "supersede"),
        ("Use Redis for session caching.", "We no longer use Redis for session caching.", 0.88, "supersede"),
        # a contradiction without a mark: a conflict for the user
        ("The app targets Python 3.11", "The app targets Python 3.12", 0.98, "conflict"),
        ("Use Redis", "Don't use Redis", 0.9, "conflict"),
        ("Enable reactStrictMode in next.config.js.", "Keep reactStrictMode off in next.config.js.", 0.75, "conflict"),
        # the older text is marked as well: which one replaced which is not said
        ("The API now listens on port 8080", "The API now listens on port 3000", 0.95, "conflict"),
        # a scope or a condition added: neither
        ("Prefers window seats", "Now always books window seats only on long-haul flights", 0.8, None),
        (
            "Run the e2e suite before merging",
            "Now run the e2e suite before merging only when the API changed",
            0.85,
            None,
        ),
    ],
)
def test_supersede_conflict_or_neither(older, newer, cosine, expected):
    assert judged(older, newer, cosine) == expected


@pytest.mark.parametrize(
    "text, marker",
    [
        ("The API now listens on port 5433", "now"),
        ("Switched to pnpm", "switched"),
        ("Reports moved to s3://bucket/", "moved"),
        ("The TaxJar client was removed", "was removed"),
        ("Flipper was turned off in debug builds", "was turned off"),
        ("Use WITH clauses rather than nested subqueries", None),  # a preference, not a change
        ("Alembic已经升级到1.13", "升级"),
        ("Перешли с flake8 на ruff", "перешли"),
        # raised, lowered, moved, changed: in Chinese, Japanese and Russian as in English
        ("背光超时调整为 45 秒", "调整为"),
        ("Prometheus 保留时间提高到 30d", "提高到"),
        ("タイムアウトを 60 秒に引き上げた", "引き上げ"),
        ("Firestore-эмулятор перенесли на порт 8085", "перенесли"),
        ("Размер загрузки подняли до 200 МБ", "подняли"),
        ("Deploy the storefront to Vercel", None),
        # Russian "removed" in the past marks a change; "removes" (what a hook does) does not
        ("Старый клиент TaxJar удалили", "удалил"),
        ("Ответы кладём в KV на 5 минут, вебхук CMS удаляет ключи", None),
    ],
)
def test_change_markers(text, marker):
    assert change_marker(text) == marker


def test_the_newer_must_be_later():
    same_day = item("The API listens on port 5432", 5), item("The API now listens on port 5433", 5)
    assert supersede_of(same_day[1], same_day[0]) is None
    older, newer = item("The API listens on port 5432", 5), item("The API now listens on port 5433", 9)
    assert supersede_of(newer, older) == SupersedeAction(
        old="m5", new="m9", reason='the newer text marks the change: "now"', text="The API now listens on port 5433"
    )
    assert supersede_of(older, newer) is None


# -- the report -------------------------------------------------------------------------


def test_report_lines_for_supersedes():
    plan = Plan(
        user_id="u",
        project_id="p",
        generated_at=NOW,
        supersedes=(
            SupersedeAction(old="old1", new="new1", reason="r", text="The API now listens on port 5433"),
            SupersedeAction(old="old2", new="new2", reason="r", text="x" * 150),
        ),
    )
    assert report.render_report(plan, asking=False) == "\n".join(
        [
            "## dream — consolidation report",
            "",
            "Supersede (2):",
            '  [mem0:old1] → [mem0:new1] — "The API now listens on port 5433"',
            f'  [mem0:old2] → [mem0:new2] — "{"x" * 100}"',
            "",
            "Proposed: 0 merges, 0 prunes, 0 conflicts.",
        ]
    )
    assert not plan.is_empty


def test_auto_line_names_supersedes_only_when_there_are_some():
    assert (
        report.auto_summary_line("p", 1, 2, 3)
        == "[mem0-dream --auto] project=p  merged=1  pruned=2  conflicts_skipped=3"
    )
    assert report.auto_summary_line("p", 1, 2, 3, 4) == (
        "[mem0-dream --auto] project=p  merged=1  pruned=2  conflicts_skipped=3  superseded=4"
    )


# -- end to end ---------------------------------------------------------------------------

OLD_PORT, NEW_PORT = uid(1), uid(2)  # "listens on port 5432" / "now listens on port 5433": a supersede
ECS, VERCEL = uid(3), uid(4)  # "Deploy ... to ECS" / "... to Vercel": a conflict (no mark)
SEED = [
    record(OLD_PORT, "The API listens on port 5432", "environmental", 0.7, "2026-09-01T10:00:00+00:00"),
    record(NEW_PORT, "The API now listens on port 5433", "environmental", 0.8, "2026-11-20T10:00:00+00:00"),
    record(ECS, "Deploy the storefront to ECS", "decision", 0.6, "2026-08-01T10:00:00+00:00"),
    record(VERCEL, "Deploy the storefront to Vercel", "decision", 0.8, "2026-11-20T10:00:00+00:00"),
]
SUPERSEDE_LINE = f'  [mem0:{OLD_PORT}] → [mem0:{NEW_PORT}] — "The API now listens on port 5433"'
CONFLICT = f'[mem0:{VERCEL}] vs [mem0:{ECS}] — "Deploy the storefront" [A/B/skip]'
PLAN_REPORT = "\n".join(
    [
        "## dream — consolidation report",
        "",
        "Supersede (1):",
        SUPERSEDE_LINE,
        "",
        "Conflicts (1):",
        f"  {CONFLICT}",
        '      A: "Deploy the storefront to Vercel"',
        '      B: "Deploy the storefront to ECS"',
        "",
        "Proposed: 0 merges, 0 prunes, 1 conflict.",
    ]
)


@pytest.fixture
def dream(run_cli, tmp_path):
    project = make_project(tmp_path / "project")

    def run(*args: str, input: str | None = None) -> subprocess.CompletedProcess:
        return run_cli("mem0-dream", *args, "--now", NOW, input=input, cwd=str(project))

    return run


@pytest.fixture
def seeded(run_cli, tmp_path):
    done = run_cli("mem0-memories", "import", str(write_jsonl(tmp_path / "seed.jsonl", SEED)))
    assert done.returncode == 0, done.stderr


def ok(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    return done.stdout


def memories(run_cli, *args: str) -> list[dict]:
    return json.loads(ok(run_cli("mem0-memories", *args, "--json")))["results"]


def test_plan_report_and_json(dream, seeded, tmp_path):
    assert ok(dream("--plan")) == PLAN_REPORT + "\n"
    plan = json.loads(ok(dream("--plan", "--json")))
    assert plan["supersedes"] == [
        {
            "old": OLD_PORT,
            "new": NEW_PORT,
            "reason": 'the newer text marks the change: "now"',
            "text": "The API now listens on port 5433",
        }
    ]
    assert [c["ids"] for c in plan["conflicts"]] == [[VERCEL, ECS]]
    assert {OLD_PORT, NEW_PORT} <= set(plan["fingerprints"])


def test_auto_applies_the_supersede_and_the_old_memory_stays_readable(dream, seeded, run_cli):
    assert ok(dream("--auto")) == (
        "[mem0-dream --auto] project=acme-api  merged=0  pruned=0  conflicts_skipped=1  superseded=1\n"
    )
    old = json.loads(ok(run_cli("mem0-memories", "get", OLD_PORT)))
    assert old["memory"] == "The API listens on port 5432"
    assert (old["lifecycle_state"], old["replacement_memory_id"]) == ("superseded", NEW_PORT)
    assert events(run_cli, OLD_PORT) == ["IMPORT", "SUPERSEDE"]
    assert OLD_PORT in {m["id"] for m in memories(run_cli, "list")}  # plain reads still show it
    assert OLD_PORT not in {m["id"] for m in memories(run_cli, "list", "--latest-only")}
    found = [m["id"] for m in memories(run_cli, "search", "which port does the API listen on")]
    assert found.index(NEW_PORT) < found.index(OLD_PORT)  # always below its replacement
    after = export(run_cli)
    assert after[ECS]["lifecycle_state"] == after[VERCEL]["lifecycle_state"] == "active"  # the conflict waits
    assert ok(dream("--plan")).count("Supersede") == 0  # nothing proposed twice
    [run] = json.loads(ok(dream("--runs", "--json")))
    assert (run["mode"], run["merged"], run["superseded"], run["pruned"]) == ("auto", 0, 1, 0)
    assert "  merged=0  superseded=1  pruned=0  " in ok(dream("--runs"))


def test_apply_of_a_plan_file_supersedes_unless_a_memory_changed(dream, seeded, run_cli, tmp_path):
    path = tmp_path / "plan.json"
    ok(dream("--plan", "--json", "-o", str(path)))
    update_text(NEW_PORT, "The API now listens on port 6543")
    done = dream("--apply", str(path), "--yes")
    assert ok(done).startswith(f"Not applied — supersede {OLD_PORT}+{NEW_PORT}: {NEW_PORT} changed since the plan")
    assert export(run_cli)[OLD_PORT]["lifecycle_state"] == "active"
    ok(dream("--plan", "--json", "-o", str(path)))
    assert ok(dream("--apply", str(path), "--yes")) == summary(0, 0, 0, 1, superseded=1) + "\n"
    assert export(run_cli)[OLD_PORT]["replacement_memory_id"] == NEW_PORT


def test_interactive_run_applies_the_supersede_and_the_user_settles_the_conflict(dream, seeded, run_cli):
    out = ok(dream(input="b\ny\n"))
    assert out.startswith(PLAN_REPORT + "\nConflict 1/1: ")  # the conflict first, then Apply? once
    assert out.count("Apply?") == 1
    assert out.endswith(summary(0, 0, 1, 0, superseded=1) + "\n")  # the supersede applied is counted
    after = export(run_cli)
    assert (after[OLD_PORT]["lifecycle_state"], after[OLD_PORT]["replacement_memory_id"]) == ("superseded", NEW_PORT)
    # B: the older ECS wins; the loser is superseded by it, nothing is deleted
    assert (after[VERCEL]["lifecycle_state"], after[VERCEL]["replacement_memory_id"]) == ("superseded", ECS)
    assert after[ECS]["lifecycle_state"] == "active"
    assert events(run_cli, VERCEL) == ["IMPORT", "SUPERSEDE"]


def test_undo_of_a_run_with_a_supersede_restores_the_old_memory(dream, seeded, run_cli):
    before = export_text(run_cli)
    ok(dream("--auto"))
    [run] = json.loads(ok(dream("--runs", "--json")))
    out = ok(dream("--undo", run["run_id"], input="y\n"))
    assert f'  [mem0:{OLD_PORT}] — superseded → active: "The API listens on port 5432"' in out.splitlines()
    after = export(run_cli)
    assert (after[OLD_PORT]["lifecycle_state"], after[OLD_PORT]["replacement_memory_id"]) == ("active", None)
    assert events(run_cli, OLD_PORT) == ["IMPORT", "SUPERSEDE", "UNDO"]
    # every memory as it was (the reminder --auto left for the conflict is not the run's: it stays)
    kept = [line for line in export_text(run_cli).splitlines() if '"source": "mem0-dream-auto"' not in line]
    assert kept == before.splitlines()
