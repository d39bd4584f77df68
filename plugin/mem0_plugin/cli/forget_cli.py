"""`mem0-forget`: find memories by search or by id, confirm, delete (docs/forget.md).

* `mem0-forget <query>` — up to 10 matches of the current project, numbered; asks which
  to delete (`1,3,5`, `2-4`, `all`, `cancel`; empty answer or end of input cancels).
* `mem0-forget <memory id>` — a full id of one of the user's memories (any project):
  shows it and asks `Delete this memory? [y/N]`.
* `mem0-forget <query> --json` — the matches as JSON (full ids); deletes nothing.
* `mem0-forget --ids ID[,ID...] --yes` — deletes exactly those, for agents: every id must
  be one of the user's memories, else nothing is deleted (one transaction).

Nothing is deleted without a yes. Deletes are recoverable: `mem0-memories restore ID`
brings a memory back from the history, and the output says so.
"""

from __future__ import annotations

import argparse
import json
import sys

from .. import forget, operations
from ..errors import InvalidInputError, NotFoundError
from ..records import Memory
from ..sanitize import inert_json
from ..secrets import mask
from ..store import open_store
from .common import Parser, identity_arguments, identity_from, run_command
from .terminal import Terminal

PROG = "mem0-forget"
ACTOR = "mem0-forget"


def _print_json(value) -> None:
    print(inert_json(json.dumps(value, indent=2, ensure_ascii=False)))


def _report_deleted(term: Terminal, ids: list[str]) -> None:
    term.line(forget.deleted_line(len(ids)))
    for memory_id in ids:
        term.line(forget.RESTORE_HINT.format(id=memory_id))


def delete_each(caller: operations.Caller, term: Terminal, memories: list[Memory]) -> int:
    """Delete the chosen memories one by one; one that vanished meanwhile is reported, not fatal."""
    deleted = []
    for memory in memories:
        try:
            operations.delete_memory(caller, memory.id)
        except NotFoundError:
            term.line(f"Not deleted [ID: {memory.id[:forget.SHORT_ID_CHARS]}]: it no longer exists.")
            continue
        deleted.append(memory.id)
    _report_deleted(term, deleted)
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


def forget_by_id(caller: operations.Caller, term: Terminal, memory: Memory, as_json: bool) -> int:
    if as_json:
        _print_json({"results": [forget.match_record(memory)]})
        return 0
    term.line(forget.found_line(memory))
    if not ask_yes_no(term):
        term.line(forget.CANCELLED)
        return 0
    return delete_each(caller, term, [memory])


def forget_by_query(caller: operations.Caller, term: Terminal, query: str, as_json: bool) -> int:
    hits = caller.store.search(caller.user_id, query, operations.scoped_filter(caller, None),
                               top_k=forget.MAX_MATCHES)
    memories = [memory for memory, _ in hits]
    if as_json:
        _print_json({"query": mask(query), "project_id": caller.identity.project_id,
                     "results": [forget.match_record(memory, score) for memory, score in hits]})
        return 0
    if not memories:
        term.line(forget.no_matches(query, caller.identity.project_id))
        return 0
    term.line(forget.matches_header(len(memories), query))
    for number, memory in enumerate(memories, 1):
        term.line(forget.match_line(number, memory))
    selection = ask_selection(term, len(memories))
    if selection.cancel or not selection.numbers:
        term.line(forget.CANCELLED)
        return 0
    return delete_each(caller, term, [memories[n - 1] for n in selection.numbers])


def forget_ids(caller: operations.Caller, term: Terminal, ids: list[str], as_json: bool) -> int:
    """Delete exactly `ids` in one transaction; any id not found → nothing deleted."""
    with caller.store.write() as writer:
        found = []
        for memory_id in ids:
            memory = writer.get(caller.user_id, memory_id)
            if memory is None:
                raise NotFoundError(f"memory {memory_id} not found; nothing was deleted")
            found.append(memory)
        for memory in found:
            writer.delete(memory, ACTOR)
    if as_json:
        _print_json({"deleted": ids, "restore": "mem0-memories restore ID"})
    else:
        _report_deleted(term, ids)
    return 0


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
    identity = identity_from(args)
    term = Terminal.standard()
    with open_store(identity.store_location) as store:
        caller = operations.Caller(store, identity, actor=ACTOR)
        if args.ids is not None:
            return forget_ids(caller, term, ids, args.json)
        if forget.looks_like_id(target):
            try:
                memory = store.get(identity.user_id, target.strip())
            except NotFoundError:
                term.line(f"No memory with ID {target.strip()} found. Nothing deleted.")
                return 0
            return forget_by_id(caller, term, memory, args.json)
        return forget_by_query(caller, term, target, args.json)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=PROG, description="Delete memories found by a search or an id, after confirmation. "
                               "Deleted memories can be brought back with `mem0-memories restore ID`.")
    identity_arguments(parser)
    parser.add_argument("target", nargs="*", help="a search query (words) or a memory id")
    parser.add_argument("--json", action="store_true", help="list the matches as JSON and delete nothing")
    parser.add_argument("--ids", help="comma-separated memory ids to delete (needs --yes)")
    parser.add_argument("--yes", action="store_true", help="with --ids: delete without asking")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_command(PROG, cmd_forget, args)


if __name__ == "__main__":
    sys.exit(main())
