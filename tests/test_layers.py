"""The package's layers import downward only: read from the source with `ast`, every import
(lazy and type-checking ones included) checked against the order below, and no circle of
modules importing one another.

    core      errors, records, filters, store_url, identity, ids, wording ..., and language/* (one text)
    relation  relation/* — two texts compared: core only
    locks     locks/* — core only
    store     store/* — core only
    dream     dream/* — never the memory commands (operations, write_path, ...), the hooks, the CLI or the server
    hooks     hooks/* — the memory loop: never the CLI or the servers
    edges     cli/*, server, web/* — nothing imports them (but web, the HTTP server, serves server's tools)
"""

from __future__ import annotations

import ast
import sys
from functools import cache
from pathlib import Path

import mem0_plugin

PACKAGE = Path(mem0_plugin.__file__).parent
CORE = frozenset(
    {
        "errors",
        "language",  # one text: its words, stems, glosses, features and reading
        "jsontext",
        "timeutil",
        "sanitize",
        "secrets",
        "records",
        "filters",
        "store_url",
        "arguments",
        "mem0_config",
        "identity",
        "importer",
        "ids",
        "wording",
        "private_files",  # how the store, the commands and the logs create what they write (no memory logic)
        "mem0_factories",  # how mem0ai is imported (telemetry off), by the embedder, the judge and the hosted store
    }
)
EDGES = frozenset({"cli", "server", "web"})


def _module_name(path: Path) -> tuple[str, ...]:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return parts[:-1] if parts[-1] == "__init__" else parts


def _exists(parts: tuple[str, ...]) -> bool:
    base = PACKAGE.joinpath(*parts) if parts else PACKAGE
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def imports_of(path: Path) -> set[tuple[str, ...]]:
    """The package modules `path` imports, as name parts below `mem0_plugin`."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name[:-1]
    found: set[tuple[str, ...]] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
            elif node.module and node.module.split(".")[0] == "mem0_plugin":
                base = ()
            else:
                continue
            module = tuple((node.module or "").split(".")) if node.module else ()
            if not node.level:
                module = module[1:]
            target = base + module
            submodules = {target + (alias.name,) for alias in node.names if _exists(target + (alias.name,))}
            found |= submodules
            if len(submodules) < len(node.names) or target != name[: len(target)]:
                found.add(target)  # (a package of its own is loaded already: `from . import search`)
        elif isinstance(node, ast.Import):
            found |= {
                tuple(alias.name.split(".")[1:]) for alias in node.names if alias.name.split(".")[0] == "mem0_plugin"
            }
    return {target for target in found if target}


@cache
def edges() -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    """Every (importer, imported) pair of the package, read once per test run."""
    return tuple(
        (_module_name(path), target) for path in sorted(PACKAGE.rglob("*.py")) for target in sorted(imports_of(path))
    )


def _layer(parts: tuple[str, ...]) -> str:
    return parts[0] if parts else ""


def test_the_import_graph_is_read():
    found = set(edges())
    assert (("store", "rows"), ("language", "stored_features")) in found  # relative, two levels
    assert (("cli", "health_cli"), ("health_probes",)) in found  # `from .. import health_probes as probes`
    assert (("store", "sqlite", "store"), ("store", "search")) in found  # `from . import search as lexical`
    assert (("dream", "pipeline"), ("semantic",)) in found  # under TYPE_CHECKING
    assert len(found) > 150


def test_core_modules_import_only_core_modules():
    wrong = [(source, target) for source, target in edges() if _layer(source) in CORE and _layer(target) not in CORE]
    assert wrong == []


def test_relations_and_locks_import_only_core_modules():
    wrong = [
        (source, target)
        for source, target in edges()
        if _layer(source) in ("relation", "locks") and _layer(target) not in CORE | {_layer(source)}
    ]
    assert wrong == []


def test_the_store_imports_only_core_modules():
    wrong = [
        (source, target)
        for source, target in edges()
        if _layer(source) == "store" and _layer(target) not in CORE | {"store"}
    ]
    assert wrong == []


def test_dream_never_imports_the_cli_or_the_server():
    wrong = [(source, target) for source, target in edges() if _layer(source) == "dream" and _layer(target) in EDGES]
    assert wrong == []


MEMORY = frozenset({"operations", "write_path", "forget", "transfer"})


def test_dream_never_imports_the_memory_commands_or_the_hooks():
    wrong = [
        (source, target)
        for source, target in edges()
        if _layer(source) == "dream" and _layer(target) in MEMORY | {"hooks"}
    ]
    assert wrong == []


# what a judge reads of dream: the plan and its candidates, how answers are checked and applied
PLAN_DATA = frozenset({("plan",), ("plan_checks",), ("judging",), ("synthesis",)})


def test_only_the_auto_run_of_dream_asks_the_judges_and_the_write_path_never_reaches_into_dream():
    """The judges read dream's plan data (`PLAN_DATA`) and nothing else of dream; in dream only
    `auto` (which runs one) imports them. The write path takes its rules from relation/ and
    records, its judge from judges/."""
    wrong = [
        (source, target)
        for source, target in edges()
        if (_layer(source) == "dream" and _layer(target) == "judges" and source != ("dream", "auto"))
        or (_layer(source) == "judges" and _layer(target) == "dream" and target[1:] not in PLAN_DATA)
        or (source == ("write_path",) and _layer(target) == "dream")
    ]
    assert wrong == []


def test_the_hooks_never_import_the_cli_or_the_servers():
    wrong = [(source, target) for source, target in edges() if _layer(source) == "hooks" and _layer(target) in EDGES]
    assert wrong == []


def test_nothing_but_the_cli_imports_the_cli_or_the_server():
    wrong = [
        (source, target)
        for source, target in edges()
        if _layer(target) in EDGES
        and _layer(source) != "cli"
        and not (_layer(source) == "web" and _layer(target) in ("server", "web"))
    ]
    assert wrong == []


def circles() -> list[list[str]]:
    """Every set of modules that import one another, directly or through others (Tarjan)."""
    graph: dict[tuple[str, ...], set[tuple[str, ...]]] = {}
    for source, target in edges():
        if source != target:
            graph.setdefault(source, set()).add(target)
    index: dict[tuple[str, ...], int] = {}
    low: dict[tuple[str, ...], int] = {}
    stack: list[tuple[str, ...]] = []
    found: list[list[str]] = []

    def visit(node: tuple[str, ...]) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(".".join(member))
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_modules_import_one_another():
    """No import circle, imports inside functions and under TYPE_CHECKING included."""
    assert circles() == []


def test_a_circle_would_be_found(monkeypatch):
    real = edges()
    assert (("dream", "plan_file"), ("dream", "plan")) in real
    monkeypatch.setattr(sys.modules[__name__], "edges", lambda: (*real, (("dream", "plan"), ("dream", "plan_file"))))
    assert any({"dream.plan", "dream.plan_file"} <= set(circle) for circle in circles())


def test_no_store_inherits_another_databases_store():
    """The SQLite and PostgreSQL stores share `store.sql` and neither is the other's subclass; the
    shared SQL names no SQLite-only syntax but through the store's dialect (index hints, `IS`)."""
    from mem0_plugin.store.postgres.store import PostgresStore, PostgresWriter
    from mem0_plugin.store.sql.dialect import POSTGRES, SQLITE
    from mem0_plugin.store.sqlite.store import SqliteStore
    from mem0_plugin.store.sqlite.writer import SqliteWriter

    assert not issubclass(PostgresStore, SqliteStore) and not issubclass(PostgresWriter, SqliteWriter)
    assert (PostgresStore.dialect, SqliteStore.dialect) == (POSTGRES, SQLITE)
    assert POSTGRES.indexed_by("memories_text_hash") == "" and "INDEXED BY" in SQLITE.indexed_by("x")
    shared = "".join(path.read_text() for path in (PACKAGE / "store" / "sql").glob("*.py") if path.name != "dialect.py")
    assert "INDEXED BY" not in shared and " IS ?" not in shared and "WHERE 1" not in shared
