"""The agent as judge (docs/dream.md, "Candidates"). Pure.

With vectors, dream sees pairs that are close in meaning but that its rules leave alone
(`relations.judged_pairs`: no relation, yet something to ask). `open_candidates` lists the
best of them in the plan, for the agent running dream to answer; `answered_plan` turns each
answer into the action it names, so an answered candidate is applied exactly as a proposed
action is (fingerprints, conditional writes, journal). With no judge, nothing is asked and a
candidate is left alone. Groups are asked about only for a synthesis (`synthesis`): the judge
writes the pattern, which `answered_plan` turns into a `SynthesizeAction`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from ..language.reading import Readings, literal_values, reading
from ..relation.meaning import about_two_things
from ..relation.topics import conflict_topic
from .plan import Candidate, ConflictAction, MergeAction, Plan, SupersedeAction, SynthesizeAction
from .relations import Judged

MAX_CANDIDATES = 50  # the most similar first; an agent is not flooded
MEMORIES_PER_CANDIDATE = 16  # a run asks at most one question per this many memories …
MIN_CANDIDATES = 5  # … or this many, in a small store


def candidate_limit(memories: int) -> int:
    """How many pairs a run of `memories` memories asks a judge about: one per
    `MEMORIES_PER_CANDIDATE`, at least `MIN_CANDIDATES`, at most `MAX_CANDIDATES`."""
    return min(MAX_CANDIDATES, max(MIN_CANDIDATES, -(-memories // MEMORIES_PER_CANDIDATE)))


JUDGED_REASON = "judged"  # a supersede's reason when the judge decided it


# which questions a run asks first: a marked change is nearly always a replacement, a negation on
# one side a contradiction more often than two close texts are one fact (docs/quality.md)
_ASKED_FIRST = {"supersede": 0, "conflict": 1, "merge": 2}


def open_candidates(
    judged: Mapping[str, Sequence[Judged]], taken: set[str], limit: int = MAX_CANDIDATES
) -> list[Candidate]:
    """The pairs the rules left alone with a question to ask, by question (`_ASKED_FIRST`) and
    most similar first, each memory
    in at most one candidate and none in an action (`taken`); at most `limit`
    (`candidate_limit`)."""
    asked = [
        (cosine, older, newer, question, type_name)
        for type_name, pairs in judged.items()
        for cosine, older, newer, kind, question in pairs
        if kind is None and question is not None
    ]
    asked.sort(key=lambda pair: (_ASKED_FIRST[pair[3]], -pair[0], pair[1].id, pair[2].id))
    used = set(taken)
    found: list[Candidate] = []
    readings: Readings = {}
    for cosine, older, newer, question, type_name in asked:
        if len(found) == limit:
            break
        if older.id in used or newer.id in used:
            continue
        if question != "supersede" and about_two_things(older, newer, readings):
            continue  # two things, each with its own value or name: seldom one fact (docs/quality.md, "The judge")
        used.update((older.id, newer.id))
        found.append(
            Candidate(
                ids=(older.id, newer.id),
                type=type_name,
                texts=(older.memory.memory, newer.memory.memory),
                similarity=round(min(max(cosine, 0.0), 1.0), 2),
                question=question,
            )
        )
    return found


def lost_literal(merged_text: str, sources: Iterable[str]) -> str | None:
    """The first literal (number, version, path, URL, identifier …) of a source text that
    `merged_text` does not keep, or None when it keeps them all."""
    kept = literal_values(reading(merged_text))
    lowered = merged_text.lower()
    for text in sources:
        for value in sorted(literal_values(reading(text))):
            if value not in kept and value not in lowered:
                return value
    return None


def answered(candidate: Candidate) -> bool:
    """Whether the judge asked for an action (merge, supersede, conflict or synthesize)."""
    return candidate.decision in ("merge", "supersede", "conflict", "synthesize")


def answered_plan(plan: Plan) -> Plan:
    """The plan with each answered candidate turned into its action (appended after the proposed
    ones of its kind) and no candidate left: the plan that is applied and journaled."""
    merges, supersedes, conflicts = list(plan.merges), list(plan.supersedes), list(plan.conflicts)
    synthesizes = list(plan.synthesizes)
    for candidate in plan.candidates:
        if candidate.decision == "merge":
            merges.append(_merge(candidate))
        elif candidate.decision == "supersede":
            supersedes.append(_supersede(candidate))
        elif candidate.decision == "conflict":
            conflicts.append(_conflict(candidate))
        elif candidate.decision == "synthesize":
            synthesizes.append(_synthesize(candidate))
    return replace(
        plan,
        merges=tuple(merges),
        supersedes=tuple(supersedes),
        conflicts=tuple(conflicts),
        synthesizes=tuple(synthesizes),
        candidates=(),
    )


def _synthesize(candidate: Candidate) -> SynthesizeAction:
    assert candidate.text is not None  # checked when the plan was read
    return SynthesizeAction(
        ids=candidate.ids, type=candidate.type, text=candidate.text, similarity=candidate.similarity
    )


def _merge(candidate: Candidate) -> MergeAction:
    assert candidate.merged_text is not None  # checked when the plan was read
    return MergeAction(
        ids=candidate.ids,  # older first, as a merge's ids
        type=candidate.type,
        merged_text=candidate.merged_text,
        confidence=None,  # the merged memory takes its sources' highest (apply)
        similarity=candidate.similarity,
    )


def _supersede(candidate: Candidate) -> SupersedeAction:
    winner = 0 if candidate.winner == candidate.ids[0] else 1
    return SupersedeAction(
        old=candidate.ids[1 - winner],
        new=candidate.ids[winner],
        reason=JUDGED_REASON,
        text=candidate.texts[winner],
    )


def _conflict(candidate: Candidate) -> ConflictAction:
    (older, newer), (older_text, newer_text) = candidate.ids[:2], candidate.texts[:2]
    return ConflictAction(
        ids=(newer, older),  # the newer is the likely winner (A), as for every conflict
        type=candidate.type,
        topic=conflict_topic(newer_text, older_text) or candidate.type,
        likely_winner=newer,
        texts=(newer_text, older_text),
    )
