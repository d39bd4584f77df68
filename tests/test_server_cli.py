"""The `mem0-server` command (docs/server.md, "Running it"): what it refuses before serving,
`--new-key`, and its start-up serving the SDK's routes."""

from __future__ import annotations

import threading
import time

import httpx
from mem0_plugin.cli import server_cli
from mem0_plugin.web.config import read_server_section
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
    assert f"# add to {mem0_home / 'config.yaml'}:\nserver:\n  api_keys:\n" in done.stdout  # the file, resolved
    assert "$MEM0_HOME" not in done.stdout


def test_a_second_new_key_goes_beside_the_first(mem0_home, run_cli):
    """With keys listed, --new-key prints the one line to add under them: a second pasted
    `server:` block would replace the first (below)."""
    mem0_home.mkdir(parents=True)
    first = run_cli("mem0-server", "--new-key", "alice").stdout
    (mem0_home / "config.yaml").write_text(first.split("\n", 2)[2], encoding="utf-8")  # the comment and block
    key, _, comment, line = run_cli("mem0-server", "--new-key", "bob").stdout.splitlines()
    assert comment == f"# add this line under server: api_keys: in {mem0_home / 'config.yaml'} (beside the keys there):"
    with (mem0_home / "config.yaml").open("a", encoding="utf-8") as config:
        config.write(line + "\n")
    section = read_server_section(mem0_home)
    assert [k.users for k in section.api_keys] == [("alice",), ("bob",)]
    assert section.api_keys[1].key == key


def test_two_pasted_server_blocks_are_refused_naming_both_lines(mem0_home, run_cli):
    mem0_home.mkdir(parents=True)
    shown = [run_cli("mem0-server", "--new-key", user).stdout for user in ("alice", "bob")]
    (mem0_home / "config.yaml").write_text("".join(out.split("\n", 2)[2] for out in shown), encoding="utf-8")
    done = run_cli("mem0-server", "--port", "0")
    assert done.returncode == 2
    assert f"{mem0_home / 'config.yaml'}: 'server' is written twice (lines 2 and 6)" in done.stderr
    assert not any(out.split("\n", 1)[0] in done.stderr for out in shown)  # no key is shown


def test_the_command_serves_with_keys_only(mem0_home, capsys):
    """`mem0-server`'s own start-up (`server_cli.prepare`: config, identity, app), run on a thread
    on a free port (the installed script itself is started by test_console_scripts.py)."""
    write_config(mem0_home, [{"key": KEY, "users": ["alice"]}])
    server = server_cli.prepare(server_cli.build_parser().parse_args(["--port", "0"]))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            assert time.monotonic() < deadline and thread.is_alive()
            time.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        url = f"http://127.0.0.1:{port}"
        assert httpx.get(f"{url}/v1/ping/").status_code == 401
        ping = httpx.get(f"{url}/v1/ping/", headers={"Authorization": f"Token {KEY}"})
        assert ping.json() == {
            "status": "ok",
            "org_id": "mem0-server",
            "project_id": "acme-api",
            "user_email": None,
            "user_id": "alice",
        }
    finally:
        server.should_exit = True
        thread.join(timeout=10)
    stderr = capsys.readouterr().err
    assert KEY not in stderr
    assert f"serving sqlite:///{mem0_home}/memories.sqlite3 on http://127.0.0.1:0" in stderr
