"""The MCP server's stand-in while the plugin's environment is being installed (docs/mcp-tools.md,
"The first start").

An agent gives an MCP server a fixed time to answer `initialize` (Claude Code: 30 s,
`MCP_TIMEOUT`); a first install takes longer. So on a first start `launch.py mem0-mcp-server`
answers on the server's behalf, from `mcp_manifest.json` (the real server's `initialize`
result and tool list, which a test keeps equal to what the server answers):

* `initialize`: at once, with the protocol version the server would choose (the client's when
  the server knows it, else the server's latest); the lists of tools, prompts and resources,
  and `ping`: at once;
* every other message, in order, waits until the install is done. Then the real server starts,
  is sent the client's `initialize` (with the version agreed) and the waiting messages, and
  from there on this process only passes lines both ways. A tool call made meanwhile is
  answered once the server runs (an agent waits far longer for a tool than for the start);
* an install that fails: each waiting or later request is answered with an error naming the
  install's log, until the client closes the connection.

Standard library only, like the launcher. The messages are JSON-RPC, one per line.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

MANIFEST_NAME = "mcp_manifest.json"
REPLAY_ID = "mem0-launcher-initialize"  # the id of the `initialize` replayed to the real server


def read_manifest(folder: Path) -> dict | None:
    """The manifest next to the launcher, or None when it is missing or unreadable."""
    try:
        manifest = json.loads((folder / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    keys = ("protocolVersions", "initialize", "lists")
    return manifest if isinstance(manifest, dict) and all(key in manifest for key in keys) else None


class StandIn:
    """Answers the client until the install is done, then hands it over to the real server."""

    def __init__(self, manifest: dict, server_argv: list, log_path: Path, out=None):
        self.manifest = manifest
        self.server_argv = server_argv
        self.log_path = log_path
        self.out = out if out is not None else sys.stdout.buffer
        self.lock = threading.Lock()  # the state below, and writes to `out`
        self.waiting: list = []  # the client's lines not answered here, in order
        self.initialize: dict | None = None  # the client's initialize request
        self.agreed = ""  # the protocol version answered to it
        self.installed: bool | None = None  # None: still installing
        self.closed = False  # the client has left: no server is started any more
        self.server: subprocess.Popen | None = None

    # -- the client's side ---------------------------------------------------------------

    def serve(self, lines) -> int:
        """Read the client's lines until it closes the connection; the real server's exit code
        (0 when it never started)."""
        for line in lines:
            self.receive(line)
        with self.lock:
            self.closed = True
            server = self.server
        if server is None:
            return 0  # the install goes on without us (it runs in a session of its own)
        try:
            server.stdin.close()
        except OSError:
            pass
        return server.wait()

    def receive(self, line: bytes) -> None:
        with self.lock:
            if self.server is not None:
                self._to_server(line)
                return
            message = _message(line)
            method = message.get("method") if message else None
            if method == "initialize" and "id" in message and self.initialize is None:
                self.initialize = message
                self._answer(message["id"], self._initialize_result(message))
                self._hand_over_if_ready()
            elif method in self.manifest["lists"] and "id" in message:
                self._answer(message["id"], self.manifest["lists"][method])
            elif method == "ping" and "id" in message:
                self._answer(message["id"], {})
            elif self.installed is False:
                self._refuse(message)
            else:
                self.waiting.append(line)

    def _initialize_result(self, request: dict) -> dict:
        params = request.get("params") or {}
        asked = params.get("protocolVersion") if isinstance(params, dict) else None
        known = self.manifest["protocolVersions"]
        self.agreed = asked if asked in known else known[-1]
        return {"protocolVersion": self.agreed, **self.manifest["initialize"]}

    # -- the install's side --------------------------------------------------------------

    def install_done(self, ok: bool) -> None:
        """Called once the install has finished (`ok`: the environment is ready)."""
        with self.lock:
            self.installed = ok
            if ok:
                self._hand_over_if_ready()
            else:
                waiting, self.waiting = self.waiting, []
                for line in waiting:
                    self._refuse(_message(line))

    def _hand_over_if_ready(self) -> None:
        """Start the real server once both the install is done and the client said hello."""
        if not self.installed or self.initialize is None or self.server is not None or self.closed:
            return
        try:
            self.server = subprocess.Popen(self.server_argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        except OSError as exc:
            self.installed = False
            self._log(f"cannot start the server: {exc}")
            return
        params = dict(self.initialize.get("params") or {})
        params["protocolVersion"] = self.agreed
        replay = {"jsonrpc": "2.0", "id": REPLAY_ID, "method": "initialize", "params": params}
        self._to_server(json.dumps(replay).encode("utf-8") + b"\n")
        for line in self.server.stdout:  # the server's answer to it is this process's, not the client's
            reply = _message(line)
            if reply is not None and reply.get("id") == REPLAY_ID:
                break
        waiting, self.waiting = self.waiting, []
        for line in waiting:
            self._to_server(line)
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        """The real server's lines to the client, as they come; when the server ends, so does
        this process, with its exit code (the client then sees the connection close)."""
        server = self.server
        assert server is not None
        for line in server.stdout:
            with self.lock:
                self._write(line)
        code = server.wait()
        sys.stderr.flush()
        os._exit(code)

    # -- writing ---------------------------------------------------------------------------

    def _to_server(self, line: bytes) -> None:
        try:
            self.server.stdin.write(line if line.endswith(b"\n") else line + b"\n")
            self.server.stdin.flush()
        except (OSError, ValueError):  # the server is gone: its exit ends the session
            pass

    def _answer(self, request_id, result: dict) -> None:
        self._write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode("utf-8") + b"\n")

    def _refuse(self, message: dict | None) -> None:
        """Answer a request while the environment cannot be installed (a notification: nothing)."""
        if not message or "id" not in message or "method" not in message:
            return
        why = f"the mem0 plugin's environment could not be installed; see {self.log_path}"
        if message["method"] == "tools/call":  # a tool's own error, which the model reads
            self._answer(message["id"], {"content": [{"type": "text", "text": why}], "isError": True})
            return
        error = {"code": -32603, "message": why}
        self._write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}).encode("utf-8") + b"\n")

    def _write(self, data: bytes) -> None:
        try:
            self.out.write(data)
            self.out.flush()
        except (OSError, ValueError):  # the client is gone
            pass

    def _log(self, message: str) -> None:
        print(f"[mem0-plugin] {message}", file=sys.stderr, flush=True)


def _message(line: bytes) -> dict | None:
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def run(manifest: dict, server_argv: list, installer: subprocess.Popen, ready, log_path: Path) -> int:
    """Serve as the stand-in on standard input and output until the client leaves; `installer`
    is the install under way, `ready()` says whether it left a usable environment."""
    stand_in = StandIn(manifest, server_argv, log_path)

    def wait_for_install() -> None:
        code = installer.wait()
        ok = code == 0 and ready()
        if not ok:
            stand_in._log(f"the install failed (exit {code}); full log: {log_path}")
        stand_in.install_done(ok)

    def stop(signum, frame) -> None:  # the agent stops the server: stop the real one too
        server = stand_in.server
        if server is not None and server.poll() is None:
            server.terminate()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    threading.Thread(target=wait_for_install, daemon=True).start()
    return stand_in.serve(iter(sys.stdin.buffer.readline, b""))
