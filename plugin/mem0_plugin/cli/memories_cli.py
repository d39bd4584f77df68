"""`mem0-memories`: add, list, get, search, delete, import, export, copy, history, restore, pin,
unpin, stats, policy, reindex, embed.

What it prints for people (`list`, `get`, `search`, `history`, `add --json`, with or without
`--json`) shows credentials masked (`secrets.mask`), as `mem0-health` and `mem0-forget` do;
`--show-secrets` prints them in full. `export` is a backup for `import`: it writes every text
as stored. An id may be given in full or as a unique prefix of at least 8 characters (`ids`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .. import operations, transfer
from ..errors import InvalidInputError, NotFoundError
from ..jsontext import parse_json_text
from ..private_files import open_private
from ..records import Memory
from ..sanitize import inert_json, printable
from ..secrets import mask
from ..store import open_store
from ..store_url import display_url, parse_store_url
from ..wording import memories
from .common import Parser, identity_arguments, identity_from, run_command
from .terminal import Terminal

PROG = "mem0-memories"
ID_HELP = "a memory id, or a unique prefix of at least 8 characters (the short id mem0-forget lists)"


@contextmanager
def _caller(args: argparse.Namespace, *, semantic: bool = False) -> Iterator[operations.Caller]:
    """The caller, its store closed when the command is done; with `semantic`, the configured
    embedder too (only search and embed use it)."""
    identity = identity_from(args)
    embedder = None
    if semantic:
        from ..semantic import Semantic

        embedder = Semantic.from_home(identity.home)
    with open_store(identity.store_location) as store:
        yield operations.Caller(store, identity, actor="cli", semantic=embedder)


def _json_arg(text: str | None, name: str):
    if text is None:
        return None
    return parse_json_text(text, f"{name} is")


def _print_json(value) -> None:
    print(inert_json(json.dumps(value, indent=2, ensure_ascii=False)))


def _shown(record: dict | None, show_secrets: bool) -> dict | None:
    """A record as printed: its text with credentials masked unless `--show-secrets`."""
    if show_secrets or not record or not isinstance(record.get("memory"), str):
        return record
    return {**record, "memory": mask(record["memory"])}


def _shown_results(answer: dict, show_secrets: bool) -> dict:
    return {**answer, "results": [_shown(record, show_secrets) for record in answer["results"]]}


def _line(record: dict) -> str:
    state = record.get("lifecycle_state", "active")
    label = "" if state == "active" else f" ({state})"
    kind = (record.get("metadata") or {}).get("type") or "unknown"
    return f"{record['id']}  {record['created_at'][:10]}  [{printable(str(kind))}]{label} {printable(record['memory'])[:100]}"


def cmd_add(args) -> int:
    metadata = _json_arg(args.metadata, "--metadata") or {}
    if args.type:
        metadata = {**metadata, "type": args.type}
    with _caller(args, semantic=args.infer) as caller:
        answer = operations.add_memory(
            caller,
            args.text,
            app_id=args.project_id,
            agent_id=args.agent_id,
            run_id=args.run_id,
            metadata=metadata,
            infer=args.infer,
            immutable=args.immutable,
        )
    result = answer["results"][0]
    if args.json:
        _print_json(_shown_results(answer, args.show_secrets))
        return 0
    if result["event"] == "NOOP":
        print(f"NOOP {result['id']} (an identical memory exists)")
    else:
        print(f"ADD {result['id']}")
    for retired in answer["results"][1:]:  # --infer: what the write path retired into it
        print(f"{retired['event']} {retired['id']} {printable(mask(retired['memory']))[:100]}")
    return 0


def cmd_list(args) -> int:
    with _caller(args) as caller:
        answer = operations.get_memories(
            caller,
            _json_arg(args.filters, "--filters"),
            args.page,
            args.page_size,
            args.latest_only,
            args.include_merged,
        )
    answer = _shown_results(answer, args.show_secrets)
    if args.json:
        _print_json(answer)
        return 0
    for record in answer["results"]:
        print(_line(record))
    more = f"; next page: {answer['next']}" if answer["next"] else ""
    print(f"({memories(answer['count'])}, page {answer['page']}{more})")
    return 0


def cmd_get(args) -> int:
    with _caller(args) as caller:
        _print_json(_shown(operations.get_memory(caller, args.id), args.show_secrets))
    return 0


def cmd_search(args) -> int:
    with _caller(args, semantic=True) as caller:
        answer = operations.search_memories(
            caller,
            args.query,
            _json_arg(args.filters, "--filters"),
            args.top_k,
            args.threshold,
            args.latest_only,
            args.include_merged,
        )
    answer = _shown_results(answer, args.show_secrets)
    if args.json:
        _print_json(answer)
        return 0
    for record in answer["results"]:
        print(f"{record['score']:.2f}  {_line(record)}")
    if not answer["results"]:
        print("No matching memories.")
    return 0


def cmd_delete(args) -> int:
    with _caller(args) as caller:
        print(operations.delete_memory(caller, args.id)["message"])
    return 0


def cmd_import(args) -> int:
    try:
        text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"cannot read {args.file}: {exc}") from None
    with _caller(args) as caller:
        result = transfer.import_memories(caller, text, skip_invalid=args.skip_invalid, project_id=args.project_id)
    for problem in result.invalid:
        print(f"{PROG}: skipped {problem}", file=sys.stderr)
    if result.elsewhere:
        print(
            f"{PROG}: note: {memories(result.elsewhere)} already in the store under another project "
            f"stayed there (an id is unique in a store; import into another store to copy them)",
            file=sys.stderr,
        )
    print(result.summary())
    return 0


def cmd_export(args) -> int:
    with _caller(args) as caller:
        return _write_export(args, transfer.export_lines(caller, all_projects=args.all_projects))


def cmd_copy(args) -> int:
    target_url = parse_store_url(args.to)
    with _caller(args) as caller, open_store(target_url) as target:
        if target.url == caller.store.url:
            raise InvalidInputError("--to names the store the memories are in already")
        result = transfer.copy_scope(caller, target, all_projects=args.all_projects)
    print(result.summary(display_url(args.to)))
    return 0


def _write_export(args, lines: Iterator[str]) -> int:
    if args.output:
        target = Path(args.output)
        temp = target.with_name(target.name + ".partial")
        try:
            with open_private(temp) as handle:  # a backup holds every text: 0600
                count = sum(1 for line in lines if handle.write(line + "\n"))
            temp.replace(target)
        except OSError as exc:
            temp.unlink(missing_ok=True)
            raise InvalidInputError(f"cannot write {args.output}: {exc.strerror}") from None
        print(f"Exported {memories(count)} to {args.output}", file=sys.stderr)
    else:
        for line in lines:
            print(line)
    return 0


def cmd_history(args) -> int:
    with _caller(args) as caller:
        try:
            memory_id = caller.store.resolve_id(caller.user_id, args.id.strip(), deleted=True)
        except NotFoundError:
            raise NotFoundError(f"no history for memory {args.id}") from None
        entries = caller.store.history(caller.user_id, memory_id)
    if not entries:
        raise NotFoundError(f"no history for memory {args.id}")
    if args.json:
        _print_json(
            [
                {
                    "seq": e.seq,
                    "event": e.event,
                    "actor": e.actor,
                    "at": e.at,
                    "before": _shown(e.before, args.show_secrets),
                    "after": _shown(e.after, args.show_secrets),
                }
                for e in entries
            ]
        )
        return 0
    print("\n".join(history_lines(entries, args.show_secrets)))
    return 0


def history_lines(entries: list, show_secrets: bool) -> list[str]:
    """One line per event: time, event, actor, the state it left (`deleted` when it left no
    record; a pointer after a merge or supersede) and the text, in columns as wide as their
    widest value."""
    rows = []
    for e in entries:
        shown = _shown(e.after or e.before or {}, show_secrets) or {}
        if e.after is None:
            state = "purged" if e.event == "PURGE" else "deleted"
        else:
            state = str(shown.get("lifecycle_state", ""))
            if shown.get("replacement_memory_id"):
                state += f" → {shown['replacement_memory_id']}"
        rows.append((e.at, e.event, e.actor, printable(state), printable(shown.get("memory", ""))[:100]))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return ["  ".join(f"{cell:<{width}}" for cell, width in zip(row, widths)) + "  " + row[4] for row in rows]


def cmd_restore(args) -> int:
    with _caller(args) as caller:
        memory: Memory = operations.restore_memory(caller, args.id)
    print(f"Restored {memory.id} (active).")
    return 0


def cmd_pin(args) -> int:
    """`pin` / `unpin`: set or remove `metadata.pinned` (dream leaves a pinned memory alone)."""
    with _caller(args) as caller:
        record = operations.update_memory(caller, args.id, metadata={"pinned": True if args.pin else None})
    word = "Pinned" if args.pin else "Unpinned"
    print(f'{word} [mem0:{record["id"][:8]}] "{printable(mask(record["memory"]))[:80]}"')
    return 0


def cmd_stats(args) -> int:
    from .. import stats
    from ..timeutil import utc_now

    now = utc_now()
    with _caller(args, semantic=not args.no_dream) as caller:
        found = list(caller.store.iter_scope(caller.user_id, caller.identity.project_id))
        counts = None
        if not args.no_dream:
            from ..dream.pipeline import make_plan

            plan = make_plan(caller.store, caller.identity, now, semantic=caller.semantic)
            counts = {kind: len(getattr(plan, kind)) for kind in ("merges", "supersedes", "conflicts", "prunes")}
    print(stats.render(stats.memory_stats(found, now), caller.identity.project_id, counts))
    return 0


def cmd_policy(args) -> int:
    """Show the project's memory policy (mem0.md's Instructions and Retention), or change it."""
    from .. import mem0_config

    identity = identity_from(args)
    path_text = mem0_config.find_mem0_config(str(identity.cwd))
    path = Path(path_text) if path_text else identity.cwd / mem0_config.CONFIG_NAME
    content = mem0_config.read_config_text(str(path)) if path.is_file() else ""
    changed = content
    if args.instructions is not None:
        changed = mem0_config.replace_section(changed, "Instructions", args.instructions)
    if args.retention or args.forget_retention:
        policies = mem0_config.parse_retention(changed)
        for item in args.retention:
            policies.update(_retention_item(item))
        for name in args.forget_retention:
            policies.pop(name, None)
        changed = mem0_config.replace_section(changed, "Retention", mem0_config.retention_body(policies))
    if changed != content:
        try:
            path.write_text(changed, encoding="utf-8")
        except OSError as exc:
            raise InvalidInputError(f"cannot write {path}: {exc.strerror}") from None
        print(f"Updated {path}; commit it to share the policy with your team.")
    instructions = mem0_config.parse_instructions(changed)
    retention = mem0_config.parse_retention(changed)
    print(f"Memory policy of project {identity.project_id} ({path if path.is_file() else 'no mem0.md yet'}):")
    print(f"  Instructions: {printable(instructions) if instructions else '(none)'}")
    if retention:
        shown = ", ".join(f"{k} {'forever' if v is None else f'{v}d'}" for k, v in retention.items())
        print(f"  Retention:    {shown}")
    else:
        print("  Retention:    (none: dream prunes session_state and compact_summary after 90 days)")
    return 0


def _retention_item(text: str) -> dict[str, int | None]:
    from ..mem0_config import parse_retention

    name, _, value = text.partition("=")
    parsed = parse_retention(f"## Retention\n{name.strip()}: {value.strip()}\n")
    if not parsed:
        raise InvalidInputError(f"--retention {text!r}: write TYPE=<days>d or TYPE=forever (e.g. session_state=30d)")
    return parsed


def cmd_reindex(args) -> int:
    """Write every memory's search terms again and count BM25's statistics again (a store whose
    index came from an older release, or statistics in doubt)."""
    with _caller(args) as caller:
        changed = caller.store.transact(lambda writer: writer.reindex_search())
    print(f"Reindexed the store: {memories(changed)} with new search terms; statistics counted again.")
    return 0


def cmd_embed(args) -> int:
    with _caller(args, semantic=True) as caller:
        return _embed(args, caller)


def _embed(args, caller: operations.Caller) -> int:
    from ..embeddings import EmbedderUnavailable

    semantic = caller.semantic
    assert semantic is not None
    semantic.quiet = True
    if not semantic.available():
        raise EmbedderUnavailable(f"semantic matching is off ({semantic.reason}); see mem0-health")
    app_id = None if args.all_projects else caller.identity.project_id
    progress = Terminal.standard().progress("Embedding")
    done = semantic.backfill(caller.store, caller.user_id, app_id, progress=progress)
    if semantic.model_id is None:
        raise EmbedderUnavailable(f"semantic matching is off ({semantic.reason}); see mem0-health")
    embedded, total = caller.store.vector_counts(caller.user_id, semantic.model_id, app_id)
    where = "all projects" if app_id is None else f"project {app_id}"
    reused = done.stored - done.embedded
    kept = f" ({reused} more took a vector already made for the same text)" if reused else ""
    print(
        f"Embedded {memories(done.embedded)} with {semantic.model_name}{kept}; "
        f"{embedded}/{total} of {where} have vectors."
    )
    return 0


def int_between(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: an integer in [low, high]; argparse names the flag in the error."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be between {low} and {high}, got {value}")
        return value

    return parse


def fraction(text: str) -> float:
    """An argparse type: a number from 0 to 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number: {text!r}") from None
    if not 0 <= value <= 1:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {text}")
    return value


def _read_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--filters", help="mem0 filter as JSON")
    states = parser.add_mutually_exclusive_group()
    states.add_argument("--latest-only", action="store_true", help="active memories only")
    states.add_argument("--include-merged", action="store_true", help="also merged memories")
    parser.add_argument("--json", action="store_true", help="print the JSON answer")
    _secrets_flag(parser)


def _secrets_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--show-secrets", action="store_true", help="print credentials in memory texts in full (masked by default)"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog=PROG, description="Manage the memories of the embedded store.")
    identity_arguments(parser)
    common = Parser(add_help=False)
    identity_arguments(common, suppress=True)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, func, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[common], help=help_text, description=help_text)
        p.set_defaults(func=func)
        return p

    p = command("add", cmd_add, "store a memory as given (--infer: merge or supersede what it replaces)")
    p.add_argument("text")
    p.add_argument("--type", help="metadata.type")
    p.add_argument("--metadata", help="metadata as a JSON object")
    p.add_argument("--agent-id")
    p.add_argument("--run-id")
    p.add_argument("--immutable", action="store_true")
    p.add_argument(
        "--infer",
        action="store_true",
        help="run the write path: an older memory it certainly repeats or replaces is merged or superseded",
    )
    p.add_argument("--json", action="store_true")
    _secrets_flag(p)
    p = command("list", cmd_list, "list memories page by page")
    p.add_argument("--page", type=int_between(1, operations.MAX_PAGE), default=1, help="page number, from 1")
    p.add_argument(
        "--page-size",
        type=int_between(1, operations.MAX_PAGE_SIZE),
        default=100,
        help=f"memories per page (1-{operations.MAX_PAGE_SIZE}, default 100)",
    )
    _read_flags(p)
    p = command("get", cmd_get, "show one memory as JSON")
    p.add_argument("id", help=ID_HELP)
    _secrets_flag(p)
    p = command("search", cmd_search, "search memories")
    p.add_argument("query")
    p.add_argument(
        "--top-k",
        type=int_between(1, operations.MAX_TOP_K),
        default=10,
        help=f"most results (1-{operations.MAX_TOP_K}, default 10)",
    )
    p.add_argument("--threshold", type=fraction, help="minimum score, from 0 to 1")
    _read_flags(p)
    p = command("delete", cmd_delete, "delete a memory (recoverable with restore)")
    p.add_argument("id", help=ID_HELP)
    p = command(
        "import",
        cmd_import,
        "import a JSON array, a {\"results\": [...]} page or JSON Lines ('-' = stdin); "
        "with --project-id, every record goes into that project",
    )
    p.add_argument("file")
    p.add_argument("--skip-invalid", action="store_true", help="import the valid records, report the rest")
    p = command(
        "export",
        cmd_export,
        "write every memory of the project, every state, as JSON Lines "
        "(texts as stored, credentials included: a backup)",
    )
    p.add_argument("-o", "--output", help="file to write (default: standard output)")
    p.add_argument("--all-projects", action="store_true", help="every project of the user")
    p = command(
        "copy",
        cmd_copy,
        "copy every memory of the project, every state, with its history, into another store "
        "(--to URL: an SQLite file or a PostgreSQL database): ids, times and lifecycle kept",
    )
    p.add_argument("--to", required=True, metavar="URL", help="the store to copy into")
    p.add_argument("--all-projects", action="store_true", help="every project of the user")
    p = command("history", cmd_history, "show the change history of a memory")
    p.add_argument("id", help=ID_HELP)
    p.add_argument("--json", action="store_true")
    _secrets_flag(p)
    p = command("restore", cmd_restore, "bring back a deleted, merged or superseded memory")
    p.add_argument("id", help=ID_HELP)
    p = command("pin", cmd_pin, "pin a memory: dream never merges, supersedes or prunes it")
    p.add_argument("id", help=ID_HELP)
    p.set_defaults(pin=True)
    p = command("unpin", cmd_pin, "unpin a memory")
    p.add_argument("id", help=ID_HELP)
    p.set_defaults(pin=False)
    p = command("stats", cmd_stats, "memories per type, state and age, and what dream would propose")
    p.add_argument("--no-dream", action="store_true", help="do not compute what dream would propose")
    p = command("policy", cmd_policy, "show or change the project's memory policy in mem0.md")
    p.add_argument("--instructions", metavar="TEXT", help="set the ## Instructions section ('' removes it)")
    p.add_argument(
        "--retention", action="append", default=[], metavar="TYPE=DAYS", help="keep TYPE for DAYS (30d) or forever"
    )
    p.add_argument("--forget-retention", action="append", default=[], metavar="TYPE", help="drop TYPE's rule")
    command("reindex", cmd_reindex, "write every memory's search terms again and recount search statistics")
    p = command("embed", cmd_embed, "compute the vectors of memories that lack one (semantic search and dream)")
    p.add_argument("--all-projects", action="store_true", help="every project of the user")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_command(PROG, args.func, args)


if __name__ == "__main__":
    sys.exit(main())
