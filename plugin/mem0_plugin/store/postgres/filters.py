"""The filter grammar (docs/reads.md, "Filters") compiled for PostgreSQL (docs/stores.md). Pure.

The same conditions as `filters` compiles for SQLite, meaning the same thing on the
PostgreSQL store: `?` marks the parameters (the store turns them into its own), record
columns compare as text, and a metadata field is read from the `meta` column (the metadata
as `jsonb`, NULL when the text is not valid JSON: such a row has no metadata fields, as on
SQLite). A metadata value compares as SQLite's `json_extract` would give it: a JSON number
or boolean as a number (true = 1), a JSON string as text, JSON null as no value; a number
sorts below any text (`mem0_num` and `mem0_text`, functions of the PostgreSQL schema).
"""

from __future__ import annotations

from dataclasses import replace

from ...filters import TRUE, CompiledFilter, _Compiler, _scalar_value

# a metadata field as jsonb (NULL when missing, or when the metadata is not valid JSON)
_FIELD = "(meta -> ?::text)"
_COMPARE = {"eq": "=", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


def _as_text(value: object) -> object:
    """A value compared with a text column, as SQLite's text affinity converts it."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return str(int(value))
    return str(value)


def _text_value(value: object, name: str, op: str) -> object:
    return _as_text(_scalar_value(value, name, op))


def _number(value: object) -> object:
    return int(value) if isinstance(value, bool) else value  # SQLite binds True as 1


class _PostgresCompiler(_Compiler):
    TRUE_SQL = "TRUE"
    FALSE_SQL = "FALSE"
    DIFFERS = "IS DISTINCT FROM"

    def operator(self, column, op: object, arg: object, name: str, convert) -> str:
        if convert is _scalar_value and not isinstance(column, tuple):
            convert = _text_value
        return super().operator(column, op, arg, name, convert)

    def field(self, column: tuple) -> str:
        self.params.append(column[1][3:-1])  # '$."key"' -> key
        return _FIELD

    def null_test(self, column, *, present: bool) -> str:
        if not isinstance(column, tuple):
            return super().null_test(column, present=present)
        test = f"mem0_present({self.field(column)})"
        return f"({test})" if present else f"(NOT {test})"

    def order(self, column: tuple, value: object) -> str:
        """SQL of -1, 0 or 1: the field against `value` as SQLite orders them (NULL: no value)."""
        expr = self.field(column)
        self.params.append(value if isinstance(value, str) else _number(value))
        return f"mem0_order({expr}, ?::text)" if isinstance(value, str) else f"mem0_order({expr}, ?::numeric)"

    def membership(self, column, values: list, *, inside: bool) -> str:
        if not isinstance(column, tuple):
            return super().membership(column, values, inside=inside)
        any_of = "(" + " OR ".join(f"({self.order(column, v)} = 0)" for v in values) + ")"
        return any_of if inside else f"(NOT coalesce({any_of}, FALSE))"

    def compare(self, column, op: str, value: object) -> str:
        if not isinstance(column, tuple):
            return super().compare(column, op, value)
        if op == "ne":
            return f"(NOT coalesce({self.order(column, value)} = 0, FALSE))"
        return f"({self.order(column, value)} {_COMPARE[op]} 0)"

    def contains(self, column, op: str, arg: object, name: str) -> str:
        if not isinstance(column, tuple):
            return super().contains(column, op, arg, name)
        if not isinstance(arg, str) or not arg:
            return super().contains(column, op, arg, name)  # the same error
        expr = self.field(column)
        self.params.append(arg)
        return f"mem0_contains({expr}, ?::text, {'TRUE' if op == 'icontains' else 'FALSE'})"


def postgres_filter(where: CompiledFilter) -> CompiledFilter:
    """`where` compiled for PostgreSQL (`where` was compiled for SQLite by `filters`)."""
    if where is TRUE or where.source is None:
        return replace(where, sql="TRUE") if where.sql == "1" else where
    compiler = _PostgresCompiler(where.user_id)
    sql = compiler.node(where.source, 0)
    return CompiledFilter(sql, tuple(compiler.params), compiler.names_app_id, where.source, where.user_id)
