"""Merges and conflicts found by meaning: vector neighbours within one type group, each pair
judged by `meaning.relation` (docs/dream.md). Pure: (memories, their vectors) → actions.

* **Merges**: memories joined by "merge" pairs, grouped greedily from the most similar
  pair down; a memory joins a group when it is a "merge" with at least half of the members
  already in it, a "conflict" with none, and one member (or itself) holds every literal of
  the group so joined (`_may_join`). The draft is a member's own text: the newest one that
  holds every literal of the group (else the one holding most), so no number, path or name
  is lost.
* **Conflicts**: among memories in no merge, "conflict" pairs from the most similar down,
  each memory in at most one. The newer is the likely winner (A), as for every conflict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from itertools import combinations

import numpy as np

from ..language.analysed import AnalysedMemory
from ..language.lexicon import EVENT_TYPES
from ..language.reading import Readings, literal_values, reading_of
from ..relation.agreement import acknowledgement
from ..relation.meaning import CONFLICT_COSINE, MERGE_COSINE, open_question, relation
from ..relation.neighbours import similar_vector_pairs
from ..relation.pair_memo import Decision, PairMemo, key, text_digest
from ..relation.topics import conflict_topic
from .plan import ConflictAction, MergeAction

# (cosine, older, newer, relation, question): a relation the rules decided, or None and what
# a judge could be asked about the pair (`meaning.open_question`)
Judged = tuple[float, AnalysedMemory, AnalysedMemory, str | None, str | None]


def judged_pairs(
    items: Sequence[AnalysedMemory],
    vectors: Mapping[str, np.ndarray],
    memo: PairMemo | None = None,
    readings: Readings | None = None,
) -> list[Judged]:
    """Every pair of `items` (one type) with a vector whose cosine reaches a rule's threshold,
    judged (those left alone only when there is something to ask about them); most similar
    first. `memo`: decisions remembered from earlier runs (`pair_memo`); the result is the same
    without it. `readings`: the texts already read (`reading.Readings`), added to."""
    with_vectors = [item for item in items if item.id in vectors]
    if not with_vectors:
        return []
    memo = PairMemo() if memo is None else memo
    event = with_vectors[0].type in EVENT_TYPES
    floor = min(MERGE_COSINE, CONFLICT_COSINE)
    judged: list[Judged] = []
    readings = {} if readings is None else readings
    order = [item.oldest_first_key for item in with_vectors]
    digests = [text_digest(item.memory.memory) for item in with_vectors]
    pairs = similar_vector_pairs([vectors[item.id] for item in with_vectors], floor)
    closest = _closest(pairs, len(with_vectors))
    for i, j, cosine in pairs:
        if order[j] < order[i]:
            i, j = j, i
        older, newer = with_vectors[i], with_vectors[j]
        nearest = not event and closest[i] == cosine == closest[j]
        pair_key = key(event, digests[i], digests[j], nearest)
        kind, question = memo.decide(pair_key, cosine, partial(_decision, older, newer, cosine, readings, nearest))
        if kind is not None or question is not None:
            judged.append((cosine, older, newer, kind, question))
    judged.sort(key=lambda j: (-j[0], j[1].id, j[2].id))
    return judged


def _closest(pairs: Sequence[tuple[int, int, float]], count: int) -> list[float]:
    """Each memory's highest cosine among `pairs` (-1 for one in none): two memories are each
    other's closest when their pair's cosine is both of theirs."""
    closest = [-1.0] * count
    for i, j, cosine in pairs:
        closest[i] = max(closest[i], cosine)
        closest[j] = max(closest[j], cosine)
    return closest


def _decision(
    older: AnalysedMemory, newer: AnalysedMemory, cosine: float, readings: Readings, nearest: bool
) -> Decision:
    kind = relation(older, newer, cosine, readings, nearest=nearest)
    return kind, None if kind is not None else open_question(older, newer, cosine, readings)


def meaning_merges(
    judged: Sequence[Judged], type_name: str, vectors: Mapping[str, np.ndarray], readings: Readings | None = None
) -> list[MergeAction]:
    """The merge groups of the "merge" pairs of `judged` (see the module docstring). `readings`:
    the texts already read (`judged_pairs` read them all), added to."""
    readings = {} if readings is None else readings
    merges = {frozenset((a.id, b.id)): c for c, a, b, kind, _ in judged if kind == "merge"}  # pair → cosine
    conflicts = {frozenset((a.id, b.id)) for _, a, b, kind, _ in judged if kind == "conflict"}
    group_of: dict[str, list[AnalysedMemory]] = {}
    for _, older, newer, kind, _ in judged:
        if kind != "merge":
            continue
        group_a, group_b = group_of.get(older.id), group_of.get(newer.id)
        if group_a is not None and group_b is not None:
            continue  # both already grouped (together or apart)
        if group_a is None and group_b is None:
            group_of[older.id] = group_of[newer.id] = [older, newer]
            continue
        if group_a is not None:
            group, joining = group_a, newer
        elif group_b is not None:
            group, joining = group_b, older
        if _may_join(group, joining, merges, conflicts, readings):
            group.append(joining)
            group_of[joining.id] = group
    groups = {id(g): g for g in group_of.values()}.values()
    return [_merge_action(group, type_name, merges, vectors, readings) for group in groups]


def _may_join(
    group: list[AnalysedMemory], joining: AnalysedMemory, merges: Mapping, conflicts: set, readings: Readings
) -> bool:
    """Whether `joining` (a "merge" with one member at least) joins `group`: a "merge" with
    at least half of its members and a "conflict" with none (three texts of one fact where
    the rules read only two of the three pairs: docs/dream.md, "Grouping"), and nothing
    specific lost: one of them holds every literal of all."""
    pairs = [frozenset((member.id, joining.id)) for member in group]
    if any(pair in conflicts for pair in pairs) or 2 * sum(pair in merges for pair in pairs) < len(pairs):
        return False
    if all(pair in merges for pair in pairs):
        return True
    literals = [_literals(member, readings) for member in (*group, joining)]
    union = frozenset().union(*literals)
    return any(held >= union for held in literals)


def _literals(member: AnalysedMemory, readings: Readings) -> frozenset[str]:
    return literal_values(reading_of(member, readings))


def _merge_action(
    group: list[AnalysedMemory],
    type_name: str,
    merges: Mapping,
    vectors: Mapping[str, np.ndarray],
    readings: Readings,
) -> MergeAction:
    members = sorted(group, key=lambda m: m.oldest_first_key)
    literals = [_literals(m, readings) for m in members]
    union = frozenset().union(*literals)
    complete = [m for m, held in zip(members, literals) if held >= union]
    stated = [m for m in complete if acknowledgement(reading_of(m, readings)) is None]
    complete = stated or complete  # an acknowledgement ("Noted: …") is no merge's draft
    draft = (
        complete[-1]
        if complete
        else max(zip(members, literals), key=lambda pair: (len(pair[1]), pair[0].oldest_first_key))[0]
    )
    confidences = [c for c in (m.memory.confidence for m in members) if c is not None]
    similarity = min(_cosine(a, b, merges, vectors) for a, b in combinations(members, 2))
    return MergeAction(
        ids=tuple(m.id for m in members),
        type=type_name,
        merged_text=draft.memory.memory,
        confidence=max(confidences) if confidences else None,
        similarity=round(similarity, 2),
    )


def _cosine(a: AnalysedMemory, b: AnalysedMemory, merges: Mapping, vectors: Mapping[str, np.ndarray]) -> float:
    """The pair's cosine: as found for a "merge" pair, else from the two vectors (a member that
    joined with half of the group)."""
    found = merges.get(frozenset((a.id, b.id)))
    if found is not None:
        return found
    return float(np.dot(vectors[a.id].astype(np.float32), vectors[b.id].astype(np.float32)))


def meaning_conflicts(
    pairs: Sequence[tuple[AnalysedMemory, AnalysedMemory]], type_name: str, taken: set[str]
) -> list[ConflictAction]:
    """The conflicts of `pairs` (older, newer), taken in the order given (by meaning: most
    similar first; by a replaced value: newest first), each memory in at most one and none of
    `taken`. The newer is the likely winner (A)."""
    actions: list[ConflictAction] = []
    used = set(taken)
    for older, newer in pairs:
        if older.id in used or newer.id in used:
            continue
        used.update((older.id, newer.id))
        winner, loser = sorted((older, newer), key=lambda m: m.newest_first_key)
        topic = conflict_topic(winner.memory.memory, loser.memory.memory) or type_name
        actions.append(
            ConflictAction(
                ids=(winner.id, loser.id),
                type=type_name,
                topic=topic,
                likely_winner=winner.id,
                texts=(winner.memory.memory, loser.memory.memory),
            )
        )
    return actions
