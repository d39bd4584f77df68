"""Negations, prohibitions and change markers in one text (docs/dream.md, "What the pair is"). Pure.

* **negations**: English negation words (`text.NEGATIONS`, read by `features`), Chinese,
  Japanese and Russian ones, and prohibitions without one ("is discouraged", "is banned",
  "keep … off", "禁止", "запрещено"); `negated_targets` names the words a negation negates;
* **change markers**: "now", "switched to", "no longer", "改为", "теперь" … — the newer of two
  texts saying it replaces something (`change_marker`: what marks a supersede).
"""

from __future__ import annotations

import re

from .text import NEGATIONS, has_unspaced, words

# ("缺", lacking, is a negation as "without" is in English; "缺省" is "default")
_FOREIGN_NEGATION = re.compile(
    r"不|没有|别|禁止|勿|无需|缺(?!省)|关闭|禁用|無|しない|ない|やめ|\bне\b|\bнельзя\b|\bникогда\b|\bнет\b|\bбез\b|\bникак\w+"
)
# Words that state a prohibition without a negation word ("is discouraged", "is banned"): such
# a text says the same as its negated paraphrase ("Don't ..."), so it counts as negated too.
_PROHIBITION_EN = (
    r"\b(?:prefer\w*|chose|choose|chosen|picked|favou?r\w*)\b[^.;:]*\bover\b|\brather than\b|\binstead\b|"
    r"\b(?:forbidden|banned|prohibited|disallowed|discouraged|rejected|ruled out|not allowed|must not|should not|"
    r"avoids|avoided|avoiding|(?:was|were|been|got) (?:dropped|abandoned|ditched|discarded)|"
    r"(?:considered|evaluated|tried|tested|trialled|prototyped) and (?:dropped|abandoned|ditched|discarded)|"
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
    r"|调整为|调整到|提高到|提升到|降低到|降到|增加到|增大到|减少到|缩短到|延长到|改到|挪到|搬到|升到|更新为|更新到"
    r"|変更した|引き上げ|引き下げ|に上げ|に下げ|に増や|に減ら|に移動|へ移動|移した|に更新|アップグレード"
    r"|теперь|больше не|замен|перешли|перешёл|перевели|вместо|удалил|удален|удалён|переехал|обновили"
    r"|перенесли|подняли|повысили|снизили|понизили|уменьшили|увеличили|сократили|поменяли|изменили"
)
# English texts (most) are searched, lower-cased, for the English words only.
_PROHIBITION_ASCII = re.compile(_PROHIBITION_EN)
# A word each English prohibition above holds (its quick look: "over", "instead", "off" …)
_PROHIBITION_HINT = re.compile(
    "over|rather than|instead|forbidden|banned|prohibited|disallowed|discouraged|rejected|ruled out|"
    "not allowed|must not|should not|avoid|off|out of|anti-pattern|bad idea|dropped|abandoned|ditched|discarded"
)
# "X ではなく Y" is Japanese for "Y rather than X"; "Y вместо X", "X の代わりに Y": "Y instead of X".
_PROHIBITION_ANY = re.compile(
    _PROHIBITION_EN + r"|禁止|不要|不得|不允许|代替|禁じ|ではなく|じゃなく|代わりに|вместо|запрещ|нельзя"
)
# A choice between named alternatives ("Y rather than X", "Y, not X"): which of them a text
# prefers, not whether something holds (`polarity_flipped`).
CHOICE = re.compile(
    r"\brather than\b|\binstead\b|\bover\b|[,(]\s*not\b|ではなく|じゃなく|代わりに|而不是|代替|вместо|\bа не\b"
)
# A restriction said with "only" is the same as its negated complement: "unwrap() is only for
# tests" / "no unwrap() outside tests"; "clients only send inputs" / "clients never send positions".
ONLY = re.compile(r"\bonly\b|только|仅|只|のみ|だけ")
CHANGE_ASCII = re.compile(_CHANGE_EN)
CHANGE_ANY = re.compile(_CHANGE_EN + "|" + _CHANGE_OTHER)


# What marks a supersede (`supersedes`): the change markers, less "rather than" (a preference:
# "wants WITH clauses rather than subqueries" replaces nothing), plus a setting turned off or on.
_TURNED = r"\b(?:was|were|has been|have been) (?:turned|switched) (?:off|on)\b|\b(?:was|were) (?:disabled|enabled)\b"
_SUPERSEDE_ASCII = re.compile(_TURNED + "|" + _CHANGE_EN)
_SUPERSEDE_ANY = re.compile(_TURNED + "|" + _CHANGE_EN + "|" + _CHANGE_OTHER)
# a preference: "return errors instead of panicking"; "сделали на WireGuard вместо OpenVPN"
NOT_A_CHANGE = frozenset({"rather than", "instead of", "вместо", "代わりに"})


def change_marker(text: str) -> str | None:
    """The first words of `text` that mark a change of its fact ("now", "switched to", "was
    turned off", "改为" …), or None."""
    lowered = text.lower()
    pattern = _SUPERSEDE_ASCII if lowered.isascii() else _SUPERSEDE_ANY
    return next((m.group(0) for m in pattern.finditer(lowered) if m.group(0) not in NOT_A_CHANGE), None)


def says_no(lowered: str, plain: bool) -> bool:
    """A prohibition, or a negation in Chinese, Japanese or Russian: what a text's reading adds
    to the English negation words `features` finds (`Reading.negated`)."""
    if plain:  # (most English texts hold none of the words a prohibition needs: a quick look first)
        return _PROHIBITION_HINT.search(lowered) is not None and _PROHIBITION_ASCII.search(lowered) is not None
    return _PROHIBITION_ANY.search(lowered) is not None or _FOREIGN_NEGATION.search(lowered) is not None


# A requirement written as two negations: "no ingestion without a contract", "never deploy
# without a review" (a negation and the "without" of its clause)
_TWO_NEGATIONS = re.compile(r"\b(?:no|never|not|don't|dont|cannot|can't)\b[^.;:!?,—]{0,60}?\bwithout\b")


def two_negations(lowered: str) -> bool:
    """Every negation word of the English text is one of a pair that states a requirement
    ("No ingestion without a data contract" requires the contract; it negates nothing)."""
    if "without" not in lowered:
        return False
    pairs = len(_TWO_NEGATIONS.findall(lowered))
    return pairs > 0 and sum(token in NEGATIONS for token in words(lowered)) == 2 * pairs


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
        return _japanese_targets(lowered)
    if has_unspaced(lowered):
        return _chinese_targets(lowered)
    tokens = words(lowered)
    targets = set()
    following: str | None = None  # the next word not skipped, read from the end (linear in the text)
    for i in range(len(tokens) - 1, -1, -1):
        token = tokens[i]
        if token in NEGATIONS or token in _RUSSIAN_NEGATIONS:
            before = (
                tokens[i - 1]
                if token in _RUSSIAN_NEGATIONS and token != "без" and token not in _NO_ANY and i > 0
                else None
            )
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
GENERIC_PREDICATES = frozenset(
    "enabled used allowed required needed supported recommended necessary permitted possible available "
    "accepted wanted ok okay fine on active".split()
)
_PROHIBITION_WITHOUT_TARGET = re.compile(_PROHIBITION_EN + r"|禁止|不允许|禁じ|запрещ|нельзя")
_KANA = re.compile(r"[\u3040-\u30ff]")
HIRAGANA = re.compile(r"[\u3040-\u309f]")
# "никаких X" ("no X at all") negates the words after it only, as "без" does
_NO_ANY = frozenset("никаких никакой никакая никакое никакие никакого никаким никакими".split())
_RUSSIAN_NEGATIONS = frozenset("не ни нет никогда без".split()) | _NO_ANY
_RUSSIAN_SKIP = frozenset("надо нужно стоит будет быть было используем использовать используйте".split())
_CHINESE_NEGATION = re.compile(r"不要|不得|不能|不用|不会|不再|不|没有|没|别|勿|无需|缺少|缺(?!省)|关闭|禁用")
# skipped after a negation: what says nothing of its own ("不要直接用 X", "不要再跑 X": the X)
_CHINESE_SKIP = re.compile(r"(?:使用|直接|用|在|再|去|把|是|跑|执行|运行|调用|调|\s)*")
_CHINESE_UNIT = re.compile(r"[a-z][\w.+#-]*|[\u4e00-\u9fff]{1,2}")


def _skipped(token: str) -> bool:
    return token in _NEGATION_SKIP or token in NEGATIONS or token in _RUSSIAN_NEGATIONS or token in _RUSSIAN_SKIP


# A Japanese negation follows its verb ("X しない", "X を使わない"); these verbs take what they
# negate as their object: する, 使う, 入れる, 書く, 呼ぶ, 載せる, 置く, 渡す.
_JAPANESE_NEGATION = re.compile(r"(?:し|使わ|入れ|書か|呼ば|載せ|置か|渡さ)(?:ない|ません)")
_JAPANESE_ANY_NEGATION = re.compile(r"ない|ません")
# what it negates, right before the verb (particles and 直接, directly, skipped): a Latin word,
# a katakana word or two kanji
_JAPANESE_UNIT = re.compile(
    r"([a-z][\w.+#-]*(?:\(\))?|[\u30a0-\u30ff]+|[\u4e00-\u9fff]{1,2})(?:\s*(?:を|は|が|も|に|で|直接|\s))*$"
)


def _japanese_targets(lowered: str) -> frozenset[str] | None:
    """The word each Japanese negation negates ("直接 publish しないこと" → {publish}); None when
    one negates another verb ("必要ない") or nothing is found before it."""
    negations = list(_JAPANESE_NEGATION.finditer(lowered))
    if not negations or len(negations) != len(_JAPANESE_ANY_NEGATION.findall(lowered)):
        return None
    targets = set()
    for negation in negations:
        unit = _JAPANESE_UNIT.search(lowered[max(0, negation.start() - 80) : negation.start()])
        if unit is None:
            return None
        targets.add(unit.group(1))
    return frozenset(targets)


def _chinese_targets(lowered: str) -> frozenset[str] | None:
    targets = set()
    for negation in _CHINESE_NEGATION.finditer(lowered):
        rest = lowered[negation.end() :]
        unit = _CHINESE_UNIT.match(rest, _CHINESE_SKIP.match(rest).end())  # type: ignore[union-attr]
        if unit is None:
            return None
        targets.add(unit.group())
    return frozenset(targets) if targets else None
