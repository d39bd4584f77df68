"""Dream's conflict rule (SPEC §7 step 3, "Conflict"), within one type group.

Two memories of the same type conflict when they assert opposite facts about one topic.
Two patterns are recognised, each by an exact grouping key (a hash lookup, never a
comparison of all pairs):

* **Polarity** — the same non-weak significant words, the same literals and qualifiers,
  one negated and the other not: "Use Redis" / "Don't use Redis", "Deploy on Fridays" /
  "Never deploy on Fridays".
* **Different value, same predicate** — the same *frame* (the predicate: significant
  words minus weak words and value words, synonyms made canonical; never empty), the
  same polarity and qualifiers, and values that differ both ways (each has a value the
  other lacks): "Deploy to ECS" / "Deploy to Vercel", "API listens on port 8080" / "...
  3000", "Project uses Python v2" / "... v3", "lives in Tokyo" / "moved to Osaka". A value
  the other merely lacks is added detail, not a contradiction. A predicate seen with more
  than `MAX_VALUES_PER_TOPIC` different values is a list (many modules, many hosts), not a
  fact that changed: no conflict is proposed for it.

Conservative by design: a memory with no recognisable value (a lower-case tool name at a
sentence start, say) or a differently worded predicate yields no conflict. Types that
record events (`lexicon.EVENT_TYPES`: bug fixes, session summaries ...) never conflict.

Each memory takes part in at most one conflict: polarity pairs first, then value pairs,
pairing the newest memories first. The likely winner — newer ``created_at``, then higher
confidence, then smaller id; unparseable timestamps count as oldest — is listed as A.
"""

from __future__ import annotations

from collections import defaultdict, deque
from typing import Hashable, Iterable, Iterator, Sequence

from .features import AnalysedMemory
from .lexicon import EVENT_TYPES
from .plan import ConflictAction
from .topics import conflict_topic

MAX_VALUES_PER_TOPIC = 5

Pair = tuple[AnalysedMemory, AnalysedMemory]


def find_conflicts(items: Sequence[AnalysedMemory], type_name: str) -> list[ConflictAction]:
    """The conflicts among `items` (one type group, sorted by id); each memory in at most one."""
    if type_name in EVENT_TYPES:
        return []
    actions = [conflict_action(a, b, type_name) for a, b in polarity_pairs(items)]
    used = {memory_id for action in actions for memory_id in action.ids}
    remaining = [item for item in items if item.id not in used]
    actions += [conflict_action(a, b, type_name) for a, b in value_pairs(remaining)]
    return actions


def conflict_action(first: AnalysedMemory, second: AnalysedMemory, type_name: str) -> ConflictAction:
    winner, loser = sorted((first, second), key=lambda item: item.newest_first_key)
    shared = winner.features.frame & loser.features.frame or winner.features.core & loser.features.core
    topic = conflict_topic(winner.memory.memory, loser.memory.memory, fallback=shared) or type_name
    return ConflictAction(ids=(winner.id, loser.id), type=type_name, topic=topic, likely_winner=winner.id)


def _buckets(items: Iterable[AnalysedMemory], key) -> Iterator[list[AnalysedMemory]]:
    grouped: dict[Hashable, list[AnalysedMemory]] = defaultdict(list)
    for item in items:
        bucket = key(item)
        if bucket is not None:
            grouped[bucket].append(item)
    for members in grouped.values():
        if len(members) > 1:
            yield sorted(members, key=lambda item: item.newest_first_key)


def _polarity_key(item: AnalysedMemory):
    features = item.features
    return (features.core, features.literals, features.qualifiers) if features.core else None


def polarity_pairs(items: Sequence[AnalysedMemory]) -> Iterator[Pair]:
    for members in _buckets(items, _polarity_key):
        negated = [m for m in members if m.features.negated]
        affirmed = [m for m in members if not m.features.negated]
        yield from zip(affirmed, negated)


def _value_key(item: AnalysedMemory):
    features = item.features
    if not features.frame or not features.values:
        return None
    return (features.frame, features.negated, features.qualifiers)


def value_pairs(items: Sequence[AnalysedMemory]) -> Iterator[Pair]:
    for members in _buckets(items, _value_key):
        yield from _pair_different_values(members)


def _pair_different_values(members: Sequence[AnalysedMemory]) -> Iterator[Pair]:
    """Pair each memory (newest first) with the newest unpaired one whose values differ both ways."""
    queues: dict[frozenset[str], deque[AnalysedMemory]] = {}
    for member in members:
        queues.setdefault(member.features.values, deque()).append(member)
    if not 2 <= len(queues) <= MAX_VALUES_PER_TOPIC:
        return
    paired: set[str] = set()
    for member in members:
        if member.id in paired:
            continue
        values = member.features.values
        queues[values].popleft()
        heads = [q[0] for v, q in queues.items() if q and v - values and values - v]
        if heads:
            partner = min(heads, key=lambda item: item.newest_first_key)
            queues[partner.features.values].popleft()
            paired.update((member.id, partner.id))
            yield member, partner
