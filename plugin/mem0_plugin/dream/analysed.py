"""The memory as dream analyses it (`AnalysedMemory`): a memory with its text's features
(`features.TextFeatures`) and its parsed creation time, read once."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ..errors import InvalidInputError
from ..features import TextFeatures, text_features
from ..records import Memory
from ..timeutil import parse_timestamp, to_micros


@dataclass(frozen=True, slots=True)
class AnalysedMemory:
    """An eligible memory with its text features, its parsed creation time (None: unparseable),
    and its id and type (`Memory.type`) read once: the rules read them at every step."""

    memory: Memory
    features: TextFeatures
    created: datetime | None
    id: str
    type: str

    @property
    def newest_first_key(self) -> tuple[int, float, str]:
        """Sort key putting the likely winner first: newer, then more confident, then smaller id."""
        micros = to_micros(self.created) if self.created is not None else -(2**62)
        confidence = self.memory.confidence
        return (-micros, -(confidence if confidence is not None else -1.0), self.id)

    @property
    def oldest_first_key(self) -> tuple[int, str]:
        micros = to_micros(self.created) if self.created is not None else -(2**62)
        return (micros, self.id)


def analysed(memory: Memory, cache: dict[str, TextFeatures] | None = None) -> AnalysedMemory:
    """`memory` with its features (looked up in, and added to, `cache` when given) and creation time."""
    features = cache.get(memory.memory) if cache is not None else None
    if features is None:
        features = text_features(memory.memory)
        if cache is not None:
            cache[memory.memory] = features
    return AnalysedMemory(
        memory=memory, features=features, created=parse_created(memory.created_at), id=memory.id, type=memory.type
    )


def parse_created(value: object) -> datetime | None:
    """`created_at` as an aware UTC datetime, or None when missing or unparseable."""
    try:
        return parse_timestamp(value, "created_at")
    except InvalidInputError:
        return None
