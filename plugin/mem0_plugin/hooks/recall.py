"""Memories recalled for what the agent is doing (docs/hooks.md, "Recall"): a prompt, a failing
command, a file read. Each is one search of the current project (never the `--auto` reminder,
never another project), cut at a relevance floor: nothing relevant, nothing added.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from .. import operations
from ..language.text import significant_words
from ..records import REMINDER_SOURCE, Memory, memory_of_record
from .opening import memory_line

PROMPT_MOST = 5
TOOL_MOST = 3
FILE_MOST = 3
# The score the best memory must reach for anything to be recalled (docs/hooks.md, "The
# relevance floor"): the lowest at which at most 10% of the development set's off-topic prompts
# get any memory (`benchmarks/calibrate.py`), with the embedding model and without it. Once the
# best clears it, the others are kept down to half of it (`COMPANION_SHARE`).
FLOOR = 0.22
LEXICAL_FLOOR = 0.14
COMPANION_SHARE = 0.5
# The default model reads English: a query in Cyrillic, Chinese or Japanese script meets its
# answer at lower cosines, so its floor is lower (chosen as FLOOR was; docs/hooks.md).
OTHER_SCRIPT_FLOOR = 0.18
_OTHER_SCRIPT = re.compile(r"[\u0400-\u04ff\u3040-\u30ff\u3400-\u9fff]")
QUERY_HEAD, QUERY_TAIL = 700, 300  # a long prompt is searched by its beginning and its end
ITEM_CHARS = 300
BOOTSTRAP_SOURCE = "mem0-bootstrap"
ERROR_TYPES = ("bug_fix", "anti_pattern")

# The words a user types to go on, not to ask ("ok", "yes go ahead", "try again", "давай
# дальше"): a prompt made only of these is not searched.
ACKNOWLEDGEMENTS = frozenset(
    """ok okay k kk yes y yep yup yeah sure no n nope thanks thank you thx ty continue go on ahead next
    done lgtm sgtm cool nice great good perfect fine proceed do it try again retry keep going carry please
    sounds makes sense got alright right correct exactly that this now then and
    да нет ок хорошо давай продолжай продолжи продолжим спасибо дальше ага угу понял ясно отлично супер
    пожалуйста ладно верно согласен поехали""".split()
)
_PUNCTUATION = re.compile(r"[^\w\s']+", re.UNICODE)
# The same in Chinese and Japanese, written without spaces: a prompt made only of these pieces
# ("可以，就这么办", "はい、お願いします", "続けてください") is not searched. Longest first.
CJK_ACKNOWLEDGEMENTS = tuple(
    sorted(
        """好的 好吧 好 可以 行 对 对的 是的 是 嗯 继续 继续吧 就这么办 就这样 这样 没问题 开始吧 开始 谢谢 请 吧
        确认 同意 没错 搞定 再试一次 重试 下一步 はい お願いします お願い 続けて 続けてください うん それでいい
        それで いい 了解 了解です です 進めて 進めてください ください ありがとう ありがとうございます オッケー
        大丈夫 もう一度 次 どうぞ よろしく""".split(),
        key=len,
        reverse=True,
    )
)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")


@dataclass(frozen=True)
class Recalled:
    """The memories found for one hook, best first, and what they were found for."""

    heading: str
    memories: tuple[tuple[Memory, float], ...]

    def text(self) -> str:
        if not self.memories:
            return ""
        lines = [self.heading]
        lines += [f"{memory_line(m, ITEM_CHARS)} (score {score:.2f})" for m, score in self.memories]
        return "\n".join(lines)


def trivial(prompt: str) -> bool:
    """A prompt that only acknowledges or continues ("ok", "continue", "yes go ahead", "好的"),
    or has fewer than two significant words."""
    plain = " ".join(_PUNCTUATION.sub(" ", prompt.lower()).split())
    if all(word in ACKNOWLEDGEMENTS for word in plain.split()):
        return True
    if _CJK.search(plain):
        rest = plain
        for piece in CJK_ACKNOWLEDGEMENTS:
            rest = rest.replace(piece, " ")
        if all(word in ACKNOWLEDGEMENTS for word in rest.split()):
            return True
    return len(significant_words(plain)) < 2


def _query(text: str) -> str:
    text = text.strip()
    if len(text) <= QUERY_HEAD + QUERY_TAIL:
        return text
    return text[:QUERY_HEAD] + "\n…\n" + text[-QUERY_TAIL:]


def _search(
    caller: operations.Caller,
    query: str,
    *,
    most: int,
    types: Collection[str] = (),
    seen: Collection[str] = (),
    skip_files: Collection[str] = (),
    floor: float | None = None,
) -> list[tuple[Memory, float]]:
    if floor is None:
        semantic = caller.semantic
        if semantic is None or not semantic.available():
            floor = LEXICAL_FLOOR
        else:
            floor = OTHER_SCRIPT_FLOOR if _OTHER_SCRIPT.search(query) else FLOOR
    conditions: list[dict] = [
        {"app_id": caller.identity.project_id},
        {"metadata": {"source": {"ne": REMINDER_SOURCE}}},
    ]
    if types:
        conditions.append({"metadata": {"type": {"in": list(types)}}})
    found = operations.search_memories(
        caller,
        _query(query),
        {"AND": conditions},
        top_k=most + len(seen) + 5,
        threshold=floor * COMPANION_SHARE,
        latest_only=True,
    )
    kept: list[tuple[Memory, float]] = []
    for record in found["results"]:
        memory = memory_of_record({**record, "version": 0})
        if memory.id in seen:
            continue
        if memory.metadata.get("source") == BOOTSTRAP_SOURCE and memory.metadata.get("file") in skip_files:
            continue  # the client reads that file into the context itself
        kept.append((memory, float(record["score"])))
    if not kept or kept[0][1] < floor:
        return []  # nothing new clears the floor: the query is about something memory does not hold
    return kept[:most]


def for_prompt(
    caller: operations.Caller, prompt: str, *, seen: Collection[str] = (), skip_files: Collection[str] = ()
) -> Recalled:
    """At most `PROMPT_MOST` memories for a prompt; none for a trivial one."""
    if trivial(prompt):
        return Recalled("", ())
    found = _search(caller, prompt, most=PROMPT_MOST, seen=seen, skip_files=skip_files)
    return Recalled("mem0 recalled these memories for this prompt (search score in brackets):", tuple(found))


# A failing command's telling line: an exception, an error or a failed test.
_ERROR_LINE = re.compile(
    r"^\s*(?:\S+(?:Error|Exception|Exit)\b.*|.*\b(?:error|ERROR|Error)(?:\[\w+\])?[:!].*|FAILED .*|fatal: .*|"
    r"panic: .*|npm ERR! .*|E {2,}.*|.*\bnot found\b.*|.*\bNo such file or directory\b.*|.*\bcommand not found\b.*)$",
    re.M,
)
TRACEBACK = "Traceback (most recent call last)"


def error_line(output: str) -> str:
    """The line that says what went wrong: the last matching `_ERROR_LINE` of the output's
    last 20,000 characters (a traceback's last line is its exception), else its last line."""
    tail = output[-20_000:]
    matches = [m.group(0).strip() for m in _ERROR_LINE.finditer(tail)]
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    line = matches[-1] if matches else (lines[-1] if lines else "")
    return line[:300]


def failed(output: str, exit_code: int | None) -> bool:
    """Whether a command failed: a non-zero exit code or a Python traceback in what it printed;
    when the client gives no exit code, error lines too."""
    if exit_code or TRACEBACK in output:
        return True
    return exit_code is None and any(_ERROR_LINE.finditer(output[-20_000:]))


def for_failure(caller: operations.Caller, command: str, output: str, *, seen: Collection[str] = ()) -> Recalled:
    """At most `TOOL_MOST` `bug_fix` / `anti_pattern` memories for a failing command's error."""
    line = error_line(output)
    if not line:
        return Recalled("", ())
    found = _search(caller, line, most=TOOL_MOST, types=ERROR_TYPES, seen=seen)
    heading = f"mem0 recalled fixes for this error ({line[:120]}):"
    return Recalled(heading, tuple(found))


def for_file(caller: operations.Caller, path: str, *, seen: Collection[str] = ()) -> Recalled:
    """At most `FILE_MOST` memories that name the file (its name or its path, as written)."""
    name = path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    if len(name) < 3 or "." not in name.strip("."):
        return Recalled("", ())
    found = _search(caller, name, most=FILE_MOST * 3, seen=seen, floor=0.0)
    named = [(m, s) for m, s in found if name.lower() in m.memory.lower()][:FILE_MOST]
    return Recalled(f"mem0 recalled memories that name {name}:", tuple(named))
