"""A text's features (`TextFeatures`): what dream's rules read in one memory's text, lexically.

One concept, one name: *features* are computed from the text alone (`text_features`),
stored with each memory in the store's `features` column (`stored_features`), and read
by dream's analysis (`language.analysed.AnalysedMemory.features`). What the pair rules
read on top of them, lazily, is a `language.reading.Reading`. This module sits below the
store and dream, which both use it.

* ``sig`` — the significant words (`text.significant_words`), the basis of the Jaccard rule.
* ``negated`` — a negation word (`text.NEGATIONS`) occurs: "Use X" vs "Don't use X".
* ``qualifiers`` — condition/scope stop words present (`lexicon.QUALIFIERS`).
* ``literals`` — the project-specific literal values, normalised (lower-cased, outer
  punctuation stripped): quoted code, URLs, file paths, versions, numbers, dotted names
  (``main.py``, ``os.path``), snake_case / camelCase identifiers and command-line flags.
* ``names`` — proper nouns and named tools, folded like significant words: a word with a
  capital letter after its first (``PostgreSQL``, ``ECS``, ``GitHub``), or a capitalised
  word that does not start a sentence (``Tokyo`` in "lives in Tokyo"). "I", stop words
  and negations are never names. A capitalised word at the very start of a sentence is
  not a name (it cannot be told from an ordinary word without a dictionary).
* ``values`` — what a statement says its predicate's value is: its literals when it has
  any ("8080", "v3"; a name next to a literal is the subject: "Python" in "Python v3"),
  else its names that are not weak words ("vercel" in "Deploy to Vercel").
* ``frame`` — the predicate a statement sets: the significant words of the text outside
  its literals (or, without literals, minus its name values), minus weak words, with
  predicate synonyms made canonical ("API listens on port 8080" → {api, listen, port};
  "moved to Osaka" → {live}; "Docs are at https://docs.acme.dev" → {doc}).

Literals are found kind by kind, most specific first, each found span blanked before the
next kind is searched (a URL's path is not also a path, a path's ``main.py`` not also a
dotted name). Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from .lexicon import CANONICAL_PREDICATE, QUALIFIERS, WEAK_WORDS, canonical
from .text import NEGATIONS, STOP_WORDS, WORD_PATTERN, fold_plural, significant_of, words

_ASCII_CAPITALISED_WORD = re.compile(r"\b[^\W_]*[A-Z][^\W_]*(?:['’][^\W_]+)?")
_DIGIT = re.compile(r"\d")
_LOWER_UPPER = re.compile(r"[a-z][A-Z]")
_SENTENCE_BREAK = frozenset(".!?:;\n\r•*")
_OPENING_PUNCTUATION = "\"'`([{<"
_CLOSING_PUNCTUATION = "\"'`)]}>.,;:!?"
_ABBREVIATIONS = frozenset({"e.g", "i.e", "etc", "vs", "cf", "a.m", "p.m"})

# A path's characters: word characters, ".@+-", a glob's "*", and a placeholder or a route
# parameter in brackets ("locales/<lang>/", "locales/{lng}/", "routes/[slug]/"): a path is
# not cut at them (docs/dream.md, "By meaning", the values written two ways).
_NAMED_SLOT = r"<[^<>\s/]{1,40}>|\{[^{}\s/]{1,40}\}"  # "<lang>", "{lng}"
_BRACKETED_PART = rf"{_NAMED_SLOT}|\[[^\[\]\s/]{{1,40}}\]"  # and "[slug]"
_PATH_PART = rf"(?:[\w.@+*-]|{_BRACKETED_PART})"
# A placeholder in a literal reads as "*", whatever it is called: "<lang>" or "{lng}" joined
# to a path or a name ("locales/<lang>/", "stg_<source>", "<name>.ts"; an HTML tag or a
# type's parameter, "<title>", "Vec<u8>", is no placeholder), and "xxx".
_PLACEHOLDER = re.compile(
    rf"(?<=[/._-])(?:{_NAMED_SLOT})|(?:{_NAMED_SLOT})(?=[/._-])|(?<![A-Za-z0-9])[xX]{{3,}}(?![A-Za-z0-9])"
)
_CLOSERS = {")": "(", "]": "[", "}": "{", ">": "<"}
_ASCII_RUN = re.compile(r"[\x00-\x7f]+")
_BRACKETED = re.compile(_BRACKETED_PART)

# Each pattern may only start where a run of its characters starts (the look-behinds), so
# no run is scanned more than a constant number of times: linear time on any input.
_LITERAL_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("code", re.compile(r"`[^`\n]{1,500}`")),
    ("url", re.compile(r"(?<![A-Za-z0-9+.-])(?:[A-Za-z][A-Za-z0-9+.-]{0,31}://|www\.)[^\s<>\"'`]+")),
    (
        "path",
        re.compile(
            rf"(?<![\w.@+~/*-])(?:~/{_PATH_PART}*|\.{{1,2}}/{_PATH_PART}+|/{_PATH_PART}+|{_PATH_PART}+/{_PATH_PART}+)"
            rf"(?:/{_PATH_PART}+)*/?|(?<![\w.@+~/-])[A-Za-z]:\\[^\s]+"
        ),
    ),
    ("version", re.compile(r"(?<![\w.])[vV]?\d+(?:\.\d+)+\b|\b[vV]\d+\b")),
    ("number", re.compile(r"\b\d+(?:[,:]\d+)*\b")),
    ("dotted", re.compile(r"(?<![\w.-])[A-Za-z_][\w-]*(?:\.[A-Za-z0-9_][\w-]*)+\b")),
    (
        "snake",
        re.compile(r"\*?(?:\b\w*[A-Za-z0-9]_\w*\b|\b_+[A-Za-z0-9]\w*\b)(?:(?<=_)\*)?"),
    ),  # "*_cents", "APPLE_API_*"
    ("camel", re.compile(r"\b[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*\b")),
    ("flag", re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*")),
)
_LITERAL_HINTS: dict[str, Callable[[str], bool]] = {
    "code": lambda t: "`" in t,
    "url": lambda t: "://" in t or "www." in t,
    "path": lambda t: "/" in t or ":\\" in t,
    "version": lambda t: _has_digit(t),
    "number": lambda t: _has_digit(t),
    "dotted": lambda t: "." in t,
    "snake": lambda t: "_" in t,
    "camel": lambda t: _LOWER_UPPER.search(t) is not None,
    "flag": lambda t: "-" in t,
}


def _has_digit(text: str) -> bool:
    return _DIGIT.search(text) is not None


@dataclass(frozen=True, slots=True)
class TextFeatures:
    """What the rules read in one text (the fields are described in the module docstring)."""

    sig: frozenset[str]
    negated: bool
    qualifiers: frozenset[str]
    literals: frozenset[str]
    names: frozenset[str]
    values: frozenset[str]
    frame: frozenset[str]

    @property
    def core(self) -> frozenset[str]:
        """The significant words that are not weak: what two merge candidates must share exactly."""
        return self.sig - WEAK_WORDS

    @property
    def specific(self) -> bool:
        """Carries something specific to the project (a literal value or a proper noun)."""
        return bool(self.literals) or not self.names <= WEAK_WORDS


def text_features(text: str) -> TextFeatures:
    tokens = words(text)
    all_words = set(tokens)
    sig = significant_of(all_words)
    literal_spans, rest = _literals(text)
    names = _names(rest)
    literals = frozenset(filter(None, map(_normalise, literal_spans)))
    if literals:  # the predicate is what the text says outside its literals
        values = literals
        predicate = significant_of(set(words(rest))) - WEAK_WORDS
    else:
        values = names - WEAK_WORDS
        predicate = sig - values - WEAK_WORDS
    frame = predicate if predicate.isdisjoint(CANONICAL_PREDICATE) else frozenset(map(canonical, predicate))
    return TextFeatures(
        sig=sig,
        negated=not all_words.isdisjoint(NEGATIONS),
        qualifiers=frozenset(all_words & QUALIFIERS),
        literals=literals,
        names=names,
        values=values,
        frame=frame,
    )


def literals_by_kind(text: str) -> dict[str, frozenset[str]]:
    """The text's normalised literal values grouped by kind ("number", "version", "path", …);
    kinds without a value are left out."""
    found: dict[str, set[str]] = {}
    for kind, pattern in _LITERAL_PATTERNS:
        if _LITERAL_HINTS[kind](text):
            spans: list[str] = []
            text = pattern.sub(partial(_take_literal, spans, kind == "path"), text)
            values = set(filter(None, map(_normalise, spans)))
            if values:
                found[kind] = values
    return {kind: frozenset(values) for kind, values in found.items()}


def _literals(text: str) -> tuple[list[str], str]:
    """The literal spans of `text`, and the text with those spans blanked out."""
    found: list[str] = []
    for kind, pattern in _LITERAL_PATTERNS:
        if _LITERAL_HINTS[kind](text):
            text = pattern.sub(partial(_take_literal, found, kind == "path"), text)
    return found, text


def _take_literal(found: list[str], must_be_path: bool, match: re.Match[str]) -> str:
    """Record a literal span and blank it out (a slash-joined span only if it is a real path;
    in Chinese or Japanese text, without the words run on at its ends: "放在messages/目录下" is
    "messages/")."""
    span = match.group()
    if must_be_path:
        start, end = _ascii_core(span)
        if not _is_path(span[start:end]):
            return span
        if (start, end) != (0, len(span)):
            found.append(span[start:end])
            return span[:start] + " " * (end - start) + span[end:]
    found.append(span)
    return " " * len(span)


def _ascii_core(span: str) -> tuple[int, int]:
    """Where the path in `span` starts and ends: all of it, or in text of another script the one
    run of ASCII holding a slash and a letter or digit ("文案JSON都在messages/里": "messages/");
    a path whose folders are named in that script stays whole ("src/组件/Button.tsx")."""
    if span.isascii():
        return 0, len(span)
    ascii_span = _BRACKETED.sub(lambda m: "<" + "x" * (len(m.group()) - 2) + ">", span)  # "<表名>" is part of it
    runs = [m for m in _ASCII_RUN.finditer(ascii_span) if "/" in m.group() and any(map(str.isalnum, m.group()))]
    if len(runs) != 1:
        return (0, len(span)) if len(runs) > 1 else (0, 0)
    return runs[0].span()


def _is_path(span: str) -> bool:
    """A slash-joined span that really is a path ("src/app/", "~/x", "a/b.py"), not "and/or"."""
    span = span.rstrip(".,;:")
    if span.startswith(("/", "~", ".")) or ":\\" in span or span.endswith("/"):
        return True
    last = span.rsplit("/", 1)[-1]
    return span.count("/") >= 2 or ("." in last.strip(".") and not last.endswith("."))


def _normalise(span: str) -> str:
    value = _placeholders_as("*", span.strip())
    value = _strip_closing(value.lstrip(_OPENING_PUNCTUATION)).lower()
    return "" if value in _ABBREVIATIONS else value


def without_placeholders(text: str) -> str:
    """`text` with its placeholders ("<lang>", "{lng}", "xxx") blanked: they name no tool."""
    return _placeholders_as(" ", text)


def _placeholders_as(replacement: str, text: str) -> str:
    if "<" in text or "{" in text or "xxx" in text.lower():  # (a quick look: most texts have none)
        return _PLACEHOLDER.sub(replacement, text)
    return text


def _strip_closing(value: str) -> str:
    """`value` without the punctuation that closes the sentence or an aside around it; a
    bracket it opened itself stays ("routes/[slug]")."""
    end = len(value)
    if not end or value[-1] not in _CLOSING_PUNCTUATION:
        return value
    unopened = {closer: value.count(closer) - value.count(opener) for closer, opener in _CLOSERS.items()}
    while end and value[end - 1] in _CLOSING_PUNCTUATION:
        closer = value[end - 1]
        if closer in unopened:
            if unopened[closer] <= 0:
                break  # a bracket the value opened itself
            unopened[closer] -= 1
        end -= 1
    return value[:end]


def cased_words(text: str) -> list[str]:
    """The word tokens of `text` as written (the tokenizer of `text.words`, without lower-casing)."""
    return WORD_PATTERN.findall(text)


def _names(text: str) -> frozenset[str]:
    """Proper nouns and named tools in `text` (whose literals are already blanked out)."""
    if text.isascii():
        matches = _ASCII_CAPITALISED_WORD.finditer(text)  # fast path: only words with a capital
    else:
        matches = WORD_PATTERN.finditer(text)
    return frozenset(
        fold_plural(m.group().lower()) for m in matches if _is_name(m.group(), _starts_sentence(text, m.start()))
    )


def _starts_sentence(text: str, start: int) -> bool:
    """Whether the word at `start` opens a sentence: the last non-blank character before it
    (within 64 characters; blanked literals count as blank) ends one, or there is none."""
    before = text[max(0, start - 64) : start].rstrip(" \t")
    return not before or before[-1] in _SENTENCE_BREAK


def _is_name(token: str, starts_sentence: bool) -> bool:
    if len(token) < 2 or "'" in token or "’" in token or token.islower():
        return False
    lowered = token.lower()
    if lowered in STOP_WORDS or lowered in NEGATIONS or not token[0].isalpha():
        return False
    inner_capital = token[1:] != token[1:].lower()
    return inner_capital or (token[0].isupper() and not starts_sentence)
