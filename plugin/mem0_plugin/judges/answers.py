"""A language model's answer to a candidate (docs/judges.md): the messages that ask it, and the
strict reading of what comes back. Pure.

`messages_for(candidate, dates)` asks for one JSON object and nothing else: about a pair, its
two texts; about a synthesis group (docs/dream.md, "Synthesis"), its numbered observations with
their dates. `read_answer(text, candidate)` accepts exactly that — an object with ``decision``
(merge, supersede, conflict, leave for a pair; synthesize or leave for a group) and, as the
decision needs, ``merged_text``, ``winner`` (``"older"``, ``"newer"`` or one of the ids) or
``text`` (the pattern); a null value counts as absent and a ``reason`` string is allowed and
ignored; one Markdown code fence around the object is tolerated — and then puts the answer
through the very check an agent's answer in a plan file goes through
(`plan_checks.CandidateItem`: the decision's keys, a winner among the ids, a merged text
keeping every literal, a pattern that is not one of its sources again). Anything else raises
`AnswerRefused` with one line: the answer is dropped, never applied.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ..dream.plan import DECISIONS, Candidate

ANSWER_KEYS = ("decision", "merged_text", "winner", "text")
IGNORED_KEYS = ("reason",)
MAX_ANSWER_CHARS = 20_000
_FENCE = re.compile(r"\A```(?:json)?\s*\n?(.*?)\n?```\Z", re.DOTALL)

SYSTEM = """You judge two memories of a software project's assistant, an older one and a newer one.
Decide what the newer one is to the older one:
- "merge": they say the same thing, or one contains all of the other's meaning. Give "merged_text": one text that keeps every fact of both, and every literal exactly as written (numbers, versions, paths, URLs, names, code).
- "supersede": the newer one replaces the value of the same fact (moved from Tokyo to Osaka; port 5432 is now 5433). Give "winner": "newer" (or "older" if the older one is the current fact).
- "conflict": they contradict each other and a person must choose.
- "leave": anything else: different things, a condition or scope added, or you are not sure.
Answer with one JSON object and nothing else:
{"decision": "merge" | "supersede" | "conflict" | "leave", "merged_text": "..." (merge only), "winner": "newer" | "older" (supersede only)}"""

SYNTHESIS_SYSTEM = """You read observations that a software project's assistant wrote down on different occasions (different days or sessions), and decide whether together they show a pattern: a habit, a way of working or a preference that holds across them.
- "synthesize": the observations independently support one pattern that none of them states alone. Give "text": the pattern in one sentence, general enough to hold for every observation. It must not restate one observation, and must not add a fact that no observation supports.
- "leave": anything else: related facts that show no habit, one event told several times, a pattern that only some of them show, or you are not sure.
Answer with one JSON object and nothing else:
{"decision": "synthesize" | "leave", "text": "..." (synthesize only)}"""

_ASKED = {
    "merge": "They look like the same fact.",
    "supersede": "The newer one may replace the older one's value.",
    "conflict": "One of them may deny the other.",
}


class AnswerRefused(Exception):
    """The model's answer is not a valid answer to the candidate (one line: why)."""


def messages_for(candidate: Candidate, dates: Mapping[str, str] | None = None) -> list[dict[str, str]]:
    """The chat messages that put `candidate` to a language model; `dates` (by id, as
    ``YYYY-MM-DD``) dates a group's observations."""
    if candidate.question == "synthesize":
        return _group_messages(candidate, dates or {})
    older, newer = candidate.texts
    user = (
        f"Type of memory: {candidate.type}\n"
        f"Older memory: {json.dumps(older, ensure_ascii=False)}\n"
        f"Newer memory: {json.dumps(newer, ensure_ascii=False)}\n"
        f"{_ASKED.get(candidate.question, '')} Answer with the JSON object only."
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def _group_messages(candidate: Candidate, dates: Mapping[str, str]) -> list[dict[str, str]]:
    """A synthesis group: its observations numbered, oldest first, each with its date."""
    from ..dream.synthesis import MAX_PATTERN_CHARS

    lines = [f"Type of memory: {candidate.type}", f"{len(candidate.ids)} observations, oldest first:"]
    for number, (memory_id, text) in enumerate(zip(candidate.ids, candidate.texts), start=1):
        when = dates.get(memory_id, "date unknown")
        lines.append(f"{number}. ({when}) {json.dumps(text, ensure_ascii=False)}")
    lines.append(
        "Do they independently show one pattern? If so, state it in one sentence (at most "
        f"{MAX_PATTERN_CHARS} characters) that is none of the observations again; else leave. "
        "Answer with the JSON object only."
    )
    return [{"role": "system", "content": SYNTHESIS_SYSTEM}, {"role": "user", "content": "\n".join(lines)}]


def read_answer(text: object, candidate: Candidate) -> Candidate:
    """`candidate` with the answer in `text` (see the module docstring), or `AnswerRefused`."""
    answer = _json_object(text)
    unknown = sorted(set(answer) - set(ANSWER_KEYS) - set(IGNORED_KEYS))
    if unknown:
        raise AnswerRefused(f"the answer has unknown key {unknown[0]!r}")
    keys = {key: answer[key] for key in ANSWER_KEYS if answer.get(key) is not None}
    allowed = decisions_for(candidate)
    if keys.get("decision") not in allowed:
        raise AnswerRefused(f"the answer's decision must be one of {', '.join(allowed)}")
    if "winner" in keys:
        keys["winner"] = _winner(keys["winner"], candidate)
    return _checked(candidate, keys)


def decisions_for(candidate: Candidate) -> tuple[str, ...]:
    """What a judge may answer to `candidate`: a group only synthesizes or is left; a pair
    never synthesizes."""
    if candidate.question == "synthesize":
        return ("synthesize", "leave")
    return tuple(decision for decision in DECISIONS if decision != "synthesize")


def _json_object(text: object) -> dict[str, Any]:
    if not isinstance(text, str):
        raise AnswerRefused(f"the model answered {type(text).__name__}, not text")
    if len(text) > MAX_ANSWER_CHARS:
        raise AnswerRefused(f"the answer is longer than {MAX_ANSWER_CHARS:,} characters")
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    try:
        answer = json.loads(body, parse_constant=_no_constant)
    except (json.JSONDecodeError, RecursionError, ValueError):
        raise AnswerRefused("the answer is not one JSON object") from None
    if not isinstance(answer, dict):
        raise AnswerRefused("the answer is not one JSON object")
    return answer


def _no_constant(name: str) -> None:
    raise ValueError(name)


def _winner(value: object, candidate: Candidate) -> object:
    """ "older" / "newer" as the id they name; anything else as given (checked next)."""
    if isinstance(value, str):
        named = {"older": candidate.ids[0], "newer": candidate.ids[1]}.get(value.strip().lower())
        if named is not None:
            return named
    return value


def _checked(candidate: Candidate, answer: dict[str, Any]) -> Candidate:
    """The answer through the same pydantic check as an agent's answer in a plan file."""
    from pydantic import ValidationError

    from ..dream.plan_checks import CandidateItem, describe

    asked = {
        "ids": list(candidate.ids),
        "type": candidate.type,
        "texts": list(candidate.texts),
        "similarity": candidate.similarity,
        "question": candidate.question,
    }
    try:
        item = CandidateItem.model_validate({**asked, **answer})
    except ValidationError as exc:
        line = describe(exc.errors(include_url=False)[0]).removeprefix("plan:").strip()
        raise AnswerRefused(f"answer refused: {line}") from None
    return item.candidate()
