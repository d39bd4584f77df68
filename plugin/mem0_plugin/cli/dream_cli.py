"""`mem0-dream`: consolidate the project's memories (docs/dream.md).

Modes: interactive (default), `--plan [--json] [-o FILE]`, `--apply FILE [--resolve ID=A|B|skip]
[--yes]`, `--auto` (cron), `--demo` (a throwaway store with a bundled sample), `--runs [--json]`
and `--undo RUN [--yes]` (the recorded runs, and taking one back).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import datetime
from pathlib import Path
from typing import NoReturn

from ..dream import auto, report
from ..dream.analysis import collector_paused
from ..dream.apply import ApplyOutcome, apply_plan, check_answers, recover
from ..dream.judging import answered_plan
from ..dream.pipeline import make_plan
from ..dream.plan import Plan, plan_to_json
from ..dream.plan_file import plan_from_json
from ..errors import InvalidInputError, LockBusyError, NotFoundError, PlanError, ScopeError
from ..identity import Identity
from ..ids import pick
from ..judges.asking import tally_fields
from ..locks.auto_lock import auto_lock, lock_path_from_env
from ..private_files import open_private
from ..relation.pair_file import memo_path, read_memo, write_memo
from ..relation.pair_memo import PairMemo
from ..sanitize import printable
from ..store import Store, open_store
from ..timeutil import parse_timestamp, utc_now
from .common import Parser, exit_without_teardown, identity_arguments, identity_from, run_command
from .terminal import Terminal

PROG = "mem0-dream"


def _now(args: argparse.Namespace) -> datetime:
    return parse_timestamp(args.now, "--now") if args.now else utc_now()


def _recover(store: Store, identity: Identity) -> None:
    for run_id, outcome in recover(store, identity):
        print(
            f"{PROG}: completed an interrupted run {run_id[:8]} (merged {outcome.merged}, "
            f"pruned {outcome.pruned}, conflicts resolved {outcome.resolved})",
            file=sys.stderr,
        )


def _finish(term: Terminal, outcome: ApplyOutcome) -> int:
    for note in outcome.stale:
        term.line(f"Not applied — {printable(note)}")
    term.line(
        report.summary_line(
            outcome.merged, outcome.pruned, outcome.resolved, outcome.skipped, outcome.synthesized, outcome.superseded
        )
    )
    return 0


def run_interactive(term: Terminal, store: Store, identity: Identity, plan: Plan) -> int:
    """Steps 4–6 with a person at the keyboard."""
    if plan.memory_count == 0:
        term.line(report.no_memories_message(identity.project_id))
        return 0
    if plan.is_empty:
        apply_plan(store, identity, plan, {}, mode="interactive")  # retires the --auto reminder, if any
        term.line(report.NO_PROPOSALS)
        return 0
    from ..dream.interactive import confirm  # (the commands import what they alone use: --auto starts faster)

    asking = not plan.conflicts  # with conflicts, they are asked first and Apply? last
    term.report(report.report_pieces(plan, asking=asking), ends_with_prompt=asking)
    decision = confirm(plan, term.read_line, term.write)
    if not decision.apply:
        term.line(report.CANCELLED)
        return 0
    return _finish(term, apply_plan(store, identity, plan, decision.resolutions, mode="interactive"))


def cmd_interactive(args, identity: Identity) -> int:
    term = Terminal.standard()
    with open_store(identity.store_location) as store:
        _recover(store, identity)
        pairs = read_memo(memo_path(identity))
        plan = _watched_plan(args, identity, store, term, pairs)
        write_memo(memo_path(identity), pairs)
        return run_interactive(term, store, identity, plan)


def _watched_plan(args, identity: Identity, store: Store, term: Terminal, pairs: PairMemo) -> Plan:
    """Dream's plan for the terminal, its reading and analysis shown as progress."""
    return make_plan(
        store,
        identity,
        _now(args),
        progress=term.progress("Reading memories"),
        analysis_progress=term.progress("Analysing memories"),
        semantic=_semantic(identity),
        pairs=pairs,
    )


def _semantic(identity: Identity):
    """The configured embedder (dream then also merges and contrasts by meaning), or None."""
    from ..semantic import Semantic

    return Semantic.from_home(identity.home)


def cmd_plan(args, identity: Identity) -> int:
    term = Terminal.standard()
    with open_store(identity.store_location) as store:  # (--plan reads remembered pairs, writes nothing)
        plan = _watched_plan(args, identity, store, term, read_memo(memo_path(identity)))
    if args.json:
        text = plan_to_json(plan)
        if args.output is not None and args.output != "-":
            _write_file(args.output, text + "\n")
        else:
            print(text)
        return 0
    if plan.memory_count == 0:
        print(report.no_memories_message(identity.project_id))
    elif plan.is_empty:
        print(report.NO_PROPOSALS)
    else:
        print(report.render_report(plan, asking=False))
    return 0


def _write_file(path: str, text: str) -> None:
    target = Path(path)
    if not target.name or target.is_dir():
        raise InvalidInputError(f"cannot write {path or repr(path)}: not a file name")
    temp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with open_private(temp) as handle:  # the plan holds memories' texts: 0600
            handle.write(text)
        temp.replace(target)
    except OSError as exc:
        try:
            temp.unlink(missing_ok=True)  # no half-written file left behind (e.g. -o names a directory)
        except OSError:
            pass
        raise InvalidInputError(f"cannot write {path}: {exc.strerror}") from None


def _conflict_for(plan: Plan, key: str) -> str:
    """The A id of the conflict that `key` names: its A or B id, in full or as a unique prefix
    of at least 8 characters (`ids.pick`, as every command takes ids)."""
    key = key.strip()
    conflict_of = {memory_id: c.ids[0] for c in plan.conflicts for memory_id in c.ids}
    try:
        return conflict_of[pick(key, conflict_of)]
    except NotFoundError:
        raise PlanError(f"--resolve {key!r} names no conflict of the plan") from None
    except InvalidInputError as exc:
        raise PlanError(f"--resolve {key!r}: {exc}") from None


def parse_resolutions(plan: Plan, values: list[str]) -> dict[str, str]:
    """`--resolve <idA>=A|B|skip` for each conflict to settle; the others are skipped."""
    resolutions = {c.ids[0]: "skip" for c in plan.conflicts}
    for value in values:
        key, sep, choice = value.partition("=")
        picked = {"a": "A", "b": "B", "skip": "skip"}.get(choice.strip().lower())
        if not sep or picked is None:
            raise InvalidInputError(f"--resolve takes <conflict id>=A|B|skip, got {value!r}")
        resolutions[_conflict_for(plan, key)] = picked
    return resolutions


def _load_plan(path: str, identity: Identity) -> Plan:
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PlanError(f"cannot read the plan {path}: {exc}") from None
    plan = plan_from_json(text)
    if plan.user_id != identity.user_id:
        raise ScopeError(f"the plan belongs to user {plan.user_id!r}, not {identity.user_id!r}")
    if plan.project_id != identity.project_id:
        raise PlanError(f"the plan is for project {plan.project_id!r}; run with --project-id {plan.project_id}")
    return plan


def cmd_apply(args, identity: Identity) -> int:
    from ..dream.interactive import ask_apply

    plan = _load_plan(args.apply, identity)
    term = Terminal.standard()
    with open_store(identity.store_location) as store:
        _recover(store, identity)
        check_answers(store, plan)  # a judge's answers: refused before anything is written
        plan = answered_plan(plan)
        resolutions = parse_resolutions(plan, args.resolve or [])
        if not args.yes:
            if plan.is_empty:
                term.line(report.NO_PROPOSALS)
                return 0
            term.report(report.report_pieces(plan), ends_with_prompt=True)
            if not ask_apply(term.read_line, term.write, prompt=False):
                term.line(report.CANCELLED)
                return 0
        return _finish(term, apply_plan(store, identity, plan, resolutions, mode="apply"))


def cmd_auto(args, identity: Identity) -> int:
    try:
        with auto_lock(lock_path_from_env()):
            return _auto_run(args, identity)
    except LockBusyError:
        print(report.AUTO_LOCK_BUSY)
        return 0


def _auto_run(args, identity: Identity) -> int:
    with open_store(identity.store_location) as store:
        _recover(store, identity)
        judge = _judge(identity)  # read once: it decides whether synthesis groups are looked for
        done = auto.run(store, identity, _now(args), _semantic(identity), judge)
    if done.outcome is None:
        print(report.no_memories_message(identity.project_id))
        return 0
    for note in done.outcome.stale:  # stdout keeps its one summary line; cron mails stderr
        print(f"{PROG}: not applied — {printable(note)}", file=sys.stderr)
    line = report.auto_summary_line(
        identity.project_id,
        done.outcome.merged,
        done.outcome.pruned,
        len(done.plan.conflicts),
        done.outcome.superseded,
        done.outcome.synthesized,
    )
    if judge is not None:  # a language model is configured (docs/judges.md)
        for note in judge.tally.notes:
            print(f"{PROG}: {printable(note)}", file=sys.stderr)
        line += tally_fields(judge.tally)
    print(line)
    return 0


def _judge(identity: Identity):
    """The language model of `$MEM0_HOME/config.yaml` as judge of `--auto` (built when first
    asked), or None (docs/judges.md)."""
    from ..judges.llm_judge import judge_for_dream

    return judge_for_dream(identity.home)


def cmd_runs(args, identity: Identity) -> int:
    """The project's recorded runs, newest first (docs/dream.md, "Runs and undo")."""
    from ..dream.runs_report import no_runs_message, run_line

    with open_store(identity.store_location) as store:
        runs = store.dream_runs(identity.user_id, identity.project_id)
    if args.json:
        print(json.dumps([run.to_dict() for run in runs], indent=2))
    elif not runs:
        print(no_runs_message(identity.project_id))
    else:
        print("\n".join(run_line(run) for run in runs))
    return 0


def cmd_undo(args, identity: Identity) -> int:
    """Take a run back: the changes, the question, then one transaction (docs/dream.md, "Runs and undo")."""
    from ..dream.interactive import ask_apply
    from ..dream.runs_report import NOTHING_TO_UNDO, left_alone_line, undo_pieces, undo_summary
    from ..dream.undo import LeftAlone, apply_undo, plan_undo

    term = Terminal.standard()
    with open_store(identity.store_location) as store:
        _recover(store, identity)
        run = store.dream_run(identity.user_id, identity.project_id, args.undo)
        with store.read_snapshot():  # one moment's view of the memories and their history
            preview = plan_undo(store, run)
        shown: set[LeftAlone] = set()
        if preview.reversals and not args.yes:
            term.report(undo_pieces(preview), ends_with_prompt=True)
            if not ask_apply(term.read_line, term.write, prompt=False):
                term.line(report.CANCELLED)
                return 0
            shown = set(preview.left_alone)
        done = apply_undo(store, identity, run.run_id) if preview.reversals else preview
    for left in done.left_alone:
        if left not in shown:
            term.line(left_alone_line(left).lstrip())
    term.line(undo_summary(done) if done.reversals else NOTHING_TO_UNDO)
    return 0


def cmd_demo(args, identity: Identity) -> int:
    from ..dream.demo import demo_store

    with demo_store(_now(args)) as (demo_identity, store):
        term = Terminal.standard()
        term.line(
            f"Demo: a throwaway store with the sample memories of a fictional project "
            f"({demo_identity.project_id}); your own memories are not touched.\n"
        )
        plan = make_plan(store, demo_identity, _now(args), semantic=_semantic(identity))
        return run_interactive(term, store, demo_identity, plan)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=PROG,
        description="Merge near-duplicate memories, surface contradictions for you to decide, and prune stale ones.",
    )
    identity_arguments(parser)
    modes = parser.add_mutually_exclusive_group()
    modes.add_argument(
        "--auto", action="store_true", help="unattended (cron): apply merges, supersedes and prunes, skip conflicts"
    )
    modes.add_argument(
        "--plan",
        action="store_true",
        help="print the report of what would change and write nothing (the plan as JSON with --json)",
    )
    modes.add_argument("--apply", metavar="FILE", help="apply a plan written by --plan --json ('-' = stdin)")
    modes.add_argument("--demo", action="store_true", help="run on a throwaway store filled with a bundled sample")
    modes.add_argument("--runs", action="store_true", help="list the project's applied runs, newest first")
    modes.add_argument("--undo", metavar="RUN", help="take a run back (its id, or a unique prefix of 8+ characters)")
    parser.add_argument("--json", action="store_true", help="with --plan or --runs: write JSON")
    parser.add_argument("-o", "--output", help="with --plan --json: the file to write ('-' = stdout)")
    parser.add_argument(
        "--resolve",
        action="append",
        metavar="ID=A|B|skip",
        help="with --apply: how to settle a conflict (repeatable; unnamed ones are skipped)",
    )
    parser.add_argument("--yes", action="store_true", help="with --apply or --undo: do not ask for confirmation")
    parser.add_argument("--now", help=argparse.SUPPRESS)
    return parser


def _check_flags(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if args.json and not (args.plan or args.runs):
        parser.error("--json goes with --plan or --runs")
    if args.output is not None and not (args.plan and args.json):
        parser.error("-o goes with --plan --json")
    if args.resolve and not args.apply:
        parser.error("--resolve goes with --apply")
    if args.yes and not (args.apply or args.undo is not None):
        parser.error("--yes goes with --apply or --undo")


def dispatch(args: argparse.Namespace) -> int:
    identity = identity_from(args)
    if args.auto:
        return cmd_auto(args, identity)
    if args.plan:
        return cmd_plan(args, identity)
    if args.apply:
        return cmd_apply(args, identity)
    if args.demo:
        return cmd_demo(args, identity)
    if args.runs:
        return cmd_runs(args, identity)
    if args.undo is not None:
        return cmd_undo(args, identity)
    return cmd_interactive(args, identity)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _check_flags(parser, args)
    with collector_paused():  # a batch run: see below
        return run_command(PROG, dispatch, args)


# Python's cyclic garbage collector stays off for a whole run (`analysis.collector_paused`), not
# only while the memories are read and analysed: afterwards every few thousand allocations (the
# journal's plan, the writes of an apply) it would rescan the 10,000-100,000 memories the run
# holds. A run is bounded and builds nothing cyclic that matters; reference counting frees the
# rest. It took 0.1-0.3 s of a nightly --auto on 10k (docs/dream.md, "`--auto`", "Speed").


def entry() -> NoReturn:
    """The `mem0-dream` console script (pyproject.toml): `main()`, then the process ends without
    tearing the interpreter down (`common.exit_without_teardown`)."""
    exit_without_teardown(main())


if __name__ == "__main__":
    entry()
