"""Whether two similar texts are about two things (docs/dream.md, "What the pair is"). Pure.

Another tool named in each (`tool_swapped`), one sentence about another subject
(`swapped_words`, `subject_swapped`, `template_swapped`), two names of one family, two
endpoints or two commands (`compound_swapped`, `endpoint_swapped`, `command_swapped`),
another environment or platform (`scoped_apart`), or a narrower scope (`narrowed`).
"""

from __future__ import annotations

import difflib
import re

from ..language.lexicon import CATEGORY_ALTERNATIVES, CATEGORY_NAMES, NAME_ALIASES, WEAK_WORDS, canonical
from ..language.literal_kinds import VALUE_KINDS, is_time_unit, kind_of, written
from ..language.negation import HIRAGANA
from ..language.reading import SIDE_ENVIRONMENTS, Reading, across_scripts, literal_values, mentions
from ..language.text import fold_plural


def introduced(older: Reading, newer: Reading) -> bool:
    """The newer names something the older does not mention (by itself or by another of its
    names: "PyTorch" mentions "torch")."""
    return bool(_unmentioned(newer, older))


def tool_swapped(a: Reading, b: Reading) -> bool:
    """Each names a tool the other does not mention (a tool's other name, `NAME_ALIASES`,
    mentions it). A kind of thing (`CATEGORY_NAMES`) is no tool, unless each text names
    another of one set of alternatives ("on the CPU" / "on the GPU"). Two texts that share
    two tools are one statement told with different details, not one tool put in another's
    place."""
    only_a, only_b = _unmentioned(a, b), _unmentioned(b, a)
    if any(CATEGORY_ALTERNATIVES.get(n, frozenset()) & only_b for n in only_a):
        return True
    if len((a.names & b.names) - CATEGORY_NAMES) >= 2:
        return False
    return bool(only_a - CATEGORY_NAMES) and bool(only_b - CATEGORY_NAMES)


def _unmentioned(a: Reading, b: Reading) -> frozenset[str]:
    """The names of `a` that `b` does not mention, by themselves or by another of their names."""
    return frozenset(
        n for n in a.names if not mentions(n, b) and not any(mentions(alias, b) for alias in NAME_ALIASES.get(n, ()))
    )


def _shared_names(a: Reading, b: Reading) -> frozenset[str]:
    """The literal identifiers (not numbers, versions or other values) both texts hold."""
    if a.plain and b.plain:  # (English text: the literals its features read, no second look)
        shared = a.features.literals & b.features.literals
    else:
        shared = literal_values(a) & literal_values(b)
    return frozenset(v for v in shared if kind_of(v) not in VALUE_KINDS)


def containment(a: Reading, b: Reading) -> float:
    """How much of the shorter text's content the other shares (its significant words when one
    has no content words outside its literals: "Enable reactStrictMode")."""
    if across_scripts(a, b) and (a.names & b.names or _shared_names(a, b)):
        return 1.0  # across scripts no word is shared but the names: a name both write is the subject
    first, second = a.content, b.content
    if not (first and second):
        first, second = a.words, b.words
    named = _shared_names(a, b)
    if named:  # an identifier both name is their subject too ("minSdkVersion is 23" / "raised to 26")
        first, second = first | named, second | named
    if not first or not second:
        return 0.0
    return len(first & second) / min(len(first), len(second))


TEMPLATE_SHARE = 0.6  # of the longer text's words in the same order in both: one template

_ENDPOINT = re.compile(r"\b(?:get|post|put|patch|delete|head|options) /\S*")


def endpoint_swapped(a: Reading, b: Reading) -> bool:
    """Each text names an HTTP endpoint (a method and a path) the other does not: two
    endpoints, each with its own facts ("`PUT /rules`: 60 requests/min" / "`GET /rules`: 120";
    "`POST /predict`" / "`POST /predict/batch`"), not one endpoint's value replaced."""
    if "/" not in a.lowered or "/" not in b.lowered:
        return False
    endpoints_a, endpoints_b = set(_ENDPOINT.findall(a.lowered)), set(_ENDPOINT.findall(b.lowered))
    return bool(endpoints_a - endpoints_b) and bool(endpoints_b - endpoints_a)


def command_swapped(a: Reading, b: Reading) -> bool:
    """One program run with another subcommand or task in each text, neither written in the
    other: two commands ("`./gradlew test` runs the unit tests" / "`./gradlew integrationTest`
    runs the Testcontainers suites"; "make seed" / "make seed-fx")."""
    commands_a, commands_b = a.commands, b.commands
    return any(
        program in commands_b
        and argument != commands_b[program]
        and not written(argument, b.lowered)
        and not written(commands_b[program], a.lowered)
        for program, argument in commands_a.items()
    )


def compound_swapped(a: Reading, b: Reading) -> bool:
    """Each text has a hyphenated name the other has not, both of one family (the same first
    part, or the same last): two things of that family ("docker compose up mock-upstream" /
    "… mock-admin"; "billing-service … billing-cg" / "audit-service … audit-cg"). A name
    written apart in the other text ("the mock upstream") is the same name."""
    compounds_a = a.compounds
    if not compounds_a:
        return False
    compounds_b = b.compounds
    only_a, only_b = compounds_a - compounds_b, compounds_b - compounds_a
    if not (only_a and only_b):
        return False
    kept_b = [name for name in only_b if not set(name.split("-")) <= a.tokens]
    firsts_b = {name.split("-", 1)[0] for name in kept_b}
    lasts_b = {name.rsplit("-", 1)[1] for name in kept_b}
    return any(
        (name.split("-", 1)[0] in firsts_b or name.rsplit("-", 1)[1] in lasts_b)
        and not set(name.split("-")) <= b.tokens
        for name in only_a
    )


def template_swapped(a: Reading, b: Reading) -> bool:
    """The two texts are one template (most of the longer one's words, literals masked, in the
    same order in both) with content words replaced in a place, each side's words missing from
    the other text: "The session cookie expires after 12 hours." / "The refresh token cookie
    expires after 30 days."; "Main process logs … userData/logs/main.log" / "Renderer logs …".
    Unlike `swapped_words`, the two places may differ in length. A word only added is detail."""
    left, right = a.frame, b.frame
    if not left or not right:
        return False
    lined_up = difflib.SequenceMatcher(None, left, right, autojunk=False)
    if sum(block.size for block in lined_up.get_matching_blocks()) < TEMPLATE_SHARE * max(len(left), len(right)):
        return False
    return any(
        _content_words(left[i1:i2], right) and _content_words(right[j1:j2], left)
        for tag, i1, i2, j1, j2 in lined_up.get_opcodes()
        if tag == "replace"
    )


def _content_words(place: tuple[str, ...], other: tuple[str, ...]) -> list[str]:
    return [word for word in place if word.isalpha() and word not in WEAK_WORDS and word not in other]


def named_apart(a: Reading, b: Reading) -> bool:
    """Two things of one family named, one in each text: hyphenated names, HTTP endpoints, commands."""
    return compound_swapped(a, b) or endpoint_swapped(a, b) or command_swapped(a, b)


def swapped_words(a: Reading, b: Reading) -> list[tuple[str, str]]:
    """The content words in which two texts of the same sentence differ, or [] when they are
    not one sentence. The texts are lined up word by word once their change words ("now",
    "switched to" …) are dropped and their numbers masked: "Alice owns the billing service" /
    "Bob owns the billing service" → [("alice", "bob")]; "The refunds service retries failed
    card refunds 3 times" / "The payouts service retries failed bank transfers 3 times" →
    three swaps. At most a third of the words may differ (else they are two sentences), and
    a plural or a synonym of the predicate in any differing place makes it a rewording: [].
    A place where a generic word differs ("service", "app": `WEAK_WORDS`) is no swap of its
    own, the other places tell ("Query API exposes …" / "Ingest service exposes …" → [("query",
    "ingest")]). Numbers and identifiers are the literal rules' business."""
    left, right = a.frame, b.frame  # read once per text, not once per pair
    if len(left) != len(right) or len(left) < 3:
        return []
    differing = [(x, y) for x, y in zip(left, right) if x != y]
    if not differing or len(differing) > max(1, len(left) // 3):
        return []
    swaps = []
    for x, y in differing:  # (any of these makes it no swap: the cheapest first)
        if x in WEAK_WORDS or y in WEAK_WORDS:
            continue  # a generic word ("service", "app") says nothing: the other places tell
        if is_time_unit(x) and is_time_unit(y):
            continue  # "300 seconds" / "10 minutes": the length is the literal rules' business
        if not (x.isalpha() and y.isalpha()):
            return []
        if x in right or y in left:
            return []  # a word moved, not swapped: "the registry is at …" / "the registry URL is …"
        folded_x, folded_y = fold_plural(x), fold_plural(y)
        if canonical(folded_x) == canonical(folded_y):
            return []
        if folded_y in NAME_ALIASES.get(folded_x, ()):  # one tool's two names: "Postgres" / "PostgreSQL"
            return []
        if not (x.isascii() and y.isascii()) and (HIRAGANA.search(x) or HIRAGANA.search(y)):
            return []  # Japanese particles and endings ("250m にする" / "100m とする"): no content word
        swaps.append((x, y))
    return swaps


def scoped_apart(a: Reading, b: Reading, marked: bool) -> bool:
    """The two texts name other environments ("Matchmaker URL in staging: …" / "… in
    production: …", even "Production URL switched to …"), or, unless the newer marks a change,
    one names a side environment (staging, QA, a sandbox) and the other none: each value holds
    where it is said to. So do two texts about other platforms ("Mobile apps collect cards
    with PaymentSheet" / "Web checkout collects cards with Stripe Elements")."""
    platforms_a, platforms_b = a.platforms, b.platforms
    if platforms_a and platforms_b and platforms_a.isdisjoint(platforms_b):
        return True
    left, right = a.environments, b.environments
    if left == right:
        return False
    if left and right:
        return left.isdisjoint(right)  # ("the dev server" / "the dev server … the local gateway": one)
    named = left or right  # ("prod and staging run 2.15" holds where the other text's value does too)
    return not marked and bool(named & SIDE_ENVIRONMENTS) and "production" not in named


def subject_swapped(a: Reading, b: Reading, swaps: list[tuple[str, str]] | None = None) -> bool:
    """The same sentence about another thing (`swapped_words`) where no swapped word names a
    tool: "Bob owns …" is not "Alice owns …", "staging models are materialized as views" is
    not "marts models … as tables", while "… to Vercel" / "… to ECS" is a choice of tool (a
    conflict's business). Neither a merge nor a conflict: a judge's question (docs/dream.md,
    "Candidates")."""
    if swaps is None:
        swaps = swapped_words(a, b)
    if not swaps:
        return False
    named = a.folded_names | b.folded_names
    return all(fold_plural(x) not in named and fold_plural(y) not in named for x, y in swaps)


_SENTENCE_END = ".;:!?。；：！？"


def narrowed(a: Reading, b: Reading) -> bool:
    """The longer text is the shorter one's sentence continued: a scope added without a
    condition word ("Use react-native-fast-image for remote images" / "… for remote images
    in feed lists"). A continuation after the sentence ends, a comma or a bracket adds a
    statement or an aside, not a scope ("Use pnpm." / "Use pnpm. It is faster."): no
    narrowing."""
    short, long = sorted((" ".join(a.text.lower().split()), " ".join(b.text.lower().split())), key=len)
    short = short.rstrip(_SENTENCE_END + " ")
    at = long.find(short)
    if not short or at < 0:
        return False
    return long[at + len(short) :].lstrip(" ")[:1].isalnum()  # (a comma or a bracket: an aside)
