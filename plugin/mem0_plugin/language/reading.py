"""`Reading`: what the pair rules read in one text (docs/dream.md, "What the pair is"). Pure.

A text's stored features (`features.TextFeatures`) plus what only the pair rules need, each
read once, when a pair first gets that far: its negations and change markers (`negation`),
its literals by kind (`literal_kinds`), the tools it names, its package-like names, the
commands it runs, its switches, the environments and platforms it is about, and its words
lined up for comparison (`frame`). `Readings` keeps one per text for a type group.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .analysed import AnalysedMemory
from .features import TextFeatures, text_features, without_placeholders
from .lexicon import WEAK_WORDS
from .literal_kinds import LATIN_WORD, durations, kinds_of, lettered_versions, ungrouped, unit_numbers
from .negation import CHANGE_ANY, CHANGE_ASCII, NOT_A_CHANGE, negated_targets, says_no, two_negations
from .text import fold_plural, has_unspaced, script, significant_of, words

_NOTHING: frozenset[str] = frozenset()

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
        "_durations",
        "_environments",
        "_folded_names",
        "_frame",
        "_kinds",
        "_lettered",
        "_names",
        "_platforms",
        "_script",
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
        self.negated = (features.negated and not (plain and two_negations(lowered))) or says_no(lowered, plain)
        changes = CHANGE_ASCII if plain else CHANGE_ANY
        self._changed = changes.search(lowered) is not None  # (most texts have no change word: one search)
        self.marked = self._changed and any(m.group(0) not in NOT_A_CHANGE for m in changes.finditer(lowered))
        self._targets: frozenset[str] | bool | None = False  # False: not read yet
        self._content: frozenset[str] | None = None
        self._durations: dict[str, frozenset[float]] | None = None
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
        self._script: str | None = None

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
    def durations(self) -> dict[str, frozenset[float]]:
        """The lengths of time the text holds, in seconds, by their number (`durations`)."""
        if self._durations is None:
            self._durations = durations(self.lowered)
        return self._durations

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
            self._kinds = kinds_of(self.text, self.features, self.units, self.lettered_versions)
        return self._kinds

    @property
    def names(self) -> frozenset[str]:
        if self._names is None:
            names: frozenset[str] | set[str] = self.features.names
            if not self.text.isascii():  # in Chinese, Japanese or Russian text, the Latin words name tools
                # (and a run of Chinese ending in "PostgreSQL" is one token there, no name)
                names = {n for n in names if not has_unspaced(n)}
                latin = LATIN_WORD.findall(without_placeholders(self.text))
                names |= {fold_plural(w.lower()) for w in latin if len(w) > 1}
            self._names = frozenset(names) - UNIT_SYMBOLS
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
    def script(self) -> str:
        """The script the text is written in (`text.script`): "latin", "cyrillic" or "cjk"."""
        if self._script is None:
            self._script = "latin" if self.plain else script(self.text)
        return self._script

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


# Units of measure written like names ("10 Hz", "20 MB"): a quantity's unit names no tool
UNIT_SYMBOLS = frozenset("hz khz mhz ghz kb mb gb tb kib mib gib tib ms ns µs px dpi fps rps qps rpm".split())

CACHED_TEXT_CHARS = 2_000  # texts up to this long are cached whole (a memory may hold 1,000,000)


def across_scripts(a: Reading, b: Reading) -> bool:
    """The two texts are written in different scripts (two English texts never are: one look)."""
    return not (a.plain and b.plain) and a.script != b.script


def reading(text: str) -> Reading:
    """The `Reading` of `text`, its features read here (tests, tools, the judges); dream passes
    the features it already has (`reading_of`). A short text's reading is remembered."""
    return _cached_reading(text) if len(text) <= CACHED_TEXT_CHARS else Reading(text, text_features(text))


@lru_cache(maxsize=1 << 12)
def _cached_reading(text: str) -> Reading:
    return Reading(text, text_features(text))


def mentions(name: str, other: Reading) -> bool:
    if name in other.tokens or name + "s" in other.tokens:  # (names are singular: "URLs" names "url")
        return True
    if len(name) >= 4 and name[:4] not in other.stems:
        return False
    return any(
        token == name or (len(name) >= 4 and len(token) >= 4 and (token.startswith(name) or name.startswith(token)))
        for token in other.tokens
    )


_ASSIGNED_SWITCH = re.compile(
    r"(?<![\w.-])([a-z_][\w.-]*)\s*[=:]\s*(true|false|on|off|yes|no|enabled|disabled)\b", re.IGNORECASE
)
_SWITCH_ON = frozenset({"true", "on", "yes", "enabled"})
_SWITCH_VALUE = re.compile(r"[=:]\s*(?:true|false|on|off|yes|no|enabled|disabled)\b", re.IGNORECASE)  # a quick look


def _switches(text: str) -> dict[str, bool]:
    if ("=" not in text and ":" not in text) or _SWITCH_VALUE.search(text) is None:
        return {}  # (most texts set nothing on or off)
    return {m.group(1).lower(): m.group(2).lower() in _SWITCH_ON for m in _ASSIGNED_SWITCH.finditer(text)}


Readings = dict[str, Reading]  # by text: each text read once per analysis


def reading_of(item: AnalysedMemory, readings: Readings | None) -> Reading:
    text = item.memory.memory
    if readings is None:
        return reading(text)
    found = readings.get(text)
    if found is None:
        found = readings[text] = Reading(text, item.features)
    return found


# (ASCII word characters: a name may run up to Chinese text, "使用next-intl")
_COMPOUND = re.compile(r"(?<![\w.@/-])[a-z][a-z0-9]*(?:-[a-z0-9]+)+(?![\w/-])", re.ASCII)
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


def literal_values(r: Reading) -> frozenset[str]:
    """Every literal value of the text (for English text, those `features` already read)."""
    if r.plain:
        return ungrouped(r.features.literals)  # ("30_000" is 30000)
    return frozenset().union(*r.kinds.values()) if r.kinds else frozenset()


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
    "dev": "development",  # a developer's machine: "local", "locally" and "dev" are one
    "development": "development",
    "local": "development",
    "locally": "development",
    "ci": "ci",
}
_ENVIRONMENT = re.compile(r"(?<![\w.-])(?:" + "|".join(_ENVIRONMENT_WORDS) + r")(?![\w-])", re.ASCII)
_ENVIRONMENT_FOREIGN = (
    ("预发布", "staging"),
    ("预发", "staging"),
    ("生产", "production"),
    ("开发环境", "development"),
    ("本地", "development"),
    ("ステージング", "staging"),
    ("本番", "production"),
    ("開発環境", "development"),
    ("ローカル", "development"),
    ("стейдж", "staging"),
    ("продакшен", "production"),
    ("прод", "production"),
    ("локальн", "development"),
)
_ASIDE = re.compile(r"\([^()]*\)")
# Where a text that names no environment is about: production, or a developer's machine, so
# only these others set one text apart from a text that names none.
SIDE_ENVIRONMENTS = frozenset({"staging", "qa", "sandbox", "beta", "preview"})


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
_PLATFORM = re.compile(r"(?<![\w.-])(?:" + "|".join(_PLATFORM_WORDS) + r")(?![\w-])", re.ASCII)


def platforms(lowered: str) -> frozenset[str]:
    """The platforms a lower-cased text names (web, mobile, iOS, Android, desktop …)."""
    if not any(word in lowered for word in _PLATFORM_WORDS):  # (most texts name none: no pattern run)
        return _NOTHING
    return frozenset(p for m in _PLATFORM.finditer(_without_literals(lowered, " ")) for p in _PLATFORM_WORDS[m.group()])


_LITERAL_SPAN = re.compile(r"`[^`]*`|\S+://\S+|[\w.~{}<>*-]*/[\w./~{}<>*-]+")


def _without_literals(lowered: str, mark: str) -> str:
    """The text with each URL, path and quoted code replaced by `mark`."""
    return _LITERAL_SPAN.sub(mark, lowered) if ("/" in lowered or "`" in lowered) else lowered


def _frame(text: str, changed: bool = True) -> tuple[str, ...]:
    """`Reading.frame`; `changed`: whether the text has a change word to drop (`Reading._changed`)."""
    lowered = text.lower()
    if changed:
        lowered = (CHANGE_ASCII if lowered.isascii() else CHANGE_ANY).sub(" ", lowered)  # (the same on ASCII)
    lowered = _without_literals(lowered, " 0 ")  # a URL, path or code is one value, whatever its words
    if "(" in lowered:
        lowered = _ASIDE.sub(" ", lowered)  # an aside in brackets is detail: "(name, domain)" / "(email)"
    if "'s" in lowered:
        lowered = _POSSESSIVE.sub("", lowered)  # "the worker's timeout": the worker, as a word to line up
    return tuple([word if word.isalpha() or not any(map(str.isdigit, word)) else "#" for word in words(lowered)])


_POSSESSIVE = re.compile(r"(?<=[a-z])'s\b")
