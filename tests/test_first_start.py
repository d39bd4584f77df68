"""The MCP server's first start (scripts/launch.py, scripts/mcp_standin.py): while the plugin's
environment is installed, the launcher answers the agent's handshake at once — within the 30 s
Claude Code gives a server to start (`MCP_TIMEOUT`, default 30000 ms in Claude Code 2.1) — and
hands the connection to the real server once it is installed.

The launcher runs as an agent starts it, a process speaking JSON-RPC on its standard input and
output. The install it starts is real too: `launch.py --setup` in a session of its own, which
waits for the install lock this test holds, as it waits for another start installing at the
same time (the SessionStart hook's). The test then finishes that other install — a virtualenv
whose interpreter and commands are this test run's own — and releases the lock.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from mem0_plugin.cli import mcp_manifest
from test_plugin_files import LAUNCHER, ROOT, launch

MANIFEST = ROOT / "scripts" / "mcp_manifest.json"
HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}
CLAUDE_CODE_START_LIMIT = 30.0  # seconds: Claude Code's MCP_TIMEOUT default


def test_the_stand_ins_answers_are_the_servers():
    """The manifest the stand-in answers from is what the server answers now (after changing a
    tool: `python -m mem0_plugin.cli.mcp_manifest > scripts/mcp_manifest.json`)."""
    assert MANIFEST.read_text(encoding="utf-8") == mcp_manifest.render()


class Agent:
    """The launcher as an agent runs it, and the agent's side of the JSON-RPC conversation."""

    def __init__(self, data: Path, env: dict):
        self.proc = subprocess.Popen(
            [sys.executable, str(LAUNCHER), "--data-dir", str(data), "mem0-mcp-server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))

    def send(self, method: str, params: dict | None = None, request_id: int | None = None) -> None:
        message: dict = {"jsonrpc": "2.0", "method": method}
        if request_id is not None:
            message["id"] = request_id
        if params is not None:
            message["params"] = params
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def answer(self, request_id: int, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            message = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            if message.get("id") == request_id:
                return message

    def silent_for(self, seconds: float) -> bool:
        try:
            self.lines.get(timeout=seconds)
        except queue.Empty:
            return True
        return False

    def close(self, timeout: float = 30) -> int:
        self.proc.stdin.close()
        code = self.proc.wait(timeout)
        self.proc.stdout.close()
        self.proc.stderr.close()
        return code


@pytest.fixture
def start(tmp_path, mem0_home):
    env = {key: value for key, value in os.environ.items() if key not in ("CLAUDE_PLUGIN_DATA", "MEM0_PLUGIN_DATA")}
    env.update(MEM0_PLUGIN_USE_PATH="", MEM0_HOME=str(mem0_home), MEM0_PLUGIN_LOCK_TIMEOUT="120")
    agents: list[Agent] = []

    def run(data: Path, **extra: str) -> Agent:
        agents.append(Agent(data, {**env, **extra}))
        return agents[-1]

    yield run
    for agent in agents:
        if agent.proc.poll() is None:
            agent.proc.kill()
            agent.proc.wait()


def installed_as_another_start_would(venv: Path) -> None:
    """What an install running beside the first start leaves: a virtualenv of this release
    (its stamp: version and source fingerprint) with an interpreter and every command."""
    bin_dir = launch.venv_bin(venv)
    bin_dir.mkdir(parents=True)
    here = Path(sys.executable).parent
    (bin_dir / "python").symlink_to(sys.executable)
    for name in launch.COMMANDS:
        (bin_dir / name).symlink_to(here / name)
    stamp = {"version": launch.read_plugin_version(), "fingerprint": launch.source_fingerprint()}
    launch.write_json_atomic(venv / launch.STAMP_NAME, stamp)


def test_the_first_start_answers_at_once_and_hands_over_once_installed(start, tmp_path):
    data = tmp_path / "data"
    lock = launch.InstallLock(data / "install.lock", timeout=10)
    with lock:  # another start is installing: the launcher's own install waits for it
        began = time.monotonic()
        agent = start(data)
        agent.send("initialize", HELLO, 1)
        hello = agent.answer(1, CLAUDE_CODE_START_LIMIT)
        assert time.monotonic() - began < CLAUDE_CODE_START_LIMIT / 3
        assert hello["result"]["protocolVersion"] == "2025-06-18"  # the client's, which the server knows
        assert hello["result"]["serverInfo"]["name"] == "mem0"
        agent.send("notifications/initialized")
        agent.send("tools/list", {}, 2)
        listed = agent.answer(2, 10)["result"]
        assert {tool["name"] for tool in listed["tools"]} >= {"add_memory", "search_memories", "get_memories"}
        agent.send("tools/call", {"name": "add_memory", "arguments": {"text": "Use pnpm, not npm"}}, 3)
        assert agent.silent_for(0.5)  # a tool waits for the server
        installed_as_another_start_would(data / "venv")
    added = agent.answer(3, 60)
    assert not added["result"].get("isError"), added
    assert '"event": "ADD"' in json.dumps(added["result"]).replace('\\"', '"')
    agent.send("tools/list", {}, 4)  # now the real server's answer: the same list
    assert agent.answer(4, 30)["result"]["tools"] == listed["tools"]
    assert agent.close() == 0


def test_an_install_that_fails_is_said_at_each_tool_call(start, tmp_path):
    data = tmp_path / "data"
    agent = start(data, MEM0_PLUGIN_PYTHON=str(tmp_path / "no-python"))  # the install fails at once
    agent.send("initialize", HELLO, 1)
    assert agent.answer(1, CLAUDE_CODE_START_LIMIT)["result"]["serverInfo"]["name"] == "mem0"
    agent.send("tools/call", {"name": "get_memories", "arguments": {}}, 2)
    failed = agent.answer(2, 60)["result"]
    assert failed["isError"] is True
    assert failed["content"][0]["text"] == (
        f"the mem0 plugin's environment could not be installed; see {data / 'install.log'}"
    )
    assert "MEM0_PLUGIN_PYTHON" in (data / "install.log").read_text(encoding="utf-8")
    assert agent.close() == 0
