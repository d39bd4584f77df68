"""The write path of `add_memory(infer=true)` (docs/mcp-tools.md, "infer"): the new text is
compared with at most `CANDIDATES` similar active memories of its project and type, and where
dream's rules are certain, an old memory is retired into the new one in the same transaction
as the insert (conditional writes: an old memory that changed meanwhile is left alone).

* **MERGE**: dream's pair rules (`relation.meaning.relation`) say "merge" and the new text holds
  every literal of the old one: the old becomes `merged` into the new, stored as given.
* **SUPERSEDE**: the rules say "conflict" and the new text carries a change marker
  (`language.negation.change_marker`: "now", "switched to" …), or the new text marks a change and
  names what of the old one it left ("Replaced pip-tools with uv", "probe-rs is no longer used":
  `relation.replaced_names.replaced_by_name`): the old becomes `superseded`.
* A conflict without a marker, or anything in doubt, touches nothing (dream surfaces it) —
  unless a language model is configured as judge: then it is asked about the nearest pair
  the rules left undecided (`judges.on_write`; docs/judges.md, "On the write path").

Without an embedder only dream's lexical merge rule applies (`dream.merging.mergeable`):
nothing is superseded on the write path then.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .filters import compile_filters
from .language.analysed import analysed
from .language.features import TextFeatures
from .language.lexicon import EVENT_TYPES
from .language.negation import change_marker
from .language.reading import Readings, literal_values, reading_of
from .language.stored_features import decode_for
from .records import ACTIVE, MERGED, SUPERSEDED, UNKNOWN_TYPE, Memory, takes_part
from .relation.agreement import acknowledgement
from .relation.meaning import CONFLICT_COSINE, LOW_MERGE_COSINE, relation
from .relation.replaced_names import NAMED_COSINE, replaced_by_name
from .relation.word_merge import mergeable
from .store import ReadMode, Store

if TYPE_CHECKING:
    import numpy as np

    from .judges.asking import JudgeSource
    from .semantic import Semantic
    from .store.base import Writer

CANDIDATES = 10
FLOOR = min(LOW_MERGE_COSINE, CONFLICT_COSINE)  # `relation` says None below it
EVENTS = {MERGED: "MERGE", SUPERSEDED: "SUPERSEDE"}
CRASH_ENV = "MEM0_WRITE_PATH_CRASH"  # tests: kill the process inside the write, before it commits


@dataclass(frozen=True)
class Retirement:
    """An old memory the new one takes the place of: `state` is `merged` or `superseded`."""

    old: Memory
    state: str
    cosine: float | None


@dataclass(frozen=True)
class Comparison:
    """What the new text was compared with, and what to retire."""

    retirements: list[Retirement]
    vector: np.ndarray | None
    model: str | None


def compare(
    store: Store,
    semantic: Semantic | None,
    memory: Memory,
    *,
    background: bool = False,
    judge: JudgeSource | None = None,
) -> Comparison:
    """Read (outside any write) the candidates of `memory` and decide what it retires; when the
    rules decide nothing and there is a `judge`, it is asked about the nearest (`judges.on_write`)."""
    vector, model = _vector(store, semantic, memory, background)
    if not takes_part(memory):  # one dream leaves alone (immutable, pinned, excluded) retires nothing either
        return Comparison([], vector, model)
    newer = analysed(memory)
    candidates = similar(store, memory, vector, model)
    _remember_stored_features(store, memory.user_id, [old for old, _ in candidates])
    retirements = retirements_of(candidates, newer)
    if judge is not None and not retirements and candidates:
        from .judges.on_write import judged_state

        state = judged_state(judge, candidates[0], newer, _readings(), _read_texts())
        if state is not None:
            retirements.append(Retirement(candidates[0][0], state, candidates[0][1]))
    return Comparison(retirements, vector, model)


def _vector(store: Store, semantic: Semantic | None, memory: Memory, background: bool):
    if semantic is None or not semantic.available():
        return None, None
    # the first time in this process: embed what the project's memories lack, as a search does
    semantic.prepare_search(store, memory.user_id, memory.app_id, background=background)
    vectors = semantic.vectors_for(store, memory.user_id, [memory.memory])
    return (None, None) if vectors is None else (vectors[0], semantic.model_id)


def similar(
    store: Store, memory: Memory, vector: np.ndarray | None, model: str | None
) -> list[tuple[Memory, float | None]]:
    """The new memory's nearest `CANDIDATES` active memories of its project and type that dream
    may act on, with their cosines: by stored vectors when the new text has one, else by
    lexical search (no cosine)."""
    conditions: list[dict[str, Any]] = [{"app_id": memory.app_id}]
    if memory.type != UNKNOWN_TYPE:
        conditions.append({"metadata": {"type": memory.type}})
    where = compile_filters({"AND": conditions}, user_id=memory.user_id)
    hits: list[tuple[Memory, float | None]]
    if vector is not None and model is not None:
        hits = list(store.nearest(memory.user_id, vector, model, where, ReadMode.LATEST_ONLY, CANDIDATES))
    else:
        hits = [
            (m, None)
            for m, _ in store.lexical_search(
                memory.user_id, memory.memory, where, ReadMode.LATEST_ONLY, CANDIDATES, app_id=memory.app_id
            )
        ]
    return [(m, cosine) for m, cosine in hits if m.type == memory.type and takes_part(m)]


def retirements_of(candidates: list[tuple[Memory, float | None]], newer) -> list[Retirement]:
    """What the new memory (`newer`, analysed) retires among its candidates: each old memory the
    rules merge into it, and at most one they supersede, the nearest. A new text states one
    change: the farther memories a marked change also reads as replaced hold other subjects'
    values ("The admin UI is served on port 3000" beside "The API server moved to port 8081"),
    which dream still compares."""
    retirements: list[Retirement] = []
    superseded: Retirement | None = None
    for old, cosine in candidates:
        state = decide(old, newer, cosine)
        if state == SUPERSEDED:
            if superseded is None or (cosine or 0.0) > (superseded.cosine or 0.0):
                superseded = Retirement(old, state, cosine)
        elif state is not None:
            retirements.append(Retirement(old, state, cosine))
    return retirements if superseded is None else [*retirements, superseded]


def decide(old: Memory, newer, cosine: float | None) -> str | None:
    """`merged`, `superseded` or None for the old memory beside the new one (`newer`, analysed)."""
    if old.memory.strip() == newer.memory.memory.strip():
        return None  # identical text in another scope (agent, run): two records, as before
    if cosine is not None and cosine < FLOOR:
        return SUPERSEDED if cosine >= NAMED_COSINE and _names_what_it_left(old, newer) else None
    older = analysed(old, _read_texts())
    if cosine is None:
        return MERGED if mergeable(older.features, newer.features) else None
    kind = relation(older, newer, cosine, _readings())
    if kind == "merge" and _holds_all(older, newer):
        # an acknowledgement ("Noted: you prefer tabs") never takes the place of what it restates:
        # dream merges the two later, keeping the statement's own text
        return MERGED if acknowledgement(reading_of(newer, _readings())) is None else None
    if kind == "conflict" and change_marker(newer.memory.memory) is not None:
        return SUPERSEDED
    if kind is None and _names_what_it_left(old, newer):
        return SUPERSEDED
    return None


def _names_what_it_left(old: Memory, newer) -> bool:
    """The new text marks a change and names what of the old one it left ("Replaced pip-tools with
    uv", "probe-rs is no longer used"), however far apart the two are in meaning
    (`relation.replaced_names`)."""
    readings = _readings()
    b = reading_of(newer, readings)
    if newer.type in EVENT_TYPES or not b.marked:
        return False
    return replaced_by_name(reading_of(analysed(old, _read_texts()), readings), b)


_FEATURES: dict[str, TextFeatures] = {}  # texts' features, read once per process (a bounded cache)
FEATURES_KEPT = 4096


def _remember_stored_features(store: Store, user_id: str, memories: list[Memory]) -> None:
    """Put the candidates' stored features (valid for their texts) in the cache, so that
    `decide` need not read their texts again."""
    cache = _read_texts()
    missing = [m for m in memories if m.memory not in cache]
    stored = store.features_of(user_id, [m.id for m in missing])
    for memory in missing:
        features = decode_for(stored.get(memory.id), memory.memory)
        if features is not None:
            cache[memory.memory] = features


def _read_texts() -> dict[str, TextFeatures]:
    if len(_FEATURES) > FEATURES_KEPT:
        _FEATURES.clear()
    return _FEATURES


_READINGS: Readings = {}


def _readings() -> Readings:
    if len(_READINGS) > FEATURES_KEPT:
        _READINGS.clear()
    return _READINGS


def _holds_all(older, newer) -> bool:
    """The new text keeps every literal of the old (it is stored as given: nothing may be lost).
    The readings are those `relation` just made (`_readings`), not read again."""
    readings = _readings()
    return literal_values(reading_of(older, readings)) <= literal_values(reading_of(newer, readings))


def retire(writer: Writer, memory: Memory, comparison: Comparison, actor: str) -> list[dict[str, Any]]:
    """Inside the write that inserted `memory`: retire each old memory still as it was read
    (active, same version), and move the pointers of memories it had replaced onto `memory`
    (so no pointer is left on a retired memory). The events, for the answer."""
    events = []
    for retirement in comparison.retirements:
        current = writer.get(memory.user_id, retirement.old.id)
        if current is None or current.version != retirement.old.version or current.lifecycle_state != ACTIVE:
            continue  # changed, retired or deleted since it was read: left alone
        event = EVENTS[retirement.state]
        writer.change(current, event, actor, lifecycle_state=retirement.state, replacement_memory_id=memory.id)
        for earlier in writer.replaced_by(memory.user_id, memory.app_id, current.id):
            writer.change(earlier, EVENTS[earlier.lifecycle_state], actor, replacement_memory_id=memory.id)
        answer: dict[str, Any] = {
            "id": current.id,
            "memory": current.memory,
            "event": event,
            "replacement_memory_id": memory.id,
        }
        if retirement.cosine is not None:
            answer["similarity"] = round(retirement.cosine, 2)
        events.append(answer)
    if os.environ.get(CRASH_ENV) and events:
        os._exit(137)
    return events


def store_vector(writer: Writer, memory: Memory, comparison: Comparison) -> None:
    """The new memory's vector, already made for the comparison, stored with it."""
    if comparison.vector is not None and comparison.model is not None:
        writer.store_vectors(memory.user_id, comparison.model, [(memory.id, memory.memory, comparison.vector)])
