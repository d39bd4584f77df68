"""Dream's merge rule (docs/dream.md, "Step 3: analyse"), within one type group.

Two memories are **mergeable** by their words when `relation.word_merge.mergeable` says so
(rules 1–4 there).

Candidates never come from comparing all pairs: rules 2–4 make (non-weak words,
literals, polarity, qualifiers) an exact blocking key, and `candidates.similar_pairs`
(prefix filtering) applies the 0.6 threshold inside each block; both steps are complete,
so no mergeable pair is missed. Memories with the same words, polarity, qualifiers and
literals form one *node*; mergeable nodes are joined into connected components. A
component becomes one merge only where every member is mergeable with every other
member *and* with the group's union of words (what the draft holds); otherwise it is
split greedily, best source first, and members that fit no group are left alone.
`similarity` is the lowest pairwise Jaccard in the group, rounded to 2 decimals;
`confidence` the highest known source confidence (None when no source has one).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations

from ..language.analysed import AnalysedMemory
from ..language.features import text_features
from ..language.lexicon import WEAK_WORDS
from ..relation.candidates import exceeds, jaccard_value, similar_pairs
from ..relation.word_merge import Rest, rest_key, words_mergeable
from .drafts import draft_text
from .plan import MergeAction

Block = tuple[frozenset[str], Rest]
MAX_VARIANTS = 64


def block_key(sig: frozenset[str], rest: Rest) -> Block:
    """What mergeable memories share exactly: their non-weak words and `rest_key`."""
    return (sig if sig.isdisjoint(WEAK_WORDS) else sig - WEAK_WORDS, rest)  # most have no weak word


@dataclass(frozen=True, slots=True)
class Node:
    """Memories of one type with identical words, polarity, qualifiers and literals. `block` is
    its `block_key` when that block holds other nodes to compare it with (see
    `mergeable_node_pairs`), else None."""

    sig: frozenset[str]
    rest: Rest
    members: tuple[AnalysedMemory, ...]
    block: Block | None


def source_rank(item: AnalysedMemory) -> tuple:
    """Best draft source first: most significant words, then longest text, then newest."""
    return (-len(item.features.sig), -len(item.memory.memory.strip()), item.newest_first_key)


def find_merges(items: Sequence[AnalysedMemory], type_name: str) -> list[MergeAction]:
    """The merges among `items` (one type group, sorted by id); each memory in at most one."""
    actions: list[MergeAction] = []
    for component in merge_components(build_nodes(items)):
        for group in split_component(component):
            action = merge_action(group, type_name)
            if action is not None:
                actions.append(action)
    return actions


def build_nodes(items: Sequence[AnalysedMemory]) -> list[Node]:
    """The nodes of `items` that can take part in a merge, block by block in the order first
    seen: those holding two or more memories, and those with other nodes in their block to be
    compared with. Most memories are neither (a lone text with no variant): no need to look further."""
    blocks: dict[Block, dict[frozenset[str], list[AnalysedMemory]]] = defaultdict(dict)
    for item in items:
        sig = item.features.sig
        if sig:
            blocks[block_key(sig, rest_key(item.features))].setdefault(sig, []).append(item)
    nodes: list[Node] = []
    for block, variants in blocks.items():
        comparable = 1 < len(variants) <= MAX_VARIANTS
        for sig, members in variants.items():
            if comparable or len(members) > 1:
                ranked = tuple(sorted(members, key=source_rank) if len(members) > 1 else members)
                nodes.append(Node(sig, block[1], ranked, block if comparable else None))
    return nodes


def merge_components(nodes: Sequence[Node]) -> list[list[Node]]:
    """Connected components of mergeable nodes holding at least two memories, nodes best first."""
    parent = list(range(len(nodes)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in mergeable_node_pairs(nodes):
        parent[root(a)] = root(b)
    components: dict[int, list[Node]] = defaultdict(list)
    for index, node in enumerate(nodes):
        components[root(index)].append(node)
    return [
        sorted(c, key=lambda n: source_rank(n.members[0]))
        for c in components.values()
        if len(c) > 1 or len(c[0].members) > 1
    ]


def mergeable_node_pairs(nodes: Sequence[Node]) -> Iterator[tuple[int, int]]:
    """Pairs of mergeable nodes, by exact blocking then the prefix-filtering join.

    Rule 2 says the words only one side has are weak, i.e. both have the same non-weak
    words (``core``); with rule 3-4, mergeable nodes share (core, rest) exactly. So nodes are
    blocked by that key (`Node.block`, set by `build_nodes`: a hash lookup, no pair across
    blocks can merge) and within a block, where the sets differ only by weak words,
    `similar_pairs` finds those above 0.6. A block of more than `MAX_VARIANTS` differently
    worded variants is left to identical-text merges only (`block` None: in doubt, no merge;
    and grouping it would cost time cubic in its size).
    """
    blocks: dict[Block, list[int]] = defaultdict(list)
    for index, node in enumerate(nodes):
        if node.block is not None:
            blocks[node.block].append(index)
    for block in blocks.values():
        for i, j in similar_pairs([nodes[index].sig for index in block]):
            yield block[i], block[j]


def split_component(nodes: Sequence[Node]) -> Iterator[list[Node]]:
    """Greedy groups (best node first) in which every pair and the union qualify."""
    remaining = list(nodes)
    while remaining:
        group, left = [remaining[0]], list[Node]()
        for node in remaining[1:]:
            (group if fits(group, node) else left).append(node)
        if sum(len(n.members) for n in group) >= 2:
            yield group
        remaining = left


def fits(group: Sequence[Node], node: Node) -> bool:
    if not all(words_mergeable(member.sig, node.sig) for member in group):
        return False
    union = node.sig.union(*(member.sig for member in group))
    return all(exceeds(member.sig, union) for member in (*group, node))


def merge_action(group: Sequence[Node], type_name: str) -> MergeAction | None:
    members = sorted((m for node in group for m in node.members), key=source_rank)
    union = frozenset().union(*(node.sig for node in group))
    sources = [m.memory.memory for m in members]
    text = draft_text(sources, union)
    if text is None or (text not in sources and not _draft_keeps_meaning(text, group[0].rest, union)):
        return None
    confidences = [c for c in (m.memory.confidence for m in members) if c is not None]
    return MergeAction(
        ids=tuple(m.id for m in sorted(members, key=lambda m: m.oldest_first_key)),
        type=type_name,
        merged_text=text,
        confidence=max(confidences) if confidences else None,
        similarity=round(_lowest_similarity(group), 2),
    )


def _draft_keeps_meaning(text: str, rest: Rest, union: frozenset[str]) -> bool:
    features = text_features(text)
    return features.sig == union and rest_key(features) == rest


def _lowest_similarity(group: Sequence[Node]) -> float:
    if len(group) == 1:
        return 1.0
    return min(jaccard_value(a.sig, b.sig) for a, b in combinations(group, 2))
