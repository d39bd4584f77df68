"""What two similar memories are to each other, read from their texts (docs/dream.md). Pure.

Cosine similarity finds memories about the same thing but cannot tell a duplicate from a
contradiction ("targets Python 3.11" / "targets Python 3.12": 0.98). These rules look at
what the vectors blur:

* **literals** by kind (`features.literals_by_kind`): a kind both texts hold with different
  values is a *replaced literal* (a port, version, number, path, URL or identifier);
* **polarity**: a negation in one text only (English, Chinese, Japanese, Russian words);
* **named tools**: each text names a tool or product the other does not mention at all
  (npm → pnpm, TaxJar → Stripe Tax); one name a prefix of the other counts as the same
  (Postgres / PostgreSQL);
* **a change marker** in the newer text ("now", "switched to", "no longer", "replaced by",
  "改为", "теперь" …): the newer one says it replaces something;
* **scope**: the content words outside literals that only one side has — a subject or a
  condition the other lacks (the catalog API's timeout vs the payments API's).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..text import fold_plural, words
from .features import AnalysedMemory, literals_by_kind, text_features
from .lexicon import EVENT_TYPES, WEAK_WORDS

_FOREIGN_NEGATION = re.compile(r"不|没有|别|禁止|勿|无需|無|しない|ない|禁止|\bне\b|\bнельзя\b|\bникогда\b|\bнет\b|\bбез\b",
                               re.IGNORECASE)
# Words that state a prohibition without a negation word ("is discouraged", "is banned"): such
# a text says the same as its negated paraphrase ("Don't ..."), so it counts as negated too.
_PROHIBITION = re.compile(r"\b(?:forbidden|banned|prohibited|disallowed|discouraged|not allowed|must not|"
                          r"should not|off-limits|anti-pattern|bad idea)\b|\b(?:turned|switched|keep|kept|set|is|are|was|"
                          r"stays?)\s+(?:\w+\s+)?off\b|禁止|不要|不得|不允许|禁じ|запрещ|нельзя",
                          re.IGNORECASE)
_CHANGE_MARKER = re.compile(
    r"\b(?:now|nowadays|anymore|any more|no longer|switched|switch(?:ed)? to|moved|migrated|replaced|replacing|"
    r"instead of|rather than|was removed|were removed|removed|dropped|deprecated|retired|changed to|"
    r"upgraded|bumped|from now on|these days)\b"
    r"|改为|改成|换成|换到|现在|目前|不再|已移除|已删除|移除|替换|迁移|取代|升级"
    r"|に変更|移行|廃止|代わりに|今は|現在"
    r"|теперь|больше не|замен|перешли|перешёл|перевели|вместо|удал|переехал|обновили",
    re.IGNORECASE)


@dataclass(frozen=True)
class Reading:
    """What the pair rules read in one text."""

    kinds: dict[str, frozenset[str]]
    negated: bool
    names: frozenset[str]
    content: frozenset[str]  # significant words outside literals, weak words removed
    words: frozenset[str]  # all significant words
    tokens: frozenset[str]
    marked: bool


# A number beside letters of another script ("6379端口", "порту 4000"): word boundaries do not
# separate it there, so `features` does not see it as a number.
_NUMBER_IN_ANY_SCRIPT = re.compile(r"(?<![0-9A-Za-z_.])\d+(?:\.\d+)*(?![0-9A-Za-z_])")


@lru_cache(maxsize=1 << 16)
def reading(text: str) -> Reading:
    features = text_features(text)
    kinds = literals_by_kind(text)
    if not text.isascii():
        numbers = set(_NUMBER_IN_ANY_SCRIPT.findall(text)) - set().union(*kinds.values()) if kinds else \
            set(_NUMBER_IN_ANY_SCRIPT.findall(text))
        numbers = {n for n in numbers if not any(n in value for value in set().union(*kinds.values()))} \
            if kinds else numbers
        if numbers:
            kinds = {**kinds, "number": frozenset(kinds.get("number", frozenset()) | numbers)}
        kinds = {kind: _ascii_parts(values) for kind, values in kinds.items()}
    literal_words = {w for values in kinds.values() for value in values for w in words(value)}
    negated = (features.negated or _FOREIGN_NEGATION.search(text) is not None
               or _PROHIBITION.search(text) is not None)
    names = features.names
    if not text.isascii():  # in Chinese, Japanese or Russian text, the Latin words name tools
        names = names | {fold_plural(w.lower()) for w in _LATIN_WORD.findall(text) if len(w) > 1}
    return Reading(kinds=kinds, negated=negated, names=frozenset(names),
                   content=frozenset(features.sig - literal_words - WEAK_WORDS), words=features.sig,
                   tokens=frozenset(words(text)), marked=_CHANGE_MARKER.search(text) is not None)


_LATIN_WORD = re.compile(r"(?<![A-Za-z0-9_.\-/])[A-Za-z][A-Za-z0-9+#]*(?![A-Za-z0-9_.\-/])")
_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")


def _ascii_parts(values: frozenset[str]) -> frozenset[str]:
    """Literal values with letters of other scripts cut out: a pattern that runs on into Chinese
    text ("TRANSFORM_DEV_WH，角色是TRANSFORMER_DEV") yields the ASCII pieces it holds."""
    return frozenset(part for value in values for part in _NON_ASCII_RUN.split(value) if part.strip("_.,:;-"))


def replaced_kinds(a: Reading, b: Reading) -> list[str]:
    return sorted(kind for kind in a.kinds.keys() & b.kinds.keys() if a.kinds[kind] != b.kinds[kind])


def _mentions(name: str, other: Reading) -> bool:
    return any(token == name or (len(name) >= 4 and len(token) >= 4 and (token.startswith(name) or name.startswith(token)))
               for token in other.tokens)


def introduced(older: Reading, newer: Reading) -> bool:
    """The newer names something the older does not mention."""
    return any(not _mentions(n, older) for n in newer.names)


def tool_swapped(a: Reading, b: Reading) -> bool:
    """Each names something the other does not mention."""
    return any(not _mentions(n, b) for n in a.names) and any(not _mentions(n, a) for n in b.names)


def containment(a: Reading, b: Reading) -> float:
    if not a.content or not b.content:
        return 0.0
    return len(a.content & b.content) / min(len(a.content), len(b.content))


@dataclass(frozen=True)
class PairFacts:
    cosine: float
    replaced: tuple[str, ...]
    flipped: bool
    swapped: bool
    marked: bool  # the newer says it changes something the older did not
    introduces: bool  # the newer names a tool the older does not mention
    overlap: float


def pair_facts(older: AnalysedMemory, newer: AnalysedMemory, cosine: float) -> PairFacts:
    a, b = reading(older.memory.memory), reading(newer.memory.memory)
    return PairFacts(cosine=cosine, replaced=tuple(replaced_kinds(a, b)), flipped=a.negated != b.negated,
                     swapped=tool_swapped(a, b), marked=b.marked and not a.marked, overlap=containment(a, b),
                     introduces=introduced(a, b))


# Words that restrict a statement: when one text has one and the other none, the first adds a
# condition ("Run the e2e suite before merging only when ..."). The soft ones are also how
# a reworded fact is often phrased, so they only count below `SOFT_CONDITION_COSINE`.
CONDITION_WORDS = frozenset("if unless only except".split())
SOFT_CONDITION_WORDS = frozenset("when whenever during while until once".split())
SOFT_CONDITION_COSINE = 0.86
MERGE_COSINE = 0.78
CONFLICT_COSINE = 0.50
SWAP_MERGE_COSINE = 0.90  # a pair naming different tools merges only when nearly identical
MIN_SUBJECT_OVERLAP = 0.25


def adds_condition(a: Reading, b: Reading, cosine: float) -> bool:
    """One text restricts the statement and the other does not."""
    def differs(words: frozenset[str]) -> bool:
        return bool(a.tokens & words) != bool(b.tokens & words)

    return differs(CONDITION_WORDS) or (cosine < SOFT_CONDITION_COSINE and differs(SOFT_CONDITION_WORDS))


VALUE_KINDS = frozenset({"number", "version", "url", "path", "code"})  # a changed value; other kinds name things
MARKED_CONFLICT_COSINE = 0.60
# Two values for "the same" setting without a word of change: as often two settings of two
# things ("the catalog API's timeout" / "the payments API's") unless the texts are very close.
UNMARKED_VALUE_COSINE = 0.76


LOW_MERGE_COSINE = 0.70  # below MERGE_COSINE, a merge also needs shared evidence (`shared_evidence`)
EVIDENCE_WORD_OVERLAP = 0.40


def literal_values(r: Reading) -> frozenset[str]:
    return frozenset().union(*r.kinds.values()) if r.kinds else frozenset()


def shared_evidence(a: Reading, b: Reading) -> bool:
    """The two texts share a specific literal (a path, identifier, ticket, command: not a bare
    number), or many words."""
    if any(not value.isdigit() for value in literal_values(a) & literal_values(b)):
        return True
    union = a.words | b.words
    return bool(union) and len(a.words & b.words) / len(union) >= EVIDENCE_WORD_OVERLAP


def relation(older: AnalysedMemory, newer: AnalysedMemory, cosine: float) -> str | None:
    """"merge", "conflict" or None (leave them alone) for two memories of one type."""
    facts = pair_facts(older, newer, cosine)
    values = [kind for kind in facts.replaced if kind in VALUE_KINDS]
    if len(values) < len(facts.replaced):  # an identifier differs: two different things
        return None
    a, b = reading(older.memory.memory), reading(newer.memory.memory)
    event = older.type in EVENT_TYPES  # records of what happened: "no longer crashes" is no polarity
    same_conditions = not adds_condition(a, b, cosine)
    literals_a, literals_b = literal_values(a), literal_values(b)
    one_holds_all = literals_a <= literals_b or literals_b <= literals_a  # the draft can keep every literal
    if (cosine >= LOW_MERGE_COSINE and (cosine >= MERGE_COSINE or shared_evidence(a, b))
            and not values and same_conditions and one_holds_all
            and (event or (not (facts.marked and facts.introduces) and not facts.flipped))
            and (not facts.swapped or cosine >= SWAP_MERGE_COSINE)):
        return "merge"
    if event:
        return None
    if cosine < CONFLICT_COSINE or facts.overlap < MIN_SUBJECT_OVERLAP or not same_conditions:
        return None
    if values and (facts.marked or cosine >= UNMARKED_VALUE_COSINE):
        return "conflict"
    if facts.flipped or (facts.marked and (facts.introduces or cosine >= MARKED_CONFLICT_COSINE)):
        return "conflict"
    return None
