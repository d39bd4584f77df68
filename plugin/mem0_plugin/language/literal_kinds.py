"""The literals of one text by kind (docs/dream.md, "What the pair is"). Pure.

`features.literals_by_kind` reads an English text's literals; here the rest: numbers written
beside other scripts ("6379端口"), numbers with their unit on them ("30s", "10MB"), versions
with letters ("2022.3.21f1"), and whether a value is written in a text at all (`written`).
"""

from __future__ import annotations

import re
from functools import lru_cache

from .features import TextFeatures, literals_by_kind

# A number beside letters of another script ("6379端口", "порту 4000"): word boundaries do not
# separate it there, so `features` does not see it as a number.
_NUMBER_IN_ANY_SCRIPT = re.compile(r"(?<![0-9A-Za-z_.])\d+(?:\.\d+)*(?![0-9A-Za-z_])")

_VERSION_VALUE = re.compile(r"v?\d+(?:\.\d+)+|v\d+")
_NUMBER_VALUE = re.compile(r"\d+(?:[,:]\d+)*")
# A number with its digits grouped, as code writes it ("30_000", "1_000_000") or prose ("10,000"):
# the same number as "30000" and "10000".
_GROUPED_NUMBER = re.compile(r"\d+(?:_\d+)+|\d{1,3}(?:,\d{3})+")


def ungrouped(literals: frozenset[str]) -> frozenset[str]:
    """`literals` with each number whose digits are grouped written plain ("30_000" → "30000")."""
    if not any(map(_GROUPED_NUMBER.fullmatch, literals)):
        return literals  # (nearly every text)
    return frozenset(v.replace("_", "").replace(",", "") if _GROUPED_NUMBER.fullmatch(v) else v for v in literals)


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
    """The numbers with their unit on them, lower-cased; HTTP statuses in the plural ("the
    502s") as the status ("502")."""
    if _DIGIT_AND_LETTER.search(text) is None:  # (a unit is written on its number: most texts have none)
        return frozenset()
    return frozenset(
        number if unit.lower() == "s" and 100 <= float(number) < 600 else (number + unit).lower()
        for number, unit in _UNIT_NUMBER.findall(text)
    )


# A length of time: a number and its unit, on it or as a word ("30s", "300 seconds", "a
# 2-minute AckWait", "5 минут", "300秒", "5分钟"), in seconds, by the number as the kinds hold
# it ("30s" and "30"; "300"). "TTL 300 seconds" and "TTL 5 minutes" hold one value.
_SECONDS_OF_UNIT = {
    **dict.fromkeys("ms msec millisecond milliseconds".split(), 0.001),
    **dict.fromkeys("s sec secs second seconds сек 秒".split(), 1.0),
    **dict.fromkeys("m min mins minute minutes мин 分钟 分間".split(), 60.0),
    **dict.fromkeys("h hr hrs hour hours 小时 時間".split(), 3600.0),
    **dict.fromkeys("d day days день 天 日間".split(), 86400.0),
    **dict.fromkeys("w week weeks 周".split(), 604800.0),
}
_UNIT_WORD = r"milliseconds?|msec|seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?"
_RUSSIAN_UNIT = r"(секунд|сек|минут|мин|час|дн|день|сут|недел)(?:[аыуия]|ов|ей|ок|ки|ь|ю)?"
_SECONDS_OF_STEM = {"секунд": 1.0, "минут": 60.0, "час": 3600.0, "дн": 86400.0, "сут": 86400.0, "недел": 604800.0}
_DURATION = re.compile(
    r"(?<![0-9A-Za-z_.])(\d+(?:\.\d+)?)"
    r"(?:(ms|s|secs?|m|mins?|h|hrs?|d|w)(?![0-9a-z_])"
    rf"|[ -]?({_UNIT_WORD})(?![a-z])"
    rf"|[ -]?{_RUSSIAN_UNIT}(?![а-я])"
    r"|\s?(秒|分钟|分間|小时|時間|天|日間|周))"
)


_TIME_UNIT = re.compile(rf"{_UNIT_WORD}|{_RUSSIAN_UNIT}")


def is_time_unit(word: str) -> bool:
    """A word naming a unit of time ("seconds", "минут"): part of a length's value, no subject."""
    return _TIME_UNIT.fullmatch(word) is not None


def durations(lowered: str) -> dict[str, frozenset[float]]:
    """The lengths of time the (lower-cased) text holds, in seconds, by their number as the
    literal kinds hold it (`_DURATION`)."""
    found: dict[str, frozenset[float]] = {}
    for match in _DURATION.finditer(lowered):
        number, attached, word, russian, cjk = match.groups()
        unit = attached or word or russian or cjk
        seconds = float(number) * (_SECONDS_OF_UNIT.get(unit) or _SECONDS_OF_STEM.get(unit, 0.0))
        for key in (number, number + attached) if attached else (number,):
            found[key] = found.get(key, frozenset()) | {seconds}
    return found


_NO_KINDS: dict[str, frozenset[str]] = {}
_NOTHING: frozenset[str] = frozenset()


def kinds_of(
    text: str, features: TextFeatures, units: frozenset[str], lettered: frozenset[str]
) -> dict[str, frozenset[str]]:
    kinds = _literal_kinds(text, features, units)
    if not lettered:
        return kinds
    # "2022.3.21f1" is read as "2022.3" by `features`: the whole version, so that another is a replaced
    # one (a version written whole besides stays: "from 3.13.0rc1 to 3.13.0")
    lowered = text.lower()
    versions = {
        v for v in kinds.get("version", ()) if not any(full.startswith(v) for full in lettered) or written(v, lowered)
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
            literals = ungrouped(literals)
            return {kind_of(value): literals for value in literals} if literals else _NO_KINDS  # (read only)
        grouped: dict[str, set[str]] = {}
        for value in ungrouped(literals):
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
    return _numbers_apart({kind: _ascii_parts(values) for kind, values in kinds.items()})


def _numbers_apart(kinds: dict[str, frozenset[str]]) -> dict[str, frozenset[str]]:
    """A bare number cut out of a longer literal that ran on into another script is a number
    ("spark.sql.shuffle.partitions由200改成800": the name, then 200 and 800)."""
    cut = {n for kind, values in kinds.items() if kind != "number" for n in values if _NUMBER_VALUE.fullmatch(n)}
    if not cut:
        return kinds
    kinds = {kind: (values - cut if kind != "number" else values) for kind, values in kinds.items()}
    kinds["number"] = kinds.get("number", frozenset()) | cut
    return {kind: values for kind, values in kinds.items() if values}


# (a Latin word joined by a hyphen to a word of another script is a word: "Web-сервер"; a
# method written with its dot is one, ".collect()", a file's extension is none, ".sq")
LATIN_WORD = re.compile(
    r"(?:(?<![A-Za-z0-9_.\-/])|(?<=(?<![A-Za-z0-9_])\.)(?=[A-Za-z][A-Za-z0-9_]*\())"
    r"[A-Za-z][A-Za-z0-9+#]*(?![A-Za-z0-9_/]|[.-][A-Za-z0-9])"
)
_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")


def _ascii_parts(values: frozenset[str]) -> frozenset[str]:
    """Literal values with letters of other scripts cut out: a pattern that runs on into Chinese
    text ("TRANSFORM_DEV_WH，角色是TRANSFORMER_DEV") yields the ASCII pieces it holds."""
    return frozenset(part for value in values for part in _NON_ASCII_RUN.split(value) if part.strip("_.,:;-"))


def written(value: str, text: str, qualified: bool = False) -> bool:
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


VALUE_KINDS = frozenset({"number", "version", "url", "path", "code"})  # a changed value; other kinds name things
