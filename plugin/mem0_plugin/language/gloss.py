"""English glosses of a developer's Russian, Chinese and Japanese words, for search only.

The default embedding model reads English only, and words never match across languages, so a
Russian question about an English memory (or an English question about a Chinese one) found
nothing but shared identifiers. Search therefore meets in English: a text's common developer
terms in those languages (`data/glossary.json`: "порт", "端口", "ポート" → port) add their
English words to the text's search terms, on both sides — the terms a memory is indexed by
and the terms of a query — and a query is embedded in its English rendering too (docs/search.md,
"Across languages"). Memories' vectors hold their English rendering too (`Semantic.memory_vectors`);
dream's rules never see glosses.

Russian words are matched by their Snowball stem ("порту", "порта" → порт), so the glossary
lists dictionary forms; two-word phrases ("база данных") match as two consecutive stems.
Chinese and Japanese terms are matched where they occur in the text, longest first.
Texts in ASCII have nothing to gloss and cost one `str.isascii` call. Pure, apart from
reading the glossary (package data) once.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import NamedTuple

from .stems import russian_stems, search_stem
from .text import has_cyrillic, has_unspaced, significant_words

GLOSSARY_FILE = "data/glossary.json"
GLOSSED_CHARS = 20_000  # a longer text is glossed by its beginning (its vector too is of its start)
_LATIN_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_./:@+-]*")


class Glossary(NamedTuple):
    russian: dict[tuple[str, ...], str]  # one or two stems -> English words
    unspaced: dict[str, str]  # a Chinese or Japanese term -> English words
    unspaced_pattern: re.Pattern[str] | None  # every unspaced term, longest first


def _russian_forms(term: str) -> list[str]:
    """`term` and, for a verb in -овать ("использовать"), its present tense, whose stem differs
    ("используем" → использу)."""
    if term.endswith("овать") and " " not in term:
        return [term, *(term[: -len("овать")] + ending for ending in ("ует", "уем"))]
    return [term]


def read_glossary(entries: dict[str, dict[str, str]]) -> Glossary:
    """The glossary of `entries` ({"ru": {lemma: english}, "zh": {...}, "ja": {...}})."""
    russian: dict[tuple[str, ...], str] = {}
    for term, english in entries.get("ru", {}).items():
        for form in _russian_forms(term):
            russian.setdefault(tuple(russian_stems(form)), english)
    russian.pop((), None)
    unspaced = {
        term: english
        for language in ("zh", "ja")
        for term, english in entries.get(language, {}).items()
        if len(term) >= 2 and has_unspaced(term)
    }
    alternatives = "|".join(map(re.escape, sorted(unspaced, key=len, reverse=True)))
    return Glossary(russian, unspaced, re.compile(alternatives) if alternatives else None)


@cache
def glossary() -> Glossary:
    """The package's glossary (`data/glossary.json`), read once; an empty one if the file is
    missing or unreadable (a broken install): search then works without glosses."""
    from importlib import resources  # (13 ms to import: only when a text is not ASCII)

    try:
        source = resources.files("mem0_plugin").joinpath(GLOSSARY_FILE).read_text(encoding="utf-8")
        entries = json.loads(source)
    except (OSError, ValueError):
        return read_glossary({})
    return read_glossary(entries if isinstance(entries, dict) else {})


def english_of(text: str, terms: Glossary | None = None) -> list[str]:
    """The English glosses of the glossary's terms in `text`, in the order found, each once."""
    if text.isascii():
        return []
    text = text[:GLOSSED_CHARS]
    terms = terms or glossary()
    found: dict[str, None] = {}
    if has_cyrillic(text):
        for english in _russian_english(russian_stems(text), terms.russian):
            found[english] = None
    if terms.unspaced_pattern is not None and has_unspaced(text):
        for match in terms.unspaced_pattern.finditer(text):
            found[terms.unspaced[match.group()]] = None
    return list(found)


def _russian_english(stems: list[str], russian: dict[tuple[str, ...], str]) -> list[str]:
    """The glosses of a run of Russian stems: a two-word phrase first, its words then not alone."""
    english, i = [], 0
    while i < len(stems):
        if tuple(stems[i : i + 2]) in russian and i + 1 < len(stems):
            english.append(russian[stems[i], stems[i + 1]])
            i += 2
            continue
        if (stems[i],) in russian:
            english.append(russian[stems[i],])
        i += 1
    return english


def glosses(text: str) -> frozenset[str]:
    """The significant English words glossing `text` (empty for a text with nothing to gloss)."""
    english = english_of(text)
    return significant_words(" ".join(english)) if english else frozenset()


def search_terms(text: str) -> frozenset[str]:
    """The terms a text is searched by: its significant words and their English glosses, each
    English or Russian word by its Snowball stem (`stems.search_stem`)."""
    words = significant_words(text) if text.isascii() else significant_words(text) | glosses(text)
    return frozenset(map(search_stem, words))


def english_rendering(query: str) -> str | None:
    """The query as an English-only model can read it: its words in Latin script (identifiers,
    tool names, numbers) and the English glosses of its terms; None when nothing is glossed."""
    english = english_of(query)
    if not english:
        return None
    return " ".join([*_LATIN_WORD.findall(query), *english])
