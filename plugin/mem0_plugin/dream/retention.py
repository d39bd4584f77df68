"""Dream step 1: which retention policy applies (docs/dream.md, "Step 1: retention").

A policy maps a memory type (`metadata.type`) to a number of days (an ``int``) or to
``None`` ("forever": never pruned by age). Types it does not name are never pruned by age.

`choose_policy(parsed)` takes what the `mem0.md` parser returned:

* nothing usable (``{}``, ``None``, not a dict, or no valid entry) → the built-in
  `DEFAULT_POLICY`, source ``"default"``;
* otherwise the parsed policy **replaces** the defaults entirely (as the original does;
  a `mem0.md` that names only ``decision: 30d`` stops pruning ``session_state``), source
  ``"mem0.md"``.

Entries that are not ``str → non-negative int | None`` are dropped (the parser never
produces them; this keeps a hand-built dict from reaching the analysis). Booleans are not
numbers here.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

DEFAULT_POLICY: Mapping[str, int | None] = MappingProxyType({"session_state": 90, "compact_summary": 90})
SOURCE_DEFAULT = "default"
SOURCE_MEM0_MD = "mem0.md"
POLICY_SOURCES = (SOURCE_DEFAULT, SOURCE_MEM0_MD)


def is_retention_value(value: object) -> bool:
    """A valid policy value: a whole number of days (0 or more), or None for "forever"."""
    if value is None:
        return True
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def valid_entries(parsed: Any) -> dict[str, int | None]:
    """The well-formed `type → days | None` entries of `parsed` (empty for anything else)."""
    if not isinstance(parsed, Mapping):
        return {}
    return {
        key: value
        for key, value in parsed.items()
        if isinstance(key, str) and key.strip() and is_retention_value(value)
    }


def choose_policy(parsed: Any) -> tuple[dict[str, int | None], str]:
    """(policy, policy_source): the parsed `mem0.md` policy if it has entries, else the defaults."""
    entries = valid_entries(parsed)
    if not entries:
        return dict(DEFAULT_POLICY), SOURCE_DEFAULT
    return entries, SOURCE_MEM0_MD
