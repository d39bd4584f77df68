"""The text of a captured session state: extractive (the session's own words, no model), at most
`MAX_CHARS` characters, credentials masked (docs/hooks.md, "Capture"). Pure."""

from __future__ import annotations

import re

from ..secrets import mask
from .transcript import Digest

MAX_CHARS = 1000
_SPACE = re.compile(r"\s+")


def _clip(text: str, limit: int) -> str:
    """`text` on one line within `limit` characters, credentials masked before it is cut (a cut
    credential may no longer look like one)."""
    text = _SPACE.sub(" ", mask(text)).strip()
    if len(text) <= limit:
        return text
    return text[: max(0, limit - 1)].rstrip() + "…"


def _listed(items: list[str], limit: int, each: int = 80) -> str:
    """`a, b, c (+2 more)` within `limit` characters."""
    shown: list[str] = []
    for index, item in enumerate(items):
        more = len(items) - index
        piece = _clip(item, each)
        tail = f" (+{more - 1} more)" if more > 1 else ""
        if len(", ".join([*shown, piece])) + len(tail) > limit:
            return ", ".join(shown) + (f" (+{more} more)" if shown else "")
        shown.append(piece)
    return ", ".join(shown)


def state_text(digest: Digest, branch: str, when: str) -> str:
    """`Session state on branch <b> (<when>): Asked: … Files changed: … Fixed: … Still failing:
    … Last: …` — each part only when the session has it, the last summary in what room is left."""
    parts = [f"Session state on branch {branch} ({when})."]
    if digest.asked:
        asked = _clip(digest.asked[0], 220)
        if len(digest.asked) > 1:
            asked += " Then: " + _clip(digest.asked[-1], 160)
        parts.append("Asked: " + asked)
    if digest.files:
        parts.append("Files changed: " + _listed(digest.files, 220) + ".")
    if digest.fixed:
        parts.append("Failed, then passed: " + _listed([f"`{c}`" for c in digest.fixed], 160, 70) + ".")
    if digest.failing:
        parts.append("Still failing: " + _listed([f"`{c}`" for c in digest.failing], 140, 70) + ".")
    head = " ".join(parts)
    room = MAX_CHARS - len(head) - len(" Last: ")
    if digest.last_said and room > 40:
        head += " Last: " + _clip(digest.last_said, room)
    return _clip(head, MAX_CHARS)


def compact_text(summary: str, branch: str, when: str) -> str:
    """A compaction's own summary, as the branch's `compact_summary`: its opening within
    `MAX_CHARS`, credentials masked."""
    head = f"Compaction summary on branch {branch} ({when}): "
    return _clip(head + summary, MAX_CHARS)
