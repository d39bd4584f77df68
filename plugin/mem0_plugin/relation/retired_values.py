"""Conflicts found by the value a newer text says it replaced (docs/dream.md, "What the pair is"). Pure.

A change the newer text marks may name the old value as its reason: "Local API now listens on
8080 — 8000 clashed with the JupyterHub proxy". The reason pulls its vector away from the older
text's ("FastAPI dev server runs on port 8000: `uv run uvicorn …`": cosine 0.32), under the floor
where pairs are compared by meaning (`meaning.CONFLICT_COSINE`), so the pair is never judged
there. It is found by the value instead: the texts that mark a change and hold two values of one
kind (`probes`) are looked up by those values among the older texts of their type group, and a
pair is a conflict when the older holds one of the values and lacks the other (`literals.retired`),
the two share their subject, and no condition, environment or swapped subject sets them apart —
the checks `meaning.relation` makes of a marked change. Each memory takes part in one conflict.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

import numpy as np

from ..language.analysed import AnalysedMemory
from ..language.lexicon import EVENT_TYPES
from ..language.literal_kinds import VALUE_KINDS, ungrouped
from ..language.reading import Reading, Readings, literal_values, reading_of
from .conditions import adds_condition
from .literals import retired
from .meaning import CONFLICT_COSINE, MIN_SUBJECT_OVERLAP
from .two_things import containment, scoped_apart, subject_swapped

RETIRED_COSINE = 0.30  # under it, texts naming one port or version are rarely about one thing
MIN_VALUE_CHARS = 2  # "1" or "7" is shared by chance ("vm.swappiness=1" / "mon-1")
# A text holding more values of one kind lists them (no one value replaced), and a value many
# memories hold names nothing in particular: both bound the work, whatever the store holds.
MAX_VALUES = 4
MAX_HOLDERS = 16

Probe = tuple[AnalysedMemory, str, frozenset[str]]  # (newer memory, kind, its values of that kind)


def retired_pairs(
    items: Sequence[AnalysedMemory], vectors: Mapping[str, np.ndarray], readings: Readings
) -> list[tuple[AnalysedMemory, AnalysedMemory]]:
    """(older, newer) pairs of one type group, newest first, each memory in at most one, whose
    cosine is under the floor of comparison (and at least `RETIRED_COSINE`) and whose newer
    text names the older's value as the one it replaced."""
    if not items or items[0].type in EVENT_TYPES:
        return []
    with_vectors = [item for item in items if item.id in vectors]
    found_probes = probes(with_vectors, readings)
    if not found_probes:
        return []
    wanted = {value for _, _, values in found_probes for value in values if len(value) >= MIN_VALUE_CHARS}
    holders: dict[str, list[AnalysedMemory]] = defaultdict(list)
    for item in with_vectors:
        for value in _values(item, readings) & wanted:
            holders[value].append(item)
    pairs: list[tuple[AnalysedMemory, AnalysedMemory]] = []
    used: set[str] = set()
    for newer, kind, values in sorted(found_probes, key=lambda probe: probe[0].newest_first_key):
        if newer.id in used:
            continue
        held = [holders.get(value, ()) for value in values]
        candidates = {older.id: older for some in held if len(some) <= MAX_HOLDERS for older in some}
        older = _best_older(newer, kind, [c for c in candidates.values() if c.id not in used], vectors, readings)
        if older is not None:
            pairs.append((older, newer))
            used.update((older.id, newer.id))
    return pairs


def probes(items: Sequence[AnalysedMemory], readings: Readings) -> list[Probe]:
    """The memories whose text marks a change and holds two to `MAX_VALUES` values of one kind
    (a number, version, path, URL …): each with that kind and its values."""
    found = []
    for item in items:
        if len(item.features.literals) < 2 and item.memory.memory.isascii():
            continue  # (most texts: an English text with fewer than two literals holds no two values)
        b = reading_of(item, readings)
        if not b.marked:
            continue
        found += [
            (item, kind, values)
            for kind, values in b.kinds.items()
            if kind in VALUE_KINDS and 2 <= len(values) <= MAX_VALUES
        ]
    return found


def _values(item: AnalysedMemory, readings: Readings) -> frozenset[str]:
    if item.memory.memory.isascii():
        return ungrouped(item.features.literals)  # (no text read again for most memories)
    return literal_values(reading_of(item, readings))


def _best_older(
    newer: AnalysedMemory,
    kind: str,
    candidates: list[AnalysedMemory],
    vectors: Mapping[str, np.ndarray],
    readings: Readings,
) -> AnalysedMemory | None:
    """The most similar older candidate that `newer` replaces a value of, if any."""
    b = reading_of(newer, readings)
    scored = []
    for older in candidates:
        if older.id == newer.id or older.oldest_first_key >= newer.oldest_first_key:
            continue
        cosine = float(np.dot(vectors[older.id], vectors[newer.id]))
        if RETIRED_COSINE <= cosine < CONFLICT_COSINE:
            scored.append((cosine, older.id, older))
    for cosine, _, older in sorted(scored, key=lambda s: (-s[0], s[1])):
        if _replaces(reading_of(older, readings), b, kind, cosine):
            return older
    return None


def _replaces(a: Reading, b: Reading, kind: str, cosine: float) -> bool:
    """Whether the newer text `b` replaces the older `a`'s value of `kind`, about one subject."""
    return (
        not a.marked
        and kind in a.kinds
        and retired(a.kinds[kind], b.kinds[kind], a)
        and containment(a, b) >= MIN_SUBJECT_OVERLAP
        and not adds_condition(a, b, cosine)
        and not scoped_apart(a, b, True)
        and not subject_swapped(a, b)
    )
