"""An id given on the command line as a unique prefix: the one place that resolves it."""

from __future__ import annotations

from typing import Callable

from ..errors import InvalidInputError, NotFoundError

MIN_PREFIX = 8


def resolve_prefix(key: str, starting_with: Callable[[str], list[str]], what: str) -> str:
    """The one id that is `key` or starts with it. `starting_with(key)` returns ids starting
    with `key` (two are enough to tell it is ambiguous). Shorter than `MIN_PREFIX` characters
    (unless it is a whole id) or ambiguous: InvalidInputError; none: NotFoundError."""
    key = key.strip()
    found = starting_with(key) if key else []
    if key in found:
        return key
    if len(key) < MIN_PREFIX:
        raise InvalidInputError(f"{what} id {key!r} is too short: give at least {MIN_PREFIX} characters")
    if not found:
        raise NotFoundError(f"{what} {key} not found")
    if len(found) > 1:
        raise InvalidInputError(f"{what} id {key} is ambiguous: more than one {what} starts with it")
    return found[0]
