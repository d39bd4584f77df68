"""What holds memories is its owner's alone, whatever the umask (docs/safety.md, "Files"): the
store, its folder and its WAL files, exports, plan files, the hooks' log, and what the launcher
creates under $MEM0_HOME. Each created under umask 022, as a login shell has it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from mem0_plugin.hooks.log import write_line
from mem0_plugin.store import SqliteStore
from test_plugin_files import load_launcher


@pytest.fixture(autouse=True)
def umask_022():
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_store_its_folders_and_its_wal_files_are_private(run_cli, tmp_path, monkeypatch):
    home = tmp_path / "a" / "mem0home"  # neither folder exists yet
    monkeypatch.setenv("MEM0_HOME", str(home))
    assert (
        run_cli("mem0-memories", "add", "The deploy token is ghp_abcdefghijklmnopqrstuvwxyz0123456789").returncode == 0
    )
    assert (mode(tmp_path / "a"), mode(home)) == (0o700, 0o700)
    store = home / "memories.sqlite3"
    assert mode(store) == 0o600
    with SqliteStore(store) as opened:  # while a process has it open, the WAL and its index exist
        opened.count("alice")
        side = [Path(f"{store}{suffix}") for suffix in ("-wal", "-shm")]
        assert [mode(path) for path in side] == [0o600, 0o600]


def test_an_existing_folder_keeps_its_mode(run_cli, tmp_path, monkeypatch):
    home = tmp_path / "shared"
    home.mkdir(mode=0o755)
    monkeypatch.setenv("MEM0_HOME", str(home))
    assert run_cli("mem0-memories", "add", "Use pnpm").returncode == 0
    assert (mode(home), mode(home / "memories.sqlite3")) == (0o755, 0o600)


def test_exports_and_plan_files_are_private(run_cli, tmp_path):
    assert run_cli("mem0-memories", "add", "Use pnpm, not npm").returncode == 0
    assert run_cli("mem0-memories", "export", "-o", str(tmp_path / "backup.jsonl")).returncode == 0
    assert run_cli("mem0-dream", "--plan", "--json", "-o", str(tmp_path / "plan.json")).returncode == 0
    assert (mode(tmp_path / "backup.jsonl"), mode(tmp_path / "plan.json")) == (0o600, 0o600)


def test_the_hooks_log_and_the_launchers_folders_are_private(tmp_path):
    write_line(tmp_path / "home", "test", "a line")
    assert (mode(tmp_path / "home"), mode(tmp_path / "home" / "hooks.log")) == (0o700, 0o600)
    load_launcher().private_dir(tmp_path / "x" / "plugin" / "data")
    assert [mode(tmp_path / "x"), mode(tmp_path / "x" / "plugin"), mode(tmp_path / "x" / "plugin" / "data")] == [
        0o700
    ] * 3
