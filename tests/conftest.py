"""Shared fixtures: no test touches a real home, and commands run as installed.

`run_cli` runs a command's `main(argv)` in this process (fast: no interpreter start, no
imports per call) with its own stdin, stdout, stderr, environment and working directory;
`run_process` runs the installed console script as a real subprocess, for the tests whose
point is a separate process (one smoke test per command, kills, locks, concurrency).
"""

from __future__ import annotations

import compileall
import importlib
import io
import os
import shutil
import signal
import subprocess
import sys
import threading
import traceback
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
# Lexical unless a test asks for the embedder (tests of meaning delete it: see semantic_home in
# test_embeddings.py); set here too so module-scoped fixtures see it before any test's own setup.
os.environ["MEM0_EMBEDDER"] = "none"
# mem0ai (MemoryClient in the server tests) reads these at import: no telemetry sent, and its
# config directory in a temporary place rather than the real ~/.mem0.
os.environ["MEM0_TELEMETRY"] = "false"
os.environ.setdefault("MEM0_DIR", os.path.join(os.environ.get("TMPDIR", "/tmp"), "mem0ai-tests"))

# pyproject.toml [project.scripts]: the console scripts and their entry points
ENTRY_POINTS = {
    "mem0-mcp-server": "mem0_plugin.server:main",
    "mem0-dream": "mem0_plugin.cli.dream_cli:entry",  # main(), then an exit without teardown
    "mem0-health": "mem0_plugin.cli.health_cli:main",
    "mem0-forget": "mem0_plugin.cli.forget_cli:main",
    "mem0-memories": "mem0_plugin.cli.memories_cli:main",
    "mem0-server": "mem0_plugin.cli.server_cli:main",
    "mem0-hook": "mem0_plugin.cli.hook_cli:main",
}
# Only a separate process survives these: MEM0_DREAM_CRASH_AFTER ends the process with os._exit.
NEEDS_A_PROCESS = ("MEM0_DREAM_CRASH_AFTER",)


def pytest_configure(config):
    if not hasattr(config, "workerinput"):  # the controlling process, once per run
        _compile_the_package()
    config.addinivalue_line(
        "markers",
        "start_early(start): call start() once the session has collected this "
        "test, so slow work it waits for runs alongside the tests before it; "
        "the session ends after the wait() of what start() returned",
    )


def _compile_the_package() -> None:
    """Write the package's bytecode, on a thread, even where PYTHONDONTWRITEBYTECODE is set (as on
    the CI machines): the tests start a few hundred processes that import it, and each would
    otherwise compile it again (about 0.15 s each)."""
    package = Path(__file__).resolve().parent.parent / "plugin"
    threading.Thread(target=compileall.compile_dir, args=(str(package),), kwargs={"quiet": 1}, daemon=True).start()


_STARTED_EARLY: list = []  # what start_early's start() returned: waited for before the session ends


def pytest_sessionfinish(session):
    """A worker of pytest-xdist that started work another worker's test waits for stays until
    that work is done (test_plugin_files.py, FirstInstall)."""
    for started in _STARTED_EARLY:
        started.wait()


def pytest_collection_modifyitems(config, items):
    """The tests that need the labelled set embedded (tests/test_quality.py: about 50 s before
    they start) go first, so that the embedding overlaps the other worker's tests instead of
    being the run's tail."""
    items.sort(key=lambda item: "embedded_store" not in getattr(item, "fixturenames", ()))


def pytest_collection_finish(session):
    """Start the slow, self-contained work of the collected tests marked `start_early` (the
    launcher's real pip install, test_plugin_files.py): it then overlaps the rest of the run."""
    if session.config.option.collectonly:
        return
    for item in session.items:
        marker = item.get_closest_marker("start_early")
        if marker is not None:
            _STARTED_EARLY.append(marker.args[0]())
    if any("postgres_server" in getattr(item, "fixturenames", ()) for item in session.items):
        _start_postgres_early()


@pytest.fixture(autouse=True)
def mem0_home(tmp_path, monkeypatch) -> Path:
    """Point MEM0_HOME (and the dream lock) at a temp dir; fix the identity for every test."""
    home = tmp_path / "mem0home"
    monkeypatch.setenv("MEM0_HOME", str(home))
    monkeypatch.setenv("MEM0_DREAM_LOCK", str(tmp_path / "dream_auto.lock"))
    monkeypatch.setenv(
        "CODEX_HOME", str(tmp_path / "codex-home")
    )  # never the user's Codex config (mem0-health reads it)
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


def entry_point(name: str):
    """The `main(argv)` a console script calls (pyproject.toml [project.scripts]; a script's
    function may wrap it, as `mem0-dream`'s `entry` does: every command module has its `main`)."""
    module, _, _ = ENTRY_POINTS[name].partition(":")
    return importlib.import_module(module).main


def run_process(
    name: str,
    *args: str,
    input: str | None = None,
    env: dict | None = None,
    cwd: str | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess:
    """The installed console script as a subprocess."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [command_path(name), *args], input=input, capture_output=True, text=True, env=full_env, cwd=cwd, timeout=timeout
    )


@contextmanager
def process_state(env: dict | None = None, cwd: str | None = None):
    """What a fresh process of the command would have: the environment with `env` on top, the
    working directory `cwd`, and none of the once-per-process notices already given. Restored after."""
    from mem0_plugin import semantic

    saved_env, saved_cwd, saved_warned = dict(os.environ), os.getcwd(), set(semantic._warned)
    semantic._warned.clear()
    try:
        os.environ.update({key: str(value) for key, value in (env or {}).items()})
        if cwd is not None:
            os.chdir(cwd)
        yield
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        semantic._warned.clear()
        semantic._warned.update(saved_warned)


def _text_stream(data: bytes = b"", *, errors: str = "strict") -> io.TextIOWrapper:
    """A UTF-8 text stream over bytes, like a pipe's: it has `.buffer` and is not a terminal."""
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors=errors, write_through=True)


def _as_piped_text(stream: io.TextIOWrapper) -> str:
    """What `subprocess.run(..., text=True)` would have read: decoded, universal newlines."""
    stream.flush()
    text = stream.buffer.getvalue().decode("utf-8")
    return text.replace("\r\n", "\n").replace("\r", "\n")


@contextmanager
def time_limit(name: str, args: tuple, timeout: float | None):
    """subprocess.TimeoutExpired after `timeout` seconds, as subprocess.run would raise: a hang
    fails its test instead of the whole run (SIGALRM interrupts a blocking open or read)."""
    if not timeout or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise subprocess.TimeoutExpired([command_path(name), *args], timeout)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _exit_code(exc: SystemExit, stderr) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=stderr)
    return 1


def run_in_process(
    name: str,
    *args: str,
    input: str | None = None,
    env: dict | None = None,
    cwd: str | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess:
    """`main(argv)` of the command with the stdin, stdout, stderr, environment and working
    directory of a subprocess, and the result a subprocess would give."""
    if any(key in (env or {}) for key in NEEDS_A_PROCESS):
        return run_process(name, *args, input=input, env=env, cwd=cwd, timeout=timeout)
    main = entry_point(name)
    stdin = _text_stream((input or "").encode("utf-8"))
    stdout, stderr = _text_stream(), _text_stream(errors="backslashreplace")
    saved = sys.stdin, sys.stdout, sys.stderr, sys.argv
    with process_state(env, cwd), time_limit(name, args, timeout):
        sys.stdin, sys.stdout, sys.stderr, sys.argv = stdin, stdout, stderr, [command_path(name), *args]
        try:
            returncode = main(list(args))
        except SystemExit as exc:
            returncode = _exit_code(exc, stderr)
        except subprocess.TimeoutExpired:
            raise
        except BaseException:  # what the interpreter does with an uncaught exception
            traceback.print_exc(file=stderr)
            returncode = 1
        finally:
            sys.stdin, sys.stdout, sys.stderr, sys.argv = saved
    returncode = 0 if returncode is None else returncode
    return subprocess.CompletedProcess(
        [command_path(name), *args], returncode, _as_piped_text(stdout), _as_piped_text(stderr)
    )


@pytest.fixture
def run_cli():
    """Run a command: run_cli("mem0-memories", "list", input=...) → a CompletedProcess.

    In this process through the command's `main(argv)`; `subprocess=True` runs the installed
    console script instead (the smoke tests of each command, and whatever needs a real process)."""

    def run(name: str, *args: str, subprocess: bool = False, **options) -> subprocess.CompletedProcess:
        return (run_process if subprocess else run_in_process)(name, *args, **options)

    return run


@asynccontextmanager
async def mcp_session(*args: str, env: dict | None = None):
    """A `ClientSession` with the MCP server of `mem0-mcp-server *args`, connected in memory
    (the SDK's InMemoryTransport) instead of over a subprocess's stdio; the environment and
    identity are those the server process would have."""
    from mcp.client._memory import InMemoryTransport
    from mcp.client.session import ClientSession
    from mem0_plugin import server

    with process_state(env):
        options = server.parse_args(list(args))
        identity = server.resolve_identity(
            user_id=options.user_id, project_id=options.project_id, store=options.store, cwd=options.cwd
        )
        resources = server.Resources(identity)
        try:
            async with InMemoryTransport(server.build_server(resources)) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    yield session
        finally:
            close_resources(resources)


def close_resources(resources) -> None:
    """What the end of the server process does: background embedding finished, the store closed."""
    if resources._semantic is not None:
        resources._semantic.drain()
    if resources._store is not None:
        resources._store.close()


# -- PostgreSQL (docs/stores.md, "Tests"): a real server, started once per session ----------

BACKENDS = ("sqlite", "postgresql")


_EARLY_POSTGRES: dict = {}


def _start_postgres_early() -> None:
    """Start the session's PostgreSQL server on a thread once the tests that need it are
    collected: its initdb then runs alongside the tests before the first of them."""
    from pg_server import ENV_URL, PostgresServer, binaries

    if binaries() is None and not os.environ.get(ENV_URL):
        return

    def start() -> None:
        try:
            _EARLY_POSTGRES["server"] = PostgresServer.start()
        except Exception as exc:
            _EARLY_POSTGRES["error"] = exc

    _EARLY_POSTGRES["thread"] = threading.Thread(target=start, daemon=True, name="postgres-start")
    _EARLY_POSTGRES["thread"].start()


@pytest.fixture(scope="session")
def postgres_server():
    """A PostgreSQL server for the session (`pg_server`): started here (initdb + pg_ctl in a
    temp directory) unless MEM0_TEST_POSTGRES_URL names one; stopped at the end."""
    from pg_server import ENV_URL, PostgresServer, binaries

    if binaries() is None and not os.environ.get(ENV_URL):
        if os.environ.get("CI"):
            pytest.fail(
                "CI runs the PostgreSQL tests: no PostgreSQL server binaries found (apt-get install postgresql)"
            )
        pytest.skip("no PostgreSQL server binaries (pg_ctl): the PostgreSQL leg is skipped")
    early = _EARLY_POSTGRES.pop("thread", None)
    if early is not None:
        early.join()
    if "error" in _EARLY_POSTGRES:
        raise _EARLY_POSTGRES.pop("error")
    server = _EARLY_POSTGRES.pop("server", None) or PostgresServer.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server) -> str:
    """The URL of a migrated, empty PostgreSQL database for this test (emptied before it)."""
    return postgres_server.clean_database()


@pytest.fixture
def store_url_of(request, tmp_path):
    """`store_url_of(backend)`: the URL of a fresh store of that backend ("sqlite" or "postgresql")."""

    def make(backend: str) -> str:
        if backend == "postgresql":
            return request.getfixturevalue("postgres_url")
        return f"sqlite:///{tmp_path}/memories.sqlite3"

    return make


@pytest.fixture(params=BACKENDS)
def backend(request, monkeypatch, store_url_of) -> str:
    """Run the test on each backend: for "postgresql", MEM0_STORE names an empty PostgreSQL
    database, so every command and server of the test uses it (docs/stores.md)."""
    if request.param == "postgresql":
        monkeypatch.setenv("MEM0_STORE", store_url_of("postgresql"))
    return request.param
