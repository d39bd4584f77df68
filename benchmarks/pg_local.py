"""A local PostgreSQL server whose data directory stays between benchmark runs
(benchmarks/.data/, gitignored): a 1M-row database is built once and reused.

Started like the tests' throwaway server (tests/pg_server.py: `initdb`, `pg_ctl`, a Unix
socket in the directory only, as the `postgres` user when run as root), but kept: `stop()`
shuts the server down and leaves its files.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from urllib.parse import quote

import pg_server


class LocalPostgres:
    """The server whose files are under `root` (made on first use)."""

    def __init__(self, root: Path):
        bindir = pg_server.binaries()
        if bindir is None:
            raise RuntimeError("no PostgreSQL server binaries (pg_ctl) found; install postgresql")
        self.root = root
        self.bindir = bindir
        self.as_user = "postgres" if os.geteuid() == 0 else None
        self.port = 5400 + os.getuid() % 100  # the socket is in `root`: no TCP port is opened
        self.base_url = f"postgresql://postgres@/postgres?host={quote(str(root))}&port={self.port}"

    def _run(self, tool: str, *args: str) -> None:
        pg_server.run_tool(self.bindir, self.as_user, tool, *args, timeout=600)  # a 1M-row server starts slowly

    def start(self) -> LocalPostgres:
        data = self.root / "data"
        if not (data / "PG_VERSION").exists():
            shutil.rmtree(self.root, ignore_errors=True)
            self.root.mkdir(parents=True)
            if self.as_user:
                shutil.chown(self.root, user=self.as_user)
            self._run("initdb", "-D", str(data), "-U", "postgres", "--auth=trust", "--locale=C", "-E", "UTF8")
        if (data / "postmaster.pid").exists():
            self._run("pg_ctl", "stop", "-m", "fast", "-D", str(data))  # one left running by an interrupted run
        options = " ".join(f"-c {s}" for s in pg_server.SETTINGS if not s.startswith("shared_buffers"))
        self._run(
            "pg_ctl",
            "start",
            "-w",
            "-D",
            str(data),
            "-l",
            str(self.root / "server.log"),
            "-o",
            f"-c listen_addresses='' -c unix_socket_directories='{self.root}' -p {self.port} "
            f"-c shared_buffers=512MB {options}",
        )
        return self

    def stop(self) -> None:
        self._run("pg_ctl", "stop", "-m", "fast", "-D", str(self.root / "data"))

    def url(self, database: str) -> str:
        return self.base_url.replace("/postgres?", f"/{database}?", 1)

    def has_database(self, name: str) -> bool:
        import psycopg

        with psycopg.connect(self.base_url, autocommit=True) as conn:
            return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is not None

    def admin(self, *statements: str) -> None:
        import psycopg

        with psycopg.connect(self.base_url, autocommit=True) as conn:
            for statement in statements:
                conn.execute(statement)  # type: ignore[arg-type]

    def admin_on(self, database: str, *statements: str) -> None:
        import psycopg

        with psycopg.connect(self.url(database), autocommit=True) as conn:
            for statement in statements:
                conn.execute(statement)  # type: ignore[arg-type]
