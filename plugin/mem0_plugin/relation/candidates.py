"""Every pair of word sets whose Jaccard overlap exceeds a threshold, without comparing all pairs.

The prefix-filtering set-similarity join (Chaudhuri et al. 2006; Bayardo et al. 2007,
"AllPairs"):

* Order every word by global rarity (document frequency within the sets given, then the
  word itself, so the order is deterministic).
* For Jaccard(x, y) ≥ t, the overlap |x ∩ y| is at least ⌈t·|x|⌉ (the union is at least
  as large as x). So if x and y share no word among the first |x| − ⌈t·|x|⌉ + 1 words
  of x *and* the first |y| − ⌈t·|y|⌉ + 1 words of y (both in the rarity order), they
  cannot reach the overlap: their *prefixes* must share a word. Indexing and probing only
  prefixes therefore finds **every** pair above the threshold — no pair is missed — while
  posting lists stay short, because prefixes hold each set's rarest words.
* Size filter: Jaccard ≥ t also needs t·|x| ≤ |y| ≤ |x|/t. Sets are processed smallest
  first, so an indexed y has |y| ≤ |x|; then the overlap is at least 2t/(1+t)·|y| and
  y need only be indexed under its first |y| − ⌈2t/(1+t)·|y|⌉ + 1 words (AllPairs'
  shorter indexing prefix) while x probes with its first |x| − ⌈t·|x|⌉ + 1.

Each candidate is then verified exactly with integer arithmetic (no float rounding at the
boundary: at t = 3/5, a pair at exactly 0.6 is not "above"). This is the primitive dream's
merge rule and `health --deep`'s duplicate scan share (docs/health.md, "--deep").
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from fractions import Fraction

MERGE_THRESHOLD = Fraction(3, 5)


def ceil_times(threshold: Fraction, size: int) -> int:
    """⌈threshold · size⌉, exactly."""
    return -((-threshold.numerator * size) // threshold.denominator)


def prefix_length(size: int, threshold: Fraction) -> int:
    """How many of a set's rarest words must be indexed so no pair at `threshold` is missed."""
    return size - ceil_times(threshold, size) + 1


def exceeds(a: frozenset[str], b: frozenset[str], threshold: Fraction = MERGE_THRESHOLD) -> bool:
    """Jaccard(a, b) > threshold, exactly (two empty sets: False)."""
    inter = len(a & b)
    union = len(a) + len(b) - inter
    return union > 0 and inter * threshold.denominator > threshold.numerator * union


def jaccard_value(a: frozenset[str], b: frozenset[str]) -> float:
    inter = len(a & b)
    union = len(a) + len(b) - inter
    return inter / union if union else 0.0


def similar_pairs(sets: Sequence[frozenset[str]], threshold: Fraction = MERGE_THRESHOLD) -> list[tuple[int, int]]:
    """Every (i, j), i < j, with Jaccard(sets[i], sets[j]) > threshold; sorted. Empty sets never pair."""
    rank = _rarity_ranks(sets)
    index_threshold = 2 * threshold / (1 + threshold)
    postings: dict[str, list[int]] = defaultdict(list)
    pairs: list[tuple[int, int]] = []
    for i in sorted((i for i, s in enumerate(sets) if s), key=lambda i: (len(sets[i]), i)):
        words = sets[i]
        ordered = sorted(words, key=rank.__getitem__)
        for j in _candidates(
            ordered[: prefix_length(len(words), threshold)], postings, sets, ceil_times(threshold, len(words))
        ):
            if exceeds(words, sets[j], threshold):
                pairs.append((min(i, j), max(i, j)))
        for word in ordered[: prefix_length(len(words), index_threshold)]:
            postings[word].append(i)
    pairs.sort()
    return pairs


def _rarity_ranks(sets: Sequence[frozenset[str]]) -> dict[str, int]:
    """Each word's position in the global order: rarest first, ties by the word itself."""
    frequency = Counter(word for words in sets for word in words)
    return {word: rank for rank, word in enumerate(sorted(frequency, key=lambda w: (frequency[w], w)))}


def _candidates(
    prefix: Sequence[str], postings: dict[str, list[int]], sets: Sequence[frozenset[str]], min_size: int
) -> set[int]:
    """Indexed sets sharing a prefix word and large enough to reach the threshold."""
    return {j for word in prefix for j in postings.get(word, ()) if len(sets[j]) >= min_size}
