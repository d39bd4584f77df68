"""The six steps of dream as functions with typed inputs and outputs (SPEC §7).

Steps 1–3 live here (retention, fetch, analyse); the CLI runs steps 4–6 (report,
confirm and apply, summary) because they talk to a person. Only fetch touches the store.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Callable

from ..identity import Identity
from ..mem0_config import load_retention_policies
from ..operations import Caller, scoped_filter
from ..records import Memory
from ..store import ReadMode, SqliteStore
from .analysis import analyse, collector_paused
from .plan import Plan
from .retention import choose_policy

FETCH_PAGE_SIZE = 200

Progress = Callable[[int, int], None]


def step1_retention(cwd: Path) -> tuple[dict, str]:
    """The policy of the project's mem0.md, else the built-in defaults; and which applied."""
    try:
        parsed = load_retention_policies(str(cwd))
    except Exception:  # the parser never raises by design; any surprise means defaults
        parsed = {}
    return choose_policy(parsed)


def step2_fetch(store: SqliteStore, identity: Identity, progress: Progress | None = None) -> list[Memory]:
    """Every memory of the user and project, page by page (200) until `next` is null."""
    caller = Caller(store, identity, actor="mem0-dream")
    where = scoped_filter(caller, {"AND": [{"user_id": identity.user_id}, {"app_id": identity.project_id}]})
    memories: dict[str, Memory] = {}
    page_number: int | None = 1
    with store.read_snapshot():  # the pages of one moment: a concurrent delete must not shift a memory out
        while page_number is not None:
            page = store.page(identity.user_id, where, ReadMode.DEFAULT, page_number, FETCH_PAGE_SIZE)
            for memory in page.results:
                memories.setdefault(memory.id, memory)
            if progress:
                progress(len(memories), page.count)
            page_number = page.next
    return list(memories.values())


def step3_analyse(memories: list[Memory], policy: dict, policy_source: str, identity: Identity,
                  now: datetime, progress: Progress | None = None) -> Plan:
    return analyse(memories, policy, now, user_id=identity.user_id, project_id=identity.project_id,
                   policy_source=policy_source, progress=progress)


def make_plan(store: SqliteStore, identity: Identity, now: datetime, progress: Progress | None = None,
              analysis_progress: Progress | None = None) -> Plan:
    """Steps 1–3, strictly in order. The progress callbacks watch fetch and analysis (a bar)."""
    policy, source = step1_retention(identity.cwd)
    with collector_paused():  # fetch builds a record per memory too
        memories = step2_fetch(store, identity, progress)
        return step3_analyse(memories, policy, source, identity, now, analysis_progress)

