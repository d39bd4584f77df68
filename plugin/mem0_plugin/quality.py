"""`mem0-health --deep`: the memory quality scan (SPEC §8), a pure function of the memories.

`scan_quality(memories, vocabulary, now, ...)` reads one project's memories and reports:

* **Duplicates** — pairs of one type whose significant words overlap (Jaccard) above 0.6,
  found with dream's own candidate join (`dream.candidates.similar_pairs`), among the
  memories dream may act on (`dream.analysis.takes_part`: active, not immutable, pinned,
  excluded or dream's reminder). Counted in pairs.
* **Stale** — among those same memories: `session_state` / `compact_summary` older than
  90 days, or confidence below 0.3 and older than 30 days (whole days, floored).
* **Low confidence** — active memories with confidence below 0.5; listed, not counted in
  the summary line.
* **Contradictions** — exactly the conflicts `dream.analysis.analyse` proposes.
* **Orphans** — active memories without `metadata.type` or with a type outside the
  vocabulary (`known_types`).
* **Credentials** — memories in any lifecycle state whose text looks like a credential
  (`secrets`); shown masked, listed, not counted in the summary line.

Every memory text shown goes through `secrets.mask` and `sanitize.printable`.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Iterable, Mapping, Sequence

from .dream.analysis import analyse, takes_part
from .dream.candidates import jaccard_value, similar_pairs
from .dream.features import parse_created
from .dream.plan import ConflictAction
from .wording import plural
from .records import ACTIVE, UNKNOWN_TYPE, Memory
from .sanitize import printable
from .secrets import mask, secret_kinds
from .text import significant_words
from .timeutil import parse_timestamp

PLUGIN_TYPES = ("decision", "anti_pattern", "bug_fix", "convention", "task_learning", "user_preference",
                "session_summary", "session_state", "project_profile", "compact_summary", "auto_capture",
                "environmental", "health_check")
# The 17 categories the mem0 coding-agent plugin installs in place of mem0's defaults
# (mem0ai/mem0, integrations/mem0-plugin/scripts/setup_coding_categories.py).
CODING_CATEGORIES = ("architecture_decisions", "anti_patterns", "task_learnings", "tooling_setup", "bug_fixes",
                     "coding_conventions", "user_preferences", "dependency_decisions", "performance_findings",
                     "security_constraints", "testing_patterns", "data_model", "api_contracts",
                     "deployment_runbook", "team_norms", "domain_glossary", "experiment_results")
EPHEMERAL_TYPES = ("session_state", "compact_summary")
EPHEMERAL_DAYS = 90
STALE_CONFIDENCE, STALE_CONFIDENCE_DAYS = 0.3, 30
LOW_CONFIDENCE = 0.5
PREVIEW_CHARS = 60
LIST_LIMIT = 10


def known_types(categories: Iterable[str] = ()) -> frozenset[str]:
    """The orphan vocabulary: the plugin's types, the 17 coding categories, mem0.md's `## Categories`."""
    return frozenset(PLUGIN_TYPES) | frozenset(CODING_CATEGORIES) | frozenset(categories)


@dataclass(frozen=True)
class Duplicate:
    ids: tuple[str, str]
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
        return {"duplicates": len(self.duplicates), "stale": len(self.stale),
                "contradictions": len(self.contradictions), "orphans": len(self.orphans)}

    @property
    def clean(self) -> bool:
        """The four summary counts are zero (low confidence and credentials are listed apart)."""
        return not any(self.counts.values())


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    shown = printable(mask(text)).strip()
    return shown if len(shown) <= limit else shown[:limit - 1].rstrip() + "…"


def _age(memory: Memory, now: datetime) -> int | None:
    created = parse_created(memory.created_at)
    return None if created is None else (now - created).days


def find_duplicates(candidates: Sequence[Memory]) -> list[Duplicate]:
    by_type: dict[str, list[Memory]] = defaultdict(list)
    for memory in candidates:
        by_type[memory.type].append(memory)
    found = []
    for type_name in sorted(by_type):
        group = by_type[type_name]
        sets = [significant_words(m.memory) for m in group]
        for i, j in similar_pairs(sets):
            found.append(Duplicate((group[i].id, group[j].id), type_name, round(jaccard_value(sets[i], sets[j]), 2)))
    return found


def _no_type(memory: Memory) -> bool:
    value = memory.metadata.get("type")
    return not (isinstance(value, str) and value.strip())


def stale_reason(memory: Memory, now: datetime) -> Stale | None:
    age = _age(memory, now)
    if age is None:
        return None
    if memory.type in EPHEMERAL_TYPES and age > EPHEMERAL_DAYS:
        return Stale(memory.id, memory.type, age, "retention")
    confidence = memory.confidence
    if confidence is not None and confidence < STALE_CONFIDENCE and age > STALE_CONFIDENCE_DAYS:
        return Stale(memory.id, memory.type, age, "low_confidence", confidence)
    return None


def scan_quality(memories: Sequence[Memory], vocabulary: frozenset[str], now: datetime, *,
                 user_id: str, project_id: str, policy: Mapping[str, int | None] | None = None,
                 policy_source: str = "default") -> QualityReport:
    """The quality report of one project's memories (any lifecycle states) as of `now`."""
    now = parse_timestamp(now, "now")
    active = [m for m in memories if m.lifecycle_state == ACTIVE]
    candidates = [m for m in active if takes_part(m)]
    plan = analyse([m for m in memories if m.lifecycle_state != "merged"], dict(policy or {}), now,
                   user_id=user_id, project_id=project_id, policy_source=policy_source)
    stale = [s for s in (stale_reason(m, now) for m in candidates) if s is not None]
    low = [LowConfidence(m.id, m.type, m.confidence) for m in active
           if m.confidence is not None and m.confidence < LOW_CONFIDENCE]
    orphans = [Orphan(m.id, None if m.type == UNKNOWN_TYPE and _no_type(m) else m.type)
               for m in active if m.type not in vocabulary]
    credentials = [Credential(m.id, tuple(kinds), m.lifecycle_state)
                   for m in memories if (kinds := secret_kinds(m.memory))]
    report = QualityReport(project_id, len(memories), tuple(find_duplicates(candidates)), tuple(stale),
                           tuple(low), plan.conflicts, tuple(orphans), tuple(credentials))
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
    lines = ["## Quality scan", "", f"Scanned {plural(report.scanned, 'memory', 'memories')} of project {printable(report.project_id)}.", ""]
    lines += _section("Duplicates", [
        f"  {_ref(d.ids[0])} ≈ {_ref(d.ids[1])} — {printable(d.type)}, {round(d.similarity * 100)}% overlap: "
        f"{_quoted(report, d.ids[0])} / {_quoted(report, d.ids[1])}" for d in report.duplicates])
    lines += _section("Stale", [_stale_row(report, s) for s in report.stale])
    lines += _section("Low confidence", [
        f"  {_ref(c.id)} — {printable(c.type)}, confidence {c.confidence:g}: {_quoted(report, c.id)}"
        for c in report.low_confidence])
    lines += _section("Contradictions", [
        f"  {_ref(c.ids[0])} vs {_ref(c.ids[1])} — {printable(c.type)}: \"{printable(c.topic)}\""
        for c in report.contradictions])
    lines += _section("Orphans", [_orphan_row(report, o) for o in report.orphans])
    credentials = _section("Credentials", [
        f"  {_ref(c.id)} — {', '.join(c.kinds)}{'' if c.lifecycle_state == ACTIVE else f' ({c.lifecycle_state})'}: "
        f"{_quoted(report, c.id)}" for c in report.credentials])
    if credentials:
        credentials.insert(-1, "  Rotate these credentials, then delete the memories: mem0-forget --ids ID,... --yes "
                               "(the store's history keeps deleted text).")
    return lines + credentials


def render_summary(report: QualityReport) -> list[str]:
    c = report.counts
    return ["## Memory Quality", "",
            f"Duplicates: {c['duplicates']} · Stale: {c['stale']} · Contradictions: {c['contradictions']} "
            f"· Orphans: {c['orphans']}",
            "Memory quality: clean." if report.clean else "Run /mem0:dream to fix."]


def report_to_dict(report: QualityReport) -> dict[str, Any]:
    return {
        "project_id": report.project_id,
        "scanned": report.scanned,
        "counts": {**report.counts, "low_confidence": len(report.low_confidence),
                   "credentials": len(report.credentials)},
        "clean": report.clean,
        "duplicates": [{"ids": list(d.ids), "type": d.type, "similarity": d.similarity} for d in report.duplicates],
        "stale": [{"id": s.id, "type": s.type, "age_days": s.age_days, "reason": s.reason} for s in report.stale],
        "low_confidence": [{"id": c.id, "type": c.type, "confidence": c.confidence} for c in report.low_confidence],
        "contradictions": [{"ids": list(c.ids), "type": c.type, "topic": c.topic} for c in report.contradictions],
        "orphans": [{"id": o.id, "type": o.type} for o in report.orphans],
        "credentials": [{"id": c.id, "kinds": list(c.kinds), "lifecycle_state": c.lifecycle_state}
                        for c in report.credentials],
        "previews": dict(sorted(report.previews.items())),
    }
