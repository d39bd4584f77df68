"""Timestamps: UTC ISO-8601 text for records, integer microseconds for ordering."""

from __future__ import annotations

from datetime import datetime, timezone

from .errors import InvalidInputError

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def parse_timestamp(value: object, field: str = "timestamp") -> datetime:
    """Parse ISO-8601 text (a trailing Z allowed; naive means UTC) into an aware UTC datetime."""
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, str) and value.strip():
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            dt = datetime.fromisoformat(text)
        except ValueError:
            raise InvalidInputError(f"{field} is not an ISO-8601 timestamp: {value!r}") from None
    else:
        raise InvalidInputError(f"{field} is not an ISO-8601 timestamp: {value!r}")
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    try:
        return dt.astimezone(timezone.utc)
    except (OverflowError, ValueError):
        raise InvalidInputError(f"{field} is out of range: {value!r}") from None


def format_timestamp(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).isoformat()


def to_micros(dt: datetime) -> int:
    delta = dt - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def normalize_timestamp(value: object, field: str = "timestamp") -> str:
    return format_timestamp(parse_timestamp(value, field))
