"""The topic of a conflict: a short phrase the two memories share (docs/dream.md, "Step 3: analyse").

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

from collections.abc import Sequence
from functools import lru_cache
from itertools import islice

from ..language.features import cased_words
from ..language.lexicon import PREDICATE_LABELS, TOPIC_EDGE_WORDS, canonical
from ..language.text import NEGATIONS, fold_plural

MAX_TOPIC_SOURCE_WORDS = 64
MAX_TOPIC_WORDS = 8


def conflict_topic(text_a: str, text_b: str, *, fallback: frozenset[str] = frozenset()) -> str:
    common = _trim(_common_words(_words(text_a), _words(text_b)))
    if not common:
        return " ".join(sorted(fallback)[:MAX_TOPIC_WORDS])
    return " ".join(_shown(a, b) for a, b in common[:MAX_TOPIC_WORDS])


def _words(text: str) -> list[str]:
    """The first `MAX_TOPIC_SOURCE_WORDS` words of `text` as written, negations (no key) left out."""
    return list(islice(filter(_word_key, cased_words(text)), MAX_TOPIC_SOURCE_WORDS))


@lru_cache(maxsize=1 << 14)
def _word_key(word: str) -> str | None:
    """How a word is compared (folded, lower-cased, predicate synonyms canonical; never empty);
    None for a negation, which is ignored. Cached: the same words recur memory after memory."""
    lowered = word.lower().replace("’", "'")
    return None if lowered in NEGATIONS else canonical(fold_plural(lowered))


def _common_words(a: Sequence[str], b: Sequence[str]) -> list[tuple[str, str]]:
    """Longest common subsequence by key, as (word of `a`, word of `b`) pairs (dynamic
    programming; ties resolved the same way every time).

    Two shortcuts leave the result unchanged. A word of `a` whose key `b` lacks is left out
    first: its row of the table would equal the next one, and the walk always steps past it.
    And the table is not filled for the opening both share: the walk takes equal keys as it
    meets them, without reading the table.
    """
    b_keys = list(map(_word_key, b))
    in_b = set(b_keys)
    a = [word for word in a if _word_key(word) in in_b]
    a_keys = list(map(_word_key, a))
    rows, cols = len(a), len(b)
    length = _suffix_lcs_lengths(a_keys, b_keys, _shared_opening(a_keys, b_keys))
    common: list[tuple[str, str]] = []
    i = j = 0
    while i < rows and j < cols:
        if a_keys[i] == b_keys[j]:
            common.append((a[i], b[j]))
            i, j = i + 1, j + 1
        elif length[i + 1][j] >= length[i][j + 1]:
            i += 1
        else:
            j += 1
    return common


def _shared_opening(a: Sequence[str | None], b: Sequence[str | None]) -> int:
    """How many keys `a` and `b` share at their start."""
    shared = 0
    for key_a, key_b in zip(a, b):
        if key_a != key_b:
            break
        shared += 1
    return shared


def _suffix_lcs_lengths(a: Sequence[str | None], b: Sequence[str | None], start: int = 0) -> list[list[int]]:
    """``length[i][j]``: the length of the longest common subsequence of ``a[i:]`` and ``b[j:]``,
    for ``i, j >= start`` (the rest is left 0)."""
    cols = len(b)
    length = [[0] * (cols + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) - 1, start - 1, -1):
        key, row, below = a[i], length[i], length[i + 1]
        for j in range(cols - 1, start - 1, -1):
            if key == b[j]:
                row[j] = below[j + 1] + 1
            else:
                down, right = below[j], row[j + 1]
                row[j] = down if down >= right else right
    return length


def _trim(common: list[tuple[str, str]]) -> list[tuple[str, str]]:
    start, end = 0, len(common)
    while start < end and common[start][0].lower() in TOPIC_EDGE_WORDS:
        start += 1
    while end > start and common[end - 1][0].lower() in TOPIC_EDGE_WORDS:
        end -= 1
    return common[start:end]


def _shown(a: str, b: str) -> str:
    if a.lower() == b.lower():
        return a
    key = _word_key(a)
    return PREDICATE_LABELS.get(key, a) if key is not None else a
