"""Field-by-field validation of a decoded plan file: every failure is a one-line `PlanError`.

`PlanReader` wraps one JSON object and the path that leads to it (``plan``,
``merges[2]``) so each message names the exact field: ``plan: merges[2].similarity must
be a number from 0 to 1``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ..errors import InvalidInputError, PlanError
from ..records import MAX_TEXT_CHARS
from ..timeutil import parse_timestamp
from .retention import is_retention_value

TOP_LEVEL_KEYS = frozenset({"version", "user_id", "project_id", "generated_at", "policy", "policy_source",
                            "memory_count", "merges", "conflicts", "prunes", "fingerprints"})
SUPPORTED_VERSION = 1


def _fail(path: str, problem: str) -> PlanError:
    return PlanError(f"plan: {path} {problem}")


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass(frozen=True)
class PlanReader:
    data: Mapping[str, Any]
    path: str

    @classmethod
    def top(cls, data: Any) -> "PlanReader":
        if not isinstance(data, dict):
            raise PlanError(f"plan must be a JSON object, got {_json_type(data)}")
        reader = cls(data, "")
        reader.require_keys(TOP_LEVEL_KEYS)
        return reader

    def field_path(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def require_keys(self, keys: frozenset[str] | set[str], optional: frozenset[str] | set[str] = frozenset()) -> None:
        where = self.path or "the plan"
        missing = sorted(set(keys) - set(self.data))
        if missing:
            raise PlanError(f"plan: {where} is missing {missing[0]!r}")
        unknown = sorted(str(k) for k in set(self.data) - set(keys) - set(optional))
        if unknown:
            raise PlanError(f"plan: {where} has unknown key {unknown[0]!r}")

    def version(self) -> int:
        value = self.data["version"]
        if not isinstance(value, int) or isinstance(value, bool) or value != SUPPORTED_VERSION:
            raise PlanError(f"plan: unsupported version {value!r} (this dream reads version {SUPPORTED_VERSION})")
        return value

    def text(self, key: str) -> str:
        value = self.data[key]
        if not isinstance(value, str) or not value.strip():
            raise _fail(self.field_path(key), "must be a non-empty string")
        return value

    def memory_text(self, key: str) -> str:
        value = self.text(key)
        if "\x00" in value:
            raise _fail(self.field_path(key), "must not contain a NUL character")
        if len(value) > MAX_TEXT_CHARS:
            raise _fail(self.field_path(key), f"is longer than {MAX_TEXT_CHARS:,} characters")
        return value

    def timestamp(self, key: str) -> str:
        value = self.text(key)
        try:
            parse_timestamp(value, key)
        except InvalidInputError:
            raise _fail(self.field_path(key), "must be an ISO-8601 timestamp") from None
        return value

    def choice(self, key: str, options: tuple[str, ...]) -> str:
        value = self.data[key]
        if value not in options or not isinstance(value, str):
            raise _fail(self.field_path(key), f"must be one of {', '.join(options)}")
        return value

    def count(self, key: str) -> int:
        value = self.data[key]
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise _fail(self.field_path(key), "must be a whole number, 0 or more")
        return value

    def fraction(self, key: str, *, optional: bool = False) -> float | None:
        value = self.data[key]
        if value is None and optional:
            return None
        if not _is_number(value) or not 0 <= value <= 1:
            suffix = " or null" if optional else ""
            raise _fail(self.field_path(key), f"must be a number from 0 to 1{suffix}")
        return float(value)

    def ids(self, key: str, *, minimum: int, maximum: int | None = None) -> tuple[str, ...]:
        value = self.data[key]
        size = f"exactly {minimum}" if maximum == minimum else f"at least {minimum}"
        problem = f"must be a list of {size} distinct memory ids"
        if not isinstance(value, list) or not all(isinstance(i, str) and i.strip() for i in value):
            raise _fail(self.field_path(key), problem)
        if len(value) < minimum or (maximum is not None and len(value) > maximum) or len(set(value)) != len(value):
            raise _fail(self.field_path(key), problem)
        return tuple(value)

    def items(self, key: str) -> list["PlanReader"]:
        value = self.data[key]
        if not isinstance(value, list):
            raise _fail(self.field_path(key), "must be a list")
        readers = []
        for index, item in enumerate(value):
            path = f"{self.field_path(key)}[{index}]"
            if not isinstance(item, dict):
                raise _fail(path, f"must be an object, got {_json_type(item)}")
            readers.append(PlanReader(item, path))
        return readers

    def policy(self, key: str) -> dict[str, int | None]:
        value = self._object(key)
        for name, days in value.items():
            if not is_retention_value(days):
                raise _fail(f"{self.field_path(key)}.{name}", "must be a whole number of days or null")
        return dict(value)

    def string_map(self, key: str) -> dict[str, str]:
        value = self._object(key)
        for name, item in value.items():
            if not isinstance(item, str):
                raise _fail(f"{self.field_path(key)}.{name}", "must be a string")
        return dict(value)

    def _object(self, key: str) -> dict[str, Any]:
        value = self.data[key]
        if not isinstance(value, dict):
            raise _fail(self.field_path(key), "must be an object")
        return value


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")
