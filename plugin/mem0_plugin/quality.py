"""`mem0-health --deep`: the memory quality scan (docs/health.md, "--deep"), a pure function of the memories.

`scan_quality(memories, vocabulary, now, ...)` reads one project's memories and reports.
Its scope is what the Store line counts and what dream fetches: the project's active and
superseded memories (`scanned`). Duplicates, stale memories and contradictions are not a
second opinion: they are dream's own plan for those memories (`dream.analysis.analyse`,
with the same policy and, when given, the same vectors), so `--deep` finds exactly what
`mem0-dream --plan` would propose (docs/health.md):

* **Duplicates** — the plan's merges (a group of memories dream folds into one), counted
  in merges as dream's `Proposed:` line counts them.
* **Stale** — the plan's prunes: past the type's retention (mem0.md's `## Retention`, else
  `session_state` / `compact_summary` after 90 days), or confidence below 0.3 with
  nothing specific to the project in the text.
* **Contradictions** — the plan's conflicts, and its supersedes (a contradiction whose newer
  side marks the change), shown as conflicts with the newer memory as A.
* **Low confidence** — active memories with confidence below 0.5; listed, not counted in
  the summary line.
* **Orphans** — active memories without `metadata.type` or with a type outside the
  vocabulary (`known_types`).
* **Credentials** — memories in any lifecycle state whose text looks like a credential
  (`secrets`); shown masked, listed, not counted in the summary line.

Every memory text shown goes through `secrets.mask` and `sanitize.printable`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from .dream.analysis import Vectors, analyse
from .dream.plan import REASON_RETENTION, ConflictAction, Plan
from .dream.retention import DEFAULT_POLICY
from .records import ACTIVE, SUPERSEDED, UNKNOWN_TYPE, Memory
from .relation.topics import conflict_topic
from .sanitize import printable
from .secrets import mask, secret_kinds
from .timeutil import parse_timestamp
from .wording import plural

PLUGIN_TYPES = (
    "decision",
    "anti_pattern",
    "bug_fix",
    "convention",
    "task_learning",
    "user_preference",
    "session_summary",
    "session_state",
    "project_profile",
    "compact_summary",
    "auto_capture",
    "environmental",
    "health_check",
)
# The 17 categories the mem0 coding-agent plugin installs in place of mem0's defaults
# (mem0ai/mem0, integrations/mem0-plugin/scripts/setup_coding_categories.py).
CODING_CATEGORIES = (
    "architecture_decisions",
    "anti_patterns",
    "task_learnings",
    "tooling_setup",
    "bug_fixes",
    "coding_conventions",
    "user_preferences",
    "dependency_decisions",
    "performance_findings",
    "security_constraints",
    "testing_patterns",
    "data_model",
    "api_contracts",
    "deployment_runbook",
    "team_norms",
    "domain_glossary",
    "experiment_results",
)
IN_SCOPE_STATES = (ACTIVE, SUPERSEDED)  # what the Store line counts and dream fetches
LOW_CONFIDENCE = 0.5
PREVIEW_CHARS = 60
LIST_LIMIT = 10
FIX_WITH_DREAM = "Run /mem0:dream (or mem0-dream in a terminal) to fix."


def known_types(categories: Iterable[str] = ()) -> frozenset[str]:
    """The orphan vocabulary: the plugin's types, the 17 coding categories, mem0.md's `## Categories`."""
    return frozenset(PLUGIN_TYPES) | frozenset(CODING_CATEGORIES) | frozenset(categories)


@dataclass(frozen=True)
class Duplicate:
    ids: tuple[str, ...]  # a merge of the plan: oldest first
    type: str
    similarity: float


@dataclass(frozen=True)
class Stale:
    id: str
    type: str
    age_days: int
    reason: str  # "retention" (an ephemeral type) | "low_confidence"
    confidence: float | None = None


@dataclass(frozen=True)
class LowConfidence:
    id: str
    type: str
    confidence: float


@dataclass(frozen=True)
class Orphan:
    id: str
    type: str | None  # None: no metadata.type at all


@dataclass(frozen=True)
class Credential:
    id: str
    kinds: tuple[str, ...]
    lifecycle_state: str


@dataclass(frozen=True)
class QualityReport:
    project_id: str
    scanned: int
    duplicates: tuple[Duplicate, ...] = ()
    stale: tuple[Stale, ...] = ()
    low_confidence: tuple[LowConfidence, ...] = ()
    contradictions: tuple[ConflictAction, ...] = ()
    orphans: tuple[Orphan, ...] = ()
    credentials: tuple[Credential, ...] = ()
    previews: Mapping[str, str] = field(default_factory=dict)  # id → masked, printable, truncated text

    @property
    def counts(self) -> dict[str, int]:
        return {
            "duplicates": len(self.duplicates),
            "stale": len(self.stale),
            "contradictions": len(self.contradictions),
            "orphans": len(self.orphans),
        }

    @property
    def clean(self) -> bool:
        """The four summary counts are zero (low confidence and credentials are listed apart)."""
        return not any(self.counts.values())


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    shown = printable(mask(text)).strip()
    return shown if len(shown) <= limit else shown[: limit - 1].rstrip() + "…"


def _no_type(memory: Memory) -> bool:
    value = memory.metadata.get("type")
    return not (isinstance(value, str) and value.strip())


def duplicates_of(plan: Plan) -> list[Duplicate]:
    return [Duplicate(m.ids, m.type, m.similarity) for m in plan.merges]


def stale_of(plan: Plan, by_id: Mapping[str, Memory]) -> list[Stale]:
    return [
        Stale(p.id, p.type, p.age_days, p.reason, None if p.reason == REASON_RETENTION else by_id[p.id].confidence)
        for p in plan.prunes
    ]


def contradictions_of(plan: Plan, by_id: Mapping[str, Memory]) -> list[ConflictAction]:
    """The plan's conflicts and its supersedes (as conflicts, the newer memory as A), by (type, ids)."""
    found = list(plan.conflicts)
    for supersede in plan.supersedes:
        new, old = by_id[supersede.new], by_id[supersede.old]
        found.append(
            ConflictAction(
                ids=(new.id, old.id),
                type=new.type,
                topic=conflict_topic(new.memory, old.memory) or new.type,
                likely_winner=new.id,
                texts=(new.memory, old.memory),
            )
        )
    return sorted(found, key=lambda c: (c.type, c.ids))


def scan_quality(
    memories: Sequence[Memory],
    vocabulary: frozenset[str],
    now: datetime,
    *,
    user_id: str,
    project_id: str,
    policy: Mapping[str, int | None] | None = None,
    policy_source: str = "default",
    vectors: Vectors | None = None,
) -> QualityReport:
    """The quality report of one project's memories (any lifecycle states) as of `now`: dream's
    plan for those of them in scope (`policy`: the built-in default when None; `vectors`: each
    memory's embedding by id, as dream would use them), plus what dream does not act on."""
    now = parse_timestamp(now, "now")
    in_scope = [m for m in memories if m.lifecycle_state in IN_SCOPE_STATES]
    active = [m for m in in_scope if m.lifecycle_state == ACTIVE]
    plan = analyse(
        in_scope,
        dict(DEFAULT_POLICY if policy is None else policy),
        now,
        user_id=user_id,
        project_id=project_id,
        policy_source=policy_source,
        vectors=vectors,
    )
    low = [
        LowConfidence(m.id, m.type, m.confidence)
        for m in active
        if m.confidence is not None and m.confidence < LOW_CONFIDENCE
    ]
    orphans = [
        Orphan(m.id, None if m.type == UNKNOWN_TYPE and _no_type(m) else m.type)
        for m in active
        if m.type not in vocabulary
    ]
    credentials = [
        Credential(m.id, tuple(kinds), m.lifecycle_state) for m in memories if (kinds := secret_kinds(m.memory))
    ]
    report = QualityReport(
        project_id,
        len(in_scope),
        tuple(duplicates_of(plan)),
        tuple(stale_of(plan, {m.id: m for m in in_scope})),
        tuple(low),
        tuple(contradictions_of(plan, {m.id: m for m in in_scope})),
        tuple(orphans),
        tuple(credentials),
    )
    named = _named_ids(report)
    previews = {m.id: preview(m.memory) for m in memories if m.id in named}
    return replace(report, previews=previews)


def _named_ids(report: QualityReport) -> set[str]:
    ids = {i for d in report.duplicates for i in d.ids} | {i for c in report.contradictions for i in c.ids}
    for items in (report.stale, report.low_confidence, report.orphans, report.credentials):
        ids |= {item.id for item in items}
    return ids


# ---------------------------------------------------------------- rendering


def _ref(memory_id: str) -> str:
    return f"[mem0:{memory_id}]"


def _quoted(report: QualityReport, memory_id: str) -> str:
    return f'"{report.previews.get(memory_id, "")}"'


def _section(title: str, rows: list[str]) -> list[str]:
    if not rows:
        return []
    shown = rows[:LIST_LIMIT]
    more = [f"  … and {len(rows) - LIST_LIMIT} more"] if len(rows) > LIST_LIMIT else []
    return [f"{title} ({len(rows)}):", *shown, *more, ""]


def _stale_row(report: QualityReport, s: Stale) -> str:
    why = s.type if s.reason == "retention" else f"{s.type}, confidence {s.confidence:g}"
    return f"  {_ref(s.id)} — {printable(why)}, {s.age_days}d old: {_quoted(report, s.id)}"


def _orphan_row(report: QualityReport, o: Orphan) -> str:
    what = "no type" if o.type is None else f'type "{printable(o.type)}" is not a known category'
    return f"  {_ref(o.id)} — {what}: {_quoted(report, o.id)}"


def render_findings(report: QualityReport) -> list[str]:
    """The listings before the summary: one section per kind of finding, empty ones left out."""
    lines = [
        "## Quality scan",
        "",
        f"Scanned {plural(report.scanned, 'memory', 'memories')} of project {printable(report.project_id)}.",
        "",
    ]
    lines += _section(
        "Duplicates",
        [
            f"  {' ≈ '.join(map(_ref, d.ids))} — {printable(d.type)}, {round(d.similarity * 100)}% similar: "
            f"{' / '.join(_quoted(report, i) for i in d.ids)}"
            for d in report.duplicates
        ],
    )
    lines += _section("Stale", [_stale_row(report, s) for s in report.stale])
    lines += _section(
        "Low confidence",
        [
            f"  {_ref(c.id)} — {printable(c.type)}, confidence {c.confidence:g}: {_quoted(report, c.id)}"
            for c in report.low_confidence
        ],
    )
    lines += _section(
        "Contradictions",
        [
            f'  {_ref(c.ids[0])} vs {_ref(c.ids[1])} — {printable(c.type)}: "{printable(c.topic)}"'
            for c in report.contradictions
        ],
    )
    lines += _section("Orphans", [_orphan_row(report, o) for o in report.orphans])
    credentials = _section(
        "Credentials",
        [
            f"  {_ref(c.id)} — {', '.join(c.kinds)}{'' if c.lifecycle_state == ACTIVE else f' ({c.lifecycle_state})'}: "
            f"{_quoted(report, c.id)}"
            for c in report.credentials
        ],
    )
    if credentials:
        credentials.insert(
            -1,
            "  Rotate these credentials, then erase the memories and their history: "
            "mem0-forget --ids ID,... --purge --yes (a plain delete keeps the text in the store's history).",
        )
    return lines + credentials


def render_summary(report: QualityReport) -> list[str]:
    c = report.counts
    return [
        "## Memory Quality",
        "",
        f"Duplicates: {c['duplicates']} · Stale: {c['stale']} · Contradictions: {c['contradictions']} "
        f"· Orphans: {c['orphans']}",
        "Memory quality: clean." if report.clean else FIX_WITH_DREAM,
    ]


def report_to_dict(report: QualityReport) -> dict[str, Any]:
    return {
        "project_id": report.project_id,
        "scanned": report.scanned,
        "counts": {
            **report.counts,
            "low_confidence": len(report.low_confidence),
            "credentials": len(report.credentials),
        },
        "clean": report.clean,
        "duplicates": [{"ids": list(d.ids), "type": d.type, "similarity": d.similarity} for d in report.duplicates],
        "stale": [{"id": s.id, "type": s.type, "age_days": s.age_days, "reason": s.reason} for s in report.stale],
        "low_confidence": [{"id": c.id, "type": c.type, "confidence": c.confidence} for c in report.low_confidence],
        "contradictions": [{"ids": list(c.ids), "type": c.type, "topic": c.topic} for c in report.contradictions],
        "orphans": [{"id": o.id, "type": o.type} for o in report.orphans],
        "credentials": [
            {"id": c.id, "kinds": list(c.kinds), "lifecycle_state": c.lifecycle_state} for c in report.credentials
        ],
        "previews": dict(sorted(report.previews.items())),
    }
