"""The topic of a conflict: a short phrase the two memories share (SPEC §7 step 4).

The topic is the longest common subsequence of the two texts' words (compared folded,
lower-cased and with predicate synonyms made canonical; negations ignored; the first
`MAX_TOPIC_SOURCE_WORDS` words of each text), as written in memory A, with function
words trimmed from both ends and at most `MAX_TOPIC_WORDS` words:

* "Deploy to Vercel" / "Deploy to ECS" → ``Deploy``
* "API listens on port 3000" / "API listens on port 8080" → ``API listens on port``
* "Don't use Redis" / "Use Redis" → ``use Redis``
* "moved to Osaka" / "lives in Tokyo" → ``lives in`` (a predicate worded differently on
  each side is shown by its label, `lexicon.PREDICATE_LABELS`)

When the texts share no such word, the topic is the shared `fallback` words, sorted.
Deterministic; an empty string only when both are empty.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

from ..text import NEGATIONS, fold_plural
from .features import cased_words
from .lexicon import PREDICATE_LABELS, TOPIC_EDGE_WORDS, canonical

MAX_TOPIC_SOURCE_WORDS = 64
MAX_TOPIC_WORDS = 8


class Token(NamedTuple):
    key: str
    surface: str


def conflict_topic(text_a: str, text_b: str, *, fallback: frozenset[str] = frozenset()) -> str:
    common = _trim(_common_words(_tokens(text_a), _tokens(text_b)))
    if not common:
        return " ".join(sorted(fallback)[:MAX_TOPIC_WORDS])
    return " ".join(_shown(a, b) for a, b in common[:MAX_TOPIC_WORDS])


def _tokens(text: str) -> list[Token]:
    tokens: list[Token] = []
    for surface in cased_words(text):
        lowered = surface.lower().replace("’", "'")
        if lowered in NEGATIONS:
            continue
        tokens.append(Token(canonical(fold_plural(lowered)), surface))
        if len(tokens) == MAX_TOPIC_SOURCE_WORDS:
            break
    return tokens


def _common_words(a: Sequence[Token], b: Sequence[Token]) -> list[tuple[Token, Token]]:
    """Longest common subsequence by key (dynamic programming; ties resolved the same way every time)."""
    rows, cols = len(a), len(b)
    length = [[0] * (cols + 1) for _ in range(rows + 1)]
    for i in range(rows - 1, -1, -1):
        for j in range(cols - 1, -1, -1):
            if a[i].key == b[j].key:
                length[i][j] = length[i + 1][j + 1] + 1
            else:
                length[i][j] = max(length[i + 1][j], length[i][j + 1])
    common: list[tuple[Token, Token]] = []
    i = j = 0
    while i < rows and j < cols:
        if a[i].key == b[j].key:
            common.append((a[i], b[j]))
            i, j = i + 1, j + 1
        elif length[i + 1][j] >= length[i][j + 1]:
            i += 1
        else:
            j += 1
    return common


def _trim(common: list[tuple[Token, Token]]) -> list[tuple[Token, Token]]:
    start, end = 0, len(common)
    while start < end and common[start][0].surface.lower() in TOPIC_EDGE_WORDS:
        start += 1
    while end > start and common[end - 1][0].surface.lower() in TOPIC_EDGE_WORDS:
        end -= 1
    return common[start:end]


def _shown(a: Token, b: Token) -> str:
    if a.surface.lower() == b.surface.lower():
        return a.surface
    return PREDICATE_LABELS.get(a.key, a.surface)
