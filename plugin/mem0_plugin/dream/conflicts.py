"""Dream's conflict rule (docs/dream.md, "Step 3: analyse"), within one type group.

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
from collections.abc import Hashable, Iterable, Iterator, Sequence
from operator import itemgetter

from ..language.analysed import AnalysedMemory
from ..language.lexicon import EVENT_TYPES, WEAK_WORDS
from ..relation.topics import conflict_topic
from .plan import ConflictAction

MAX_VALUES_PER_TOPIC = 5

Pair = tuple[AnalysedMemory, AnalysedMemory]  # (likely winner, the other)
Ranked = tuple[tuple, AnalysedMemory]  # (newest_first_key, memory)
_by_key = itemgetter(0)  # a Ranked's key: the likely winner sorts first


def find_conflicts(items: Sequence[AnalysedMemory], type_name: str) -> list[ConflictAction]:
    """The conflicts among `items` (one type group, sorted by id); each memory in at most one."""
    if type_name in EVENT_TYPES:
        return []
    pairs = list(polarity_pairs(items))
    used = {item.id for pair in pairs for item in pair}
    pairs += value_pairs([item for item in items if item.id not in used])
    return [conflict_action(winner, loser, type_name) for winner, loser in pairs]


def conflict_action(winner: AnalysedMemory, loser: AnalysedMemory, type_name: str) -> ConflictAction:
    shared = winner.features.frame & loser.features.frame or winner.features.core & loser.features.core
    topic = conflict_topic(winner.memory.memory, loser.memory.memory, fallback=shared) or type_name
    return ConflictAction(
        ids=(winner.id, loser.id),
        type=type_name,
        topic=topic,
        likely_winner=winner.id,
        texts=(winner.memory.memory, loser.memory.memory),
    )


def _buckets(items: Iterable[AnalysedMemory], key) -> Iterator[list[AnalysedMemory]]:
    """The groups of two or more items with the same non-None `key`, in the order first seen."""
    grouped: dict[Hashable, list[AnalysedMemory]] = defaultdict(list)
    for item in items:
        bucket = key(item)
        if bucket is not None:
            grouped[bucket].append(item)
    return (members for members in grouped.values() if len(members) > 1)


def _newest_first(members: Iterable[AnalysedMemory]) -> list[Ranked]:
    """`members` with their sort keys, likely winner first: each key computed once (the property
    recomputes it on every read), and only for the groups that can pair."""
    return sorted(((member.newest_first_key, member) for member in members), key=_by_key)


def _polarity_key(item: AnalysedMemory):
    features = item.features
    sig = features.sig  # its core is sig itself when it has no weak word (most): no new set then
    core = sig if sig.isdisjoint(WEAK_WORDS) else features.core
    return (core, features.literals, features.qualifiers) if core else None


def polarity_pairs(items: Sequence[AnalysedMemory]) -> Iterator[Pair]:
    """In each bucket, the n-th newest affirmed statement with the n-th newest negated one."""
    for members in _buckets(items, _polarity_key):
        negated = [m for m in members if m.features.negated]
        if 0 < len(negated) < len(members):  # else all alike: nothing to pair, nothing to sort
            affirmed = [m for m in members if not m.features.negated]
            for pair in zip(_newest_first(affirmed), _newest_first(negated)):
                (_, winner), (_, loser) = sorted(pair, key=_by_key)
                yield winner, loser


def _value_key(item: AnalysedMemory):
    features = item.features
    if not features.frame or not features.values:
        return None
    return (features.frame, features.negated, features.qualifiers)


def value_pairs(items: Sequence[AnalysedMemory]) -> Iterator[Pair]:
    for members in _buckets(items, _value_key):
        yield from _pair_different_values(members)


def _pair_different_values(members: Sequence[AnalysedMemory]) -> Iterator[Pair]:
    """Pair each memory (newest first) with the newest unpaired one whose values differ both ways.
    The partner is always the older of the two: everything newer is already paired or passed over."""
    if not 2 <= len({member.features.values for member in members}) <= MAX_VALUES_PER_TOPIC:
        return
    ranked = _newest_first(members)
    queues: dict[frozenset[str], deque[Ranked]] = defaultdict(deque)
    for entry in ranked:
        queues[entry[1].features.values].append(entry)
    paired: set[str] = set()
    for _, member in ranked:
        if member.id in paired:
            continue
        values = member.features.values
        queues[values].popleft()
        heads = [q[0] for v, q in queues.items() if q and v - values and values - v]
        if heads:
            _, partner = min(heads, key=_by_key)
            queues[partner.features.values].popleft()
            paired.update((member.id, partner.id))
            yield member, partner
