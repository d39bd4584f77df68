"""Dream step 3: analyse the fetched memories and propose a `Plan` (docs/dream.md, "Step 3: analyse"). Pure.

`analyse` reads no clock, does no I/O and writes nothing; the same memories (in any
order), policy and `now` give a byte-identical `plan_to_json`.

Who takes part
    Only memories that are ``active``, not ``immutable``, not ``pinned``, not
    ``exclude_from_dream``, not dream's own reminder (``metadata.source ==
    "mem0-dream-auto"``), and whose text holds no NUL character (no write of ours accepts
    one, and no plan file can carry it). An id that occurs more than once in the input (a
    corrupt fetch) takes part in nothing. Everything is grouped by type (`Memory.type`,
    ``unknown`` when absent); no action ever spans two types.

The rules (each module's docstring has the details)
    * `merging` — mergeable: Jaccard of significant words > 0.6, the words only one side
      has are all weak (generic nouns/verbs adding no condition, scope or value), same
      literals, same polarity, same qualifiers. In doubt, no merge.
    * `conflicts` — opposite polarity on the same words, or the same predicate with
      values that differ both ways (port, version, named tool, place).
    * `supersedes` — a conflict whose newer text alone marks the change ("now", "switched
      to", "no longer" …) is a supersede instead: the newer replaces the older's value.
    * `pruning` — past the type's retention, or confidence < 0.3 with nothing
      project-specific in the text.

Precedence: each memory takes part in at most one action
    1. retention prunes — a memory past its type's retention is stale by policy;
       merging it would give its content a fresh date, and a conflict over it is moot;
    2. merges;
    3. conflicts, among memories in no merge (a duplicate of a conflicting memory is
       merged this run; the conflict is proposed on the next run, against the merge);
    4. low-confidence prunes, among memories in no other action;
    5. last, each conflict whose newer text alone marks the change becomes a supersede.
    With vectors, the pairs close in meaning that no rule decided and no action names become
    ``candidates`` for a judge (`judging`): one per 15 memories taking part (at least one, at
    most 50), most similar first. Then the groups of
    three or more independent observations that may show a pattern (`synthesis`; by words when
    there are no vectors), at most 10, weekly only under `--auto`.

Plan order: merges, conflicts and supersedes by (type, ids of the conflict they came from); prunes by (type, oldest first, id);
ids inside a merge oldest first; a conflict's A is its likely winner. ``fingerprints``
holds ``str(version)`` of every memory an action names; ``memory_count`` counts every
memory given, taking part or not; ``policy`` records the valid entries that applied.

Scale: each type group's merges and conflicts are found on their own (`per_type`), so the
caller may spread the groups over processes (`map_types`, `parallel`). No step compares all pairs. Merge and conflict candidates come from exact hash
keys (plus the prefix-filtering join inside merge blocks); the work is linear in the
number of memories. Reading each text (`features.text_features`) is the largest part,
so the caller may pass the features it already knows (`stored_features`: read from the
store); the plan does not depend on whether it does.
"""

from __future__ import annotations

import gc
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING

from ..language.analysed import AnalysedMemory, analysed
from ..language.features import TextFeatures
from ..records import Memory, takes_part
from ..relation.pair_memo import PairMemo
from ..timeutil import format_timestamp, parse_timestamp
from .judging import candidate_limit, open_candidates
from .per_type import TypeActions, type_actions
from .plan import Candidate, ConflictAction, MergeAction, Plan, PruneAction, SupersedeAction
from .pruning import low_confidence_prune, retention_prune
from .retention import valid_entries
from .supersedes import split_supersedes
from .synthesis import cited_by_syntheses, synthesis_candidates, synthesis_due

if TYPE_CHECKING:
    import numpy as np

Vectors = Mapping[str, "np.ndarray"]  # by memory id; float16 (as stored) or float32 rows, computed with in float32

PROGRESS_EVERY = 1000
Progress = Callable[[int, int], None]


def eligible(
    memories: Iterable[Memory],
    progress: Progress | None = None,
    features: dict[str, TextFeatures] | None = None,
    stored: Mapping[str, Callable[[], TextFeatures]] | None = None,
) -> list[AnalysedMemory]:
    """The memories that take part, analysed, sorted by id; ids seen twice are left out.
    `progress(done, total)`, if given, is told every `PROGRESS_EVERY` memories read (for a bar).
    `features` maps texts to their features, as far as known; the texts read here are added to
    it. Identical texts (the duplicates dream exists for) are read once. `stored`: by text, how
    to decode its stored features (`stored_features`), done only when they are read."""
    memories = list(memories)
    counts = Counter(m.id for m in memories)
    chosen = sorted((m for m in memories if counts[m.id] == 1 and takes_part(m)), key=lambda m: m.id)
    if features is None:
        features = {}
    if progress is None:
        return [analysed(m, features, stored) for m in chosen]
    items = []
    for start in range(0, len(chosen), PROGRESS_EVERY):
        items += [analysed(m, features, stored) for m in chosen[start : start + PROGRESS_EVERY]]
        progress(len(items), len(chosen))
    return items


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while the analysis allocates its ~10 small objects
    per memory: otherwise every few thousand allocations it rescans every object alive
    (the fetched memories included), which doubles the run time at 100,000 memories. Nothing
    the analysis builds is cyclic; the collector's previous state is restored on exit."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@collector_paused()  # the collector pauses for the whole analysis
def analyse(
    memories: Sequence[Memory],
    policy: Mapping[str, int | None],
    now: datetime,
    *,
    user_id: str,
    project_id: str,
    policy_source: str,
    progress: Progress | None = None,
    features: dict[str, TextFeatures] | None = None,
    vectors: Vectors | None = None,
    weekly_synthesis: bool = False,
    synthesis: bool = True,
    pairs: PairMemo | None = None,
    map_types: TypeMap | None = None,
    items: Sequence[AnalysedMemory] | None = None,
) -> Plan:
    """Step 3's proposals for `memories` under `policy` as of `now` (see the module docstring).
    `vectors`: each memory's embedding by id, where known; with them, dream also finds the
    merges and conflicts that only meaning shows (`relations`).
    `progress(done, total)` only watches the reading of the memories (most of the time).
    `features`: the texts' features already known, by text (see `eligible`); a cache only —
    with or without it, the plan is the same. `weekly_synthesis` (`--auto`): look for synthesis
    candidates only when the last synthesis is a week old or more (`synthesis.synthesis_due`).
    `pairs`: decisions about pairs remembered from earlier runs (`pair_memo`), a cache like
    `features`; this run's decisions are added to its `used`. `map_types(work, groups)`: runs
    `work` on each type group and returns the results in order (`parallel.on_two_processes`
    spreads them over two processes); by default, one after the other here. `items`:
    `eligible(memories)` when the caller already read them (`progress` then watches nothing)."""
    vectors = vectors or {}
    now = parse_timestamp(now, "now")
    policy = valid_entries(policy)  # what the plan records is what applied
    items = eligible(memories, progress, features) if items is None else items
    prunes = [p for p in (retention_prune(item, policy, now) for item in items) if p is not None]
    taken = {p.id for p in prunes}
    groups = _by_type(_without(items, taken))
    known = pairs.known if pairs is not None else {}
    found = (map_types or _one_by_one)(partial(_type_actions, vectors=vectors, known=known), groups)
    merges = [merge for actions in found for merge in actions.merges]
    conflicts = [conflict for actions in found for conflict in actions.conflicts]
    taken |= {memory_id for action in (*merges, *conflicts) for memory_id in action.ids}
    if pairs is not None:
        for actions in found:
            pairs.used.update(actions.used)
            pairs.decided += actions.decided
    prunes += [p for p in (low_confidence_prune(item, now) for item in _without(items, taken)) if p is not None]
    taken |= {p.id for p in prunes}
    patterns: list[Candidate] = []
    if synthesis and (not weekly_synthesis or synthesis_due(memories, now)):
        # (first: a pair question about two observations of one habit would hide the habit)
        patterns = synthesis_candidates(items, vectors or None, taken, cited_by_syntheses(memories))
    taken |= {i for c in patterns for i in c.ids}
    candidates = open_candidates(_asked(found, items), taken, candidate_limit(len(items))) + patterns
    conflicts, supersedes = split_supersedes(
        sorted(conflicts, key=lambda c: (c.type, c.ids)), {item.id: item for item in items}
    )
    return Plan(
        user_id=user_id,
        project_id=project_id,
        generated_at=format_timestamp(now),
        policy=policy,
        policy_source=policy_source,
        memory_count=len(memories),
        merges=tuple(sorted(merges, key=lambda m: (m.type, m.ids))),
        conflicts=tuple(conflicts),
        prunes=tuple(sorted(prunes, key=lambda p: (p.type, -p.age_days, p.id))),
        supersedes=tuple(supersedes),
        candidates=tuple(candidates),
        fingerprints=_fingerprints(items, merges, conflicts, prunes, supersedes, candidates),
    )


TypeMap = Callable[[Callable[[tuple[str, list[AnalysedMemory]]], TypeActions], list], list[TypeActions]]


def _by_type(items: Sequence[AnalysedMemory]) -> list[tuple[str, list[AnalysedMemory]]]:
    """(type, its items in their order), types in sorted order."""
    by_type: dict[str, list[AnalysedMemory]] = defaultdict(list)
    for item in items:
        by_type[item.type].append(item)
    return [(type_name, by_type[type_name]) for type_name in sorted(by_type)]


def _type_actions(group: tuple[str, list[AnalysedMemory]], vectors: Vectors, known) -> TypeActions:
    return type_actions(group[0], group[1], vectors, known)


def _one_by_one(work, groups: list) -> list:
    return [work(group) for group in groups]


def _asked(found: Sequence[TypeActions], items: Sequence[AnalysedMemory]) -> dict[str, list]:
    """The pairs each type left for a judge, as `judging.open_candidates` reads them."""
    by_id = {item.id: item for item in items}
    return {
        actions.type: [
            (cosine, by_id[older], by_id[newer], None, question) for cosine, older, newer, question in actions.asked
        ]
        for actions in found
        if actions.asked
    }


def _without(items: Sequence[AnalysedMemory], taken: set[str]) -> list[AnalysedMemory]:
    return [item for item in items if item.id not in taken]


def _fingerprints(
    items: Sequence[AnalysedMemory],
    merges: Sequence[MergeAction],
    conflicts: Sequence[ConflictAction],
    prunes: Sequence[PruneAction],
    supersedes: Sequence[SupersedeAction],
    candidates: Sequence[Candidate],
) -> dict[str, str]:
    named = {i for m in merges for i in m.ids} | {i for c in conflicts for i in c.ids} | {p.id for p in prunes}
    named |= {i for s in supersedes for i in s.ids} | {i for c in candidates for i in c.ids}
    return {item.id: str(item.memory.version) for item in items if item.id in named}
