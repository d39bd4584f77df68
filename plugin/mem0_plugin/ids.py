"""Memory ids as people type them: the full id, or a unique prefix of at least 8 characters
(the short id `mem0-forget` lists as `[ID: 2dfe514e]`). Pure: the store finds the candidate
ids (`Store.resolve_id`); this module decides which one a key names, or says why none.
"""

from __future__ import annotations

from collections.abc import Iterable

from .errors import InvalidInputError, NotFoundError

MIN_PREFIX_CHARS = 8
CANDIDATE_LIMIT = 100  # how many candidates the store fetches at most (enough to say "100+ match")
_TOP = "\U0010ffff"  # sorts after every character: [prefix, prefix + _TOP) holds every id starting with prefix


def prefix_bounds(key: str) -> tuple[str, str]:
    """The range of ids that start with `key` (for an index range scan)."""
    return key, key + _TOP


def matches(key: str, candidates: Iterable[str]) -> list[str]:
    """The ids `key` names among `candidates`: itself if it is one of them (a full id, however
    short), else those it is a prefix of, once it has at least MIN_PREFIX_CHARS characters."""
    found = list(dict.fromkeys(candidates))
    if key in found:
        return [key]
    if len(key) < MIN_PREFIX_CHARS:
        return []
    return [candidate for candidate in found if candidate.startswith(key)]


def pick(key: str, candidates: Iterable[str], *, what: str = "memory", whats: str = "memories") -> str:
    """The one id `key` names among `candidates` (ids equal to it or starting with it); `what`
    and `whats` name the thing in messages (memories, dream runs).

    Nothing → `NotFoundError` (exit 3); a prefix shorter than MIN_PREFIX_CHARS, or one that
    several ids start with → `InvalidInputError` (exit 2), saying how to fix it."""
    found = list(dict.fromkeys(candidates))
    chosen = matches(key, found)
    if len(chosen) == 1:
        return chosen[0]
    if chosen:
        many = f"{len(chosen)}+" if len(chosen) >= CANDIDATE_LIMIT else str(len(chosen))
        raise InvalidInputError(f"id prefix {key} matches {many} {whats}; give more characters of the id")
    if any(candidate.startswith(key) for candidate in found):
        raise InvalidInputError(f"id prefix {key} is too short: give at least {MIN_PREFIX_CHARS} characters of the id")
    raise NotFoundError(f"{what} {key} not found")
