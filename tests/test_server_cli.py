"""The `mem0-server` command (docs/server.md, "Running it"): what it refuses before serving,
`--new-key`, and the installed script serving the SDK's routes in a process of its own."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import httpx
import pytest
from conftest import command_path
from server_fixture import write_config

KEY = "m0-cli-0123456789abcdef0000"


def test_another_address_without_keys_is_refused(mem0_home, run_cli):
    done = run_cli("mem0-server", "--host", "0.0.0.0", "--port", "0")
    assert done.returncode == 2
    assert "refusing to listen on 0.0.0.0 without API keys" in done.stderr


def test_a_malformed_key_list_is_a_config_error_that_shows_no_key(mem0_home, run_cli):
    write_config(mem0_home, [{"key": "m0-short", "users": ["alice"]}, {"key": KEY, "users": []}])
    done = run_cli("mem0-server", "--port", "0")
    assert done.returncode == 2
    assert "api_keys.0.key" in done.stderr and "api_keys.1.users" in done.stderr
    assert "m0-short" not in done.stderr and KEY not in done.stderr


def test_new_key_prints_a_key_and_its_config_lines(mem0_home, run_cli):
    done = run_cli("mem0-server", "--new-key", "alice")
    assert done.returncode == 0
    key = done.stdout.splitlines()[0]
    assert key.startswith("m0-") and len(key) > 40
    assert f'{{key: "{key}", users: ["alice"]}}' in done.stdout


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.skipif(sys.platform == "win32", reason="signals")
def test_the_installed_script_serves_with_keys_only(mem0_home):
    write_config(mem0_home, [{"key": KEY, "users": ["alice"]}])
    port = free_port()
    process = subprocess.Popen(
        [command_path("mem0-server"), "--port", str(port)],
        env=os.environ.copy(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 20
        while True:
            try:
                answer = httpx.get(f"{url}/v1/ping/")
                break
            except httpx.ConnectError:
                assert process.poll() is None and time.monotonic() < deadline, process.stderr and process.stderr.read()
                time.sleep(0.05)
        assert answer.status_code == 401
        ping = httpx.get(f"{url}/v1/ping/", headers={"Authorization": f"Token {KEY}"})
        assert ping.json() == {
            "status": "ok",
            "org_id": "mem0-server",
            "project_id": "acme-api",
            "user_email": None,
            "user_id": "alice",
        }
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=10)
    assert KEY not in stderr
    assert f"serving sqlite:///{mem0_home}/memories.sqlite3 on http://127.0.0.1:{port}" in stderr
