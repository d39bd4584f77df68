"""Guards: what refuses a merge however close two texts are (docs/dream.md, "Guards"). Pure.

A merge states both texts as one. When one of them retires, negates or time-limits what the
other asserts, the merged text would state both sides of a contradiction, and `--auto` applies
merges with no one watching. Each guard reads a class of wording, in every language the
readings support, not a case:

* `negation_clash` — a word one text negates is said by the other outside its negations
  ("Commit the built assets so deploys don't need Node" / "… don't commit them"). One text
  negated and the other not is `polarity.polarity_flipped`'s; this is the pair where both are.
* `retires` — one text says a thing was removed, dropped, retired or is no longer used, and
  the other names it without retiring it ("Redis and Postgres are used; Redis was removed" /
  "We use Redis for sessions"; "不再使用 Redis" / "Redis 用于会话").
* `replaces` — the newer text marks a change ("now", "moved to", "switched to", "no longer")
  and the older does not: a replacement, never a duplicate (a record of an event aside: "fixed
  … now works" tells what happened).
* `across_languages` — the two texts are in different scripts and one is negated, marked as a
  change, restricted or time-limited where the other is not: across languages the rules have
  no shared words to read the negation or the restriction against.
* `time_limited` — one text limits its statement in time ("for now", "temporarily", "until
  the migration", "пока", "暂时", "当面") and the other states it without a limit.

A refused pair is left to the conflict rules (`meaning.relation`), and what they leave alone
is asked of a judge as a conflict (`meaning.open_question`). Restrictions ("only", "except",
"unless") are `conditions.adds_condition`'s.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..language.reading import Reading, across_scripts, literal_values
from ..language.text import words
from .conditions import restricted

# A thing retired, and where its name is (a name starts where no name character precedes it, so
# a long run of name characters is scanned once, not from each of its characters): after the marker ("removed Redis", "no longer uses
# Redis", "убрали Redis", "不再使用 Redis", "弃用了 Redis") or before it ("Redis was removed",
# "Redis は廃止", "Redis 已移除").
_RETIRED_AFTER = re.compile(
    r"(?<!was )(?<!were )(?<!been )(?<!is )(?<!are )(?<!got )\b(?:removed|dropped|deleted|retired|deprecated|decommissioned|ripped out|got rid of|stopped using|"
    r"no longer (?:uses?|using|used|needs?|wants?|runs?|ships?|supports?|has|have|relies on|depends on)|"
    r"moved (?:away )?from|migrated (?:away )?from|switched (?:away )?from|replaced)\s+((?:[\w@./+#-]+\s*){1,3})"
    r"|(?:убрали|удалили|отказались от|больше не используем|больше не|выпилили|перестали использовать)\s+((?:\w[\w@./+#-]*\s*){1,3})"
    r"|(?:不再使用|不再用|不再|移除了?|删除了?|去掉了?|弃用了?|废弃了?|停用了?)\s*([a-z][\w@./+#-]*)"
)
_RETIRED_BEFORE = re.compile(
    r"(?<![\w@./+#-])((?:[\w@./+#-]+\s+){1,3})(?:(?:was|were|has been|have been|is|are|got) (?:now )?(?:removed|dropped|deleted|"
    r"retired|deprecated|decommissioned|ripped out|sunset|gone)|is no longer used|are no longer used)\b"
    r"|(?<![a-z0-9_@./+#-])([a-z][\w@./+#-]*)\s*(?:は|を)?\s*(?:廃止|削除|撤去|使わなくな|もう使わな)"
    r"|(?<![a-z0-9_@./+#-])([a-z][\w@./+#-]*)\s*(?:已移除|已删除|已废弃|已弃用|被移除|被删除|被废弃)"
    r"|(?<![a-z0-9_@./+#-])([a-z][\w@./+#-]*)\s+(?:убрали|удалили|выпилили|больше не используем)"
)
# words a retirement's window holds that name nothing retired
_NOT_RETIRED = frozenset(
    "the a an our its their this that these those all any old legacy from to in on of for and with by it them "
    "we was were is are has have been now also entirely completely fully support usage use using because so "
    "since as after when".split()
)


# a word each retirement above holds: most texts hold none, and are read no further
_RETIRED_HINT = re.compile(
    "remov|dropp|delet|retir|deprecat|decommission|ripped|got rid|stopped|no longer|moved|migrated|switched|replaced|"
    "sunset|gone|убрал|удалил|отказал|больше не|выпилил|не использ|不再|移除|删除|去掉|弃用|废弃|停用|廃止|削除|撤去|使わな"
)


@lru_cache(maxsize=1 << 15)
def retired_words(lowered: str) -> frozenset[str]:
    """The words of what a text (lower-cased) says was retired (`_RETIRED_AFTER`, `_RETIRED_BEFORE`)."""
    if _RETIRED_HINT.search(lowered) is None:
        return frozenset()
    found: set[str] = set()
    for pattern in (_RETIRED_AFTER, _RETIRED_BEFORE):
        for match in pattern.finditer(lowered):
            window = next(group for group in match.groups() if group is not None)
            found.update(w for w in words(window) if w not in _NOT_RETIRED and len(w) >= 2 and not w.isdigit())
    return frozenset(found)


def retires(a: Reading, b: Reading) -> bool:
    """One text retires a thing the other names without retiring it."""
    return _retires(a, b) or _retires(b, a)


def _retires(retirer: Reading, other: Reading) -> bool:
    gone = retired_words(retirer.lowered)
    if not gone:
        return False
    theirs = retired_words(other.lowered) | (other.negated_words or frozenset())
    return any(word in other.tokens and word not in theirs for word in gone)


# "Y instead of X", "Y rather than X", "Y вместо X", "X の代わりに Y", "Y 而不是 X": X, the one left
_LEFT_AFTER = re.compile(
    r"\b(?:instead of|rather than|in place of)\s+((?:[\w@./+#-]+\s*){1,3})|(?:вместо|而不是|取代)\s*([\w@./+#-]+)"
)
_LEFT_BEFORE = re.compile(r"(?<![a-z0-9_@./+#-])([a-z][\w@./+#-]*)\s*の?代わりに")


def replaced_named(newer: Reading, older: Reading) -> str | None:
    """A word of the older text that the newer says it retired or replaced ("X was removed", "no
    longer uses X", "Y instead of X"): the newer marks the change by naming what it replaces."""
    theirs = _left(older) | (older.negated_words or frozenset())  # (what the older left too: the same choice)
    return next((word for word in sorted(_left(newer)) if word in older.tokens and word not in theirs), None)


def _left(r: Reading) -> frozenset[str]:
    """The words of what the text says was retired, or left for something else."""
    left: set[str] = set(retired_words(r.lowered))
    for pattern in (_LEFT_AFTER, _LEFT_BEFORE):
        for match in pattern.finditer(r.lowered):
            window = next(group for group in match.groups() if group is not None)
            left.update(w for w in words(window) if w not in _NOT_RETIRED and len(w) >= 2 and not w.isdigit())
    return frozenset(left)


def negation_clash(a: Reading, b: Reading) -> bool:
    """One text forbids doing something ("never commit", "don't run") that the other tells the
    reader to do, as a clause of its own ("Commit the built assets so deploys don't need Node").
    Both texts may be negated (the other about something else): one negated and the other not is
    `polarity.polarity_flipped`'s."""
    return _clashes(a, b) or _clashes(b, a)


# "never commit", "don't run", "do not use" … : the verb forbidden
_FORBIDS = re.compile(r"\b(?:never|don't|do not|dont|must not|mustn't|should not|shouldn't)\s+(?:ever\s+)?([a-z]{4,})")
# a word opening a clause, and the word after it
_CLAUSE_START = re.compile(r"(?:^|[.;:!?\n(]|,\s*(?:and|so|then)?|\band\b|\bthen\b)\s*([a-z][a-z-]{3,})\s+(\S+)")
_NOT_A_COMMAND = frozenset(
    "is are was were has have had will would can could must should may might stays stay gets get goes go "
    "does do did isn't aren't wasn't won't can't and or".split()
)


def _clashes(forbidding: Reading, other: Reading) -> bool:
    if not forbidding.plain or not other.plain or (other.negated and other.negated_words is None):
        return False  # (the other a prohibition of its own: "Anti-pattern: calling …")
    forbidden = {match.group(1)[:4] for match in _FORBIDS.finditer(forbidding.lowered)} - {"use", "need", "allo"}
    return bool(forbidden) and not forbidden.isdisjoint(_commanded(other.lowered))


def _commanded(lowered: str) -> frozenset[str]:
    """The first four letters of each word that opens a clause of the text as a command, not as
    its subject ("Commit the built assets; run …", not "floats are never allowed")."""
    return frozenset(
        match.group(1)[:4]
        for match in _CLAUSE_START.finditer(lowered)
        if match.group(2) not in _NOT_A_COMMAND and not match.group(1).endswith("ing")
    )


_TEMPORARY = re.compile(
    r"\b(?:for now|for the time being|temporar(?:y|ily)|until further notice|as a stopgap|stopgap|"
    r"for the moment|interim)\b"
    r"|пока что|временно|пока не|暂时|暂且|临时|目前先|在.{1,12}之前|当面|一時的|暫定|までは"
)


def time_limited(a: Reading, b: Reading) -> bool:
    """One text limits its statement in time and the other does not."""
    return (_TEMPORARY.search(a.lowered) is None) != (_TEMPORARY.search(b.lowered) is None)


def replaces(older: Reading, newer: Reading) -> bool:
    """The newer text marks a change ("now", "moved to", "switched", "was removed" …) and the
    older does not: it tells what replaced the older's fact, never the same fact again. An older
    text that already rules something out ("Don't use X; use Y instead", "X was rejected") states
    the choice the newer's marker may repeat ("switch to Y", "X was dropped")."""
    return newer.marked and not older.marked and not older.negated


# "from X to Y", "replaced X with Y": X, what the newer text left (`polarity.moved_away` reads it too)
_FROM = re.compile(r"\bfrom\s+([\w.@+#/-]+)\s+(?:to|for)\b|\breplaced\s+([\w.@+#/-]+)\s+(?:with|by)\b")
_TOKEN = re.compile(r"[\w@+#][\w@./+#-]*[\w+#]|[\w@+#]")
_WINDOW_END = frozenset("with by to for in on at and or because so since as after when from via".split())


def left_names(r: Reading) -> frozenset[str]:
    """The specific names (a tool, a package-like name, a word with a digit, dot, slash or dash)
    a text says it retired, replaced or moved away from ("pip-tools" of "Replaced pip-tools with
    uv"), whole."""
    names = r.names | r.compounds
    found: set[str] = set()
    for pattern in (_RETIRED_AFTER, _RETIRED_BEFORE, _LEFT_AFTER, _LEFT_BEFORE, _FROM):
        for match in pattern.finditer(r.lowered):
            window = next(group for group in match.groups() if group is not None)
            tokens = _TOKEN.findall(window)
            if pattern is _RETIRED_BEFORE:
                tokens = tokens[-1:]  # the name just before "was removed"
            for token in tokens:
                if token in _WINDOW_END:
                    break
                if token not in _NOT_RETIRED and (token in names or not token.isalpha()) and not token.isdigit():
                    found.add(token)
    return frozenset(found)


def names_it(name: str, r: Reading) -> bool:
    """`r` holds `name` as a whole word ("pip-tools", not "pip-tools-extra"; Chinese or Japanese
    characters beside it end it)."""
    return re.search(rf"(?<![a-z0-9_-]){re.escape(name)}(?![a-z0-9_-])", r.lowered) is not None


def names_lost(a: Reading, b: Reading) -> bool:
    """Each text names something the other does not write (a literal of one, a package-like
    name of the other: "with `cross`" / "with cargo-zigbuild"): whichever is kept, a merge loses
    the other's name."""
    own_a = {value for value in literal_values(a) if value.isalpha()} | a.compounds
    own_b = {value for value in literal_values(b) if value.isalpha()} | b.compounds
    only_a = [v for v in own_a if not names_it(v, b)]
    only_b = [v for v in own_b if not names_it(v, a)]
    return bool(only_a) and bool(only_b) and bool(a.compounds | b.compounds)


def across_languages(a: Reading, b: Reading) -> bool:
    """The texts are in different scripts, and one is negated, marks a change, restricts or
    limits in time where the other does not ("Edits overwrite `body` in place" / "编辑时不要覆盖
    body"): a restatement in another language is merged only when both say it the same way."""
    if not across_scripts(a, b):
        return False
    return a.negated != b.negated or a.marked != b.marked or restricted(a) != restricted(b) or time_limited(a, b)
