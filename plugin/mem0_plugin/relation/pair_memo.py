"""Decisions about pairs, remembered from one run to the next (docs/dream.md, "Remembered pairs"). Pure.

Judging the pairs close in meaning (`meaning.relation`, then `meaning.open_question`) is most
of a night's analysis, and from one night to the next almost every pair is the same. The
decision depends only on whether the pair's type records events, on whether the two are each
other's closest, on the two texts (older first) and on their cosine: `key` digests the first
three, and an entry keeps the cosine it was decided at, so it is used only for the very same
cosine (same texts, same model, same stored vectors). A memo is a cache: with or without it,
the decisions, and so the plan, are the same.

What the memo knows comes from the caller (read from a file by `pair_file`); `decide` looks a
pair up there, else decides it, and keeps every decision of this run in `used`, which is what
the caller writes back: the pairs of the last run, no more.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

Decision = tuple[str | None, str | None]  # (relation, question): what `relations.judged_pairs` keeps
Entry = tuple[float, str | None, str | None]  # (cosine, relation, question)

DIGEST_BYTES = 10  # per text: 80 bits, no collision in any store's lifetime


KEY_BYTES = 1 + 2 * DIGEST_BYTES


def text_digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=DIGEST_BYTES).digest()


def key(event: bool, older_digest: bytes, newer_digest: bytes, nearest: bool = False) -> bytes:
    """A pair's key (`KEY_BYTES`): b"e" for a type of events (`lexicon.EVENT_TYPES`), else b"N"
    for two memories each other's closest (`meaning.relation`'s `nearest`) or b"n", then the
    two digests."""
    return (b"e" if event else b"N" if nearest else b"n") + older_digest + newer_digest


@dataclass
class PairMemo:
    """Decisions known before this run (`known`) and those of this run (`used`)."""

    known: Mapping[bytes, Entry] = field(default_factory=dict)
    used: dict[bytes, Entry] = field(default_factory=dict)
    decided: int = 0  # pairs this run had to decide (not known, or known at another cosine)

    def decide(self, pair_key: bytes, cosine: float, deciding: Callable[[], Decision]) -> Decision:
        entry = self.known.get(pair_key)
        if entry is None or entry[0] != cosine:
            self.decided += 1
            entry = (cosine, *deciding())
        self.used[pair_key] = entry
        return entry[1], entry[2]

    @property
    def changed(self) -> bool:
        """Whether writing `used` back is worth it: a pair was decided, or fewer pairs were used
        than known. A run that judged no pair (no vectors, `MEM0_EMBEDDER=none`) keeps the file."""
        return self.decided > 0 or 0 < len(self.used) < len(self.known)
