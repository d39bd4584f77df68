"""A memory's `TextFeatures` as one text column, so dream need not re-read every text each run.

Reading a text's features (`features.text_features`) is most of dream's analysis at 100,000
memories; decoding them from this form is several times cheaper. The store computes the
column whenever a memory's text is written (`encode_for`), and dream decodes it
(`decode_for`) instead of reading the text again. It is a cache: a missing, malformed,
outdated or foreign value decodes to None and the features are read from the text, so the
plan is the same either way.

Format: fields joined by U+001E, words inside a field joined by U+001F::

    f<FEATURES_VERSION> · crc32 of the text · negated ("1" or "") · sig · qualifiers ·
    literals · names · values ("=" when equal to literals) · frame

The CRC ties the value to the text it was read from: a text changed by another tool
without the column is noticed. `FEATURES_VERSION` must be bumped whenever the rules of
`features.text_features` (or the word lists they use) change, so no store keeps serving
features read by older rules; tests/test_stored_features.py pins a digest of a corpus's
features to catch a forgotten bump. Pure functions.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterator, Sequence
from typing import TypeGuard

from .features import TextFeatures, text_features

FEATURES_VERSION = 3  # 2: Chinese and Japanese read as character bigrams (text.words); 3: placeholders in paths, paths run up to Chinese text
_TAG = f"f{FEATURES_VERSION}"
_FIELD = "\x1e"
_WORD = "\x1f"
_SAME_AS_LITERALS = "="
_EMPTY: frozenset[str] = frozenset()
PARALLEL_FROM = 5_000  # texts: below this a second process costs more than it saves


def text_checksum(text: str) -> str:
    return format(zlib.crc32(text.encode("utf-8", "surrogatepass")), "x")


def encode(features: TextFeatures, text: str) -> str | None:
    """The column value of `features` read from `text`; None when a word holds a separator
    (a literal may be any text) and so cannot be stored: such a text is simply read each run."""
    sets = (features.sig, features.qualifiers, features.literals, features.names)
    words = [word for group in (*sets, features.values, features.frame) for word in group]
    if any(_FIELD in word or _WORD in word for word in words):
        return None
    values = _SAME_AS_LITERALS if features.values == features.literals else _joined(features.values)
    fields = [
        _TAG,
        text_checksum(text),
        "1" if features.negated else "",
        *map(_joined, sets),
        values,
        _joined(features.frame),
    ]
    return _FIELD.join(fields)


def encode_for(text: str) -> str | None:
    """The column value for a memory whose text is `text` (what the store writes)."""
    return encode(text_features(text), text)


def encode_all(texts: Sequence[str]) -> Iterator[str | None]:
    """`encode_for` of each text, in order. A large batch (an import) is read by a second
    process while the caller writes what it gets, so the encoding costs no time on a machine
    with a spare core; where no process can be started, the texts are read here."""
    if len(texts) < PARALLEL_FROM or (os.cpu_count() or 1) < 2:
        return map(encode_for, texts)
    import multiprocessing  # here: every command imports this module, few read a large batch

    try:
        pool = multiprocessing.get_context("fork").Pool(1)  # started now, before the caller's transaction
    except (OSError, ValueError):
        return map(encode_for, texts)
    return _encoded_by(pool, texts)


def _encoded_by(pool, texts: Sequence[str]) -> Iterator[str | None]:
    with pool:  # ended when the caller stops reading (done, or an error)
        yield from pool.imap(encode_for, texts, chunksize=256)


def decode_for(value: object, text: str) -> TextFeatures | None:
    """The features stored in `value` if they are valid for `text` under the current rules."""
    return decode(value) if is_valid_for(value, text) else None


def is_valid_for(value: object, text: str) -> TypeGuard[str]:
    """Whether `value` holds features stored for `text` under the current rules (cheap: the
    decoding itself, `decode`, can wait until they are read)."""
    if not isinstance(value, str) or not value.startswith(_TAG + _FIELD):
        return False
    fields = value.split(_FIELD, 3)
    return len(fields) == 4 and fields[1] == text_checksum(text) and fields[2] in ("", "1") and value.count(_FIELD) == 8


def decode(value: str) -> TextFeatures:
    """The features of a value `is_valid_for` accepted."""
    _, _, negated, sig, qualifiers, literals, names, values, frame = value.split(_FIELD)
    literal_set = _split(literals)
    return TextFeatures(
        sig=_split(sig),
        negated=negated == "1",
        qualifiers=_split(qualifiers),
        literals=literal_set,
        names=_split(names),
        values=literal_set if values == _SAME_AS_LITERALS else _split(values),
        frame=_split(frame),
    )


def _joined(words: frozenset[str]) -> str:
    return _WORD.join(sorted(words))


def _split(field: str) -> frozenset[str]:
    return frozenset(field.split(_WORD)) if field else _EMPTY
