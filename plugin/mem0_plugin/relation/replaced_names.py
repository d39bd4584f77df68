"""Supersedes found by the name a newer text says it replaced (docs/dream.md, "What the pair is"). Pure.

"Replaced pip-tools with uv. Lockfile is uv.lock" and "Python deps via pip-tools: edit
requirements.in, run pip-compile" are one fact replaced, but the new tool's details pull the
vectors apart (cosine 0.26), under the floor where pairs are compared by meaning and out of
each other's nearest few. A newer text that marks a change and names what it left
(`guards.left_names`: "X was removed", "no longer uses X", "from X to Y", "replaced X with Y",
"Y instead of X") is looked up by that name among the older texts of its type group; the most
similar older one naming it, unmarked, not ruling it out itself and about no other environment
or subject, is the text it replaces. Each memory takes part in one conflict.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

import numpy as np

from ..language.analysed import AnalysedMemory
from ..language.lexicon import EVENT_TYPES
from ..language.reading import Reading, Readings, reading_of
from .guards import left_names, names_it
from .two_things import scoped_apart, subject_swapped

NAMED_COSINE = 0.25  # under it, two texts naming one tool are rarely about one fact
MAX_HOLDERS = 16  # a name many memories hold names nothing in particular


def named_pairs(
    items: Sequence[AnalysedMemory], vectors: Mapping[str, np.ndarray], readings: Readings
) -> list[tuple[AnalysedMemory, AnalysedMemory]]:
    """(older, newer) pairs of one type group, newest first, each memory in at most one, whose
    newer text names what of the older it replaced."""
    if not items or items[0].type in EVENT_TYPES:
        return []
    probes = []
    for item in items:
        if item.id not in vectors:
            continue
        b = reading_of(item, readings)
        if b.marked:
            names = left_names(b)
            if names:
                probes.append((item, names))  # (a text marking no change leaves nothing)
    if not probes:
        return []
    wanted = {name for _, names in probes for name in names}
    holders: dict[str, list[AnalysedMemory]] = defaultdict(list)
    for item in items:
        if item.id in vectors:
            lowered = item.memory.memory.lower()
            for name in wanted:
                if name in lowered and names_it(name, reading_of(item, readings)):
                    holders[name].append(item)
    pairs: list[tuple[AnalysedMemory, AnalysedMemory]] = []
    used: set[str] = set()
    for newer, names in sorted(probes, key=lambda probe: probe[0].newest_first_key):
        if newer.id in used:
            continue
        candidates = {o.id: o for n in names if len(holders.get(n, ())) <= MAX_HOLDERS for o in holders.get(n, ())}
        older = _best_older(newer, names, [c for c in candidates.values() if c.id not in used], vectors, readings)
        if older is not None:
            pairs.append((older, newer))
            used.update((older.id, newer.id))
    return pairs


def _best_older(newer, names, candidates, vectors, readings) -> AnalysedMemory | None:
    b = reading_of(newer, readings)
    scored = []
    for older in candidates:
        if older.id == newer.id or older.oldest_first_key >= newer.oldest_first_key:
            continue
        cosine = float(np.dot(vectors[older.id].astype(np.float32), vectors[newer.id].astype(np.float32)))
        if cosine >= NAMED_COSINE:
            scored.append((cosine, older.id, older))
    for _, _, older in sorted(scored, key=lambda s: (-s[0], s[1])):
        if replaced_by_name(reading_of(older, readings), b, names):
            return older
    return None


def replaced_by_name(a: Reading, b: Reading, names: frozenset[str] | None = None) -> bool:
    """Whether the newer text `b` names a thing the older `a` states as what it left (`names`:
    `guards.left_names(b)`, when known): `a` unmarked, naming it without leaving it too (an older
    text retiring it states the same change), about no other environment or subject."""
    names = left_names(b) if names is None else names
    if not names or a.marked or left_names(a) & names or not any(names_it(name, a) for name in names):
        return False
    return not (scoped_apart(a, b, True) or subject_swapped(a, b))
