"""Import and export: a complete, lossless backup of a scope (docs/records.md, "Import and export")."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, replace

from .errors import InvalidInputError, Mem0PluginError
from .importer import parse_records
from .language.stored_features import encode_all
from .operations import Caller
from .records import Memory, memory_from_record
from .sanitize import inert_json
from .store import Store
from .timeutil import format_timestamp, utc_now
from .wording import memories as count_memories


@dataclass(frozen=True)
class ImportResult:
    imported: int
    already_present: int
    invalid: tuple[str, ...]
    project_id: str | None = None  # the project every record was put into (`--project-id`)
    elsewhere: int = 0  # of the already present, how many are in another project than project_id

    def summary(self) -> str:
        into = f" into project {self.project_id}" if self.project_id is not None else ""
        text = f"Imported {count_memories(self.imported)}{into} ({self.already_present} already present"
        return text + (f", {len(self.invalid)} invalid skipped)." if self.invalid else ").")


def validate_records(caller: Caller, text: str) -> tuple[list[tuple[Memory, bool]], list[str]]:
    """(memory, the record carried its own id) for each valid record, and the problems."""
    raw, problems = parse_records(text)
    now = format_timestamp(utc_now())
    memories: list[tuple[Memory, bool]] = []
    for item in raw:
        try:
            memory = memory_from_record(
                item.record, default_user=caller.user_id, default_app=caller.identity.project_id, now=now
            )
        except Mem0PluginError as exc:
            problems.append(f"{item.where}: {exc}")
            continue
        if memory.user_id != caller.user_id:
            problems.append(f"{item.where}: belongs to user {memory.user_id!r}, not {caller.user_id!r}")
            continue
        memories.append((memory, bool(item.record.get("id"))))
    return memories, problems


def import_memories(
    caller: Caller, text: str, *, skip_invalid: bool = False, project_id: str | None = None
) -> ImportResult:
    """Validate everything first; import in one transaction. Ids already in the store are kept.

    A record with its own id is a backup of that memory: imported as it is unless the id
    exists. A record without an id is new text: skipped when an identical active memory
    exists in the same scope (as `add_memory` would). `project_id` (an explicit
    `--project-id`) puts every record into that project, whatever its own `app_id`; a record
    whose id is already in the store stays where it is (counted in `elsewhere` when that is
    another project).
    """
    memories, problems = validate_records(caller, text)
    if project_id is not None:
        memories = [(replace(memory, app_id=project_id), has_id) for memory, has_id in memories]
    if problems and not skip_invalid:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise InvalidInputError(f"nothing imported: {problems[0]}{more}; fix the file or pass --skip-invalid")
    imported = present = elsewhere = 0
    seen: set[str] = set()
    encoded = encode_all([memory.memory for memory, _ in memories])  # encoded alongside the writes
    with caller.store.write() as writer:
        for (memory, has_id), features in zip(memories, encoded):
            if memory.id in seen or writer.exists(memory.id):
                present += 1
                existing = writer.get(caller.user_id, memory.id) if project_id is not None else None
                elsewhere += existing is not None and existing.app_id != project_id
                continue
            seen.add(memory.id)
            if not has_id and memory.lifecycle_state == "active" and writer.find_identical(memory):
                present += 1
                continue
            writer.insert(memory, event="IMPORT", actor="import", features=features)
            imported += 1
    return ImportResult(imported, present, tuple(problems), project_id, elsewhere)


def export_lines(caller: Caller, *, all_projects: bool = False) -> Iterator[str]:
    """One JSON line per memory of the scope, every lifecycle state, stable order."""
    app = None if all_projects else caller.identity.project_id
    for memory in caller.store.iter_scope(caller.user_id, app):
        yield inert_json(json.dumps(memory.to_dict(), ensure_ascii=False))


@dataclass(frozen=True)
class CopyResult:
    copied: int
    already_present: int
    history_rows: int

    def summary(self, target: str) -> str:
        return (
            f"Copied {count_memories(self.copied)} with {self.history_rows} history rows to {target} "
            f"({self.already_present} already present)."
        )


def copy_scope(caller: Caller, target: Store, *, all_projects: bool = False) -> CopyResult:
    """Copy the scope's memories into `target` as they are (ids, times, lifecycle, version),
    each with its whole history, and the history of its deleted memories (for restore), in
    one transaction of the target (docs/stores.md, "Moving a store"). Ids already in the
    target are left alone. Dream's run list and the vectors stay behind (the target embeds
    its memories again: `mem0-memories embed`)."""
    source, user = caller.store, caller.user_id
    app = None if all_projects else caller.identity.project_id
    memories = list(source.iter_scope(user, app))
    present = {memory.id for memory in memories}
    deleted = [i for i in source.history_ids(user) if i not in present and _deleted_in_scope(source, user, i, app)]
    copied = skipped = rows = 0
    with target.write() as writer:
        for memory in memories:
            if writer.exists(memory.id):
                skipped += 1
                continue
            writer.put(memory)
            rows += writer.copy_history(user, source.history(user, memory.id))
            copied += 1
        for memory_id in deleted:
            if not writer.exists(memory_id) and not writer.has_history(user, memory_id):
                rows += writer.copy_history(user, source.history(user, memory_id))
    return CopyResult(copied, skipped, rows)


def _deleted_in_scope(store: Store, user: str, memory_id: str, app: str | None) -> bool:
    """A deleted memory's history belongs to the scope its last record was in."""
    records = [e.before for e in store.history(user, memory_id) if e.after is None and e.before]
    return bool(records) and (app is None or records[-1].get("app_id") == app)
