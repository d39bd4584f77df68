"""The mem0 filter grammar (docs/reads.md, "Filters") compiled to a parameterized SQL condition.

No key or value ever reaches SQL as text: columns come from a fixed table, metadata
keys travel as JSON-path parameters, values as parameters. Anything outside the
grammar raises `FilterError` with a message naming what was wrong.

A row whose `metadata` column is not valid JSON (SQLite's `json_valid`; another tool
wrote it, our own writes never do) has no metadata fields: every metadata condition
reads it as `{}`. So it never matches one that needs a value (`eq`, `in`, `gt`/`gte`/
`lt`/`lte`, `contains`/`icontains`, `"*"`), and matches the negative ones exactly as a
row without that key does (`ne`, `nin`, `NOT [...]`, `ne "*"`, `eq null`); conditions on
other columns see it as usual. It is never a "malformed JSON" error that would lose the
other results. (Python's reader tolerates a few non-standard forms SQLite refuses, such as
a bare `NaN`: such a row lists its metadata but still matches no metadata condition.)
"""

from __future__ import annotations

import math
import re
import reprlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import FilterError, InvalidInputError, ScopeError
from .jsontext import parse_json_text
from .timeutil import parse_timestamp, to_micros

ENTITY_COLUMNS = {
    "user_id": "user_id",
    "app_id": "app_id",
    "agent_id": "agent_id",
    "run_id": "run_id",
    "id": "id",
    "memory": "memory",
    "lifecycle_state": "lifecycle_state",
}
TIME_COLUMNS = {"created_at": "created_us", "updated_at": "updated_us"}
LOGICAL = ("AND", "OR", "NOT")
OPERATORS = ("in", "nin", "eq", "ne", "gt", "gte", "lt", "lte", "contains", "icontains")
WILDCARD = "*"
MAX_DEPTH = 32
MAX_NODES = 2_000
_COMPARE = {"eq": "=", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
_META_KEY = re.compile(r"^[^\"\\\x00-\x1f]{1,200}$")
# The metadata column as JSON, or NULL when it is not valid JSON (so no field is found).
_METADATA = "CASE WHEN json_valid(metadata) THEN metadata END"


@dataclass(frozen=True)
class CompiledFilter:
    sql: str
    params: tuple[Any, ...]
    names_app_id: bool
    # what was compiled, for a store of another SQL dialect to compile again (`store.postgres.filters`)
    source: Mapping[str, Any] | None = field(default=None, compare=False)
    user_id: str = field(default="", compare=False)


TRUE = CompiledFilter("1", (), False)


def parse_filters(filters: object) -> Mapping[str, Any] | None:
    """Accept a dict, JSON text of one, or None/empty."""
    if filters is None or filters == "" or filters == {}:
        return None
    if isinstance(filters, str):
        filters = parse_json_text(filters, "filters are", FilterError)
    if not isinstance(filters, Mapping):
        raise FilterError(f"filters must be a JSON object, got {type(filters).__name__}")
    return filters


class _Compiler:
    TRUE_SQL = "1"
    FALSE_SQL = "0"
    DIFFERS = "IS NOT"  # differs, NULL counting as a value

    def __init__(self, user_id: str):
        self.user_id = user_id
        self.params: list[Any] = []
        self.nodes = 0
        self.names_app_id = False

    def node(self, node: object, depth: int) -> str:
        self.nodes += 1
        if depth > MAX_DEPTH or self.nodes > MAX_NODES:
            raise FilterError(f"filters are nested deeper than {MAX_DEPTH} or have over {MAX_NODES} conditions")
        if not isinstance(node, Mapping) or not node:
            raise FilterError(f"each filter condition must be a non-empty JSON object, got {_brief(node)}")
        parts = [self.key(key, value, depth) for key, value in node.items()]
        return parts[0] if len(parts) == 1 else "(" + " AND ".join(parts) + ")"

    def key(self, key: object, value: object, depth: int) -> str:
        if key in LOGICAL:
            return self.logical(key, value, depth)
        if key == "metadata":
            return self.metadata(value)
        if key in TIME_COLUMNS:
            return self.condition(TIME_COLUMNS[key], value, key, _time_value)
        if key in ENTITY_COLUMNS:
            if key == "user_id":
                self.check_user(value)
            if key == "app_id":
                self.names_app_id = True
            return self.condition(ENTITY_COLUMNS[key], value, key, _scalar_value)
        if isinstance(key, str) and key.upper() in LOGICAL:
            raise FilterError(f"logical operator {key!r} must be upper case: {key.upper()}")
        known = ", ".join([*LOGICAL, *ENTITY_COLUMNS, *TIME_COLUMNS, "metadata"])
        raise FilterError(f"unknown filter key {_brief(key)}; known keys: {known}")

    def logical(self, op: str, value: object, depth: int) -> str:
        if not isinstance(value, list):
            raise FilterError(f"{op} takes a list of conditions, got {type(value).__name__}")
        if not value:
            if op == "AND":
                return self.TRUE_SQL
            raise FilterError(f"{op} needs at least one condition")
        parts = [self.node(item, depth + 1) for item in value]
        joined = "(" + (" OR " if op == "OR" else " AND ").join(parts) + ")"
        # A comparison with a missing value is unknown (NULL) in SQL: NOT must count it as
        # "condition not met", or records lacking the field would drop out of both sides.
        return f"(NOT coalesce({joined}, {self.FALSE_SQL}))" if op == "NOT" else joined

    def check_user(self, value: object) -> None:
        values = value.values() if isinstance(value, Mapping) else [value]
        for item in values:
            for user in item if isinstance(item, list) else [item]:
                if user not in (self.user_id, WILDCARD):
                    raise ScopeError(
                        f"filters name another user ({_brief(user)}); this server serves user {self.user_id!r} only"
                    )

    def metadata(self, value: object) -> str:
        if not isinstance(value, Mapping) or not value:
            raise FilterError("metadata filter must be a non-empty object of key → condition")
        parts = []
        for key, cond in value.items():
            if not isinstance(key, str) or not _META_KEY.match(key):
                raise FilterError(
                    f"metadata key {_brief(key)} is not allowed (1-200 characters, no quotes, backslashes or control characters)"
                )
            path = f'$."{key}"'
            parts.append(self.condition(("json", path), cond, f"metadata.{key}", _scalar_value))
        return parts[0] if len(parts) == 1 else "(" + " AND ".join(parts) + ")"

    def condition(self, column, cond: object, name: str, convert) -> str:
        if isinstance(cond, Mapping):
            if not cond:
                raise FilterError(f"{name}: empty operator object")
            parts = [self.operator(column, op, arg, name, convert) for op, arg in cond.items()]
            return parts[0] if len(parts) == 1 else "(" + " AND ".join(parts) + ")"
        return self.operator(column, "eq", cond, name, convert)

    def expr(self, column) -> str:
        if isinstance(column, tuple):
            self.params.append(column[1])
            return f"json_extract({_METADATA}, ?)"
        return column

    def operator(self, column, op: object, arg: object, name: str, convert) -> str:
        if op not in OPERATORS:
            raise FilterError(f"{name}: unknown operator {_brief(op)}; operators: {', '.join(OPERATORS)}")
        if arg == WILDCARD and op in ("eq", "ne"):
            return self.null_test(column, present=op == "eq")
        if op in ("in", "nin"):
            if not isinstance(arg, list) or not arg:
                raise FilterError(f"{name}: {op} takes a non-empty list")
            return self.membership(column, [convert(v, name, op) for v in arg], inside=op == "in")
        if op in ("contains", "icontains"):
            if convert is _time_value:
                raise FilterError(f"{name}: {op} does not apply to timestamps; use eq, ne, gt, gte, lt, lte or in")
            return self.contains(column, op, arg, name)
        value = convert(arg, name, op)
        if value is None:
            if op in ("eq", "ne"):
                return self.null_test(column, present=op == "ne")
            raise FilterError(f"{name}: {op} needs a value, got null")
        if op in ("gt", "gte", "lt", "lte") and isinstance(value, bool):
            raise FilterError(f"{name}: {op} needs a number, text or timestamp, got {_brief(arg)}")
        return self.compare(column, op, value)

    def null_test(self, column, *, present: bool) -> str:
        expr = self.expr(column)
        return f"({expr} IS NOT NULL)" if present else f"({expr} IS NULL)"

    def membership(self, column, values: list, *, inside: bool) -> str:
        marks = ", ".join("?" * len(values))
        # each self.expr() call binds its own JSON-path parameter, in SQL text order
        sql = (
            f"({self.expr(column)} IN ({marks}))"
            if inside
            else f"({self.expr(column)} IS NULL OR {self.expr(column)} NOT IN ({marks}))"
        )
        self.params.extend(values)
        return sql

    def compare(self, column, op: str, value: object) -> str:
        expr = self.expr(column)
        self.params.append(value)
        return f"({expr} {self.DIFFERS} ?)" if op == "ne" else f"({expr} {_COMPARE[op]} ?)"

    def contains(self, column, op: str, arg: object, name: str) -> str:
        if not isinstance(arg, str) or not arg:
            raise FilterError(f"{name}: {op} takes a non-empty string")
        if isinstance(column, tuple):
            path = column[1]
            self.params.extend([path, path, arg, path, arg])
            cmp_each = "value = ?" if op == "contains" else "lower(value) = lower(?)"
            cmp_text = (
                f"instr(json_extract({_METADATA}, ?), ?) > 0"
                if op == "contains"
                else f"instr(lower(json_extract({_METADATA}, ?)), lower(?)) > 0"
            )
            return (
                f"(CASE json_type({_METADATA}, ?) WHEN 'array' THEN EXISTS (SELECT 1 FROM "
                f"json_each({_METADATA}, ?) WHERE {cmp_each}) ELSE {cmp_text} END)"
            )
        self.params.append(arg)
        if op == "contains":
            return f"(instr({column}, ?) > 0)"
        return f"(instr(lower({column}), lower(?)) > 0)"


def _brief(value: object) -> str:
    """A short repr of user input for an error message (bounded size and depth)."""
    return reprlib.repr(value)


def _scalar_value(value: object, name: str, op: str):
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, int):
        if not -(2**63) <= value < 2**63:
            raise FilterError(f"{name}: {op} value is out of range (64-bit integers only)")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise FilterError(f"{name}: {op} value must be a finite number")
        return value
    raise FilterError(f"{name}: {op} value must be a string, number, boolean or null, got {type(value).__name__}")


def _time_value(value: object, name: str, op: str):
    if value is None:
        return None
    try:
        return to_micros(parse_timestamp(value, name))
    except InvalidInputError as exc:
        raise FilterError(str(exc)) from None


def compile_filters(filters: object, *, user_id: str) -> CompiledFilter:
    """Compile mem0 filters for a caller confined to `user_id`; None/{} compiles to TRUE."""
    parsed = parse_filters(filters)
    if parsed is None:
        return TRUE
    compiler = _Compiler(user_id)
    sql = compiler.node(parsed, 0)
    return CompiledFilter(sql, tuple(compiler.params), compiler.names_app_id, parsed, user_id)
