"""What the agent is told when a session starts (docs/hooks.md, "Session start"): who and where,
the project's instructions, the memories that matter most now, where the branch left off, a
pending dream, and how to use memory — within `MAX_TOKENS`.

`gather` reads the store (a few pages, whatever it holds); `render` is pure.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection
from dataclasses import dataclass, field

from .. import operations
from ..records import REMINDER_SOURCE, Memory
from ..sanitize import printable
from ..store import Page, ReadMode
from ..store_url import display_url

MAX_TOKENS = 1500
BOOTSTRAP_SOURCE = "mem0-bootstrap"  # bootstrap.BOOTSTRAP_SOURCE
STATE_TYPES = ("session_state", "compact_summary")
STANDING_TYPES = ("decision", "convention", "user_preference", "anti_pattern", "project_profile")
MOST = 12  # memories listed at most
ITEM_CHARS = 240
_REMINDER_COUNT = re.compile(r"detected (\d+) contradiction")

PROTOCOL = (
    "How to use memory here:",
    "- Before a task, search_memories for what is known about it (relevant memories are also added to prompts).",
    "- When you learn something lasting (a decision, convention, fix, preference), add_memory with"
    " metadata.type: decision, convention, bug_fix, anti_pattern, user_preference, task_learning or environmental.",
    "- Cite a memory you rely on by its id, e.g. [mem0:1a2b3c4d].",
    "- Never write a MEMORY.md or similar file: memory lives in the mem0 store.",
)


@dataclass
class Opening:
    """What a session-start context is made of."""

    user_id: str
    project_id: str
    branch: str
    store: str
    count: int
    instructions: str = ""
    memories: list[Memory] = field(default_factory=list)  # pinned first, then the newest standing ones
    state: Memory | None = None  # where the branch left off (resume, compact)
    contradictions: int = 0  # what --auto left for a person to decide


def tokens(text: str) -> int:
    """A conservative token count: ~4 ASCII characters a token, one other character a token."""
    ascii_chars = sum(1 for ch in text if ord(ch) < 128)
    return math.ceil(ascii_chars / 4) + (len(text) - ascii_chars)


def _one_line(text: str, limit: int) -> str:
    text = " ".join(printable(text).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def memory_line(memory: Memory, limit: int = ITEM_CHARS) -> str:
    """`- [decision] <text> [mem0:1a2b3c4d]` (`[pinned decision]` for a pinned one)."""
    given = memory.metadata.get("type")
    kind = given if isinstance(given, str) and given else "note"
    if memory.metadata.get("pinned") is True:
        kind = f"pinned {kind}"
    return f"- [{_one_line(kind, 40)}] {_one_line(memory.memory, limit)} [mem0:{memory.id[:8]}]"


def render(opening: Opening, max_tokens: int = MAX_TOKENS) -> str:
    """The context text: the header, then each part while it fits in `max_tokens`."""
    head = (
        f"## mem0 memory: user={opening.user_id} · project={opening.project_id} · "
        f"branch={opening.branch} · {opening.count:,} memories · store {opening.store}"
    )
    lines = [head, ""]
    if opening.contradictions:
        noun = "contradiction waits" if opening.contradictions == 1 else "contradictions wait"
        lines += [f"Pending: {opening.contradictions} {noun} for you to decide: /mem0:dream", ""]
    if opening.instructions:
        lines += ["Project instructions (mem0.md):", _one_line(opening.instructions, 800), ""]
    if opening.state is not None:
        when = opening.state.created_at[:10]
        lines += [f"Where this branch left off ({when}, [mem0:{opening.state.id[:8]}]):"]
        lines += [_one_line(opening.state.memory, 1000), ""]
    protocol = ["", *PROTOCOL]
    budget = max_tokens - tokens("\n".join(lines + protocol))
    listed: list[str] = []
    for memory in opening.memories:
        line = memory_line(memory)
        cost = tokens(line) + 1
        if cost > budget:
            break
        listed.append(line)
        budget -= cost
    if listed:
        lines += ["Memories that matter now:", *listed]
    elif opening.count == 0:
        lines += ["No memories yet for this project."]
    return "\n".join(lines + protocol).strip()


def _page(caller: operations.Caller, filters: dict, page: int, size: int) -> Page:
    where, project = operations.read_scope(caller, filters)
    return caller.store.page(caller.user_id, where, ReadMode.LATEST_ONLY, page, size, app_id=project)


def _newest(caller: operations.Caller, filters: dict, most: int) -> list[Memory]:
    """The `most` newest active memories matching `filters` (pages are oldest first: the last
    two pages of `most`)."""
    first = _page(caller, filters, 1, most)
    found = list(first.results)
    if first.count > most:
        last = math.ceil(first.count / most)
        found = [*_page(caller, filters, last - 1, most).results, *_page(caller, filters, last, most).results]
    return sorted(found, key=lambda m: (m.created_at, m.id), reverse=True)[:most]


def gather(
    caller: operations.Caller, *, instructions: str, with_state: bool, skip_files: Collection[str] = ()
) -> Opening:
    """Read what the opening needs from the store: the project's count, its pinned memories,
    its newest standing ones (`STANDING_TYPES`; not the sections of `skip_files`, which the client
    reads itself), the reminder of `--auto`, and with `with_state` the branch's newest
    `session_state` / `compact_summary`."""
    identity = caller.identity
    project = {"app_id": identity.project_id}
    count = _page(caller, project, 1, 1).count
    opening = Opening(
        identity.user_id,
        identity.project_id,
        identity.branch,
        display_url(identity.store_url),
        count,
        instructions,
    )
    if not count:
        return opening
    pinned = _newest(caller, {"AND": [project, {"metadata": {"pinned": True}}]}, MOST)
    standing = _newest(caller, {"AND": [project, {"metadata": {"type": {"in": list(STANDING_TYPES)}}}]}, MOST)
    seen: set[str] = set()
    for memory in pinned + standing:
        source = memory.metadata.get("source")
        if source == BOOTSTRAP_SOURCE and memory.metadata.get("file") in skip_files:
            continue
        if memory.id not in seen and source != REMINDER_SOURCE:
            seen.add(memory.id)
            opening.memories.append(memory)
    reminders = _newest(caller, {"AND": [project, {"metadata": {"source": REMINDER_SOURCE}}]}, 1)
    if reminders:
        match = _REMINDER_COUNT.search(reminders[0].memory)
        opening.contradictions = int(match.group(1)) if match else 1
    if with_state:
        branch = {"metadata": {"type": {"in": list(STATE_TYPES)}, "branch": identity.branch}}
        states = _newest(caller, {"AND": [project, branch]}, 1)
        opening.state = states[0] if states else None
    return opening
