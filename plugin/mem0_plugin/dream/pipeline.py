"""The six steps of dream as functions with typed inputs and outputs (docs/dream.md, "The six steps").

Steps 1–3 live here (retention, fetch, analyse); the CLI runs steps 4–6 (report,
confirm and apply, summary) because they talk to a person. Only fetch touches the store
(and, for `--auto`, `store_new_features` afterwards).

Fetch also reads the stored features of each text (`stored_features`), in the same
snapshot as the pages, so analysis need not read every text again; texts without valid
stored features are read during analysis, and `--auto` stores those features for the next run.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from ..filters import TRUE
from ..identity import Identity
from ..language.analysed import AnalysedMemory
from ..language.features import TextFeatures
from ..language.stored_features import decode, encode, is_valid_for
from ..mem0_config import load_retention_policies
from ..records import Memory, takes_part
from ..relation.pair_memo import PairMemo
from ..store import ReadMode, Store
from ..store.rows import text_hash
from .analysis import analyse, collector_paused, eligible
from .parallel import on_two_processes, worth_it
from .plan import Plan
from .report import is_reminder_text
from .retention import choose_policy

if TYPE_CHECKING:
    from ..semantic import Semantic

FETCH_PAGE_SIZE = 200

Progress = Callable[[int, int], None]


def step1_retention(cwd: Path) -> tuple[dict, str]:
    """The policy of the project's mem0.md, else the built-in defaults; and which applied."""
    try:
        parsed = load_retention_policies(str(cwd))
    except Exception:  # the parser never raises by design; any surprise means defaults
        parsed = {}
    return choose_policy(parsed)


@dataclass(frozen=True)
class Fetched:
    """Step 2's result: the memories, and the features of their texts read from the store."""

    memories: list[Memory]
    stored_features: dict[str, str]  # by text: its valid stored features column, not decoded yet
    stored_ids: frozenset[str]  # the memories whose stored features are valid

    def decoders(self) -> dict[str, Callable[[], TextFeatures]]:
        """By text, `decode` of its stored column, to call when the features are first read."""
        return {text: partial(decode, value) for text, value in self.stored_features.items()}


@dataclass(frozen=True)
class Prepared:
    """Steps 1–3's result: the plan, and what is needed to store the features analysis read."""

    plan: Plan
    fetched: Fetched = field(repr=False)
    features: dict[str, TextFeatures] = field(repr=False)  # by text: those read now (no valid stored ones)
    new_vectors: int = 0  # vectors embedded for this plan (stored when the caller allowed it)


def step2_fetch(store: Store, identity: Identity, progress: Progress | None = None) -> list[Memory]:
    """Every memory of the user and project, page by page (200) until `next` is null."""
    return fetch_with_features(store, identity, progress).memories


def fetch_with_features(store: Store, identity: Identity, progress: Progress | None = None) -> Fetched:
    """Step 2 (`step2_fetch`), with the stored features of each text valid for it."""
    memories: dict[str, Memory] = {}
    stored: dict[str, str] = {}  # memory id -> its features column
    page_number: int | None = 1
    with store.read_snapshot():  # the pages of one moment: a concurrent delete must not shift a memory out
        while page_number is not None:
            page = store.page(
                identity.user_id,
                TRUE,
                ReadMode.DEFAULT,
                page_number,
                FETCH_PAGE_SIZE,
                app_id=identity.project_id,
                with_features=True,
            )
            for memory, value in zip(page.results, page.features):
                if memories.setdefault(memory.id, memory) is memory and value is not None:
                    stored[memory.id] = value
            if progress:
                progress(len(memories), page.count)
            page_number = page.next
    return _with_features(list(memories.values()), stored)


def _with_features(memories: list[Memory], stored: dict[str, str]) -> Fetched:
    """The stored features column valid for each memory's text (each distinct text checked
    once; decoded only when analysis reads them: `analysed.AnalysedMemory.features`)."""
    valid_value: dict[str, str] = {}  # by text
    stored_ids = set()
    for memory in memories:
        value, text = stored.get(memory.id), memory.memory
        if value is None:
            continue
        if text in valid_value:
            if value == valid_value[text]:
                stored_ids.add(memory.id)
            continue
        if is_valid_for(value, text):
            valid_value[text] = value
            stored_ids.add(memory.id)
    return Fetched(memories, valid_value, frozenset(stored_ids))


def step3_analyse(
    memories: list[Memory],
    policy: dict,
    policy_source: str,
    identity: Identity,
    now: datetime,
    progress: Progress | None = None,
    features: dict[str, TextFeatures] | None = None,
    vectors: dict | None = None,
    weekly_synthesis: bool = False,
    synthesis: bool = True,
    pairs: PairMemo | None = None,
    items: list[AnalysedMemory] | None = None,
) -> Plan:
    """Step 3 (`analysis.analyse`); from `parallel.PARALLEL_FROM` memories on, the type groups
    are analysed on two processes (the same plan). `items`: `analysis.eligible(memories)`,
    when the caller already has it."""
    return analyse(
        memories,
        policy,
        now,
        user_id=identity.user_id,
        project_id=identity.project_id,
        policy_source=policy_source,
        progress=progress,
        features=features,
        vectors=vectors,
        weekly_synthesis=weekly_synthesis,
        synthesis=synthesis,
        pairs=pairs,
        map_types=on_two_processes if worth_it(len(memories)) else None,
        items=items,
    )


def fetch_vectors(
    store: Store,
    memories: list[Memory],
    semantic: Semantic | None,
    *,
    store_new: bool,
    stored: dict | None = None,
) -> tuple[dict, int]:
    """The vectors of the memories that take part: those stored for their text, and the rest
    embedded now (stored when `store_new`: --plan writes nothing). ({}, 0) without a model.
    `stored`: what `stored_vectors` already read for them."""
    model = semantic.model_id if semantic is not None else None
    if semantic is None or model is None or not memories:
        return {}, 0  # (the model itself loads only if something must be embedded)
    user_id = memories[0].user_id
    vectors = stored_vectors(store, memories, semantic) if stored is None else stored
    missing = [m for m in memories if m.id not in vectors and takes_part(m)]
    if missing:
        made = semantic.vectors_for(store, user_id, [m.memory for m in missing])
        if made is None:
            return {}, 0
        vectors.update((m.id, vector) for m, vector in zip(missing, made))
        if store_new and not store.readonly:
            with store.write() as writer:
                writer.store_vectors(user_id, model, [(m.id, m.memory, v) for m, v in zip(missing, made)])
    return vectors, len(missing)


def stored_vectors(store: Store, memories: list[Memory], semantic: Semantic | None) -> dict:
    """The stored vectors of the memories that take part, for the texts read ({} without a model)."""
    if semantic is None or semantic.model_id is None or not memories:
        return {}
    taking_part = [m for m in memories if takes_part(m)]
    hashes = {m.id: text_hash(m.memory) for m in taking_part}  # the vectors of the texts read
    return store.vectors_of(memories[0].user_id, semantic.model_id, [m.id for m in taking_part], hashes)


def embed_written(store: Store, identity: Identity, semantic: Semantic | None, ids: list[str]) -> int:
    """After a run: store the vector of each memory it wrote (`ApplyOutcome.written`: a merge's
    text, a pattern), reused from another memory with the same text where there is one (a
    merge's draft is one of its sources' texts), embedded otherwise, so the next run and the
    next search find the project embedded and need not load the model for it
    (docs/embeddings.md, "Where vectors are made"). Returns how many vectors were stored."""
    if semantic is None or semantic.model_id is None or store.readonly or not ids:
        return 0
    return semantic.backfill(store, identity.user_id, identity.project_id, ids=ids).stored


EARLY_LOAD_LOOK = 1000  # the newest memories looked at before loading the model early


def load_model_if_needed(store: Store, identity: Identity, semantic: Semantic | None) -> None:
    """When one of the project's newest memories (`EARLY_LOAD_LOOK`: what was written since the
    last run) lacks a vector that no other memory's vector can stand in for, start loading the
    model now, so that it loads while the memories are read (`Semantic.load_soon`); otherwise
    nothing loads yet (docs/embeddings.md, "Where vectors are made"). Only the newest are
    looked at: at 100,000 memories a look at all took 0.6 s, at the newest 1,000 6 ms. An
    older memory without a vector (an import of old records) is embedded all the same, the
    model then loading when it is needed."""
    if semantic is None or semantic.model_id is None:
        return
    rows = store.without_vectors(identity.user_id, semantic.model_id, identity.project_id, newest=EARLY_LOAD_LOOK)
    if _must_embed(store, identity.user_id, semantic.model_id, [t for _, t in rows]):
        semantic.load_soon()


def _must_embed(store: Store, user_id: str, model: str, texts: list[str]) -> bool:
    """Whether one of `texts` (of memories lacking a vector) will be embedded: not the reminder
    `--auto` leaves (it takes part in nothing), nor a text another memory has a vector for (a
    merge's draft is one of its sources' texts; `Semantic.vectors_for` reuses that vector). A
    wrong guess costs only time: the model then loads when a vector is first needed."""
    texts = [text for text in texts if not is_reminder_text(text)]
    return bool(texts) and len(store.vectors_by_text(user_id, model, texts)) < len(set(texts))


def make_plan(
    store: Store,
    identity: Identity,
    now: datetime,
    progress: Progress | None = None,
    analysis_progress: Progress | None = None,
    semantic: Semantic | None = None,
    pairs: PairMemo | None = None,
) -> Plan:
    """Steps 1–3, strictly in order. The progress callbacks watch fetch and analysis (a bar)."""
    return prepare_plan(store, identity, now, progress, analysis_progress, semantic, pairs=pairs).plan


def prepare_plan(
    store: Store,
    identity: Identity,
    now: datetime,
    progress: Progress | None = None,
    analysis_progress: Progress | None = None,
    semantic: Semantic | None = None,
    *,
    store_vectors: bool = False,
    weekly_synthesis: bool = False,
    synthesis: bool = True,
    pairs: PairMemo | None = None,
) -> Prepared:
    """`make_plan`, keeping what `store_new_features` needs. With `semantic`, the memories'
    vectors take part (`fetch_vectors`; stored when `store_vectors`). `weekly_synthesis`
    (`--auto`): synthesis candidates only when the last synthesis is a week old or more;
    `synthesis=False` (`--auto` with no judge to write a pattern): none. `pairs`: the pair
    decisions remembered from earlier runs (`pair_file.read_memo`), a cache."""
    policy, source = step1_retention(identity.cwd)
    load_model_if_needed(store, identity, semantic)
    with collector_paused():  # fetch builds a record per memory too
        fetched = fetch_with_features(store, identity, progress)
        features: dict[str, TextFeatures] = {}  # the texts read now (those without valid stored features)
        # the stored vectors are read while the memories are analysed: SQLite lets go of the
        # interpreter lock while it reads (docs/dream.md, "Step 3: analyse"); nothing else
        # touches the store meanwhile
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="mem0-dream-read") as pool:
            reading = pool.submit(stored_vectors, store, fetched.memories, semantic)
            items = eligible(fetched.memories, analysis_progress, features, fetched.decoders())
            stored = reading.result()  # (raises what the read raised)
        vectors, embedded = fetch_vectors(store, fetched.memories, semantic, store_new=store_vectors, stored=stored)
        plan = step3_analyse(
            fetched.memories,
            policy,
            source,
            identity,
            now,
            None,
            features,
            vectors,
            weekly_synthesis,
            synthesis,
            pairs,
            items=items,
        )
    return Prepared(plan, fetched, features, embedded)


def store_new_features(store: Store, prepared: Prepared) -> int:
    """Store the features analysis read of texts that had no valid stored ones (one short
    transaction; a cache, not a change of any memory). Returns how many rows took one."""
    values = []
    for memory in prepared.fetched.memories:
        if memory.id in prepared.fetched.stored_ids:
            continue
        value = prepared.fetched.stored_features.get(memory.memory)  # another memory's, of the same text
        if value is None:
            features = prepared.features.get(memory.memory)
            value = encode(features, memory.memory) if features is not None else None
        if value is not None:
            values.append((memory.id, memory.memory, value))
    if not values:
        return 0
    with store.write() as writer:
        return writer.store_features(prepared.plan.user_id, values)
