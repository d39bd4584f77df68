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

import difflib
import re
from functools import lru_cache

from ..features import TextFeatures, literals_by_kind, text_features
from ..lexicon import CATEGORY_ALTERNATIVES, CATEGORY_NAMES, EVENT_TYPES, NAME_ALIASES, WEAK_WORDS, canonical
from ..text import NEGATIONS, fold_plural, has_unspaced, significant_of, words
from .analysed import AnalysedMemory

# ("缺", lacking, is a negation as "without" is in English; "缺省" is "default")
_FOREIGN_NEGATION = re.compile(
    r"不|没有|别|禁止|勿|无需|缺(?!省)|关闭|禁用|無|しない|ない|やめ|\bне\b|\bнельзя\b|\bникогда\b|\bнет\b|\bбез\b"
)
# Words that state a prohibition without a negation word ("is discouraged", "is banned"): such
# a text says the same as its negated paraphrase ("Don't ..."), so it counts as negated too.
_PROHIBITION_EN = (
    r"\b(?:prefer\w*|chose|choose|chosen|picked|favou?r\w*)\b[^.;:]*\bover\b|\brather than\b|\binstead\b|"
    r"\b(?:forbidden|banned|prohibited|disallowed|discouraged|rejected|ruled out|not allowed|must not|should not|"
    r"avoids|avoided|avoiding|"
    r"off-limits|anti-pattern|bad idea)\b|\b(?:turns?|turned|switch|switches|switched|keeps?|kept|set|is|are|was|stays?)\s+"
    r"(?:[\w/.+-]+\s+){0,2}off\b|\b(?:stays?|stayed|keeps?|kept|stay)\s+(?:[\w/.+-]+\s+){0,3}out of\b"
)
_CHANGE_EN = (
    r"\b(?:now|nowadays|anymore|any more|no longer|switched|switch(?:ed)? to|moved|migrated|replaced|"
    r"replacing|instead of|rather than|was removed|were removed|removed|dropped|deprecated|retired|"
    r"changed to|upgraded|downgraded|bumped|raised|lowered|increased|decreased|reduced|cut to|from now on|"
    r"these days)\b"
)
_CHANGE_OTHER = (
    r"改为|改成|换成|换到|现在|目前|不再|已移除|已删除|移除|替换|迁移|取代|升级|に変更|移行|廃止|代わりに|今は|現在"
    r"|теперь|больше не|замен|перешли|перешёл|перевели|вместо|удал|переехал|обновили"
)
# English texts (most) are searched, lower-cased, for the English words only.
_PROHIBITION_ASCII = re.compile(_PROHIBITION_EN)
# A word each English prohibition above holds (its quick look: "over", "instead", "off" …)
_PROHIBITION_HINT = re.compile(
    "over|rather than|instead|forbidden|banned|prohibited|disallowed|discouraged|rejected|ruled out|"
    "not allowed|must not|should not|avoid|off|out of|anti-pattern|bad idea"
)
# "X ではなく Y" is Japanese for "Y rather than X"; "Y вместо X", "X の代わりに Y": "Y instead of X".
_PROHIBITION_ANY = re.compile(
    _PROHIBITION_EN + r"|禁止|不要|不得|不允许|代替|禁じ|ではなく|じゃなく|代わりに|вместо|запрещ|нельзя"
)
# A choice between named alternatives ("Y rather than X", "Y, not X"): which of them a text
# prefers, not whether something holds (`polarity_flipped`).
_CHOICE = re.compile(
    r"\brather than\b|\binstead\b|\bover\b|[,(]\s*not\b|ではなく|じゃなく|代わりに|而不是|代替|вместо|\bа не\b"
)
# A restriction said with "only" is the same as its negated complement: "unwrap() is only for
# tests" / "no unwrap() outside tests"; "clients only send inputs" / "clients never send positions".
_ONLY = re.compile(r"\bonly\b|только|仅|只|のみ|だけ")
_CHANGE_ASCII = re.compile(_CHANGE_EN)
_CHANGE_ANY = re.compile(_CHANGE_EN + "|" + _CHANGE_OTHER)


# What marks a supersede (`supersedes`): the change markers, less "rather than" (a preference:
# "wants WITH clauses rather than subqueries" replaces nothing), plus a setting turned off or on.
_TURNED = r"\b(?:was|were|has been|have been) (?:turned|switched) (?:off|on)\b|\b(?:was|were) (?:disabled|enabled)\b"
_SUPERSEDE_ASCII = re.compile(_TURNED + "|" + _CHANGE_EN)
_SUPERSEDE_ANY = re.compile(_TURNED + "|" + _CHANGE_EN + "|" + _CHANGE_OTHER)
# a preference: "return errors instead of panicking"; "сделали на WireGuard вместо OpenVPN"
_NOT_A_CHANGE = frozenset({"rather than", "instead of", "вместо", "代わりに"})


def change_marker(text: str) -> str | None:
    """The first words of `text` that mark a change of its fact ("now", "switched to", "was
    turned off", "改为" …), or None."""
    lowered = text.lower()
    pattern = _SUPERSEDE_ASCII if lowered.isascii() else _SUPERSEDE_ANY
    return next((m.group(0) for m in pattern.finditer(lowered) if m.group(0) not in _NOT_A_CHANGE), None)


# Typographic punctuation written as its ASCII form before the rules read a text: many rules
# take a text with characters outside ASCII for Chinese, Japanese or Russian (where every Latin
# word names a tool), and an English text with an em dash or a curly apostrophe is no such text.
_TYPOGRAPHIC = str.maketrans(
    {
        **dict.fromkeys("\u2012\u2013\u2014\u2015\u2212", ","),  # dashes: a clause break
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb", '"'),
        **dict.fromkeys("\u00a0\u2009\u202f\u2002\u2003", " "),
        "\u2026": "...",
        "\u2192": "->",
        "\u2190": "<-",
        "\u2194": "<->",
        "\u21d2": "=>",
        "\u00d7": "x",
        "\u2265": ">=",
        "\u2264": "<=",
        "\u2260": "!=",
        "\u2248": "~",
        "\u00b5": "u",  # micro: "40 us"
        "\u03bc": "u",
        "\u00b0": " deg ",
    }
)


def _says_no(lowered: str, plain: bool) -> bool:
    """A prohibition, or a negation in Chinese, Japanese or Russian: what a text's reading adds
    to the English negation words `features` finds (`Reading.negated`)."""
    if plain:  # (most English texts hold none of the words a prohibition needs: a quick look first)
        return _PROHIBITION_HINT.search(lowered) is not None and _PROHIBITION_ASCII.search(lowered) is not None
    return _PROHIBITION_ANY.search(lowered) is not None or _FOREIGN_NEGATION.search(lowered) is not None


@lru_cache(maxsize=1 << 14)  # (literals recur across a project's texts: paths, identifiers)
def _words_of(value: str) -> frozenset[str]:
    return frozenset(words(value))


class Reading:
    """What the pair rules read in one text: its features (`features.TextFeatures`, stored with
    the memory) plus what only these rules need (prohibitions, change markers, literal kinds,
    tool names), never stored. Its two flags are read at once; the rest only when a pair gets
    that far (most candidate pairs are decided by their cosine and the flags)."""

    __slots__ = (
        "_changed",
        "_commands",
        "_compounds",
        "_content",
        "_environments",
        "_folded_names",
        "_frame",
        "_kinds",
        "_lettered",
        "_names",
        "_platforms",
        "_stems",
        "_switches",
        "_targets",
        "_tokens",
        "_units",
        "features",
        "lowered",
        "marked",
        "negated",
        "plain",
        "text",
    )

    def __init__(self, text: str, features: TextFeatures):
        if not text.isascii():
            text = text.translate(_TYPOGRAPHIC)  # an English text with a dash is still English
        self.text, self.features = text, features
        lowered = self.lowered = text.lower()
        plain = self.plain = lowered.isascii()  # ASCII: features' literals are the literals by kind
        self.negated = features.negated or _says_no(lowered, plain)
        changes = _CHANGE_ASCII if plain else _CHANGE_ANY
        self._changed = changes.search(lowered) is not None  # (most texts have no change word: one search)
        self.marked = self._changed and any(m.group(0) not in _NOT_A_CHANGE for m in changes.finditer(lowered))
        self._targets: frozenset[str] | bool | None = False  # False: not read yet
        self._content: frozenset[str] | None = None
        self._tokens: frozenset[str] | None = None
        self._stems: frozenset[str] | None = None
        self._kinds: dict[str, frozenset[str]] | None = None
        self._lettered: frozenset[str] | None = None
        self._names: frozenset[str] | None = None
        self._folded_names: frozenset[str] | None = None
        self._frame: tuple[str, ...] | None = None
        self._units: frozenset[str] | None = None
        self._switches: dict[str, bool] | None = None
        self._compounds: frozenset[str] | None = None
        self._commands: dict[str, str] | None = None
        self._environments: frozenset[str] | None = None
        self._platforms: frozenset[str] | None = None

    @property
    def words(self) -> frozenset[str]:
        """All significant words."""
        return self.features.sig

    @property
    def content(self) -> frozenset[str]:
        """The significant words outside literals, weak words removed."""
        if self._content is None:
            literal_words = frozenset().union(*map(_words_of, self.features.literals))
            self._content = self.features.sig - literal_words - WEAK_WORDS
        return self._content

    @property
    def tokens(self) -> frozenset[str]:
        if self._tokens is None:
            self._tokens = frozenset(words(self.text))
        return self._tokens

    @property
    def stems(self) -> frozenset[str]:
        """The first four letters of each token of four or more."""
        if self._stems is None:
            self._stems = frozenset([t[:4] for t in self.tokens if len(t) >= 4])
        return self._stems

    @property
    def negated_words(self) -> frozenset[str] | None:
        """The words the text's negations negate (`negated_targets`); None when it is negated in
        a way that names no word (a prohibition, Japanese) or not at all."""
        if self._targets is False:
            self._targets = negated_targets(self.text) if self.negated else None
        return self._targets  # type: ignore[return-value]

    @property
    def switches(self) -> dict[str, bool]:
        """Its settings written as switches, on (True) or off (`switched`)."""
        if self._switches is None:
            self._switches = _switches(self.text)
        return self._switches

    @property
    def units(self) -> frozenset[str]:
        """Its numbers with their unit written on them (`unit_numbers`)."""
        if self._units is None:
            self._units = unit_numbers(self.text)
        return self._units

    @property
    def lettered_versions(self) -> frozenset[str]:
        """Its versions with letters in them ("2022.3.21f1"), which `features` reads cut short."""
        if self._lettered is None:
            self._lettered = lettered_versions(self.text)
        return self._lettered

    @property
    def kinds(self) -> dict[str, frozenset[str]]:
        if self._kinds is None:
            self._kinds = _kinds_of(self.text, self.features, self.units, self.lettered_versions)
        return self._kinds

    @property
    def names(self) -> frozenset[str]:
        if self._names is None:
            names: frozenset[str] | set[str] = self.features.names
            if not self.text.isascii():  # in Chinese, Japanese or Russian text, the Latin words name tools
                # (and a run of Chinese ending in "PostgreSQL" is one token there, no name)
                names = {n for n in names if not has_unspaced(n)}
                names |= {fold_plural(w.lower()) for w in _LATIN_WORD.findall(self.text) if len(w) > 1}
            self._names = frozenset(names)
        return self._names

    @property
    def folded_names(self) -> frozenset[str]:
        """The names lower-cased, plurals folded (`subject_swapped`)."""
        if self._folded_names is None:
            self._folded_names = frozenset(fold_plural(n.lower()) for n in self.names)
        return self._folded_names

    @property
    def compounds(self) -> frozenset[str]:
        """The package-like hyphenated names (`_compounds`)."""
        if self._compounds is None:
            self._compounds = _compounds(self.lowered)
        return self._compounds

    @property
    def commands(self) -> dict[str, str]:
        """Each program the text runs as a command, with its task (`command_swapped`)."""
        if self._commands is None:
            self._commands = _commands(self.lowered, not _PROGRAM_WORDS.isdisjoint(self.words))
        return self._commands

    @property
    def environments(self) -> frozenset[str]:
        """The deployment environments the text names (`environments`)."""
        if self._environments is None:
            self._environments = environments(self)
        return self._environments

    @property
    def platforms(self) -> frozenset[str]:
        """The platforms the text names (`platforms`)."""
        if self._platforms is None:
            self._platforms = platforms(self.lowered)
        return self._platforms

    @property
    def frame(self) -> tuple[str, ...]:
        """The words lined up by `swapped_words` (change words dropped, numbers masked)."""
        if self._frame is None:
            self._frame = _frame(self.text, self._changed)
        return self._frame


# Words between a negation and what it negates ("does not NEED TO run", "is never EVER used"),
# and "use", which says nothing of its own: "Don't use dbt seeds" negates the seeds.
_NEGATION_SKIP = frozenset(
    "be been being is are was were to a an the ever always need needs needed have has had do does did "
    "actually really even just yet any at all longer more use using".split()
)


def negated_targets(text: str) -> frozenset[str] | None:
    """The word each negation negates: in English or Russian the next word that is not an
    auxiliary ("Never commit ios/Pods" → {commit}; "is never hardcoded" → {hardcoded};
    "Don't use Redis" → {redis}), in Russian the word before it too (its word order is free:
    "другие наборы не подключаем" → {наборы, подключаем}); in Chinese
    the Latin word or the two characters after it ("不要直接用fetch" → {fetch}). None when a
    negation negates no word (it ends the text, and in Russian no word before it is left
    either: "поднимать не нужно" → {поднимать}), the text states a prohibition without a
    negation word ("X is banned", "禁止", "нельзя"), or it is Japanese (whose negation
    follows its verb): what it negates is not known."""
    lowered = text.lower()
    if (_PROHIBITION_ASCII if lowered.isascii() else _PROHIBITION_WITHOUT_TARGET).search(lowered) is not None:
        return None
    if _KANA.search(lowered):
        return None
    if has_unspaced(lowered):
        return _chinese_targets(lowered)
    tokens = words(lowered)
    targets = set()
    following: str | None = None  # the next word not skipped, read from the end (linear in the text)
    for i in range(len(tokens) - 1, -1, -1):
        token = tokens[i]
        if token in NEGATIONS or token in _RUSSIAN_NEGATIONS:
            before = tokens[i - 1] if token in _RUSSIAN_NEGATIONS and token != "без" and i > 0 else None
            if before is not None and _skipped(before):
                before = None
            if following is None and before is None:
                return None
            if following is not None:
                targets.add(following)
            if before is not None:
                targets.add(before)  # free word order: "Flipper в debug-сборки не добавляем", "поднимать не нужно"
        elif not _skipped(token):
            following = token
    return frozenset(targets) if targets else None


# Words a negation can negate that say nothing of their own: the negation is about the subject
# ("Strict mode is not enabled" / "Use strict mode"; "pnpm is not used anymore" / "Use pnpm").
_GENERIC_PREDICATES = frozenset(
    "enabled used allowed required needed supported recommended necessary permitted possible available "
    "accepted wanted ok okay fine on active".split()
)
_PROHIBITION_WITHOUT_TARGET = re.compile(_PROHIBITION_EN + r"|禁止|不允许|禁じ|запрещ|нельзя")
_KANA = re.compile(r"[\u3040-\u30ff]")
_HIRAGANA = re.compile(r"[\u3040-\u309f]")
_RUSSIAN_NEGATIONS = frozenset("не ни нет никогда без".split())
_RUSSIAN_SKIP = frozenset("надо нужно стоит будет быть было используем использовать используйте".split())
_CHINESE_NEGATION = re.compile(r"不要|不得|不能|不用|不会|不再|不|没有|没|别|勿|无需|缺少|缺(?!省)|关闭|禁用")
# skipped after a negation: what says nothing of its own ("不要直接用 X", "不要再跑 X": the X)
_CHINESE_SKIP = re.compile(r"(?:使用|直接|用|在|再|去|把|是|跑|执行|运行|调用|调|\s)*")
_CHINESE_UNIT = re.compile(r"[a-z][\w.+#-]*|[\u4e00-\u9fff]{1,2}")


def _skipped(token: str) -> bool:
    return token in _NEGATION_SKIP or token in NEGATIONS or token in _RUSSIAN_NEGATIONS or token in _RUSSIAN_SKIP


def _chinese_targets(lowered: str) -> frozenset[str] | None:
    targets = set()
    for negation in _CHINESE_NEGATION.finditer(lowered):
        rest = lowered[negation.end() :]
        unit = _CHINESE_UNIT.match(rest, _CHINESE_SKIP.match(rest).end())  # type: ignore[union-attr]
        if unit is None:
            return None
        targets.add(unit.group())
    return frozenset(targets) if targets else None


# A number beside letters of another script ("6379端口", "порту 4000"): word boundaries do not
# separate it there, so `features` does not see it as a number.
_NUMBER_IN_ANY_SCRIPT = re.compile(r"(?<![0-9A-Za-z_.])\d+(?:\.\d+)*(?![0-9A-Za-z_])")


@lru_cache(maxsize=1 << 12)
def reading(text: str) -> Reading:
    """The `Reading` of `text`, its features read here (tests, tools); dream passes the
    features it already has (`reading_of`)."""
    return Reading(text, text_features(text))


_VERSION_VALUE = re.compile(r"v?\d+(?:\.\d+)+|v\d+")
_NUMBER_VALUE = re.compile(r"\d+(?:[,:]\d+)*")


@lru_cache(maxsize=1 << 14)  # (the same paths and identifiers recur across a project's texts)
def kind_of(value: str) -> str:
    """The kind of one literal value as `features` normalised it (lower-cased, quotes and
    outer punctuation stripped): what its characters say, without reading the text again."""
    if "://" in value or value.startswith("www."):
        return "url"
    if " " in value:
        return "code"
    if "/" in value or ":\\" in value:
        return "path"
    name, equals, assigned = value.partition("=")
    if equals and assigned and name and not name.startswith("-"):  # "port=4000": the setting's value
        return kind_of(assigned) if kind_of(assigned) in ("number", "version") else "code"
    if _VERSION_VALUE.fullmatch(value):
        return "version"
    if _NUMBER_VALUE.fullmatch(value):
        return "number"
    if value.startswith("-"):
        return "flag"
    return "dotted" if "." in value else "snake" if "_" in value else "camel"


# A number with its unit written on it ("30s", "10MB", "2x", "上限是10MB", "250m" CPU, "512Mi"): `features` reads no
# number there (no word boundary), so "timeout 30s" / "timeout 45s" would differ in nothing.
# "502s" (HTTP statuses in the plural) is no duration: 100-599 with "s" is left out.
_DIGIT_AND_LETTER = re.compile(r"\d[A-Za-z]")
_UNIT_NUMBER = re.compile(
    r"(?<![0-9A-Za-z_.])(\d+(?:\.\d+)?)(ms|s|sec|secs|m|min|mins|h|hrs?|d|kb|mb|gb|tb|ki|mi|gi|k|x)(?![0-9A-Za-z_])",
    re.IGNORECASE,
)


def unit_numbers(text: str) -> frozenset[str]:
    if _DIGIT_AND_LETTER.search(text) is None:  # (a unit is written on its number: most texts have none)
        return frozenset()
    return frozenset(
        (number + unit).lower()
        for number, unit in _UNIT_NUMBER.findall(text)
        if not (unit.lower() == "s" and 100 <= float(number) < 600)
    )


_NO_KINDS: dict[str, frozenset[str]] = {}
_NOTHING: frozenset[str] = frozenset()


def _kinds_of(
    text: str, features: TextFeatures, units: frozenset[str], lettered: frozenset[str]
) -> dict[str, frozenset[str]]:
    kinds = _literal_kinds(text, features, units)
    if not lettered:
        return kinds
    # "2022.3.21f1" is read as "2022.3" by `features`: the whole version, so that another is a replaced
    # one (a version written whole besides stays: "from 3.13.0rc1 to 3.13.0")
    lowered = text.lower()
    versions = {
        v for v in kinds.get("version", ()) if not any(full.startswith(v) for full in lettered) or _written(v, lowered)
    }
    return {**kinds, "version": frozenset(versions | lettered)}


def lettered_versions(text: str) -> frozenset[str]:
    """The versions with letters after their numbers (`_LETTERED_VERSION`), lower-cased."""
    if _DIGIT_AND_LETTER.search(text) is None:
        return _NOTHING  # (most texts)
    return frozenset(v.lower() for v in _LETTERED_VERSION.findall(text))


# A version with letters after its numbers: Unity's "2022.3.21f1", Python's "3.13.0rc1" and "3.0b2".
_LETTERED_VERSION = re.compile(r"(?<![\w.])v?\d+(?:\.\d+)+[a-z]+\d*(?!\w|\.\w)", re.IGNORECASE)


def _literal_kinds(text: str, features: TextFeatures, units: frozenset[str]) -> dict[str, frozenset[str]]:
    if text.isascii():
        literals = features.literals
        if not units and len(literals) <= 1:  # (most texts: one literal or none)
            return {kind_of(value): literals for value in literals} if literals else _NO_KINDS  # (read only)
        grouped: dict[str, set[str]] = {}
        for value in features.literals:
            grouped.setdefault(kind_of(value), set()).add(value)
        if units:
            grouped.setdefault("number", set()).update(units)
        return {kind: frozenset(values) for kind, values in grouped.items()}
    kinds = literals_by_kind(text)
    found = set(_NUMBER_IN_ANY_SCRIPT.findall(text)) | units
    known = set().union(*kinds.values()) if kinds else set()
    numbers = {n for n in found if not any(n in value for value in known)}
    if numbers:
        kinds = {**kinds, "number": frozenset(kinds.get("number", frozenset()) | numbers)}
    return {kind: _ascii_parts(values) for kind, values in kinds.items()}


# (a Latin word joined by a hyphen to a word of another script is a word: "Web-сервер")
_LATIN_WORD = re.compile(r"(?<![A-Za-z0-9_.\-/])[A-Za-z][A-Za-z0-9+#]*(?![A-Za-z0-9_./]|-[A-Za-z0-9])")
_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")


def _ascii_parts(values: frozenset[str]) -> frozenset[str]:
    """Literal values with letters of other scripts cut out: a pattern that runs on into Chinese
    text ("TRANSFORM_DEV_WH，角色是TRANSFORMER_DEV") yields the ASCII pieces it holds."""
    return frozenset(part for value in values for part in _NON_ASCII_RUN.split(value) if part.strip("_.,:;-"))


def replaced_kinds(a: Reading, b: Reading) -> list[str]:
    """The kinds of literal both texts hold with different values."""
    if (
        a.plain
        and b.plain
        and (a.features.literals == b.features.literals or not a.features.literals or not b.features.literals)
        and not (a.units and b.units)
        and not (a.lettered_versions or b.lettered_versions)
    ):
        return []  # the same literals, or one side has none: no kind can differ (read no further)
    return [kind for kind in a.kinds.keys() & b.kinds.keys() if _differ(a.kinds[kind], b.kinds[kind], a, b)]


def _differ(values_a: frozenset[str], values_b: frozenset[str], a: Reading, b: Reading) -> bool:
    """Whether two texts hold different values of one kind: a value only one holds as a literal
    counts unless the other text writes it too (`echoed`)."""
    if values_a == values_b:
        return False
    return _holds_unwritten(values_a, values_b, b) or _holds_unwritten(values_b, values_a, a)


def _replaced_both_ways(values_a: frozenset[str], values_b: frozenset[str], a: Reading, b: Reading) -> bool:
    """Each text holds a value of the kind that the other does not write: a value replaced, not
    one added ("at most 300KB" / "one image at most 300KB")."""
    return _holds_unwritten(values_a, values_b, b) and _holds_unwritten(values_b, values_a, a)


def _holds_unwritten(values: frozenset[str], others: frozenset[str], other: Reading) -> bool:
    """Whether one of `values` is neither among the other text's `others` nor written in it.
    (A loop, not `any()` over a generator: this runs for most candidate pairs.)"""
    for value in values:
        if value not in others and not echoed(value, other):
            return True
    return False


def echoed(value: str, other: Reading) -> bool:
    """Whether `value` (a literal of one text, as `features` normalised it: lower-cased) is
    written in the other text too, though not as a literal of its own: bare among its words
    ("`mkdocs build`" / "after mkdocs build, …"), or as part of a longer literal ("release.yml"
    / ".github/workflows/release.yml"; "tests/compose.yml" / "`docker compose -f
    tests/compose.yml up`"). The same thing written two ways, not a value replaced. Never
    inside a longer name or number: "80" is not echoed by "8080", "3.11" not by "3.11.2",
    "app" not by "app-server" or "app/api"."""
    text = other.lowered
    if _written(value, text, qualified="." in value and kind_of(value) == "dotted"):
        return True
    if value in _NUMBER_WORDS and re.search(rf"\b{_NUMBER_WORDS[value]}\b", text):
        return True  # "3 new unit tests" / "three new unit tests"
    head, dot, last = value.rpartition(".")  # a module's member by its own name: "Murmur.Repo" / "Repo"
    return bool(
        dot and head and len(last) >= 3 and last.isalpha() and last not in _EXTENSIONS and _written(last, text, True)
    )


_NUMBER_WORDS = dict(
    zip("2 3 4 5 6 7 8 9 10 11 12".split(), "two three four five six seven eight nine ten eleven twelve".split())
)
# File name endings: "config.yaml" is not echoed by "yaml".
_EXTENSIONS = frozenset(
    "yaml yml json toml lock txt csv cfg ini env conf md rst html css scss py pyi rs go ts tsx js jsx mjs "
    "java kt swift rb php sh bash zsh tf tfvars hcl sql ex exs erl dart proto xml gradle plist "
    "log pid sock tmp bak sqlite pem crt key zip tar tgz png jpg jpeg svg pdf wasm vsix apk aab ipa dmg msi "
    "vue svelte cpp hpp asset prefab unity".split()
)


def _written(value: str, text: str, qualified: bool = False) -> bool:
    """`echoed` on the lower-cased text; `qualified`: a dotted name may be written inside a
    longer dotted name ("tabs.onupdated" / "chrome.tabs.onupdated"; "chrome.runtime" /
    "chrome.runtime.sendmessage")."""
    if len(value) > 1 and value.endswith("/"):
        value = value[:-1]  # a directory with or without its closing slash: "proto/v1/", "proto/v1"
    if "<" in value or "<" in text:  # a placeholder, with or without its brackets: "<split>/<metric>"
        value, text = value.replace("<", "").replace(">", ""), text.replace("<", "").replace(">", "")
    start = text.find(value)
    while start >= 0:
        end = start + len(value)
        before = text[start - 1] if start else " "
        after = text[end : end + 2]
        if qualified and (before == "." or after[:1] == ".") and not (before.isalnum() or before in "_-"):
            if not (after[:1].isalnum() or after[:1] in "_/"):
                return True
        if not (before.isalnum() or before in "_.-") and not _continues(after):
            return True
        start = text.find(value, start + 1)
    return False


def _continues(after: str) -> bool:
    """Whether the two characters after a match carry its name or number on."""
    if not after:
        return False
    first = after[0]
    if first == "/":  # a path's closing slash ends it: "proto/v1" is written in "`proto/v1/`"
        return after[1:2].isalnum() or after[1:2] in "_.-<{*~"
    return first.isalnum() or first == "_" or (first in ".-" and after[1:2].isalnum())


def _mentions(name: str, other: Reading) -> bool:
    if name in other.tokens or name + "s" in other.tokens:  # (names are singular: "URLs" names "url")
        return True
    if len(name) >= 4 and name[:4] not in other.stems:
        return False
    return any(
        token == name or (len(name) >= 4 and len(token) >= 4 and (token.startswith(name) or name.startswith(token)))
        for token in other.tokens
    )


def introduced(older: Reading, newer: Reading) -> bool:
    """The newer names something the older does not mention."""
    return any(not _mentions(n, older) for n in newer.names)


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
        n for n in a.names if not _mentions(n, b) and not any(_mentions(alias, b) for alias in NAME_ALIASES.get(n, ()))
    )


_ASSIGNED_SWITCH = re.compile(
    r"(?<![\w.-])([a-z_][\w.-]*)\s*[=:]\s*(true|false|on|off|yes|no|enabled|disabled)\b", re.IGNORECASE
)
_SWITCH_ON = frozenset({"true", "on", "yes", "enabled"})
_SWITCH_VALUE = re.compile(r"[=:]\s*(?:true|false|on|off|yes|no|enabled|disabled)\b", re.IGNORECASE)  # a quick look


def switched(a: Reading, b: Reading) -> bool:
    """One setting written as a switch in both texts, on in one and off in the other:
    "Set catchup=True on new DAGs" / "New DAGs must use catchup=False"."""
    settings_a = a.switches
    if not settings_a:
        return False
    settings_b = b.switches
    return any(name in settings_b and settings_b[name] != on for name, on in settings_a.items())


def _switches(text: str) -> dict[str, bool]:
    if ("=" not in text and ":" not in text) or _SWITCH_VALUE.search(text) is None:
        return {}  # (most texts set nothing on or off)
    return {m.group(1).lower(): m.group(2).lower() in _SWITCH_ON for m in _ASSIGNED_SWITCH.finditer(text)}


# A condition's clause, up to the next clause boundary: "if X isn't on PATH", "unless …".
_CONDITION_CLAUSE_SPAN = re.compile(
    r"\b(?:if|unless|otherwise|or else)\b[^.;:,—()]*|(?:если|иначе|如果|否则)[^.;:,—()。，；]*"
)


def _negated_only_in_conditions(r: Reading) -> bool:
    """Every negation of the text is inside a condition's clause."""
    if _CONDITION_CLAUSE_SPAN.search(r.lowered) is None:
        return False
    rest = _CONDITION_CLAUSE_SPAN.sub(" ", r.lowered)
    return not (_says_no(rest, r.plain) or not NEGATIONS.isdisjoint(words(rest)))


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
    if _ONLY.search(other.lowered) is not None:
        return False  # the other restricts with "only": the same restriction, said the other way
    choice = _CHOICE.search(negated.lowered)
    if choice is not None and len(negated.names & other.names) >= 2:
        return False  # a choice between names the other text names too: the same choice
    if choice is not None and any(_mentions(name, other) for name in _chosen(negated)):
        return False  # the other names what this one chose: "Sidekiq rather than async" / "why Sidekiq? …"
    targets = negated.negated_words
    if targets is None or not targets.isdisjoint(_GENERIC_PREDICATES):
        return True  # "Strict mode is not enabled": the negation is about its subject
    # the word, or one of its inflections: the other has a word beginning with its first
    # four letters ("caching" / "cache", "run" / "runs")
    beginnings = {token[:n] for token in other.tokens for n in (2, 3, 4)}
    return any(word[:4] in beginnings for word in targets)


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


def _shared_names(a: Reading, b: Reading) -> frozenset[str]:
    """The literal identifiers (not numbers, versions or other values) both texts hold."""
    if not (a.plain and b.plain) or not (a.features.literals and b.features.literals):
        return frozenset()
    return frozenset(v for v in a.features.literals & b.features.literals if kind_of(v) not in VALUE_KINDS)


def containment(a: Reading, b: Reading) -> float:
    """How much of the shorter text's content the other shares (its significant words when one
    has no content words outside its literals: "Enable reactStrictMode")."""
    first, second = a.content, b.content
    if not (first and second):
        first, second = a.words, b.words
    named = _shared_names(a, b)
    if named:  # an identifier both name is their subject too ("minSdkVersion is 23" / "raised to 26")
        first, second = first | named, second | named
    if not first or not second:
        return 0.0
    return len(first & second) / min(len(first), len(second))


Readings = dict[str, Reading]  # by text: each text read once per analysis


def reading_of(item: AnalysedMemory, readings: Readings | None) -> Reading:
    text = item.memory.memory
    if readings is None:
        return reading(text)
    found = readings.get(text)
    if found is None:
        found = readings[text] = Reading(text, item.features)
    return found


# Words that restrict a statement: when one text has one and the other none, the first adds a
# condition ("Run the e2e suite before merging only when ..."). The soft ones are also how
# a reworded fact is often phrased, so they only count below `SOFT_CONDITION_COSINE`.
CONDITION_WORDS = frozenset("if unless only except also additionally".split())
# an exception is never "stated in other words" by a text without one: "User prefers
# table-driven tests in Go" does not say "except for fuzz tests" because it says "tests"
EXCLUSION_WORDS = frozenset("unless except".split())
SOFT_CONDITION_WORDS = frozenset("when whenever during while until once".split())
SOFT_CONDITION_COSINE = 0.86
MERGE_COSINE = 0.78
CONFLICT_COSINE = 0.50
SWAP_MERGE_COSINE = 0.93  # a pair naming different tools merges only when nearly identical
MIN_SUBJECT_OVERLAP = 0.25


def adds_condition(a: Reading, b: Reading, cosine: float) -> bool:
    """One text restricts the statement and the other does not: it has a condition word the
    other lacks, and a condition the other does not state in its own words (`restated`)."""

    def added(kind: frozenset[str]) -> bool:
        in_a, in_b = _conditioned(a, kind), _conditioned(b, kind)
        if in_a == in_b:
            return False
        one, other = (a, b) if in_a else (b, a)
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
    way round ("garbage stacks unless built with X" / "build with X; otherwise junk stacks")."""
    return bool(r.tokens & kind) or ("otherwise" in r.tokens and "unless" in kind)


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
    for match in _CONDITION_CLAUSE.finditer(text.lower()):
        if len(clauses) == MAX_CONDITIONS:
            break
        word, rest = match.group(1), words(match.group(2))
        if word not in kind or (word == "once" and (not rest or rest[0] in _ONCE_AS_COUNT)):
            continue
        if word == "only" and not rest:
            continue  # "Power-of-two N only.": it restricts what it follows, which both texts say
        clauses.append((word, significant_of(rest) - WEAK_WORDS))
    return clauses


def restated(clause: frozenset[str], other: Reading) -> bool:
    """The other text says at least half of what the condition says: the same condition in
    other words ("when testing on a USB Android device" / "On a USB-connected Android
    phone"). A condition without significant words is never restated."""
    said = sum(_mentions(word, other) for word in clause)
    return bool(clause) and 2 * said >= len(clause)


VALUE_KINDS = frozenset({"number", "version", "url", "path", "code"})  # a changed value; other kinds name things
MARKED_CONFLICT_COSINE = 0.60
# Two values for "the same" setting without a word of change: as often two settings of two
# things ("the catalog API's timeout" / "the payments API's"). From UNMARKED_VALUE_COSINE on a
# conflict, but below SAME_SUBJECT_COSINE only when the texts are no one template told of two
# subjects (`template_swapped`): a reworded fact is rarely written on the other's template.
UNMARKED_VALUE_COSINE = 0.64
SAME_SUBJECT_COSINE = 0.76
TEMPLATE_SHARE = 0.6  # of the longer text's words in the same order in both: one template
UNMARKED_VERSION_COSINE = 0.60  # two versions of one named thing: rarely two things


LOW_MERGE_COSINE = 0.66  # below MERGE_COSINE, a merge also needs shared evidence (`shared_evidence`)
# A pair the rules left alone is a judge's "merge" question from here; the closest pairs below it
# are mostly observations of one habit, which synthesis groups (docs/dream.md, "Candidates").
ASK_MERGE_COSINE = 0.70
EVIDENCE_WORD_OVERLAP = 0.40
NUMBER_EVIDENCE_WORD_OVERLAP = 0.20  # with a number of two digits or more in common


_COMPOUND = re.compile(r"(?<![\w.@/-])[a-z][a-z0-9]*(?:-[a-z0-9]+)+(?![\w/-])")
# parts of the hyphenated words of ordinary English ("read-only", "end-to-end", "server-side")
_ENGLISH_COMPOUND_PARTS = frozenset(
    "to in on off out up only side time level party based free safe like wide specific aware friendly "
    "driven facing non re pre self multi cross end one two well high low real long short read write day "
    "built opt follow by of and the a per first last full half sub co anti post semi over under ultra".split()
)


def _compounds(text: str) -> frozenset[str]:
    """Lower-case hyphenated names that are no ordinary English compound: package-like names
    ("react-native-config", "next-intl", "prettier-plugin-tailwindcss"), not "read-only"."""
    if "-" not in text:
        return frozenset()
    return frozenset(
        match.group()
        for match in _COMPOUND.finditer(text)
        if _ENGLISH_COMPOUND_PARTS.isdisjoint(match.group().split("-"))
    )


_ENDPOINT = re.compile(r"\b(?:get|post|put|patch|delete|head|options) /\S*")


def endpoint_swapped(a: Reading, b: Reading) -> bool:
    """Each text names an HTTP endpoint (a method and a path) the other does not: two
    endpoints, each with its own facts ("`PUT /rules`: 60 requests/min" / "`GET /rules`: 120";
    "`POST /predict`" / "`POST /predict/batch`"), not one endpoint's value replaced."""
    if "/" not in a.lowered or "/" not in b.lowered:
        return False
    endpoints_a, endpoints_b = set(_ENDPOINT.findall(a.lowered)), set(_ENDPOINT.findall(b.lowered))
    return bool(endpoints_a - endpoints_b) and bool(endpoints_b - endpoints_a)


# A program and the word after it: its subcommand or task ("make seed", "./gradlew test",
# "npm run lint" reads "run": the script is the word after that).
_PROGRAMS = (
    "make rake cargo go gradle gradlew mvn mvnw npm pnpm yarn npx bun deno pip uv poetry pytest tox nox "
    "bundle rails mix dotnet flutter dart swift xcodebuild fastlane kubectl helm terraform docker bazel nx turbo"
)
# (most texts name no program: their significant words tell, without the pattern)
_PROGRAM_WORDS = frozenset(word for program in _PROGRAMS.split() for word in significant_of([program]))
# Written as a command: with its folder ("./gradlew", "bin/rails") or called one ("run make
# seed", "команда make seed"), or quoted (`_QUOTED_COMMAND`, any program); not "start Docker
# Desktop", nor a sentence about the tool itself ("Go modules are vendored").
_COMMAND = re.compile(
    r"(?:\./|bin/|\b(?:run|command|команда|命令|コマンド) ?)("
    + "|".join(_PROGRAMS.split())
    + r")((?: (?:run|exec))?) ([a-z][\w:.-]*)"
)


# Any program quoted with its task: "`fable-docs serve`", "`dagster dev`".
# A task of two words counts whole ("`pscale deploy-request deploy`" / "`… deploy-request create`").
_QUOTED_COMMAND = re.compile(r"`([a-z][\w.-]*)((?: (?:run|exec))?) ([a-z][\w:.-]*(?: [a-z][\w:-]*(?=[` ]))?)")


def _commands(lowered: str, names_a_program: bool) -> dict[str, str]:
    """Each program `lowered` runs as a command, with its task; `names_a_program`: whether its
    words hold one of `_PROGRAMS` (a quoted command may run any program)."""
    found = _COMMAND.findall(lowered) if names_a_program else []
    if "`" in lowered:
        found += _QUOTED_COMMAND.findall(lowered)
    return {program + verb: argument for program, verb, argument in found}


def command_swapped(a: Reading, b: Reading) -> bool:
    """One program run with another subcommand or task in each text, neither written in the
    other: two commands ("`./gradlew test` runs the unit tests" / "`./gradlew integrationTest`
    runs the Testcontainers suites"; "make seed" / "make seed-fx")."""
    commands_a, commands_b = a.commands, b.commands
    return any(
        program in commands_b
        and argument != commands_b[program]
        and not _written(argument, b.lowered)
        and not _written(commands_b[program], a.lowered)
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


def literal_values(r: Reading) -> frozenset[str]:
    """Every literal value of the text (for English text, those `features` already read)."""
    if r.plain:
        return r.features.literals
    return frozenset().union(*r.kinds.values()) if r.kinds else frozenset()


def shared_evidence(a: Reading, b: Reading) -> bool:
    """The two texts share a specific literal (a path, identifier, ticket, command: not a bare
    number; written as a plain word in one of them counts), two names ("Pinia" and "Vitest";
    "UTC" and "BI" in two Russian texts, where paraphrases rarely share words and the Latin
    words name tools), or many words."""
    literals_a, literals_b = literal_values(a), literal_values(b)
    if any(not value.isdigit() for value in literals_a & literals_b):
        return True
    if any(not value.isdigit() and echoed(value, b) for value in literals_a - literals_b) or any(
        not value.isdigit() and echoed(value, a) for value in literals_b - literals_a
    ):
        return True  # one literal, written as code in one text and as a word in the other
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
    older: AnalysedMemory, newer: AnalysedMemory, cosine: float, readings: Readings | None = None
) -> str | None:
    """ "merge", "conflict" or None (leave them alone) for two memories of one type. The checks
    run cheapest first: most candidate pairs are decided by their cosine and two flags."""
    a, b = reading_of(older, readings), reading_of(newer, readings)
    flipped, marked = polarity_flipped(a, b) or switched(a, b), b.marked and not a.marked
    could_merge = cosine >= LOW_MERGE_COSINE
    if not could_merge and (cosine < CONFLICT_COSINE or not (flipped or marked)):
        return None  # below merging, only a flip or a marked change can make a conflict
    if not could_merge and containment(a, b) < MIN_SUBJECT_OVERLAP:
        return None
    replaced = replaced_kinds(a, b)
    values = [kind for kind in replaced if kind in VALUE_KINDS]
    event = older.type in EVENT_TYPES  # records of what happened: "no longer crashes" is no polarity
    if not marked and (_identifier_differs(replaced, a, b) or _named_apart(a, b)):
        return None  # an identifier differs: two different things (unless the newer says what it replaced)
    same_conditions = not adds_condition(a, b, cosine)
    moved = marked and moved_away(a, b)
    swaps: list[tuple[str, str]] | None = None  # `swapped_words`, once read
    if (
        could_merge
        and not moved
        and not values
        and same_conditions
        and (event or (not flipped and not (marked and introduced(a, b))))
        and (cosine >= MERGE_COSINE or shared_evidence(a, b))
        and _one_holds_all(a, b)
        and (cosine >= SWAP_MERGE_COSINE or not tool_swapped(a, b))
        and not (swaps := swapped_words(a, b))
        and not narrowed(a, b)
        and not scoped_apart(a, b, marked)
    ):
        return "merge"
    if event or cosine < CONFLICT_COSINE or not same_conditions:
        return None
    values = [kind for kind in values if _replaced_both_ways(a.kinds[kind], b.kinds[kind], a, b)]
    contradicts = (
        values
        and (marked or cosine >= UNMARKED_VALUE_COSINE or ("version" in values and cosine >= UNMARKED_VERSION_COSINE))
    ) or (flipped or moved or (marked and (cosine >= MARKED_CONFLICT_COSINE or introduced(a, b))))
    # (the subject's overlap only once a contradiction is found: most pairs have none)
    if not contradicts or containment(a, b) < MIN_SUBJECT_OVERLAP:
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


def _named_apart(a: Reading, b: Reading) -> bool:
    """Two things of one family named, one in each text: hyphenated names, HTTP endpoints, commands."""
    return compound_swapped(a, b) or endpoint_swapped(a, b) or command_swapped(a, b)


def _identifier_differs(replaced: list[str], a: Reading, b: Reading) -> bool:
    """An identifier (a code name, a flag) differs between the texts: each holds one of a kind
    the other does not write, two things. One text adding a name to the other's is detail
    ("Cart state lives in a Pinia store (useCartStore) …" / "Cart = Pinia store …"; "Don't use
    X in tests; use the Y fixture" / "Tests run with X=True")."""
    return any(
        _replaced_both_ways(a.kinds[kind], b.kinds[kind], a, b) or _extended(a.kinds[kind], b.kinds[kind])
        for kind in replaced
        if kind not in VALUE_KINDS
    )


def _extended(values_a: frozenset[str], values_b: frozenset[str]) -> bool:
    """One text's identifier continues one of the other's: another thing of that name
    ("com.example.app" / "com.example.app.widget"; "billing_api" / "billing_api_v2")."""
    only_a, only_b = values_a - values_b, values_b - values_a
    return any(
        longer.startswith(shorter) and longer[len(shorter) : len(shorter) + 1] in _NAME_JOINS
        for shorter, longer in (
            *((x, y) for x in values_a for y in only_b),
            *((y, x) for y in values_b for x in only_a),
        )
    )


_NAME_JOINS = frozenset("._-:/")


def about_two_things(older: AnalysedMemory, newer: AnalysedMemory, readings: Readings | None = None) -> bool:
    """Whether the rules of `relation` read the two texts as about two things, each with its
    own value (whatever their cosine): another identifier without a marked change (as
    `relation` reads it), two names of one family (`_named_apart`), the same sentence about
    another subject (`subject_swapped`), or a word and a value both different
    ("the gRPC API on 8001" / "the HTTP API on 8000"). A lexical value conflict of such a pair
    is none (`per_type`); a tool chosen ("Deploy to ECS" / "Deploy to Vercel") is no such pair."""
    a, b = reading_of(older, readings), reading_of(newer, readings)
    marked = b.marked and not a.marked
    replaced = replaced_kinds(a, b)
    if not marked and (_identifier_differs(replaced, a, b) or _named_apart(a, b)):
        return True
    if subject_swapped(a, b) or scoped_apart(a, b, marked):
        return True
    values = [k for k in replaced if k in VALUE_KINDS and _replaced_both_ways(a.kinds[k], b.kinds[k], a, b)]
    return bool(values) and not marked and bool(swapped_words(a, b))


def open_question(
    older: AnalysedMemory, newer: AnalysedMemory, cosine: float, readings: Readings | None = None
) -> str | None:
    """What to ask a judge about a pair `relation` left alone (docs/dream.md, "Candidates"):
    "supersede" when the newer text alone marks a change, "conflict" when one text only is
    negated, "merge" when the two are close (ASK_MERGE_COSINE); None: not worth asking.
    Records of events never conflict, so they are only asked about merging."""
    if cosine < CONFLICT_COSINE:
        return None
    event = older.type in EVENT_TYPES
    if not event:
        a, b = reading_of(older, readings), reading_of(newer, readings)
        if b.marked and not a.marked:
            return "supersede"
        if a.negated != b.negated:
            return "conflict"
    return "merge" if cosine >= ASK_MERGE_COSINE else None


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
        if not (x.isalpha() and y.isalpha()):
            return []
        if x in right or y in left:
            return []  # a word moved, not swapped: "the registry is at …" / "the registry URL is …"
        folded_x, folded_y = fold_plural(x), fold_plural(y)
        if canonical(folded_x) == canonical(folded_y):
            return []
        if folded_y in NAME_ALIASES.get(folded_x, ()):  # one tool's two names: "Postgres" / "PostgreSQL"
            return []
        if not (x.isascii() and y.isascii()) and (_HIRAGANA.search(x) or _HIRAGANA.search(y)):
            return []  # Japanese particles and endings ("250m にする" / "100m とする"): no content word
        swaps.append((x, y))
    return swaps


# The environments a text is about, by one name each: a value in staging is not the value in
# production (`scoped_apart`). Whole words only, read outside the text's literals (a host name
# may hold "staging", an identifier "dev_addr") and its asides in brackets.
_ENVIRONMENT_WORDS = {
    "staging": "staging",
    "stg": "staging",
    "preprod": "staging",
    "pre-prod": "staging",
    "qa": "qa",
    "sandbox": "sandbox",
    "beta": "beta",
    "preview": "preview",
    "previews": "preview",
    "production": "production",
    "prod": "production",
    "dev": "development",
    "development": "development",
    "local": "local",
    "locally": "local",
    "ci": "ci",
}
_ENVIRONMENT = re.compile(r"(?<![\w.-])(?:" + "|".join(_ENVIRONMENT_WORDS) + r")(?![\w-])")
_ENVIRONMENT_FOREIGN = (
    ("预发布", "staging"),
    ("预发", "staging"),
    ("生产", "production"),
    ("开发环境", "development"),
    ("本地", "local"),
    ("ステージング", "staging"),
    ("本番", "production"),
    ("開発環境", "development"),
    ("ローカル", "local"),
    ("стейдж", "staging"),
    ("продакшен", "production"),
    ("прод", "production"),
    ("локальн", "local"),
)
_ASIDE = re.compile(r"\([^()]*\)")
# Where a text that names no environment is about: production, or a developer's machine, so
# only these others set one text apart from a text that names none.
_SIDE_ENVIRONMENTS = frozenset({"staging", "qa", "sandbox", "beta", "preview"})


def environments(r: Reading) -> frozenset[str]:
    """The deployment environments the text names (staging, production, local, CI …)."""
    if r.plain and _ENVIRONMENT.search(r.lowered) is None:
        return _NOTHING  # (most texts name none; cutting literals and asides out finds no word the whole text lacks)
    lowered = _without_literals(r.lowered, " ")
    lowered = _ASIDE.sub(" ", lowered) if "(" in lowered else lowered  # "… in local builds (enabled: !ENV CI)"
    found = {_ENVIRONMENT_WORDS[m.group()] for m in _ENVIRONMENT.finditer(lowered)}
    if not r.plain:
        found.update(name for word, name in _ENVIRONMENT_FOREIGN if word in lowered)
    return frozenset(found)


# The platforms a text is about, whole words outside literals: an iOS or Android app is a
# mobile one, so "mobile" and "iOS" are one platform, "web" and "mobile" two.
_PLATFORM_WORDS = {
    "web": ("web",),
    "browser": ("web",),
    "mobile": ("mobile",),
    "ios": ("ios", "mobile"),
    "ipados": ("ios", "mobile"),
    "android": ("android", "mobile"),
    "desktop": ("desktop",),
    "macos": ("macos", "desktop"),
    "windows": ("windows", "desktop"),
    "linux": ("linux", "desktop"),
}
_PLATFORM = re.compile(r"(?<![\w.-])(?:" + "|".join(_PLATFORM_WORDS) + r")(?![\w-])")


def platforms(lowered: str) -> frozenset[str]:
    """The platforms a lower-cased text names (web, mobile, iOS, Android, desktop …)."""
    if not any(word in lowered for word in _PLATFORM_WORDS):  # (most texts name none: no pattern run)
        return _NOTHING
    return frozenset(p for m in _PLATFORM.finditer(_without_literals(lowered, " ")) for p in _PLATFORM_WORDS[m.group()])


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
    return not marked and bool(named & _SIDE_ENVIRONMENTS) and "production" not in named


_LITERAL_SPAN = re.compile(r"`[^`]*`|\S+://\S+|[\w.~{}<>*-]*/[\w./~{}<>*-]+")


def _without_literals(lowered: str, mark: str) -> str:
    """The text with each URL, path and quoted code replaced by `mark`."""
    return _LITERAL_SPAN.sub(mark, lowered) if ("/" in lowered or "`" in lowered) else lowered


def _frame(text: str, changed: bool = True) -> tuple[str, ...]:
    """`Reading.frame`; `changed`: whether the text has a change word to drop (`Reading._changed`)."""
    lowered = text.lower()
    if changed:
        lowered = (_CHANGE_ASCII if lowered.isascii() else _CHANGE_ANY).sub(" ", lowered)  # (the same on ASCII)
    lowered = _without_literals(lowered, " 0 ")  # a URL, path or code is one value, whatever its words
    if "(" in lowered:
        lowered = _ASIDE.sub(" ", lowered)  # an aside in brackets is detail: "(name, domain)" / "(email)"
    return tuple([word if word.isalpha() or not any(map(str.isdigit, word)) else "#" for word in words(lowered)])


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


def _one_holds_all(a: Reading, b: Reading) -> bool:
    """One text holds every literal of the other (so the draft can keep them all)."""
    literals_a, literals_b = literal_values(a), literal_values(b)
    if literals_a <= literals_b or literals_b <= literals_a:
        return True
    return all(echoed(v, b) for v in literals_a - literals_b) or all(echoed(v, a) for v in literals_b - literals_a)
