"""Shared fixtures: no test touches a real home, and commands run as installed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
# Lexical unless a test asks for the embedder (tests of meaning delete it: see semantic_home in
# test_embeddings.py); set here too so module-scoped fixtures see it before any test's own setup.
os.environ["MEM0_EMBEDDER"] = "none"


@pytest.fixture(autouse=True)
def mem0_home(tmp_path, monkeypatch) -> Path:
    """Point MEM0_HOME (and the dream lock) at a temp dir; fix the identity for every test."""
    home = tmp_path / "mem0home"
    monkeypatch.setenv("MEM0_HOME", str(home))
    monkeypatch.setenv("MEM0_DREAM_LOCK", str(tmp_path / "dream_auto.lock"))
    monkeypatch.setenv("MEM0_USER_ID", "alice")
    monkeypatch.setenv("MEM0_PROJECT_ID", "acme-api")
    # Lexical unless a test asks for the embedder (tests of meaning delete this: semantic_home)
    monkeypatch.setenv("MEM0_EMBEDDER", "none")
    for name in ("MEM0_STORE",):
        monkeypatch.delenv(name, raising=False)
    return home


def command_path(name: str) -> str:
    """The installed console script, next to the running interpreter (else on PATH)."""
    candidate = BIN / name
    if candidate.exists():
        return str(candidate)
    found = shutil.which(name)
    if not found:
        pytest.fail(f"console script {name} is not installed; run pip install -e .")
    return found


@pytest.fixture
def run_cli():
    """Run an installed command as a subprocess: run_cli("mem0-memories", "list", input=...)."""

    def run(name: str, *args: str, input: str | None = None, env: dict | None = None,
            cwd: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
        full_env = {**os.environ, **(env or {})}
        return subprocess.run([command_path(name), *args], input=input, capture_output=True, text=True,
                              env=full_env, cwd=cwd, timeout=timeout)

    return run
