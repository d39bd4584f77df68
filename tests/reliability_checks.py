"""Reading a store file back and checking the promises every write keeps (used by the reliability tests).

* `snapshot(db)` — every memory (with its version), every history row, every dream run's status;
* `check_history_chain(snap)` — each memory's history starts with its creation, each row's
  ``before`` is the previous row's ``after`` (no change is missing), and the last ``after``
  is the memory as it is now (``None`` when deleted);
* `check_pointers(snap)` — an active memory has no ``replacement_memory_id``; a merged or
  superseded one points to a memory that exists;
* `check_merges(snap)` — every memory dream made is active and each of its sources either
  points to it (``merged``) or was deleted later, with a MERGE into it in its history.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from pathlib import Path

DREAM_SOURCE = "mem0-dream"


def snapshot(db: Path, users: tuple[str, ...] = ("alice", "bob")) -> dict:
    from mem0_plugin.store import SqliteStore

    memories = {}
    with SqliteStore(db, readonly=True) as store:
        for user in users:
            for memory in store.iter_scope(user, None):
                memories[memory.id] = {**memory.to_dict(), "version": memory.version}
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        history = [
            dict(zip(("seq", "memory_id", "user_id", "event", "actor", "at", "before", "after"), row))
            for row in conn.execute(
                "SELECT seq, memory_id, user_id, event, actor, at, before, after FROM history ORDER BY seq"
            )
        ]
        runs = [
            dict(zip(("status", "started_at", "finished_at"), row))
            for row in conn.execute("SELECT status, started_at, finished_at FROM dream_runs ORDER BY started_at")
        ]
    finally:
        conn.close()
    for row in history:
        row["before"] = json.loads(row["before"]) if row["before"] else None
        row["after"] = json.loads(row["after"]) if row["after"] else None
    return {"memories": memories, "history": history, "runs": runs}


def history_by_id(snap: dict) -> dict[str, list[dict]]:
    grouped: dict[str, list[dict]] = {}
    for row in snap["history"]:
        grouped.setdefault(row["memory_id"], []).append(row)
    return grouped


def dream_made(snap: dict) -> list[dict]:
    return [m for m in snap["memories"].values() if (m["metadata"] or {}).get("source") == DREAM_SOURCE]


def check_history_chain(snap: dict) -> None:
    memories = snap["memories"]
    grouped = history_by_id(snap)
    for memory_id, rows in grouped.items():
        assert rows[0]["before"] is None, f"{memory_id}'s history does not start with its creation"
        for previous, row in itertools.pairwise(rows):
            assert row["before"] == previous["after"], f"{memory_id}: a change is missing from the history"
        assert rows[-1]["after"] == memories.get(memory_id), f"{memory_id}: the history does not end in its state"
    missing = set(memories) - set(grouped)
    assert not missing, f"memories without history: {sorted(missing)[:5]}"


def check_pointers(snap: dict) -> None:
    memories = snap["memories"]
    for memory in memories.values():
        pointer = memory["replacement_memory_id"]
        if memory["lifecycle_state"] == "active":
            assert pointer is None, memory
        else:
            assert pointer in memories, f"{memory['id']} points to a missing {pointer}"


def check_merges(snap: dict) -> None:
    memories = snap["memories"]
    grouped = history_by_id(snap)
    for made in dream_made(snap):
        assert made["lifecycle_state"] == "active" or made["replacement_memory_id"] in memories
        assert len(made["source_memory_ids"]) >= 2, made
        for source in made["source_memory_ids"]:
            merges = [r for r in grouped.get(source, []) if r["event"] == "MERGE"]
            assert len(merges) == 1, f"{source} was merged {len(merges)} times"
            assert merges[0]["after"]["replacement_memory_id"] == made["id"]
            if source in memories:  # else deleted since, which its history says
                assert memories[source]["lifecycle_state"] == "merged", memories[source]
                assert memories[source]["replacement_memory_id"] == made["id"]
