"""Dream's supersede rule (docs/dream.md, "Step 3: analyse"). Pure.

A contradiction found by the conflict rules (`conflicts`, `relations`) is a *supersede*
when the newer memory says itself that it replaces the older one: its text carries a
change marker (`negation.change_marker`: "now", "switched to", "moved to", "no longer",
"was removed", "replaced by", "instead of", "upgraded", "改为", "теперь" …) and the older
text carries none. The newer then replaces the value of the same fact; nothing is lost,
since the older stays readable, `superseded`, with a pointer to the newer. A contradiction
without such a mark (or where the older text is marked too) stays a conflict for the user.

"Newer" is the conflict's likely winner (A) when its `created_at` is strictly later than
the other's; equal or unparseable timestamps leave the pair a conflict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..language.analysed import AnalysedMemory
from ..language.negation import change_marker
from ..language.reading import reading_of
from ..relation.guards import replaced_named
from .plan import ConflictAction, SupersedeAction


def split_supersedes(
    conflicts: Sequence[ConflictAction], items: Mapping[str, AnalysedMemory]
) -> tuple[list[ConflictAction], list[SupersedeAction]]:
    """`conflicts` parted into those left for the user and the supersedes, each in the given order."""
    kept: list[ConflictAction] = []
    supersedes: list[SupersedeAction] = []
    for conflict in conflicts:
        found = supersede_of(items[conflict.ids[0]], items[conflict.ids[1]])
        if found is None:
            kept.append(conflict)
        else:
            supersedes.append(found)
    return kept, supersedes


def supersede_of(newer: AnalysedMemory, older: AnalysedMemory) -> SupersedeAction | None:
    """The supersede of `older` by `newer`, if `newer` is later and alone marks the change."""
    if newer.created is None or older.created is None or newer.created <= older.created:
        return None
    if change_marker(older.memory.memory) is not None:
        return None
    marker = change_marker(newer.memory.memory)
    if marker is not None:
        reason = f'the newer text marks the change: "{marker}"'
    else:
        left = replaced_named(reading_of(newer, {}), reading_of(older, {}))
        if left is None:
            return None
        reason = f'the newer text says what it replaced: "{left}"'
    return SupersedeAction(old=older.id, new=newer.id, reason=reason, text=newer.memory.memory)
