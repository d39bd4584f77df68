"""The dream plan (docs/dream.md, "Plan file"): what step 3 proposes and steps 5–6 apply, and its JSON form.

`plan_to_json(plan)` writes the exact shape of docs/dream.md, deterministically: keys
in its order, actions in plan order, ``policy`` and ``fingerprints`` sorted by key,
two-space indentation (agents edit merge texts by hand), ASCII only (non-ASCII text is
``\\uXXXX``-escaped, so the file can be written and printed under any locale), no
trailing newline. ``plan_file.plan_from_json(plan_to_json(p)) == p``: reading a plan file
checks it with the rules (`plan_checks`), which read this module's data, so the reader lives
apart (`plan_file`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

PLAN_VERSION = 1
REASON_RETENTION = "retention"
REASON_LOW_CONFIDENCE = "low_confidence"
PRUNE_REASONS = (REASON_RETENTION, REASON_LOW_CONFIDENCE)
QUESTIONS = ("merge", "supersede", "conflict", "synthesize")  # what a candidate asks its judge
DECISIONS = ("merge", "supersede", "conflict", "synthesize", "leave")  # what a judge may answer


@dataclass(frozen=True)
class MergeAction:
    ids: tuple[str, ...]
    type: str
    merged_text: str
    confidence: float | None
    similarity: float


@dataclass(frozen=True)
class ConflictAction:
    ids: tuple[str, str]  # (A, B): A is the likely winner
    type: str
    topic: str
    likely_winner: str
    texts: tuple[str, str] | None = None  # (A's text, B's text) as fetched; None in older plans


@dataclass(frozen=True)
class SupersedeAction:
    """The newer memory replaces the value of the older one's fact, and says so (docs/dream.md)."""

    old: str
    new: str
    reason: str  # the words of the newer text that mark the change
    text: str | None = None  # the newer text as fetched (for the report); None if the file has none

    @property
    def ids(self) -> tuple[str, str]:
        return (self.old, self.new)


@dataclass(frozen=True)
class SynthesizeAction:
    """A new memory stating the pattern that its sources, independent observations, support
    (docs/dream.md, "Synthesis"); the sources stay active. Only a judge writes `text`."""

    ids: tuple[str, ...]  # the sources, oldest first
    type: str
    text: str
    similarity: float


@dataclass(frozen=True)
class Candidate:
    """What the rules could not decide, put to a judge (the agent running dream; docs/dream.md,
    "Candidates"): a pair (merge, supersede or conflict), or a group of three or more
    independent observations that may show a pattern (question "synthesize"). Its answer is
    `decision` (with `merged_text` for a merge, `winner` for a supersede, `text` for a
    synthesis); None: not answered, which is the same as "leave"."""

    ids: tuple[str, ...]  # a pair: (older, newer); a group: oldest first
    type: str
    texts: tuple[str, ...]  # their texts as fetched, in the order of `ids`
    similarity: float
    question: str  # one of QUESTIONS
    decision: str | None = None  # one of DECISIONS
    merged_text: str | None = None
    winner: str | None = None
    text: str | None = None  # the pattern a judge wrote (decision "synthesize")


@dataclass(frozen=True)
class PruneAction:
    id: str
    type: str
    age_days: int
    reason: str  # "retention" | "low_confidence"
    confidence: float | None = None  # a low-confidence prune's confidence (the report says it)


@dataclass(frozen=True, kw_only=True)
class Plan:
    """Dict fields are copied on construction; treat them as read-only."""

    version: int = PLAN_VERSION
    user_id: str
    project_id: str
    generated_at: str
    policy: dict[str, int | None] = field(default_factory=dict)
    policy_source: str = "default"
    memory_count: int = 0
    merges: tuple[MergeAction, ...] = ()
    conflicts: tuple[ConflictAction, ...] = ()
    prunes: tuple[PruneAction, ...] = ()
    supersedes: tuple[SupersedeAction, ...] = ()
    candidates: tuple[Candidate, ...] = ()  # pairs and groups for a judge: no action until answered
    synthesizes: tuple[SynthesizeAction, ...] = ()  # answered synthesis candidates (docs/dream.md, "Synthesis")
    fingerprints: dict[str, str] = field(default_factory=dict)

    __hash__ = None  # type: ignore[assignment]  # it holds dicts

    def __post_init__(self) -> None:
        object.__setattr__(self, "policy", dict(self.policy))
        object.__setattr__(self, "fingerprints", dict(self.fingerprints))
        for name in ("merges", "conflicts", "prunes", "supersedes", "candidates", "synthesizes"):
            object.__setattr__(self, name, tuple(getattr(self, name)))

    @property
    def is_empty(self) -> bool:
        """No merge, supersede, conflict, prune or synthesis proposed (open candidates propose nothing)."""
        return not (self.merges or self.supersedes or self.conflicts or self.prunes or self.synthesizes)

    @property
    def memory_ids(self) -> tuple[str, ...]:
        """Every memory id an action names, in plan order (merges, conflicts, prunes, supersedes,
        syntheses)."""
        ids: list[str] = [i for merge in self.merges for i in merge.ids]
        ids += [i for conflict in self.conflicts for i in conflict.ids]
        ids += [prune.id for prune in self.prunes]
        ids += [i for supersede in self.supersedes for i in supersede.ids]
        ids += [i for synthesis in self.synthesizes for i in synthesis.ids]
        return tuple(ids)


def plan_to_dict(plan: Plan) -> dict[str, Any]:
    """The JSON object of the plan (docs/dream.md, "Plan file"). ``synthesizes`` is written only
    when the plan has some (an answered synthesis, in the journal): analysis proposes none."""
    shown: dict[str, Any] = {
        "version": plan.version,
        "user_id": plan.user_id,
        "project_id": plan.project_id,
        "generated_at": plan.generated_at,
        "policy": dict(sorted(plan.policy.items())),
        "policy_source": plan.policy_source,
        "memory_count": plan.memory_count,
        "merges": [
            {
                "ids": list(m.ids),
                "type": m.type,
                "merged_text": m.merged_text,
                "confidence": m.confidence,
                "similarity": m.similarity,
            }
            for m in plan.merges
        ],
        "conflicts": [_conflict_dict(c) for c in plan.conflicts],
        "prunes": [_prune_dict(p) for p in plan.prunes],
        "supersedes": [_supersede_dict(s) for s in plan.supersedes],
        "candidates": [_candidate_dict(c) for c in plan.candidates],
    }
    if plan.synthesizes:
        shown["synthesizes"] = [
            {"ids": list(s.ids), "type": s.type, "text": s.text, "similarity": s.similarity} for s in plan.synthesizes
        ]
    shown["fingerprints"] = dict(sorted(plan.fingerprints.items()))
    return shown


def _conflict_dict(conflict: ConflictAction) -> dict[str, Any]:
    shown: dict[str, Any] = {
        "ids": list(conflict.ids),
        "type": conflict.type,
        "topic": conflict.topic,
        "likely_winner": conflict.likely_winner,
    }
    if conflict.texts is not None:
        shown["texts"] = {"A": conflict.texts[0], "B": conflict.texts[1]}
    return shown


def _prune_dict(prune: PruneAction) -> dict[str, Any]:
    shown: dict[str, Any] = {"id": prune.id, "type": prune.type, "age_days": prune.age_days, "reason": prune.reason}
    if prune.confidence is not None:
        shown["confidence"] = prune.confidence
    return shown


def _supersede_dict(supersede: SupersedeAction) -> dict[str, Any]:
    shown: dict[str, Any] = {"old": supersede.old, "new": supersede.new, "reason": supersede.reason}
    if supersede.text is not None:
        shown["text"] = supersede.text
    return shown


def _candidate_dict(candidate: Candidate) -> dict[str, Any]:
    shown: dict[str, Any] = {
        "ids": list(candidate.ids),
        "type": candidate.type,
        "texts": list(candidate.texts),
        "similarity": candidate.similarity,
        "question": candidate.question,
    }
    for key in ("decision", "merged_text", "winner", "text"):  # a judge's answer, once given
        value = getattr(candidate, key)
        if value is not None:
            shown[key] = value
    return shown


def plan_to_json(plan: Plan, *, compact: bool = False) -> str:
    """The plan file's text (indented, SPEC's key order); `compact`: on one line, for the run's
    journal (Python's JSON encoder indents in Python, several times slower than compact; strings
    are quoted the same either way, ASCII only: `forget --purge` finds them)."""
    if compact:
        return json.dumps(plan_to_dict(plan), separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    return json.dumps(plan_to_dict(plan), indent=2, ensure_ascii=True, allow_nan=False)
