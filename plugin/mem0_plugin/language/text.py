"""Significant words: the one tokenizer behind search scores, dream and health --deep.

Lower-cased word tokens, stop words removed, simple plural folding. Pure functions.

Scripts written without spaces between words (Chinese, Japanese kana and kanji) have no
word boundaries to find: a run of such characters becomes its overlapping character
bigrams ("账本数据存储" → 账本 本数 数据 据存 存储), a lone character stays itself. A
phrase then matches wherever its bigrams occur, in search and in dream's overlap rules
alike (docs/search.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

WORD_PATTERN = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)  # a word, as written
# CJK unified ideographs (with extension A and compatibility ideographs), hiragana, katakana
# and the prolonged sound mark: the scripts written without spaces between words
UNSPACED = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
_UNSPACED_RUN = re.compile(f"[{UNSPACED}]+")
_HAS_UNSPACED = re.compile(f"[{UNSPACED}]")

STOP_WORDS = frozenset(
    """
a about above after again against all also always am an and any are as at be because been
before being below between both but by can could did do does doing done down during each
either else ever every few for from further had has have having he her here hers herself him
himself his how i if in into is it its itself just let like may me might more most much must my
myself need needs no nor not now of off often on once only or other ought our ours ourselves out
over own per please same shall she should so some such than that the their theirs them
themselves then there these they this those through thus to too under until up upon us use used
uses using usually very via was we were what when where which while who whom whose why will
with within without would yet you your yours yourself yourselves
""".split()
)

# Negations are stop words for overlap, but they flip meaning: dream reads them separately.
NEGATIONS = frozenset(
    {
        "no",
        "not",
        "never",
        "don't",
        "dont",
        "doesn't",
        "doesnt",
        "didn't",
        "isn't",
        "aren't",
        "won't",
        "shouldn't",
        "cannot",
        "can't",
        "avoid",
        "without",
        "nor",
        "stop",
        "disable",
        "disabled",
    }
)

_KEEP_S = ("ss", "us", "is", "ous", "sis", "xis")


def fold_plural(word: str) -> str:
    """Simple plural folding: seats → seat, libraries → library, classes → class."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(_KEEP_S):
        return word[:-1]
    return word


def words(text: str) -> list[str]:
    """Every word token of the text, lower-cased, in order (apostrophes kept inside words)."""
    lowered = text.lower()
    if "’" in lowered:  # both apostrophes join a word; the token keeps the plain one
        lowered = lowered.replace("’", "'")
    tokens = WORD_PATTERN.findall(lowered)
    if not has_unspaced(lowered):
        return tokens
    return [piece for token in tokens for piece in split_unspaced(token)]


def has_unspaced(text: str) -> bool:
    """Whether `text` holds Chinese or Japanese characters (scripts without spaces)."""
    return not text.isascii() and _HAS_UNSPACED.search(text) is not None


_HAS_CYRILLIC = re.compile("[а-яёА-ЯЁ]")


def has_cyrillic(text: str) -> bool:
    """Whether `text` holds Cyrillic letters (Russian)."""
    return not text.isascii() and _HAS_CYRILLIC.search(text) is not None


def script(text: str) -> str:
    """The script a text is written in, as far as its words go: "cjk" (Chinese or Japanese
    characters), "cyrillic", or "latin" (identifiers and English words in either are Latin)."""
    if has_unspaced(text):
        return "cjk"
    return "cyrillic" if has_cyrillic(text) else "latin"


def split_unspaced(token: str) -> list[str]:
    """A token with runs of unspaced script: the other parts as they are, each run as its
    overlapping bigrams (a one-character run as itself)."""
    pieces: list[str] = []
    position = 0
    for run in _UNSPACED_RUN.finditer(token):
        if run.start() > position:
            pieces.append(token[position : run.start()])
        text = run.group()
        pieces.extend([text] if len(text) == 1 else [text[i : i + 2] for i in range(len(text) - 1)])
        position = run.end()
    if position < len(token):
        pieces.append(token[position:])
    return pieces


class _Significance(dict):
    """word -> its folded form, or None when it is not significant; filled as words are met
    (dream reads every memory's words: most of them recur). Bounded: stops growing at 500k."""

    def __missing__(self, word: str) -> str | None:
        value = None if word in STOP_WORDS or word in NEGATIONS or "'" in word else fold_plural(word)
        if len(self) < 500_000:
            self[word] = value
        return value


_SIGNIFICANCE = _Significance()


def significant_of(tokens: Iterable[str]) -> frozenset[str]:
    """The significant words among already-split, lower-cased tokens."""
    found = set(map(_SIGNIFICANCE.__getitem__, tokens))
    found.discard(None)
    return frozenset(found)


def significant_words(text: str) -> frozenset[str]:
    """The set of significant words: no stop words, no negations, plurals folded."""
    return significant_of(words(text))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def terms_text(terms: Iterable[str]) -> str:
    """The space-separated, sorted form stored in the full-text index."""
    return " ".join(sorted(terms))
