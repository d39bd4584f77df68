"""Whether two texts say yes and no to one thing (docs/dream.md, "What the pair is"). Pure.

A negation in one text only, negating what the other says (`polarity_flipped`); one setting
on in one and off in the other (`switched`); a marked change that moves away from the older
text's value (`moved_away`).
"""

from __future__ import annotations

import re

from ..language.negation import CHOICE, GENERIC_PREDICATES, ONLY, says_no
from ..language.reading import Reading, mentions
from ..language.text import NEGATIONS, words
from .agreement import same_choice


def switched(a: Reading, b: Reading) -> bool:
    """One setting written as a switch in both texts, on in one and off in the other:
    "Set catchup=True on new DAGs" / "New DAGs must use catchup=False"."""
    settings_a = a.switches
    if not settings_a:
        return False
    settings_b = b.switches
    return any(name in settings_b and settings_b[name] != on for name, on in settings_a.items())


# A condition's clause, up to the next clause boundary: "if X isn't on PATH", "unless …".
_CONDITION_CLAUSE_SPAN = re.compile(
    r"\b(?:if|unless|otherwise|or else)\b[^.;:,—()]*|(?:если|иначе|如果|否则)[^.;:,—()。，；]*"
)


def _negated_only_in_conditions(r: Reading) -> bool:
    """Every negation of the text is inside a condition's clause."""
    if _CONDITION_CLAUSE_SPAN.search(r.lowered) is None:
        return False
    rest = _CONDITION_CLAUSE_SPAN.sub(" ", r.lowered)
    return not (says_no(rest, r.plain) or not NEGATIONS.isdisjoint(words(rest)))


_CHOSEN_BEFORE = re.compile(r"\brather than\b|\binstead of\b|\bover\b|вместо|\bа не\b")


def _chosen(r: Reading) -> list[str]:
    """The names of the clause before "rather than", "instead of", "over" ("Sidekiq rather than
    the async adapter"): the chosen ones. ("Use B instead", whose rejected one comes first,
    names none.)"""
    marker = _CHOSEN_BEFORE.search(r.lowered)
    if marker is None:
        return []
    clause = re.split(r"[.;:—!?]", r.lowered[: marker.start()])[-1]
    return [name for name in r.names if len(name) >= 3 and re.search(rf"\b{re.escape(name)}", clause)]


def polarity_flipped(a: Reading, b: Reading) -> bool:
    """One text only is negated, and what it negates is something the other says: "Never
    commit ios/Pods" / "Commit ios/Pods". A negation of a word the other text does not use is
    a rewording ("Text shown to users is never hardcoded: call t()" / "All user-facing
    strings go through t()"), no flip. A negation whose word is unknown (a prohibition,
    another language) flips."""
    if a.negated == b.negated:
        return False
    negated, other = (a, b) if a.negated else (b, a)
    if _negated_only_in_conditions(negated):
        return False  # "if binaryen isn't on PATH the build fails" states a requirement, denies nothing
    if ONLY.search(other.lowered) is not None:
        return False  # the other restricts with "only": the same restriction, said the other way
    choice = CHOICE.search(negated.lowered)
    if choice is not None and len(negated.names & other.names) >= 2:
        return False  # a choice between names the other text names too: the same choice
    if choice is not None and same_choice(negated, other):
        return False  # "tabs over spaces" / "prefers tabs": the chosen one, its alternative left out
    if choice is not None and any(mentions(name, other) for name in _chosen(negated)):
        return False  # the other names what this one chose: "Sidekiq rather than async" / "why Sidekiq? …"
    targets = negated.negated_words
    if targets is None or not targets.isdisjoint(GENERIC_PREDICATES):
        return True  # "Strict mode is not enabled": the negation is about its subject
    # the word, or one of its inflections: the other has a word beginning with its first
    # four letters ("caching" / "cache", "run" / "runs")
    beginnings = {token[:n] for token in other.tokens for n in (2, 3, 4)}
    return any(word[:4] in beginnings or (not word.isascii() and word in other.lowered) for word in targets)


_FROM_TO = re.compile(
    r"\bfrom\s+([\w.@+#/-]+)\s+(?:to|for)\s+([\w.@+#/-]+)|\breplaced\s+([\w.@+#/-]+)\s+(?:with|by)\s+([\w.@+#/-]+)",
    re.IGNORECASE,
)


def moved_away(older: Reading, newer: Reading) -> bool:
    """The newer text says it moved from something the older one says to something the older
    does not say: "Package manager is npm" / "Switched from npm to pnpm"; "JWTs are verified
    with golang-jwt" / "We replaced golang-jwt with lestrrat-go/jwx"."""
    lowered = newer.text.lower()
    if not newer.plain or ("from" not in lowered and "replaced" not in lowered):
        return False
    for match in _FROM_TO.finditer(newer.text):
        left, right = (
            part.lower().strip(".-") for part in (match.group(1, 2) if match.group(1) else match.group(3, 4))
        )
        said, new = set(words(left)), set(words(right))
        if said and new and said <= older.tokens and not new <= older.tokens:
            return True
    return False
