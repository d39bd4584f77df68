"""The memory as dream analyses it (`AnalysedMemory`): a memory with its text's features
(`features.TextFeatures`) and its parsed creation time, read once."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from ..errors import InvalidInputError
from ..records import Memory
from ..timeutil import parse_timestamp, to_micros
from .features import TextFeatures, text_features


@dataclass(frozen=True, slots=True)
class AnalysedMemory:
    """An eligible memory with its text features, its parsed creation time (None: unparseable),
    and its id and type (`Memory.type`) read once: the rules read them at every step."""

    memory: Memory
    _features: TextFeatures | Callable[[], TextFeatures] = field(compare=False)  # or how to decode them
    created: datetime | None
    id: str
    type: str

    @property
    def features(self) -> TextFeatures:
        """The text's features. A stored column (`stored_features`) is decoded when they are
        first read: most are read while the type groups are analysed, on two processes for a
        large project (docs/dream.md, "On two processes"), so each process decodes its own."""
        features = self._features
        if not isinstance(features, TextFeatures):
            features = features()
            object.__setattr__(self, "_features", features)
        return features

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


def analysed(
    memory: Memory,
    cache: dict[str, TextFeatures] | None = None,
    stored: Mapping[str, Callable[[], TextFeatures]] | None = None,
) -> AnalysedMemory:
    """`memory` with its features and creation time. The features are looked up in `cache` (by
    text), else in `stored` (by text, a function decoding the text's stored features, called
    when they are first read: `AnalysedMemory.features`), else read from the text (and added
    to `cache` when given)."""
    text = memory.memory
    features: TextFeatures | Callable[[], TextFeatures] | None = cache.get(text) if cache is not None else None
    if features is None and stored is not None:
        features = stored.get(text)
    if features is None:
        features = text_features(text)
        if cache is not None:
            cache[text] = features
    return AnalysedMemory(memory, features, parse_created(memory.created_at), memory.id, memory.type)


def parse_created(value: object) -> datetime | None:
    """`created_at` as an aware UTC datetime, or None when missing or unparseable."""
    try:
        return parse_timestamp(value, "created_at")
    except InvalidInputError:
        return None
