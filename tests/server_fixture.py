"""`running_server`: a real `mem0-server` (docs/server.md) on a free loopback port, in a thread
of the test process, over a real SQLite store in `mem0_home`. For the tests of the server and of
anything that talks to it over HTTP (the `mem0://` store through `MemoryClient`).

    with running_server(tmp_path / "home", [{"key": KEY, "users": ["alice"]}]) as base_url:
        client = MemoryClient(api_key=KEY, host=base_url)
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn
import yaml
from mem0_plugin.identity import resolve_identity
from mem0_plugin.web.app import build_app
from mem0_plugin.web.config import read_server_section


def write_config(mem0_home: Path, keys: list[dict[str, Any]], **server: Any) -> None:
    """`server.api_keys` (and any other `server:` setting) in `mem0_home/config.yaml`, the rest kept."""
    path = Path(mem0_home) / "config.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else {}
    data = data or {}
    data["server"] = {"api_keys": keys, **server}
    data.setdefault("embedder", {"provider": "none"})  # lexical unless the config says otherwise
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data), encoding="utf-8")


@contextmanager
def running_server(
    mem0_home: Path, keys: list[dict[str, Any]], *, project_id: str = "default", **server: Any
) -> Iterator[str]:
    """Start `mem0-server`'s app on 127.0.0.1 (a free port) with these API keys (`server.api_keys`
    of config.yaml; `server` adds other settings such as max_body_bytes) over the store
    `mem0_home/memories.sqlite3`; yield its base URL (`http://127.0.0.1:<port>`); stop it after."""
    if not logging.getLogger().handlers:  # before the MCP SDK's INFO-level default for the process
        logging.basicConfig(level=logging.WARNING)
    mem0_home = Path(mem0_home)
    write_config(mem0_home, keys, **server)
    env = {"MEM0_HOME": str(mem0_home), "MEM0_PROJECT_ID": project_id, "MEM0_USER_ID": "nobody"}
    identity = resolve_identity(env=env, cwd=str(mem0_home))
    app = build_app(identity, read_server_section(mem0_home))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # asyncio sets TCP_NODELAY only then
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    server_ = uvicorn.Server(config)
    thread = threading.Thread(target=server_.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server_.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("mem0-server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server_.should_exit = True
        thread.join(timeout=10)
        sock.close()
        app.service.close()
