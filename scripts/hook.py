#!/usr/bin/env python3
"""The command every agent hook runs (hooks/*.json): hand the client's payload to the recall
service and print its answer (docs/hooks.md).

    python3 <plugin root>/scripts/hook.py CLIENT EVENT [--budget SECONDS] [--no-wait]

CLIENT is claude, codex or cursor; EVENT the hook event as the client names it; the payload is
on standard input. The recall service is a long-lived process of the plugin's own virtualenv
(`mem0-hook --serve`) listening on a Unix socket in `$MEM0_HOME/run/`; when none is running,
this starts one and waits for it, within `--budget` seconds. `--no-wait` (captures) only hands
the payload over: the service, or a background `mem0-hook` when there is none, does the work
after this has exited.

Whatever happens — no virtualenv yet (the first install is still running), a service that
does not answer in time, a broken payload — this exits 0 and prints nothing but the answer;
what went wrong is one line in `$MEM0_HOME/hooks.log`. `MEM0_HOOKS=off` turns every hook off
here, before anything is read. Standard library only (Python 3.8+), so it runs before the
plugin is installed.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MAX_PAYLOAD = 16 * 1024 * 1024
MAX_SOCKET_PATH = 100  # AF_UNIX paths are limited to 104-108 bytes
DEFAULT_BUDGET = 5.0


def home(environ=os.environ) -> Path:
    value = environ.get("MEM0_HOME", "").strip()
    if value and "${" not in value:
        return Path(value).expanduser()
    return Path.home() / ".mem0"


def log(message: str) -> None:
    """One line in the hooks' log; never an error of its own."""
    try:
        path = home() / "hooks.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        fd = os.open(str(path), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as handle:
            handle.write(f"{stamp} hook.py: {' '.join(message.split())[:1000]}\n")
    except OSError:
        pass


def parse_args(argv):
    opts = {"client": None, "event": None, "budget": DEFAULT_BUDGET, "wait": True}
    rest = []
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg == "--budget" and index + 1 < len(argv):
            index += 1
            try:
                opts["budget"] = max(0.1, float(argv[index]))
            except ValueError:
                pass
        elif arg == "--no-wait":
            opts["wait"] = False
        else:
            rest.append(arg)
        index += 1
    if len(rest) >= 2:
        opts["client"], opts["event"] = rest[0], rest[1]
    return opts


def venv_command(environ=os.environ):
    """The plugin virtualenv's `mem0-hook`, or None while there is none (launch.py's rules:
    $MEM0_PLUGIN_DATA, $CLAUDE_PLUGIN_DATA, or the one recorded in $MEM0_HOME/plugin)."""
    if environ.get("MEM0_PLUGIN_USE_PATH", "").strip().lower() in ("1", "true", "yes"):
        import shutil

        found = shutil.which("mem0-hook")
        return Path(found) if found else None
    sys.path.insert(0, str(HERE))
    import launch

    version = launch.read_plugin_version()
    data_dir, explicit = launch.resolve_data_dir(None, environ)
    candidates = [data_dir / "venv"]
    if not explicit:
        shared = launch.pointer_venv(version, None, environ)
        if shared is not None:
            candidates.insert(0, shared)
    for venv in candidates:
        if launch.venv_ready(venv, version):
            command = launch.script_path(venv, "mem0-hook")
            if command.exists():
                return command
    return None


def socket_path(environ=os.environ) -> Path:
    """One socket per user, home, plugin release and MEM0_* environment: a service answers only
    the calls its own environment would answer the same way (a new release: a new service)."""
    relevant = sorted((k, v) for k, v in environ.items() if k.startswith("MEM0_") or k in ("USER", "HOME"))
    release = ""
    try:
        info = (HERE.parent / "pyproject.toml").stat()
        release = f"{info.st_mtime_ns}:{info.st_size}"
    except OSError:
        pass
    key = hashlib.sha256(json.dumps([relevant, str(HERE.parent), release]).encode("utf-8")).hexdigest()[:16]
    folder = home(environ) / "run"
    path = folder / f"hooks-{key}.sock"
    if len(str(path)) > MAX_SOCKET_PATH:
        folder = Path("/tmp") / f"mem0-hooks-{os.getuid()}"
        path = folder / f"hooks-{key}.sock"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


ABSENT, LATE = "absent", "late"


def ask(path: Path, request: dict, deadline: float):
    """(state, answer): ("ok", text), or (ABSENT, None) when no service listens there, or
    (LATE, None) when one listens but did not answer by `deadline`."""
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except (AttributeError, OSError):
        return ABSENT, None
    try:
        conn.settimeout(max(0.05, deadline - time.monotonic()))
        try:
            conn.connect(str(path))
        except OSError:
            return ABSENT, None
        conn.sendall(json.dumps(request).encode("utf-8") + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            conn.settimeout(max(0.01, deadline - time.monotonic()))
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
        answer = json.loads(data.decode("utf-8"))
        return "ok", (answer.get("out") or "") if isinstance(answer, dict) else ""
    except (OSError, ValueError):
        return LATE, None
    finally:
        conn.close()


def detached(args, **kwargs):
    flags = {"start_new_session": True} if os.name != "nt" else {"creationflags": 0x00000008}  # DETACHED_PROCESS
    with open(os.devnull, "wb") as null:
        return subprocess.Popen(args, stdout=null, stderr=null, **flags, **kwargs)


def start_service(command: Path, path: Path, cwd: str) -> None:
    try:
        detached([str(command), "--serve", str(path), "--cwd", cwd], stdin=subprocess.DEVNULL)
    except OSError as exc:
        log(f"cannot start the recall service: {exc}")


def run_alone(command: Path, opts: dict, payload: bytes) -> None:
    """No service to hand a capture to: a background `mem0-hook` does it after we exit."""
    try:
        child = detached([str(command), opts["client"], opts["event"]], stdin=subprocess.PIPE)
        child.stdin.write(payload)
        child.stdin.close()
    except OSError as exc:
        log(f"cannot start mem0-hook: {exc}")


def main(argv=None) -> int:
    opts = parse_args(sys.argv[1:] if argv is None else argv)
    if os.environ.get("MEM0_HOOKS", "").strip().lower() in ("0", "off", "false", "no"):
        return 0
    if not opts["client"]:
        log("usage: hook.py CLIENT EVENT [--budget SECONDS] [--no-wait]")
        return 0
    deadline = time.monotonic() + opts["budget"]
    payload = sys.stdin.buffer.read(MAX_PAYLOAD + 1)
    if len(payload) > MAX_PAYLOAD:
        log(f"{opts['client']} {opts['event']}: payload over 16 MB, ignored")
        return 0
    try:
        data = json.loads(payload.decode("utf-8", errors="replace") or "null")
    except ValueError:
        log(f"{opts['client']} {opts['event']}: the payload is not JSON")
        return 0
    cwd = data.get("cwd") if isinstance(data, dict) and isinstance(data.get("cwd"), str) else None
    if isinstance(data, dict) and not cwd and isinstance(data.get("workspace_roots"), list) and data["workspace_roots"]:
        cwd = str(data["workspace_roots"][0])
    cwd = cwd if cwd and os.path.isdir(cwd) else os.getcwd()
    request = {"client": opts["client"], "event": opts["event"], "payload": data, "wait": opts["wait"]}
    what = f"{opts['client']} {opts['event']}"
    path = socket_path()
    state, answer = ask(path, request, deadline)
    if state == ABSENT:
        command = venv_command()
        if command is None:
            log(f"{what}: the plugin is not installed yet (first start); nothing added")
            return 0
        if not opts["wait"]:
            run_alone(command, opts, payload)
            return 0
        start_service(command, path, cwd)
        while state == ABSENT and time.monotonic() < deadline:
            time.sleep(0.02)
            state, answer = ask(path, request, deadline)
    if answer is None:
        log(f"{what}: the recall service did not answer within {opts['budget']:g} s; nothing added")
        return 0
    if answer:
        sys.stdout.write(answer + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    try:
        code = main()
    except Exception as exc:
        log(f"{type(exc).__name__}: {exc}")
        code = 0
    sys.exit(code)
