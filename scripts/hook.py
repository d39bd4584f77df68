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
plugin is installed; the way to a running service imports nothing else (it runs at every
prompt: about 10 ms of the interpreter's own start-up is all it adds).

The socket speaks one request per connection: a JSON line `{"client", "event", "wait"}`, then
the payload's bytes as the client sent them, then the end of the writing side; the answer is
the text to print, UTF-8, then the end of the connection.
"""

import os
import sys
import time

try:  # the C module itself: `socket` would import enum, selectors and more (15 ms at every prompt)
    import _socket as socket
except ImportError:  # another Python than CPython
    import socket  # type: ignore[no-redef]

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_PAYLOAD = 16 * 1024 * 1024
MAX_SOCKET_PATH = 100  # AF_UNIX paths are limited to 104-108 bytes
DEFAULT_BUDGET = 5.0
ABSENT, LATE, OK = "absent", "late", "ok"


def home(environ=os.environ) -> str:
    value = environ.get("MEM0_HOME", "").strip()
    if value and "${" not in value:
        return os.path.abspath(os.path.expanduser(value))
    return os.path.join(os.path.expanduser("~"), ".mem0")


def log(message: str) -> None:
    """One line in the hooks' log; never an error of its own."""
    try:
        folder = home()
        os.makedirs(folder, mode=0o700, exist_ok=True)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        fd = os.open(os.path.join(folder, "hooks.log"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
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


def socket_path(environ=os.environ) -> str:
    """One socket per user, home, plugin release and MEM0_* environment: a service answers only
    the calls its own environment would answer the same way (a new release: a new service)."""
    import zlib  # built in: no file to read

    relevant = sorted((k, v) for k, v in environ.items() if k.startswith("MEM0_") or k in ("USER", "HOME"))
    try:
        info = os.stat(os.path.join(os.path.dirname(HERE), "pyproject.toml"))
        release = f"{info.st_mtime_ns}:{info.st_size}"
    except OSError:
        release = ""
    text = repr((relevant, os.path.dirname(HERE), release)).encode("utf-8", "surrogateescape")
    key = f"{zlib.crc32(text):08x}{zlib.adler32(text[::-1]):08x}"
    folder = os.path.join(home(environ), "run")
    path = os.path.join(folder, f"hooks-{key}.sock")
    if len(path) > MAX_SOCKET_PATH:
        folder = f"/tmp/mem0-hooks-{os.getuid()}"
        path = os.path.join(folder, f"hooks-{key}.sock")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    return path


def ask(path: str, header: bytes, payload: bytes, deadline: float):
    """(state, answer): (OK, text), or (ABSENT, None) when no service listens there, or
    (LATE, None) when one listens but did not answer by `deadline`."""
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except (AttributeError, OSError):
        return ABSENT, None
    try:
        conn.settimeout(max(0.05, deadline - time.monotonic()))
        try:
            conn.connect(path)
        except OSError:
            return ABSENT, None
        conn.sendall(header + b"\n" + payload)
        conn.shutdown(socket.SHUT_WR)
        chunks = []
        while True:
            conn.settimeout(max(0.01, deadline - time.monotonic()))
            chunk = conn.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
        return OK, b"".join(chunks).decode("utf-8", "replace")
    except OSError:
        return LATE, None
    finally:
        conn.close()


# -- the way when no service answers: find the install, start the service -------------------


def venv_command(environ=os.environ):
    """The plugin virtualenv's `mem0-hook`, or None while there is none (launch.py's rules:
    $MEM0_PLUGIN_DATA, $CLAUDE_PLUGIN_DATA, or the one recorded in $MEM0_HOME/plugin)."""
    if environ.get("MEM0_PLUGIN_USE_PATH", "").strip().lower() in ("1", "true", "yes"):
        import shutil

        return shutil.which("mem0-hook")
    sys.path.insert(0, HERE)
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
            return str(launch.script_path(venv, "mem0-hook"))
    return None


def project_dir(payload: bytes) -> str:
    """The folder the agent works in: the payload's `cwd` (Cursor: its first workspace root)."""
    import json

    try:
        data = json.loads(payload.decode("utf-8", "replace"))
    except ValueError:
        data = None
    folder = None
    if isinstance(data, dict):
        folder = data.get("cwd")
        roots = data.get("workspace_roots")
        if not isinstance(folder, str) and isinstance(roots, list) and roots:
            folder = roots[0]
    return folder if isinstance(folder, str) and os.path.isdir(folder) else os.getcwd()


def detached(args, **kwargs):
    import subprocess

    flags = {"start_new_session": True} if os.name != "nt" else {"creationflags": 0x00000008}  # DETACHED_PROCESS
    with open(os.devnull, "wb") as null:
        return subprocess.Popen(args, stdout=null, stderr=null, **flags, **kwargs)


def start_service(command: str, path: str, cwd: str) -> None:
    import subprocess

    try:
        detached([command, "--serve", path, "--cwd", cwd], stdin=subprocess.DEVNULL)
    except OSError as exc:
        log(f"cannot start the recall service: {exc}")


def run_alone(command: str, opts: dict, payload: bytes) -> None:
    """No service to hand a capture to: a background `mem0-hook` does it after we exit."""
    import subprocess

    try:
        child = detached([command, opts["client"], opts["event"]], stdin=subprocess.PIPE)
        child.stdin.write(payload)
        child.stdin.close()
    except OSError as exc:
        log(f"cannot start mem0-hook: {exc}")


def main(argv=None) -> int:
    opts = parse_args(sys.argv[1:] if argv is None else argv)
    if os.environ.get("MEM0_HOOKS", "").strip().lower() in ("0", "off", "false", "no"):
        return 0
    if not opts["client"] or not (opts["client"] + opts["event"]).isalnum():
        log("usage: hook.py CLIENT EVENT [--budget SECONDS] [--no-wait]")
        return 0
    deadline = time.monotonic() + opts["budget"]
    what = f"{opts['client']} {opts['event']}"
    payload = sys.stdin.buffer.read(MAX_PAYLOAD + 1)
    if len(payload) > MAX_PAYLOAD:
        log(f"{what}: payload over 16 MB, ignored")
        return 0
    wait = "true" if opts["wait"] else "false"
    header = f'{{"client": "{opts["client"]}", "event": "{opts["event"]}", "wait": {wait}}}'.encode()
    path = socket_path()
    state, answer = ask(path, header, payload, deadline)
    if state == ABSENT:
        command = venv_command()
        if command is None:
            log(f"{what}: the plugin is not installed yet (first start); nothing added")
            return 0
        if not opts["wait"]:
            run_alone(command, opts, payload)
            return 0
        start_service(command, path, project_dir(payload))
        while state == ABSENT and time.monotonic() < deadline:
            time.sleep(0.02)
            state, answer = ask(path, header, payload, deadline)
    if answer is None:
        log(f"{what}: the recall service did not answer within {opts['budget']:g} s; nothing added")
        return 0
    if answer:
        sys.stdout.write(answer if answer.endswith("\n") else answer + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    try:
        code = main()
    except Exception as exc:
        log(f"{type(exc).__name__}: {exc}")
        code = 0
    sys.exit(code)
