"""`mem0-forget`: find memories by search or by id, confirm, delete (docs/forget.md).

* `mem0-forget <query>` — up to 10 matches of the current project, numbered; asks which
  to delete (`1,3,5`, `2-4`, `all`, `cancel`; empty answer or end of input cancels).
* `mem0-forget <memory id>` — the id of one of the user's memories (any project), in full or
  a unique prefix of at least 8 characters (the listed short id): shows it and asks
  `Delete this memory? [y/N]`. An id that names no memory is exit 3, like `--ids`.
* `mem0-forget <query> --json` — the matches as JSON (full ids); deletes nothing.
* `mem0-forget --ids ID[,ID...] --yes` — deletes exactly those, for agents: every id must
  be one of the user's memories, else nothing is deleted (one transaction).
* `--purge` (with any of the deleting forms) — also erases the texts from the history, in
  the same transaction, and leaves no copy in the store file (`SqliteStore.scrub`); with
  `--ids` it also takes memories deleted earlier. A purge cannot be undone.

Nothing is deleted without a yes. Deletes are recoverable: `mem0-memories restore ID`
brings a memory back from the history, and the output says so (not after `--purge`).
"""

from __future__ import annotations

import argparse
import json
import sys

from .. import forget, operations
from ..errors import InvalidInputError, NotFoundError
from ..ids import matches, pick
from ..records import Memory
from ..sanitize import inert_json
from ..secrets import mask
from ..store import open_store
from ..store.base import Writer
from .common import Parser, identity_arguments, identity_from, run_command
from .terminal import Terminal

PROG = "mem0-forget"
ACTOR = "mem0-forget"


def _print_json(value) -> None:
    print(inert_json(json.dumps(value, indent=2, ensure_ascii=False)))


def _report_deleted(term: Terminal, ids: list[str], purge: bool, scrubbed: bool = True) -> None:
    term.line(forget.deleted_line(len(ids)))
    if purge:
        if ids:
            term.line(forget.PURGED)
        if not scrubbed:
            term.line(forget.PURGE_PENDING)
        return
    for memory_id in ids:
        term.line(forget.RESTORE_HINT.format(id=memory_id))


def forget_in(writer: Writer, user_id: str, memory_id: str, purge: bool) -> None:
    """Delete the memory; with `purge`, erase its text from the history too (it may have been
    deleted before). In the caller's transaction, which must be `write(secure=purge)`."""
    current = writer.get(user_id, memory_id)
    if current is None and not (purge and writer.last_deleted(user_id, memory_id)):
        raise NotFoundError(forget.not_found(memory_id))
    if current is not None:
        writer.delete(current, ACTOR)
    if purge:
        writer.erase_text(user_id, memory_id, ACTOR)


def delete_each(caller: operations.Caller, term: Terminal, memories: list[Memory], purge: bool = False) -> int:
    """Delete the chosen memories one by one; one that vanished meanwhile is reported, not fatal."""
    deleted = []
    for memory in memories:
        try:
            with caller.store.write(secure=purge) as writer:
                if writer.get(caller.user_id, memory.id) is None:
                    raise NotFoundError(forget.not_found(memory.id))
                forget_in(writer, caller.user_id, memory.id, purge)
        except NotFoundError:
            term.line(f"Not deleted [ID: {memory.id[: forget.SHORT_ID_CHARS]}]: it no longer exists.")
            continue
        deleted.append(memory.id)
    scrubbed = caller.store.scrub() if purge and deleted else True
    _report_deleted(term, deleted, purge, scrubbed)
    return 0


def ask_selection(term: Terminal, count: int) -> forget.Selection:
    while True:
        term.write(forget.SELECT_PROMPT)
        answer = term.read_line()
        if answer is None:
            term.write("\n")
            return forget.Selection(cancel=True)
        selection = forget.parse_selection(answer, count)
        if not selection.error:
            return selection
        term.line(selection.error)


def ask_yes_no(term: Terminal) -> bool:
    while True:
        term.write(forget.CONFIRM_PROMPT)
        answer = term.read_line()
        if answer is None:
            term.write("\n")
        decision = forget.parse_yes_no(answer)
        if decision is not None:
            return decision


def forget_by_id(caller: operations.Caller, term: Terminal, memory: Memory, as_json: bool, purge: bool = False) -> int:
    if as_json:
        _print_json({"results": [forget.match_record(memory)]})
        return 0
    term.line(forget.found_line(memory))
    if purge:
        term.line(forget.PURGE_WARNING)
    if not ask_yes_no(term):
        term.line(forget.CANCELLED)
        return 0
    return delete_each(caller, term, [memory], purge)


def forget_by_query(caller: operations.Caller, term: Terminal, query: str, as_json: bool, purge: bool = False) -> int:
    hits = caller.store.search(
        caller.user_id,
        query,
        operations.scoped_filter(caller, None),
        top_k=forget.MAX_MATCHES,
        app_id=caller.identity.project_id,
    )
    memories = [memory for memory, _ in hits]
    if as_json:
        _print_json(
            {
                "query": mask(query),
                "project_id": caller.identity.project_id,
                "results": [forget.match_record(memory, score) for memory, score in hits],
            }
        )
        return 0
    if not memories:
        term.line(forget.no_matches(query, caller.identity.project_id))
        return 0
    term.line(forget.matches_header(len(memories), query))
    for number, memory in enumerate(memories, 1):
        term.line(forget.match_line(number, memory))
    if purge:
        term.line(forget.PURGE_WARNING)
    selection = ask_selection(term, len(memories))
    if selection.cancel or not selection.numbers:
        term.line(forget.CANCELLED)
        return 0
    return delete_each(caller, term, [memories[n - 1] for n in selection.numbers], purge)


def _resolved(writer: Writer, user_id: str, keys: list[str], purge: bool) -> list[str]:
    """The full ids `keys` name (ids or unique prefixes), each once; with `purge`, deleted
    memories count too. One that names none → nothing is deleted."""
    resolved: list[str] = []
    for key in keys:
        try:
            memory_id = writer.resolve_id(user_id, key, deleted=purge)
        except NotFoundError:
            raise NotFoundError(forget.not_found(key)) from None
        except InvalidInputError as exc:
            raise InvalidInputError(f"{exc}; nothing was deleted") from None
        if memory_id not in resolved:
            resolved.append(memory_id)
    return resolved


def forget_ids(caller: operations.Caller, term: Terminal, keys: list[str], as_json: bool, purge: bool = False) -> int:
    """Delete exactly the memories `keys` name, in one transaction; any not found → nothing deleted."""
    with caller.store.write(secure=purge) as writer:
        ids = _resolved(writer, caller.user_id, keys, purge)
        for memory_id in ids:
            forget_in(writer, caller.user_id, memory_id, purge)
    scrubbed = caller.store.scrub() if purge else True
    if as_json:
        answer = (
            {"deleted": ids, "purged": True, "scrubbed": scrubbed}
            if purge
            else {"deleted": ids, "restore": "mem0-memories restore ID"}
        )
        _print_json(answer)
    else:
        _report_deleted(term, ids, purge, scrubbed)
    return 0


def find_by_id(caller: operations.Caller, target: str) -> Memory | None:
    """The memory a one-word target names (an id or a unique prefix of one), or None: then it is
    a search query. A full UUID that names no memory is an error (exit 3), not a query."""
    if not forget.maybe_id(target):
        return None
    key = target.strip()
    candidates = matches(key, caller.store.id_candidates(caller.user_id, key))
    if not candidates:
        if forget.looks_like_id(key):
            raise NotFoundError(forget.not_found(key))
        return None
    if len(candidates) > 1:
        try:
            pick(key, candidates)
        except InvalidInputError as exc:
            raise InvalidInputError(f"{exc}; nothing was deleted") from None
    return caller.store.get(caller.user_id, candidates[0])


def cmd_forget(args: argparse.Namespace) -> int:
    target = " ".join(args.target).strip()
    if args.ids is not None:
        if target:
            raise InvalidInputError("give either a query / memory id or --ids, not both")
        if not args.yes:
            raise InvalidInputError("--ids deletes without asking: add --yes to confirm")
        ids = forget.parse_ids(args.ids)
        if not ids:
            raise InvalidInputError("--ids needs at least one memory id")
    elif args.yes:
        raise InvalidInputError("--yes only goes with --ids; a search or an id asks before deleting")
    elif not target:
        raise InvalidInputError("what should be forgotten? Give a search query, a memory id, or --ids ID,... --yes")
    elif args.purge and args.json:
        raise InvalidInputError("--purge goes with a deletion; a search with --json deletes nothing")
    identity = identity_from(args)
    term = Terminal.standard()
    with open_store(identity.store_location) as store:
        caller = operations.Caller(store, identity, actor=ACTOR)
        if args.ids is not None:
            return forget_ids(caller, term, ids, args.json, args.purge)
        memory = find_by_id(caller, target)
        if memory is not None:
            return forget_by_id(caller, term, memory, args.json, args.purge)
        return forget_by_query(caller, term, target, args.json, args.purge)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=PROG,
        description="Delete memories found by a search or an id, after confirmation. "
        "Deleted memories can be brought back with `mem0-memories restore ID`.",
    )
    identity_arguments(parser)
    parser.add_argument(
        "target",
        nargs="*",
        help="a search query (words), or a memory id (a unique prefix of at least 8 characters will do)",
    )
    parser.add_argument("--json", action="store_true", help="list the matches as JSON and delete nothing")
    parser.add_argument("--ids", help="comma-separated memory ids to delete (needs --yes)")
    parser.add_argument("--yes", action="store_true", help="with --ids: delete without asking")
    parser.add_argument(
        "--purge",
        action="store_true",
        help="also erase the texts from the history (for a leaked secret); cannot be undone",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_command(PROG, cmd_forget, args)


if __name__ == "__main__":
    sys.exit(main())
