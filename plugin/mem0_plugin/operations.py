"""The memory tools as plain functions over (store, identity): what the MCP server and the
`mem0-memories` CLI both call. Answers are the JSON shapes of docs/reads.md and docs/mcp-tools.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .errors import ImmutableError, InvalidInputError, NotFoundError, ScopeError
from .filters import TRUE, WILDCARD, CompiledFilter, compile_filters, parse_filters
from .identity import Identity
from .records import (
    ACTIVE,
    REMINDER_SOURCE,
    SUPERSEDED,
    Memory,
    memory_of_record,
    new_memory_id,
    optional_str,
    validate_metadata,
    validate_text,
)
from .store import ReadMode, Store
from .timeutil import format_timestamp, utc_now

if TYPE_CHECKING:
    from .judges.asking import JudgeSource
    from .semantic import Semantic
    from .store.base import Writer

MAX_PAGE = 10**9
MAX_PAGE_SIZE = 1000
MAX_TOP_K = 1000
DELETED_MESSAGE = "Memory deleted successfully!"


@dataclass(frozen=True)
class Caller:
    """Who is calling and on what: the store plus the resolved identity."""

    store: Store
    identity: Identity
    actor: str = "mcp"
    semantic: Semantic | None = None  # None: lexical only
    background: bool = False  # embed new memories on a background thread (a long-lived server)
    judge: JudgeSource | None = None  # a language model for the write path (docs/judges.md); None: rules only

    @property
    def user_id(self) -> str:
        return self.identity.user_id


def check_user(caller: Caller, user_id: object) -> None:
    if user_id not in (None, "", caller.user_id):
        raise ScopeError(f"user_id {user_id!r} is not this server's user; it serves {caller.user_id!r} only")


def _int_arg(value: object, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInputError(f"{name} must be an integer, got {value!r}")
    if not low <= value <= high:
        raise InvalidInputError(f"{name} must be between {low} and {high}, got {value}")
    return value


def _memory_id(memory_id: object) -> str:
    """The id as given (a full id or a unique prefix of at least 8 characters: `ids`)."""
    if not isinstance(memory_id, str) or not memory_id.strip():
        raise InvalidInputError("memory_id is required (a memory's id string)")
    return memory_id.strip()


def scoped_filter(caller: Caller, filters: object) -> CompiledFilter:
    """Compile filters; without any filter the read is confined to the current project."""
    parsed = parse_filters(filters)
    if parsed is None:
        parsed = {"app_id": caller.identity.project_id}
    return compile_filters(parsed, user_id=caller.user_id)


def search_filter(caller: Caller, filters: object) -> CompiledFilter:
    """`scoped_filter` for a search: it leaves out the reminder `mem0-dream --auto` leaves
    (`metadata.source` `mem0-dream-auto`), which answers no question about the project, unless
    the filters themselves ask about `metadata.source` (docs/reads.md, "Search answers")."""
    parsed = parse_filters(filters)
    if parsed is None:
        parsed = {"app_id": caller.identity.project_id}
    if not _asks_about_source(parsed):
        parsed = {"AND": [parsed, {"metadata": {"source": {"ne": REMINDER_SOURCE}}}]}
    return compile_filters(parsed, user_id=caller.user_id)


def _asks_about_source(node: object) -> bool:
    """Whether a filter tree has a condition on `metadata.source`."""
    if isinstance(node, Mapping):
        metadata = node.get("metadata")
        if isinstance(metadata, Mapping) and "source" in metadata:
            return True
        return any(_asks_about_source(value) for value in node.values())
    if isinstance(node, (list, tuple)):
        return any(_asks_about_source(item) for item in node)
    return False


def read_scope(caller: Caller, filters: object) -> tuple[CompiledFilter, str | None]:
    """A listing's filter and the project it is confined to, when that is all the filter says
    (no filter: the current project; `{"app_id": X}` or this user and `app_id` X under `AND`):
    then the filter is TRUE and the store counts the listing without reading rows."""
    parsed = parse_filters(filters)
    if parsed is None:
        return TRUE, caller.identity.project_id
    compiled = compile_filters(parsed, user_id=caller.user_id)  # validated either way
    project = only_project(parsed, caller.user_id)
    return (TRUE, project) if project is not None else (compiled, None)


def confined_project(caller: Caller, filters: object) -> str | None:
    """The one project a read is confined to: the current one without filters, else the
    `app_id` a filter requires (itself or under `AND`); None for a read across projects."""
    parsed = parse_filters(filters)
    if parsed is None:
        return caller.identity.project_id
    found: set[str] = set()

    def walk(node: object) -> None:
        if not isinstance(node, Mapping):
            return
        for key, value in node.items():
            if key == "AND" and isinstance(value, list):
                for item in value:
                    walk(item)
            elif key == "app_id" and isinstance(value, str) and value != WILDCARD:
                found.add(value)

    walk(parsed)
    return found.pop() if len(found) == 1 else None


def only_project(filters: Mapping[str, Any], user_id: str) -> str | None:
    """The project X when `filters` says only "app_id X" (and possibly "user_id `user_id`"),
    as one object or under `AND`; None for any other filter."""
    projects: set[object] = set()

    def walk(node: object) -> bool:
        if not isinstance(node, Mapping) or not node:
            return False
        for key, value in node.items():
            if key == "AND" and isinstance(value, list) and value:
                if not all(walk(item) for item in value):
                    return False
            elif key == "app_id" and isinstance(value, str) and value != WILDCARD:
                projects.add(value)
            elif not (key == "user_id" and value == user_id):
                return False
        return True

    if not walk(filters) or len(projects) != 1:
        return None
    project = projects.pop()
    return project if isinstance(project, str) else None


def scope_filters(filters: object, **scope: object) -> object:
    """`filters` with the top-level scope arguments mem0 clients send (`user_id`, `app_id`,
    `agent_id`, `run_id`) added as conditions; `filters` itself when none is given."""
    conditions: list[object] = [{key: value} for key, value in scope.items() if value not in (None, "")]
    if not conditions:
        return filters
    parsed = parse_filters(filters)
    return {"AND": conditions if parsed is None else [*conditions, parsed]}


def event_status(caller: Caller, event_id: object) -> dict[str, Any]:
    """What mem0's `get_event_status` answers for the `event_id` of our `add_memory`: the id of
    the memory it wrote, which was written before the answer (writes are synchronous)."""
    key = _memory_id(event_id)
    memory_id = caller.store.resolve_id(caller.user_id, key, deleted=True)
    entries = caller.store.history(caller.user_id, memory_id)
    if not entries:
        raise NotFoundError(f"event {key} not found")
    first = entries[0]
    record = first.after or first.before or {}
    return {
        "event_id": memory_id,
        "status": "SUCCEEDED",
        "results": [{"id": memory_id, "memory": record.get("memory"), "event": first.event}],
        "message": "writes are synchronous here: this one finished before add_memory answered",
    }


def with_state(memory: Memory) -> dict[str, Any]:
    return memory.to_dict()


def add_memory(
    caller: Caller,
    text: object,
    *,
    user_id: object = None,
    app_id: object = None,
    agent_id: object = None,
    run_id: object = None,
    metadata: object = None,
    infer: bool = True,
    immutable: bool = False,
    now: datetime | None = None,
) -> dict[str, Any]:
    from . import write_path  # the dream rules it uses: imported by the writes that need them

    check_user(caller, user_id)
    memory = _new_memory(caller, text, app_id, agent_id, run_id, metadata, immutable, now)
    comparison = (
        write_path.compare(caller.store, caller.semantic, memory, background=caller.background, judge=caller.judge)
        if infer
        else None
    )

    def add(writer) -> tuple[Memory | None, Memory, list[dict[str, Any]]]:
        existing = writer.find_identical(memory)
        if existing is not None:
            return existing, memory, []
        stored = writer.insert(memory, actor=caller.actor)  # a hosted store gives it the platform's id
        if comparison is None:
            return None, stored, []
        write_path.store_vector(writer, stored, comparison)
        return None, stored, write_path.retire(writer, stored, comparison, caller.actor)

    # one whole transaction, run again from the start if the database reports a conflict
    existing, memory, events = caller.store.transact(add)
    result = existing or memory
    if existing is None and (comparison is None or comparison.vector is None):
        _embed_later(caller, [memory.id])
    return {
        "status": "SUCCEEDED",
        "results": [{"id": result.id, "memory": result.memory, "event": "NOOP" if existing else "ADD"}, *events],
    }


def _new_memory(
    caller: Caller,
    text: object,
    app_id: object = None,
    agent_id: object = None,
    run_id: object = None,
    metadata: object = None,
    immutable: bool = False,
    now: datetime | None = None,
) -> Memory:
    stamp = format_timestamp(now or utc_now())
    return Memory(
        id=new_memory_id(),
        memory=validate_text(text),
        user_id=caller.user_id,
        app_id=optional_str(app_id, "app_id") or caller.identity.project_id,
        agent_id=optional_str(agent_id, "agent_id"),
        run_id=optional_str(run_id, "run_id"),
        metadata=validate_metadata(metadata),
        created_at=stamp,
        updated_at=stamp,
        immutable=bool(immutable),
    )


def add_superseding(
    caller: Caller,
    text: object,
    metadata: object,
    superseded: Callable[[Writer], Sequence[Memory]],
    *,
    now: datetime | None = None,
) -> dict[str, Any]:
    """Add a memory (no write path: its text is compared with nothing) and, in the same
    transaction, supersede the active memories `superseded(writer)` names: a capture replacing
    its branch's previous state, a re-imported file's changed section (docs/hooks.md). The
    memories that pointed at a superseded one point at the new one. Text identical to an active
    memory of the same scope is a `NOOP` that supersedes nothing. The answer is add_memory's."""
    from . import write_path  # the dream rules it uses: imported by the writes that need them

    memory = _new_memory(caller, text, metadata=metadata, now=now)

    def add(writer: Writer) -> tuple[Memory | None, Memory, list[dict[str, Any]]]:
        existing = writer.find_identical(memory)
        if existing is not None:
            return existing, memory, []
        stored = writer.insert(memory, actor=caller.actor)
        retirements = [
            write_path.Retirement(old, SUPERSEDED, None) for old in superseded(writer) if old.id != stored.id
        ]
        return (
            None,
            stored,
            write_path.retire(writer, stored, write_path.Comparison(retirements, None, None), caller.actor),
        )

    existing, memory, events = caller.store.transact(add)
    if existing is None:
        _embed_later(caller, [memory.id])
    result = existing or memory
    return {
        "status": "SUCCEEDED",
        "results": [{"id": result.id, "memory": result.memory, "event": "NOOP" if existing else "ADD"}, *events],
    }


def supersede(caller: Caller, replacement_id: str, old: Sequence[Memory]) -> list[dict[str, Any]]:
    """Mark each of `old` still as it was read `superseded` by the memory `replacement_id`, in
    one transaction (moving the pointers of memories that pointed at them); the events."""
    from . import write_path  # the dream rules it uses: imported by the writes that need them

    def run(writer: Writer) -> list[dict[str, Any]]:
        new = writer.get(caller.user_id, replacement_id)
        if new is None:
            return []
        retirements = [write_path.Retirement(memory, SUPERSEDED, None) for memory in old if memory.id != new.id]
        return write_path.retire(writer, new, write_path.Comparison(retirements, None, None), caller.actor)

    return caller.store.transact(run)


def get_memories(
    caller: Caller,
    filters: object = None,
    page: int = 1,
    page_size: int = 100,
    latest_only: bool = False,
    include_merged: bool = False,
) -> dict[str, Any]:
    page = _int_arg(page, "page", 1, MAX_PAGE)
    page_size = _int_arg(page_size, "page_size", 1, MAX_PAGE_SIZE)
    mode = ReadMode.from_flags(latest_only, include_merged)
    where, project = read_scope(caller, filters)
    result = caller.store.page(caller.user_id, where, mode, page, page_size, app_id=project)
    return {
        "count": result.count,
        "page": result.page,
        "page_size": result.page_size,
        "next": result.next,
        "previous": result.previous,
        "results": [with_state(m) for m in result.results],
    }


def search_memories(
    caller: Caller,
    query: object,
    filters: object = None,
    top_k: int = 10,
    threshold: float | None = None,
    latest_only: bool = False,
    include_merged: bool = False,
) -> dict[str, Any]:
    if not isinstance(query, str) or not query.strip():
        raise InvalidInputError("query must be a non-empty string")
    top_k = _int_arg(top_k, "top_k", 1, MAX_TOP_K)
    if threshold is not None and (
        isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1
    ):
        raise InvalidInputError(f"threshold must be a number between 0 and 1, got {threshold!r}")
    mode = ReadMode.from_flags(latest_only, include_merged)
    where = search_filter(caller, filters)
    vector, model = _query_vector(caller, query)
    hits = caller.store.search(
        caller.user_id,
        query,
        where,
        mode,
        top_k,
        threshold,
        query_vector=vector,
        model=model,
        app_id=confined_project(caller, filters),
    )
    return {"results": [{**with_state(m), "score": score} for m, score in hits]}


def _query_vector(caller: Caller, query: str):
    """The query's vector (a function that waits for it: it is made while the lexical side runs)
    and the model, or (None, None) for a lexical search."""
    semantic = caller.semantic
    if semantic is None or not semantic.available():
        return None, None
    semantic.prepare_search(caller.store, caller.user_id, caller.identity.project_id, background=caller.background)
    return semantic.query_vector_soon(query), semantic.model_id


def _embed_later(caller: Caller, ids: list[str]) -> None:
    if caller.semantic is not None and caller.background:
        caller.semantic.schedule(caller.store, caller.user_id, ids)


def get_memory(caller: Caller, memory_id: object) -> dict[str, Any]:
    full_id = caller.store.resolve_id(caller.user_id, _memory_id(memory_id))
    return with_state(caller.store.get(caller.user_id, full_id))


def _merge_metadata(current: Mapping[str, Any], change: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(current)
    for key, value in change.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


def update_memory(caller: Caller, memory_id: object, text: object = None, metadata: object = None) -> dict[str, Any]:
    memory_id = _memory_id(memory_id)
    if text is None and metadata is None:
        raise InvalidInputError("update_memory needs text, metadata, or both")

    def update(writer) -> tuple[Memory, Memory]:
        full_id = writer.resolve_id(caller.user_id, memory_id, deleted=True)  # a deleted one: say so
        before = writer.get(caller.user_id, full_id)
        if before is None:
            raise _not_found(writer, caller.user_id, full_id)
        if before.immutable:
            raise ImmutableError(f"memory {full_id} is immutable and cannot be updated")
        fields: dict[str, Any] = {}
        if text is not None:
            fields["memory"] = validate_text(text)
        if metadata is not None:
            fields["metadata"] = _merge_metadata(before.metadata, validate_metadata(metadata))
        if _changes_nothing(before, fields):  # the same update again: no new version, no history
            return before, before
        return before, writer.change(before, "UPDATE", caller.actor, **fields)

    before, after = caller.store.transact(update)
    if after is before:
        return with_state(before)
    if after.memory != before.memory:
        _embed_later(caller, [after.id])
    return with_state(after)


def delete_memory(caller: Caller, memory_id: object) -> dict[str, Any]:
    memory_id = _memory_id(memory_id)

    def delete(writer) -> None:
        full_id = writer.resolve_id(caller.user_id, memory_id, deleted=True)  # a deleted one: say so
        before = writer.get(caller.user_id, full_id)
        if before is None:
            raise _not_found(writer, caller.user_id, full_id)
        writer.delete(before, caller.actor)

    caller.store.transact(delete)
    return {"message": DELETED_MESSAGE}


def _changes_nothing(before: Memory, fields: Mapping[str, Any]) -> bool:
    return all(getattr(before, name) == value for name, value in fields.items())


def _not_found(writer, user_id: str, memory_id: str) -> NotFoundError:
    """Not found; for a memory deleted earlier (a second delete, as in mem0), say so and how to undo it."""
    if writer.last_deleted(user_id, memory_id) is not None:
        return NotFoundError(
            f"memory {memory_id} not found: it was deleted (`mem0-memories restore {memory_id}` brings it back)"
        )
    return NotFoundError(f"memory {memory_id} not found")


def restore_memory(caller: Caller, memory_id: object) -> Memory:
    """Bring back a deleted, merged or superseded memory as active (not a purged one)."""
    key = _memory_id(memory_id)

    def restore(writer) -> Memory:
        memory_id = writer.resolve_id(caller.user_id, key, deleted=True)
        current = writer.get(caller.user_id, memory_id)
        if current is not None:
            if current.lifecycle_state == ACTIVE:
                raise InvalidInputError(f"memory {memory_id} is already active")
            return writer.change(current, "RESTORE", caller.actor, lifecycle_state=ACTIVE, replacement_memory_id=None)
        if writer.purged(caller.user_id, memory_id):
            raise NotFoundError(
                f"memory {memory_id} was forgotten with --purge: its text is gone, it cannot be restored"
            )
        record = writer.last_deleted(caller.user_id, memory_id)
        if record is None:
            raise NotFoundError(f"memory {memory_id} not found, and no deleted version is in the history")
        old = replace(memory_of_record(record), lifecycle_state=ACTIVE, replacement_memory_id=None)
        restored = replace(old, updated_at=writer.now, version=old.version + 1)
        return writer.insert(restored, event="RESTORE", actor=caller.actor)

    return caller.store.transact(restore)


def delete_memories(caller: Caller, filters: object = None) -> int:
    """Delete every memory of the user that `filters` selects, in any lifecycle state (the
    platform's delete-all: docs/server.md); each is recoverable like one `delete_memory`.
    Without filters: all of the user's memories, in every project. Answers how many."""
    where = compile_filters(parse_filters(filters), user_id=caller.user_id)
    ids: list[str] = []
    page = 1
    while True:  # read first, then delete: each page read sees the store as it was
        found = caller.store.page(caller.user_id, where, ReadMode.INCLUDE_MERGED, page, MAX_PAGE_SIZE)
        ids += [memory.id for memory in found.results]
        if found.next is None:
            break
        page = found.next

    def delete_all(writer) -> int:
        deleted = 0
        for memory_id in ids:
            current = writer.get(caller.user_id, memory_id)
            if current is not None:  # not deleted meanwhile
                writer.delete(current, caller.actor)
                deleted += 1
        return deleted

    return caller.store.transact(delete_all)


def memory_history(caller: Caller, memory_id: object) -> list[dict[str, Any]]:
    """Each change of one memory, oldest first: the event, who made it, when, and the record
    before and after (docs/records.md, "History"). A deleted memory's history is kept."""
    memory_id = caller.store.resolve_id(caller.user_id, _memory_id(memory_id), deleted=True)
    return [
        {"seq": e.seq, "event": e.event, "actor": e.actor, "at": e.at, "before": e.before, "after": e.after}
        for e in caller.store.history(caller.user_id, memory_id)
    ]


def entities(caller: Caller) -> list[dict[str, Any]]:
    """The user, and each agent, app and run the user's memories are in, with how many memories
    (active and superseded), the first `created_at` and the last `updated_at` of them."""
    found: dict[tuple[str, str], dict[str, Any]] = {}

    def count(kind: str, name: str | None, n: int, first: str, last: str) -> None:
        if name is None:
            return
        entry = found.setdefault((kind, name), {"type": kind, "name": name, "total_memories": 0})
        entry["total_memories"] += n
        entry["created_at"] = min(entry.get("created_at") or first, first)
        entry["updated_at"] = max(entry.get("updated_at") or last, last)

    for agent_id, app_id, run_id, n, first, last in caller.store.scope_rows(caller.user_id):
        count("user", caller.user_id, n, first, last)
        count("agent", agent_id, n, first, last)
        count("app", app_id, n, first, last)
        count("run", run_id, n, first, last)
    return list(found.values())
