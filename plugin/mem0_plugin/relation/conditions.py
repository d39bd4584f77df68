"""Whether one text restricts what the other states (docs/dream.md, "What the pair is"). Pure.

A condition word ("if", "unless", "only", "except"; softer: "when", "during", "once") that
one text has and the other lacks, opening a clause the other does not state in its own words
(`adds_condition`).
"""

from __future__ import annotations

import re

from ..language.lexicon import WEAK_WORDS
from ..language.reading import Reading, across_scripts, mentions
from ..language.text import significant_of, words

# Words that restrict a statement: when one text has one and the other none, the first adds a
# condition ("Run the e2e suite before merging only when ..."). The soft ones are also how
# a reworded fact is often phrased, so they only count below `SOFT_CONDITION_COSINE`.
CONDITION_WORDS = frozenset("if unless only except also additionally".split())
# an exception is never "stated in other words" by a text without one: "User prefers
# table-driven tests in Go" does not say "except for fuzz tests" because it says "tests"
EXCLUSION_WORDS = frozenset("unless except".split())
# a restriction in any language the readings support, as a word of the text, whatever it restricts
# (`restricted`: for texts in different scripts, whose clauses cannot be compared)
_RESTRICTION = re.compile(
    r"\b(?:only|except|unless|if|just)\b|только|кроме|если|лишь|за исключением|"
    r"只有|只在|只用|仅|除了|除非|如果|のみ|だけ|以外|除き|除いて|場合|限り|ただし"
)
SOFT_CONDITION_WORDS = frozenset("when whenever during while until once".split())
SOFT_CONDITION_COSINE = 0.86


def adds_condition(a: Reading, b: Reading, cosine: float) -> bool:
    """One text restricts the statement and the other does not: it has a condition word the
    other lacks, and a condition the other does not state in its own words (`restated`)."""

    def added(kind: frozenset[str]) -> bool:
        in_a, in_b = _conditioned(a, kind), _conditioned(b, kind)
        if in_a == in_b:
            return False
        one, other = (a, b) if in_a else (b, a)
        if restricted(other) and across_scripts(one, other):
            return False  # restricted in its own language's words: a clause in another cannot be compared
        return any(
            (word in EXCLUSION_WORDS and not _required(word, clause, other)) or not restated(clause, other)
            for word, clause in condition_clauses(one.text, kind)
        )

    return added(CONDITION_WORDS) or (cosine < SOFT_CONDITION_COSINE and added(SOFT_CONDITION_WORDS))


_REQUIREMENT_WORDS = frozenset("need needs needed require requires required must".split())


def _required(word: str, clause: frozenset[str], other: Reading) -> bool:
    """An "unless" clause the other text states as a requirement: "the tests die unless the
    Docker daemon is up" / "the tests need Docker running" (an "except" is no requirement)."""
    return word == "unless" and not _REQUIREMENT_WORDS.isdisjoint(other.tokens) and restated(clause, other)


def _conditioned(r: Reading, kind: frozenset[str]) -> bool:
    """The text has a condition word of `kind`; "otherwise" states an "if" or "unless" the other
    way round ("garbage stacks unless built with X" / "build with X; otherwise junk stacks"), and
    "just" restricts as "only" does ("runs only the idempotency tests" / "run just that slice")."""
    return (
        bool(r.tokens & kind)
        or ("otherwise" in r.tokens and "unless" in kind)
        or ("just" in r.tokens and "only" in kind)
    )


# A condition word and its clause, up to the next break. A word inside a compound is no
# condition ("append-only", "read-only", "only-child").
_CONDITION_CLAUSE = re.compile(
    r"(?<![\w-])(" + "|".join(sorted(CONDITION_WORDS | SOFT_CONDITION_WORDS)) + r")(?![\w-])(?=([^,;:.?!()—]{0,300}))"
)
# "once" followed by one of these counts times ("written once and never edited", "once a day")
MAX_CONDITIONS = 16  # the conditions of a text read at most (a text of thousands is no statement)
_ONCE_AS_COUNT = frozenset("and or per a an every then again more".split())


def condition_clauses(text: str, kind: frozenset[str]) -> list[tuple[str, frozenset[str]]]:
    """Each condition `text` states with a word of `kind`: the word and the significant words
    of the clause it opens ("once they are older than 24 hours" → (once, {older, 24, hour})).
    "once" counting times is no condition."""
    clauses: list[tuple[str, frozenset[str]]] = []
    lowered = text.lower()
    for match in _CONDITION_CLAUSE.finditer(lowered):
        if len(clauses) == MAX_CONDITIONS:
            break
        word, rest = match.group(1), words(match.group(2))
        if word not in kind or (word == "once" and (not rest or rest[0] in _ONCE_AS_COUNT)):
            continue
        if word == "only" and not rest:
            continue  # "Power-of-two N only.": it restricts what it follows, which both texts say
        clause = significant_of(rest) - WEAK_WORDS
        # what the condition adds to the statement it restricts: "Emails go through Postmark only
        # if EMAIL_BACKEND=postmark" restricts Postmark by the backend setting, which a text that
        # names Postmark does not state
        added = clause - significant_of(words(lowered[: match.start()]))
        clauses.append((word, added or clause))
    return clauses


def restated(clause: frozenset[str], other: Reading) -> bool:
    """The other text says at least half of what the condition says: the same condition in
    other words ("when testing on a USB Android device" / "On a USB-connected Android
    phone"). A condition without significant words is never restated."""
    said = sum(mentions(word, other) for word in clause)
    return bool(clause) and 2 * said >= len(clause)


def restricted(r: Reading) -> bool:
    """The text holds a restriction word in any language the readings support ("only", "except",
    "если", "只有", "ただし" …)."""
    return _RESTRICTION.search(r.lowered) is not None
