"""The merge rule by words (docs/dream.md, "Step 3: analyse"): whether two memories' texts say
the same thing in the same words. Pure.

Two memories are **mergeable** when all of these hold:

1. Jaccard of their significant words > 0.6 (necessary: docs/dream.md);
2. the words only one of them has are all *weak* (`lexicon.WEAK_WORDS`): generic nouns
   and verbs that add no condition, scope or value. Any other extra word is a condition
   or scope the other lacks ("window seats" + "long-haul flights"), or a different
   value — a number, version, port, path, named tool or place — which makes the pair a
   possible conflict, never a merge;
3. the same literal values (`features.literals`: numbers, versions, paths, URLs,
   identifiers, flags, quoted code): "src/a/b.py" and "src/b/a.py" have the same words;
4. the same polarity (a negation in both or in neither) and the same qualifiers (``if``,
   ``only``, ``before`` ...).

Anything else is "in doubt": no merge. "Use PostgreSQL for auth" / "Auth DB is PostgreSQL"
merge (J = 2/3, extra word ``db`` is weak); "Run tests with pytest -q" / "Tests are run
with pytest -q" merge (same words).
"""

from __future__ import annotations

from ..language.features import TextFeatures
from ..language.lexicon import WEAK_WORDS
from .candidates import exceeds

Rest = tuple[bool, frozenset[str], frozenset[str]]


def rest_key(features: TextFeatures) -> Rest:
    """What must be equal, beyond the words, for two memories to merge."""
    return (features.negated, features.qualifiers, features.literals)


def words_mergeable(a: frozenset[str], b: frozenset[str]) -> bool:
    return (a ^ b) <= WEAK_WORDS and exceeds(a, b)


def mergeable(a: TextFeatures, b: TextFeatures) -> bool:
    """The pair rule of the module docstring."""
    return rest_key(a) == rest_key(b) and words_mergeable(a.sig, b.sig)
