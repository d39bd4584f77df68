"""What the rules find inside one type group (docs/dream.md, "Step 3: analyse"). Pure.

No action spans two types, so step 3's merges and conflicts are found type by type, each group
on its own, in the precedence of `analysis`: lexical merges, merges by meaning, lexical
conflicts, conflicts by meaning, then conflicts by a replaced value or a left name the newer
text names (`retired_values`, `replaced_names`: pairs too far apart to be compared by meaning). `analyse` runs `type_actions` on every group (in any order,
possibly on two processes: `parallel`) and puts the results together; the rest of step 3
(prunes, candidates, synthesis, supersedes) needs every type at once and stays there.

A result carries no `AnalysedMemory`: the pairs left for a judge are (cosine, older id, newer
id, question), and the pair decisions it made are returned (`used`, `decided`) for the
caller's memo, so a result is cheap to send from another process.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..language.analysed import AnalysedMemory
from ..language.lexicon import EVENT_TYPES
from ..language.reading import Readings
from ..relation.meaning import about_two_things
from ..relation.pair_memo import Entry, PairMemo
from ..relation.replaced_names import named_pairs
from ..relation.retired_values import retired_pairs
from .conflicts import find_conflicts
from .merging import find_merges
from .plan import ConflictAction, MergeAction
from .relations import judged_pairs, meaning_conflicts, meaning_merges

Asked = tuple[float, str, str, str]  # (cosine, older id, newer id, question) of a pair left for a judge


@dataclass
class TypeActions:
    type: str
    merges: list[MergeAction] = field(default_factory=list)
    conflicts: list[ConflictAction] = field(default_factory=list)
    asked: list[Asked] = field(default_factory=list)
    used: dict[bytes, Entry] = field(default_factory=dict)  # the pair decisions made or remembered
    decided: int = 0  # of them, made now


def type_actions(
    type_name: str, items: Sequence[AnalysedMemory], vectors: Mapping, known: Mapping[bytes, Entry]
) -> TypeActions:
    """The merges and conflicts among `items` (one type group, sorted by id, none taken by a
    prune); `known`: the remembered pair decisions (`pair_memo`)."""
    found = TypeActions(type_name, merges=find_merges(items, type_name))
    taken = {memory_id for merge in found.merges for memory_id in merge.ids}
    judged = []
    readings: Readings = {}  # each text read once, for the pairs and for `_confirmed`
    with_vectors = [item for item in items if item.id not in taken and item.id in vectors]
    if len(with_vectors) > 1:
        memo = PairMemo(known=known)
        judged = judged_pairs(with_vectors, vectors, memo, readings)
        found.used, found.decided = memo.used, memo.decided
        found.merges += meaning_merges(judged, type_name, vectors, readings)
        taken |= {memory_id for merge in found.merges for memory_id in merge.ids}
    found.conflicts = find_conflicts([item for item in items if item.id not in taken], type_name)
    if with_vectors and found.conflicts:
        found.conflicts = _confirmed(found.conflicts, items, vectors, readings)
    taken |= {memory_id for conflict in found.conflicts for memory_id in conflict.ids}
    if with_vectors and type_name not in EVENT_TYPES:
        conflicting = [(older, newer) for _, older, newer, kind, _ in judged if kind == "conflict"]
        found.conflicts += meaning_conflicts(conflicting, type_name, taken)
        taken |= {memory_id for conflict in found.conflicts for memory_id in conflict.ids}
        free = [item for item in with_vectors if item.id not in taken]  # (a replaced value named: far apart)
        found.conflicts += meaning_conflicts(retired_pairs(free, vectors, readings), type_name, taken)
        taken |= {memory_id for conflict in found.conflicts for memory_id in conflict.ids}
        free = [item for item in free if item.id not in taken]  # (a replaced name named: far apart)
        found.conflicts += meaning_conflicts(named_pairs(free, vectors, readings), type_name, taken)
    found.asked = [
        (cosine, older.id, newer.id, question)
        for cosine, older, newer, kind, question in judged
        if kind is None and question is not None
    ]
    return found


def _confirmed(
    conflicts: list[ConflictAction], items: Sequence[AnalysedMemory], vectors: Mapping, readings: Readings
) -> list[ConflictAction]:
    """The lexical conflicts, less those between two memories with a vector that the meaning
    rules read as about two things (`meaning.about_two_things`; docs/dream.md, "What the pair
    is"). The lexical value rule pairs one template with two values, and cannot tell
    "MAPS_API_KEY is injected per flavor" from "SEGMENT_WRITE_KEY is injected per flavor", or
    "`conf/model/resnet50.yaml` sets the learning rate to 3e-4" from "`conf/model/vit_b16.yaml`
    … 1e-4"; "Deploy to ECS" / "Deploy to Vercel" stays a conflict."""
    by_id = {item.id: item for item in items}
    kept = []
    for conflict in conflicts:
        if all(i in vectors for i in conflict.ids):
            older, newer = sorted((by_id[i] for i in conflict.ids), key=lambda m: m.oldest_first_key)
            if about_two_things(older, newer, readings):
                continue
        kept.append(conflict)
    return kept
