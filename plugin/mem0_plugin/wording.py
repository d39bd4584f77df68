"""Counts in sentences: `1 memory`, `2 memories`, `1,204 memories`. Pure."""

from __future__ import annotations


def plural(count: int, one: str, many: str) -> str:
    """`1 memory`, `1,204 memories`."""
    return f"{count:,} {one if count == 1 else many}"


def memories(count: int) -> str:
    """`0 memories`, `1 memory`, `2 memories` (no thousands separator: lines that scripts read)."""
    return f"{count} {'memory' if count == 1 else 'memories'}"
