"""Word stems for search: English words by Porter2 and Russian words by their Snowball stemmer
(the `snowballstemmer` package, pure Python), so that "deploys", "deployed" and "deployment"
meet as "deploy", and "порту", "порта" as "порт" (docs/search.md, "Words"). Chinese and Japanese
bigrams, numbers and words mixing letters and digits ("psycopg2") are their own stems. Stems are
remembered once found (words recur across memories); a broken install without the package
leaves every word as written.
"""

from __future__ import annotations

import re
import threading

_THREAD = threading.local()  # a Snowball stemmer keeps the word it works on: one per thread
_CYRILLIC_WORD = re.compile(r"[а-яё]+")
_ENGLISH_WORD = re.compile(r"[a-z]+")
_STEMS: dict[str, str] = {}  # word -> its stem (both languages: their letters differ)
_STEMS_KEPT = 200_000  # words remembered at most (~30 MB); later new words are stemmed each time
MIN_ENGLISH = 4  # shorter English words ("api", "ci", "ssh") are kept as written


def _stemmer(language: str):
    stemmer = getattr(_THREAD, language, None)
    if stemmer is None:
        try:
            import snowballstemmer  # imported by the first text that needs a stem
        except ImportError:
            return None
        stemmer = snowballstemmer.stemmer(language)
        setattr(_THREAD, language, stemmer)
    return stemmer


def _remember(fresh: dict[str, str]) -> None:
    if len(_STEMS) < _STEMS_KEPT:
        _STEMS.update(fresh)


def russian_stems(text: str) -> list[str]:
    """The Snowball stems of the Cyrillic words of `text`, in order (ё read as е)."""
    words = _CYRILLIC_WORD.findall(text.lower().replace("ё", "е"))
    new = [word for word in set(words) if word not in _STEMS]
    if not new:
        return [_STEMS[word] for word in words]
    stemmer = _stemmer("russian")
    if stemmer is None:
        return words
    fresh = dict(zip(new, stemmer.stemWords(new)))
    _remember(fresh)
    return [fresh[word] if word in fresh else _STEMS[word] for word in words]


def search_stem(word: str) -> str:
    """The stem `word` (a lower-cased significant word) is searched by."""
    found = _STEMS.get(word)
    if found is not None:
        return found
    if len(word) >= MIN_ENGLISH and _ENGLISH_WORD.fullmatch(word):
        stemmer = _stemmer("english")
        stem = stemmer.stemWord(word) if stemmer is not None else word
    elif _CYRILLIC_WORD.fullmatch(word.replace("ё", "е")):
        stems = russian_stems(word)
        stem = stems[0] if len(stems) == 1 else word
    else:
        return word
    _remember({word: stem})
    return stem
