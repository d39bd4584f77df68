"""The write path's judge (docs/judges.md, "On the write path"): when dream's rules decide
nothing about the new memory and its nearest similar one, yet there is something to ask
(`relation.meaning.open_question`), a configured language model is asked about that one pair,
within its timeout. Its answer is read and checked as every judge's answer
(`judges.answers.read_answer`), and then only what the write path can do without rewriting
anyone's text is done:

* **supersede** with the new memory as winner: the old one becomes `superseded`;
* **merge**, when the new text keeps every literal of the old one (the new text is stored as
  given, so nothing may be lost): the old one becomes `merged` into it;
* anything else (a merge the new text does not cover, a conflict, leave, no answer): nothing;
  dream sees the pair again.

The retirement goes through the same conditional write as the rules' (`write_path.retire`).
Without a judge, this costs a look at the cached configuration per `add_memory` whose rules
decided nothing.
"""

from __future__ import annotations

from ..dream.plan import Candidate
from ..language.analysed import AnalysedMemory, analysed
from ..language.reading import Readings, literal_values, reading_of
from ..records import MERGED, SUPERSEDED, Memory
from ..relation.meaning import open_question
from .asking import JudgeSource


def judged_state(
    source: JudgeSource,
    nearest: tuple[Memory, float | None],
    newer: AnalysedMemory,
    readings: Readings,
    features: dict,
) -> str | None:
    """`merged`, `superseded` or None for the nearest old memory, as the judge answers."""
    old, cosine = nearest
    if cosine is None or old.memory.strip() == newer.memory.memory.strip():
        return None
    judge = source.get()  # the configuration is read once, the first time it is needed
    if judge is None:
        return None
    older = analysed(old, features)
    question = open_question(older, newer, cosine, readings)
    if question is None:
        return None
    candidate = Candidate(
        ids=(old.id, newer.id),
        type=newer.type,
        texts=(old.memory, newer.memory.memory),
        similarity=round(min(max(cosine, 0.0), 1.0), 2),
        question=question,
    )
    answer = judge.answer(candidate)
    if answer is None:
        return None
    if answer.decision == "supersede" and answer.winner == newer.id:
        return SUPERSEDED
    if answer.decision == "merge" and literal_values(reading_of(older, readings)) <= literal_values(
        reading_of(newer, readings)
    ):
        return MERGED
    return None
