"""`mem0-memories stats` (`/mem0:stats`): what a project's memory holds — memories per type and
state, their ages, what is pinned, the captured session states per branch — and what dream would
do with it (docs/commands.md, "stats"). Pure: memories, the plan's counts and now in; text out."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from .errors import InvalidInputError
from .records import Memory
from .timeutil import parse_timestamp
from .wording import memories as n_memories
from .wording import plural

AGES = ((7, "< 7 days"), (30, "7-30 days"), (90, "30-90 days"), (None, "> 90 days"))


@dataclass
class Stats:
    total: int = 0
    states: Counter = field(default_factory=Counter)
    types: Counter = field(default_factory=Counter)  # active ones
    ages: Counter = field(default_factory=Counter)  # active ones
    pinned: int = 0
    branches: Counter = field(default_factory=Counter)  # active session_state per branch
    oldest: str = ""
    newest: str = ""


def _age_label(days: int) -> str:
    for limit, label in AGES:
        if limit is None or days < limit:
            return label
    return AGES[-1][1]


def memory_stats(found: Iterable[Memory], now: datetime) -> Stats:
    stats = Stats()
    for memory in found:
        stats.total += 1
        stats.states[memory.lifecycle_state] += 1
        stamp = memory.created_at
        stats.oldest = min(stats.oldest or stamp, stamp)
        stats.newest = max(stats.newest, stamp)
        if memory.lifecycle_state != "active":
            continue
        kind = memory.metadata.get("type")
        stats.types[kind if isinstance(kind, str) and kind else "unknown"] += 1
        try:
            days = (now - parse_timestamp(stamp)).days
        except InvalidInputError:
            days = 0
        stats.ages[_age_label(max(days, 0))] += 1
        stats.pinned += memory.metadata.get("pinned") is True
        if kind == "session_state":
            branch = memory.metadata.get("branch")
            stats.branches[branch if isinstance(branch, str) else "unknown"] += 1
    return stats


def render(stats: Stats, project: str, dream: dict[str, int] | None) -> str:
    """The stats as plain text; `dream`: the counts of the plan dream would make (None: not asked)."""
    active = stats.states.get("active", 0)
    lines = [f"## mem0 stats — project {project}", ""]
    states = ", ".join(f"{n} {state}" for state, n in sorted(stats.states.items()))
    lines.append(f"{n_memories(stats.total)} ({states or 'none'}); {stats.pinned} pinned")
    if stats.total:
        lines.append(f"Oldest {stats.oldest[:10]}, newest {stats.newest[:10]}")
    if active:
        lines += ["", "Active memories by type:"]
        width = max(len(kind) for kind in stats.types)
        lines += [f"  {kind:<{width}}  {n:>6}" for kind, n in stats.types.most_common()]
        lines += ["", "By age: " + " · ".join(f"{label}: {stats.ages.get(label, 0)}" for _, label in AGES)]
    if stats.branches:
        shown = ", ".join(f"{branch} ({n})" for branch, n in sorted(stats.branches.items()))
        lines.append(f"Captured session states by branch: {shown}")
    if dream is not None:
        parts = ", ".join(
            plural(dream.get(kind, 0), kind.removesuffix("s"), kind)
            for kind in ("merges", "supersedes", "conflicts", "prunes")
        )
        lines += ["", f"Dream would propose: {parts} (review it with /mem0:dream, or mem0-dream in a terminal)"]
    return "\n".join(lines)
