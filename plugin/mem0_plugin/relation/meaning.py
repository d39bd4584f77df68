"""What two similar memories are to each other, read from their texts (docs/dream.md). Pure.

Cosine similarity finds memories about the same thing but cannot tell a duplicate from a
contradiction ("targets Python 3.11" / "targets Python 3.12": 0.98). `relation` weighs the
cosine against what the vectors blur, each read by a module of its own:

* `reading` — what one text says, read once (`Reading`), from `negation` (negations,
  prohibitions, change markers) and `literal_kinds` (numbers, versions, paths, URLs, code,
  identifiers);
* `literals` — a literal of one kind replaced, echoed, or held by one text only;
* `polarity` — yes in one text and no in the other;
* `conditions` — a condition one text adds;
* `two_things` — another tool, another subject in one template, another environment.

Here: the thresholds, `relation` ("merge", "conflict" or None), `about_two_things` (whether
a lexical conflict is about two things) and `open_question` (what a judge could be asked).
"""

from __future__ import annotations

from ..language.analysed import AnalysedMemory
from ..language.lexicon import EVENT_TYPES, WEAK_WORDS
from ..language.literal_kinds import VALUE_KINDS
from ..language.reading import Reading, Readings, literal_values, reading_of
from .agreement import restates
from .conditions import adds_condition
from .guards import across_languages, names_lost, negation_clash, replaces, retires, time_limited
from .literals import held, identifier_differs, one_holds_all, replaced_both_ways, replaced_kinds, retired
from .polarity import moved_away, polarity_flipped, switched
from .two_things import (
    containment,
    introduced,
    named_apart,
    narrowed,
    scoped_apart,
    subject_swapped,
    swapped_words,
    template_swapped,
    tool_swapped,
)

MERGE_COSINE = 0.78
CONFLICT_COSINE = 0.50
SWAP_MERGE_COSINE = 0.93  # a pair naming different tools merges only when nearly identical
MIN_SUBJECT_OVERLAP = 0.25

MARKED_CONFLICT_COSINE = 0.60
# A change the newer text marks, this close: one subject even when the two share few words
# (reworded, or in Chinese or Russian: "背光在无操作 15 秒后熄灭" / "背光超时改为 45 秒").
MARKED_SAME_SUBJECT_COSINE = 0.70
# Two values for "the same" setting without a word of change: as often two settings of two
# things ("the catalog API's timeout" / "the payments API's"). From UNMARKED_VALUE_COSINE on a
# conflict, but below SAME_SUBJECT_COSINE only when the texts are no one template told of two
# subjects (`template_swapped`): a reworded fact is rarely written on the other's template.
UNMARKED_VALUE_COSINE = 0.64
SAME_SUBJECT_COSINE = 0.76

UNMARKED_VERSION_COSINE = 0.60  # two versions of one named thing: rarely two things
# Two memories that are each other's closest of their type are about one subject far more
# often than a pair just as close: a value replaced between them is a conflict from the floor
# where pairs are compared ("Product listing page size is 24 items" / "PLP pagination: 36
# products per page": 0.55).
NEAREST_VALUE_COSINE = 0.50


LOW_MERGE_COSINE = 0.66  # below MERGE_COSINE, a merge also needs shared evidence (`shared_evidence`)
# A pair the rules left alone is a judge's "merge" question from here, unless the rules read it as
# about two things (`open_question`); a run asks the best of them only (`judging.candidate_limit`).
ASK_MERGE_COSINE = 0.60
# Records of events this close are mostly observations of one habit, which synthesis groups
# (docs/dream.md, "Candidates"): asked about merging only from here.
ASK_EVENT_MERGE_COSINE = 0.70
EVIDENCE_WORD_OVERLAP = 0.40
NUMBER_EVIDENCE_WORD_OVERLAP = 0.20  # with a number of two digits or more in common


def shared_evidence(a: Reading, b: Reading) -> bool:
    """The two texts share a specific literal (a path, identifier, ticket, command: not a bare
    number; written as a plain word in one of them counts), two names ("Pinia" and "Vitest";
    "UTC" and "BI" in two Russian texts, where paraphrases rarely share words and the Latin
    words name tools), or many words."""
    literals_a, literals_b = literal_values(a), literal_values(b)
    if any(not value.isdigit() for value in literals_a & literals_b):
        return True
    if any(not value.isdigit() and held(value, a, b, literals_b) for value in literals_a - literals_b) or any(
        not value.isdigit() and held(value, b, a, literals_a) for value in literals_b - literals_a
    ):
        return True  # one literal, written as code in one text and as a word in the other, or by a placeholder
    if len((a.names & b.names) - WEAK_WORDS) >= 2:
        return True  # two named tools in common ("Pinia", "Vitest"; in Chinese or Russian text, its Latin words)
    if a.compounds & b.compounds:
        return True  # a package-like name both hold: "prettier-plugin-tailwindcss", "next-intl"
    union = a.words | b.words
    if not union:
        return False
    overlap = len(a.words & b.words) / len(union)
    if overlap >= EVIDENCE_WORD_OVERLAP:
        return True
    numbers = {v for v in literal_values(a) & literal_values(b) if v.isdigit() and len(v) >= 2}
    return bool(numbers) and overlap >= NUMBER_EVIDENCE_WORD_OVERLAP


def relation(
    older: AnalysedMemory,
    newer: AnalysedMemory,
    cosine: float,
    readings: Readings | None = None,
    *,
    nearest: bool = False,
) -> str | None:
    """ "merge", "conflict" or None (leave them alone) for two memories of one type; `nearest`:
    each is the other's closest of the type (`NEAREST_VALUE_COSINE`). The checks run cheapest
    first: most candidate pairs are decided by their cosine and two flags."""
    a, b = reading_of(older, readings), reading_of(newer, readings)
    could_merge = cosine >= LOW_MERGE_COSINE
    if restates(a, b):
        return "merge" if could_merge else None  # an acknowledgement repeating the other: agreement (`agreement`)
    flipped, marked = polarity_flipped(a, b) or switched(a, b), b.marked and not a.marked
    value_cosine = NEAREST_VALUE_COSINE if nearest else UNMARKED_VALUE_COSINE
    if not could_merge and (
        cosine < CONFLICT_COSINE or not (flipped or marked or cosine >= min(value_cosine, UNMARKED_VERSION_COSINE))
    ):
        return None  # below merging, only a flip, a marked change or a value replaced can make a conflict
    if not could_merge and containment(a, b) < MIN_SUBJECT_OVERLAP:
        return None
    event = older.type in EVENT_TYPES  # records of what happened: "no longer crashes" is no polarity
    retiring = not event and retires(a, b)
    if not flipped and not event and (retiring or negation_clash(a, b)):
        flipped = True  # one text retires or forbids what the other asserts: as a flip (`guards`)
    replaced = replaced_kinds(a, b)
    values = [kind for kind in replaced if kind in VALUE_KINDS]
    if not marked and (identifier_differs(replaced, a, b) or named_apart(a, b)):
        return None  # an identifier differs: two different things (unless the newer says what it replaced)
    # (a marked change's or a record of an event's "when" or "once" tells when it happened, not where it holds)
    # ("no longer wants A, only B": what the retiring text keeps is no condition on what it retired)
    same_conditions = retiring or not adds_condition(a, b, 1.0 if (marked or event) else cosine)
    moved = marked and moved_away(a, b)
    swaps: list[tuple[str, str]] | None = None  # `swapped_words`, once read
    if (
        could_merge
        and not moved
        and not values
        and same_conditions
        and (event or (not flipped and not replaces(a, b)))
        and (cosine >= MERGE_COSINE or shared_evidence(a, b))
        and one_holds_all(a, b)
        and not names_lost(a, b)
        and (cosine >= SWAP_MERGE_COSINE or not tool_swapped(a, b))
        and not (swaps := swapped_words(a, b))
        and not narrowed(a, b)
        and not scoped_apart(a, b, marked)
        and (event or not time_limited(a, b))
        and not across_languages(a, b)
    ):
        return "merge"
    if event or cosine < CONFLICT_COSINE or not same_conditions:
        return None
    values = [
        kind
        for kind in values
        if replaced_both_ways(a.kinds[kind], b.kinds[kind], a, b)
        or (marked and retired(a.kinds[kind], b.kinds[kind], a))
    ]
    contradicts = (
        values and (marked or cosine >= value_cosine or ("version" in values and cosine >= UNMARKED_VERSION_COSINE))
    ) or (flipped or moved or (marked and (cosine >= MARKED_CONFLICT_COSINE or introduced(a, b))))
    # (the subject's overlap only once a contradiction is found: most pairs have none)
    if not contradicts or (
        (not marked or (cosine < MARKED_SAME_SUBJECT_COSINE and not values)) and containment(a, b) < MIN_SUBJECT_OVERLAP
    ):
        return None  # another subject
    if swaps is None:
        swaps = swapped_words(a, b)  # (once per pair: the merge checks may have read them)
    if subject_swapped(a, b, swaps):
        return None  # the subject swapped: another thing's value, not this one's
    if values and not marked and swaps:
        return None  # a word and a value both differ: "the gRPC API on 8001" / "the HTTP API on 8000"
    if values and not marked and cosine < SAME_SUBJECT_COSINE and template_swapped(a, b):
        return None  # one template, another subject: "The session cookie expires after 12 hours" / "The refresh token cookie …"
    if values and not marked and tool_swapped(a, b):
        return None  # each names a tool the other does not, each with its own value
    if not marked and "path" in values and len(values) >= 2:
        return None  # a path and another value both differ: each path's own value ("/static/*: 86400" / "/api/*: 0")
    if values == ["code"] and a.negated and b.negated and not (marked or flipped):
        return None  # two prohibitions of two things both hold: "never X in the hot path" / "never Y …"
    if scoped_apart(a, b, marked):
        return None  # another environment's value
    return "conflict"


def about_two_things(older: AnalysedMemory, newer: AnalysedMemory, readings: Readings | None = None) -> bool:
    """Whether the rules of `relation` read the two texts as about two things, each with its
    own value (whatever their cosine): another identifier without a marked change (as
    `relation` reads it), two names of one family (`named_apart`), the same sentence about
    another subject (`subject_swapped`), or a word and a value both different
    ("the gRPC API on 8001" / "the HTTP API on 8000"). A lexical value conflict of such a pair
    is none (`per_type`); a tool chosen ("Deploy to ECS" / "Deploy to Vercel") is no such pair."""
    a, b = reading_of(older, readings), reading_of(newer, readings)
    marked = b.marked and not a.marked
    replaced = replaced_kinds(a, b)
    if not marked and (identifier_differs(replaced, a, b) or named_apart(a, b)):
        return True
    if subject_swapped(a, b) or scoped_apart(a, b, marked):
        return True
    values = [k for k in replaced if k in VALUE_KINDS and replaced_both_ways(a.kinds[k], b.kinds[k], a, b)]
    return bool(values) and not marked and bool(swapped_words(a, b))


def open_question(
    older: AnalysedMemory, newer: AnalysedMemory, cosine: float, readings: Readings | None = None
) -> str | None:
    """What to ask a judge about a pair `relation` left alone (docs/dream.md, "Candidates"):
    "supersede" when the newer text alone marks a change, "conflict" when one text only is
    negated, "merge" when the two are close (ASK_MERGE_COSINE); None: not worth asking.
    Records of events never conflict, so they are only asked about merging. (A pair the rules
    read as about two things is not asked either: `judging.open_candidates` leaves it out.)"""
    if cosine < CONFLICT_COSINE:
        return None
    event = older.type in EVENT_TYPES
    if not event:
        a, b = reading_of(older, readings), reading_of(newer, readings)
        if b.marked and not a.marked:
            return "supersede"
        if a.negated != b.negated or adds_condition(a, b, cosine):
            question = "conflict"  # one text denies or restricts what the other states: does the older still hold?
        elif cosine >= ASK_MERGE_COSINE:
            question = "merge"
        else:
            return None
    elif cosine >= ASK_EVENT_MERGE_COSINE:
        question = "merge"
    else:
        return None
    return question
