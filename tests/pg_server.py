"""A real PostgreSQL server for the tests (docs/stores.md, "Tests"): no mocked database.

`PostgresServer.start()` runs `initdb` and `pg_ctl start` in a temporary directory, with
the server listening on a Unix socket in that directory only (no TCP port), trust
authentication and durability off (a test database needs no fsync). As root the server
runs as the `postgres` user (`runuser`): PostgreSQL refuses to run as root. When
`MEM0_TEST_POSTGRES_URL` is set, that server is used instead and nothing is started.

Each test gets an empty database: the session's shared one with its tables truncated
(`clean_database`), or, for a test that needs several, a new one copied from a migrated
template (`fresh_database`). No test sees another's rows; none pays for the migrations.
"""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

ENV_URL = "MEM0_TEST_POSTGRES_URL"
TEMPLATE = "mem0_template"
SETTINGS = (
    "fsync=off",
    "synchronous_commit=off",
    "full_page_writes=off",
    "max_connections=200",
    "shared_buffers=64MB",
)


def binaries() -> Path | None:
    """The directory of the newest installed PostgreSQL server binaries, if any."""
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[-3]))
    return Path(candidates[-1]).parent if candidates else None


def run_tool(bindir: Path, as_user: str | None, tool: str, *args: str, timeout: float = 120) -> None:
    """One PostgreSQL server program (`initdb`, `pg_ctl`), as `as_user` when given (PostgreSQL
    refuses to run as root); its output is in the error when it fails."""
    command = [str(bindir / tool), *args]
    if as_user:
        command = ["runuser", "-u", as_user, "--", *command]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stderr or done.stdout}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _alive(pid: int) -> bool:
    """The process runs (a zombie no reaper has collected yet does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@dataclass
class PostgresServer:
    """One server: started here (`start`), or an existing one (`MEM0_TEST_POSTGRES_URL`)."""

    base_url: str
    root: Path | None = None
    bindir: Path | None = None
    as_user: str | None = None
    counter: itertools.count = field(default_factory=lambda: itertools.count(1))
    shared: str | None = None

    @classmethod
    def start(cls, settings: tuple[str, ...] = ()) -> PostgresServer:
        """`settings`: more `name=value` server settings after the tests' own (a benchmark's)."""
        given = os.environ.get(ENV_URL)
        if given:
            server = cls(given)
            server.make_template()
            return server
        bindir = binaries()
        if bindir is None:
            raise RuntimeError("no PostgreSQL server binaries (pg_ctl) found; install postgresql")
        root = Path(tempfile.mkdtemp(prefix="mem0-pg-"))
        as_user = "postgres" if os.geteuid() == 0 else None
        if as_user:
            shutil.chown(root, user=as_user)
        port = _free_port()
        server = cls(f"postgresql://postgres@/postgres?host={quote(str(root))}&port={port}", root, bindir, as_user)
        server._run(
            "initdb",
            "-D",
            str(root / "data"),
            "-U",
            "postgres",
            "--auth=trust",
            "--locale=C",
            "-E",
            "UTF8",
            "--no-sync",
        )
        options = " ".join(f"-c {s}" for s in (*SETTINGS, *settings))
        server._run(
            "pg_ctl",
            "start",
            "-w",
            "-D",
            str(root / "data"),
            "-l",
            str(root / "server.log"),
            "-o",
            f"-c listen_addresses='' -c unix_socket_directories='{root}' -p {port} {options}",
        )
        server.make_template()
        return server

    def _run(self, tool: str, *args: str) -> None:
        assert self.bindir is not None
        run_tool(self.bindir, self.as_user, tool, *args)

    def stop(self) -> None:
        if self.root is None:
            return
        try:
            pid = int((self.root / "data" / "postmaster.pid").read_text().split()[0])
            os.kill(pid, signal.SIGQUIT)  # pg_ctl stop -m immediate, without its polling
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and _alive(pid):
                time.sleep(0.02)
        except (OSError, ValueError, IndexError):
            pass
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str) -> str:
        """The URL of another database on the same server."""
        head, _, query = self.base_url.partition("?")
        scheme_host, _, _ = head.rpartition("/")
        return f"{scheme_host}/{database}" + (f"?{query}" if query else "")

    def _admin(self, *statements: str) -> None:
        import psycopg

        with psycopg.connect(self.base_url, autocommit=True) as conn:
            for statement in statements:
                conn.execute(statement)  # type: ignore[arg-type]

    def make_template(self) -> None:
        """A database with the schema migrated, for `fresh_database` to copy."""
        from mem0_plugin.store.postgres.store import PostgresStore

        self._admin(f"DROP DATABASE IF EXISTS {TEMPLATE}", f"CREATE DATABASE {TEMPLATE}")
        PostgresStore(self.url(TEMPLATE)).close()

    def fresh_database(self) -> str:
        """The URL of a new, migrated, empty database."""
        name = f"mem0_test_{os.getpid()}_{next(self.counter)}"
        self._admin(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
        return self.url(name)

    def clean_database(self) -> str:
        """The URL of the session's shared test database, emptied (faster than a new one: the
        tables are truncated, their sequences restarted)."""
        if self.shared is None:
            self.shared = self.fresh_database()
        import psycopg

        with psycopg.connect(self.shared, autocommit=True) as conn:
            conn.execute(
                "TRUNCATE memories, memory_counts, memory_terms, term_counts, scope_sizes, history, dream_steps, "
                "dream_runs, vectors, vector_counts RESTART IDENTITY"
            )
        return self.shared

    def drop_database(self, url: str) -> None:
        name = url.partition("?")[0].rpartition("/")[2]
        self._admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
