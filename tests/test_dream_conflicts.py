"""Dream's conflict pairing and topics against plain reference implementations of their rules
(the shortcuts `conflicts` and `topics` take for speed must not change a result)."""

from __future__ import annotations

import random
from collections import defaultdict, deque
from datetime import datetime, timedelta, timezone

import pytest
from mem0_plugin.dream.conflicts import MAX_VALUES_PER_TOPIC, find_conflicts
from mem0_plugin.language.analysed import analysed
from mem0_plugin.language.features import cased_words
from mem0_plugin.language.lexicon import PREDICATE_LABELS, TOPIC_EDGE_WORDS, canonical
from mem0_plugin.language.text import NEGATIONS, fold_plural
from mem0_plugin.records import Memory
from mem0_plugin.relation.topics import MAX_TOPIC_SOURCE_WORDS, MAX_TOPIC_WORDS, conflict_topic

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)


# --- reference: the topic by the textbook dynamic programme --------------------------------


def reference_topic(text_a: str, text_b: str, fallback: frozenset[str] = frozenset()) -> str:
    def tokens(text: str) -> list[tuple[str, str]]:
        found = []
        for surface in cased_words(text):
            lowered = surface.lower().replace("’", "'")
            if lowered not in NEGATIONS:
                found.append((canonical(fold_plural(lowered)), surface))
        return found[:MAX_TOPIC_SOURCE_WORDS]

    a, b = tokens(text_a), tokens(text_b)
    length = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) - 1, -1, -1):
        for j in range(len(b) - 1, -1, -1):
            length[i][j] = length[i + 1][j + 1] + 1 if a[i][0] == b[j][0] else max(length[i + 1][j], length[i][j + 1])
    common, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        if a[i][0] == b[j][0]:
            common.append((a[i], b[j]))
            i, j = i + 1, j + 1
        elif length[i + 1][j] >= length[i][j + 1]:
            i += 1
        else:
            j += 1
    while common and common[0][0][1].lower() in TOPIC_EDGE_WORDS:
        common.pop(0)
    while common and common[-1][0][1].lower() in TOPIC_EDGE_WORDS:
        common.pop()
    if not common:
        return " ".join(sorted(fallback)[:MAX_TOPIC_WORDS])
    return " ".join(
        x[1] if x[1].lower() == y[1].lower() else PREDICATE_LABELS.get(x[0], x[1]) for x, y in common[:MAX_TOPIC_WORDS]
    )


VOCABULARY = [
    "Deploy",
    "deploy",
    "deploys",
    "hosted",
    "to",
    "the",
    "on",
    "ECS",
    "ecs",
    "Vercel",
    "lives",
    "moved",
    "in",
    "Tokyo",
    "Osaka",
    "don't",
    "Never",
    "not",
    "use",
    "Use",
    "Redis",
    "port",
    "API",
    "a",
    "x",
    "X",
]


def random_text(rng: random.Random, words: list[str], longest: int) -> str:
    return " ".join(rng.choice(words) for _ in range(rng.randint(0, longest)))


@pytest.mark.parametrize("seed", range(20))
def test_topic_is_the_reference_longest_common_subsequence(seed):
    rng = random.Random(seed)
    for _ in range(500):
        words = rng.sample(VOCABULARY, rng.randint(2, len(VOCABULARY)))
        text_a, text_b = random_text(rng, words, 12), random_text(rng, words, 12)
        fallback = frozenset(rng.sample(["db", "port", "zeta"], rng.randint(0, 3)))
        assert conflict_topic(text_a, text_b, fallback=fallback) == reference_topic(text_a, text_b, fallback)


def test_topic_reads_only_the_first_words_of_long_texts():
    rng = random.Random(7)
    for _ in range(50):
        text_a, text_b = random_text(rng, VOCABULARY, 150), random_text(rng, VOCABULARY, 150)
        assert conflict_topic(text_a, text_b) == reference_topic(text_a, text_b)


# --- reference: the pairing rules, each pair's winner chosen by sorting the two --------------


def reference_conflicts(items, type_name):
    def newest_first(members):
        return sorted(members, key=lambda item: item.newest_first_key)

    def buckets(members, key):
        grouped = defaultdict(list)
        for item in members:
            if key(item) is not None:
                grouped[key(item)].append(item)
        return [newest_first(group) for group in grouped.values() if len(group) > 1]

    pairs = []
    for group in buckets(
        items, lambda m: (m.features.core, m.features.literals, m.features.qualifiers) if m.features.core else None
    ):
        pairs += zip([m for m in group if not m.features.negated], [m for m in group if m.features.negated])
    used = {m.id for pair in pairs for m in pair}
    rest = [m for m in items if m.id not in used]
    for group in buckets(
        rest,
        lambda m: (
            (m.features.frame, m.features.negated, m.features.qualifiers)
            if m.features.frame and m.features.values
            else None
        ),
    ):
        queues = {}
        for member in group:
            queues.setdefault(member.features.values, deque()).append(member)
        if not 2 <= len(queues) <= MAX_VALUES_PER_TOPIC:
            continue
        paired = set()
        for member in group:
            if member.id in paired:
                continue
            values = member.features.values
            queues[values].popleft()
            heads = [q[0] for v, q in queues.items() if q and v - values and values - v]
            if heads:
                partner = min(heads, key=lambda item: item.newest_first_key)
                queues[partner.features.values].popleft()
                paired.update((member.id, partner.id))
                pairs.append((member, partner))
    found = set()
    for first, second in pairs:
        winner, loser = newest_first((first, second))
        shared = winner.features.frame & loser.features.frame or winner.features.core & loser.features.core
        topic = reference_topic(winner.memory.memory, loser.memory.memory, shared) or type_name
        found.add((winner.id, loser.id, topic))
    return found


STATEMENTS = [
    "Deploy to ECS",
    "Deploy to Vercel",
    "Don't deploy to ECS",
    "Never deploy to Vercel",
    "Deploy to Fly",
    "Use Redis",
    "Don't use Redis",
    "Use Redis for sessions",
    "API listens on port 8080",
    "API listens on port 3000",
    "API listens on port 3000 only",
    "lives in Tokyo",
    "moved to Osaka",
    "Deploy to Render",
    "Deploy to Heroku",
    "Deploy to Netlify",
    "Project uses Python v2",
    "Project uses Python v3",
    "Do not use Redis",
]


@pytest.mark.parametrize("seed", range(30))
def test_conflicts_are_those_of_the_reference_rules(seed):
    rng = random.Random(seed)
    memories = []
    for i in range(rng.randint(2, 40)):
        created = (NOW - timedelta(days=rng.choice([1, 2, 2, 3, 5]))).isoformat() if rng.random() > 0.1 else "junk"
        metadata = {"type": "decision"}
        if rng.random() < 0.6:
            metadata["confidence"] = rng.choice([0.2, 0.5, 0.5, 0.9])
        memories.append(
            Memory(
                id=f"m{i:02d}",
                memory=rng.choice(STATEMENTS),
                user_id="alice",
                metadata=metadata,
                created_at=created,
                updated_at=created,
            )
        )
    items = [analysed(memory) for memory in memories]
    actions = find_conflicts(items, "decision")
    assert {(a.ids[0], a.ids[1], a.topic) for a in actions} == reference_conflicts(items, "decision")
    assert len(actions) == len({a.ids for a in actions}) and all(a.likely_winner == a.ids[0] for a in actions)
