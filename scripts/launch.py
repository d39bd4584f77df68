#!/usr/bin/env python3
"""Run one of the plugin's commands from a private virtualenv, creating it on first use.

The agents receive this plugin as plain files, not as an installed Python package. Every
manifest, hook and skill therefore calls the commands through this launcher:

    python3 <plugin root>/scripts/launch.py mem0-mcp-server
    python3 <plugin root>/scripts/launch.py mem0-dream --plan --json -o plan.json
    python3 <plugin root>/scripts/launch.py --setup        # install ahead of time, run nothing

On first use, and whenever the version in pyproject.toml or the package's source differs
from what the virtualenv's stamp records, it creates `<data dir>/venv` and pip-installs the plugin root
into it, under a file lock so that simultaneous first starts install once. Then it
replaces itself with the requested console script, passing the remaining arguments
through unchanged. For mem0-mcp-server the install runs in a detached process that logs
to <data dir>/install.log, so it completes even if the agent stops waiting for the server;
meanwhile `mcp_standin.py` answers the agent's first messages from `mcp_manifest.json` (an
agent waits 30 s or so for a server to start, a first install takes longer) and hands the
connection to the real server once it is installed.

Standard output belongs to the command (for mem0-mcp-server it is the MCP protocol):
the launcher and pip write only to standard error, and pip never reads standard input.

Data dir, first match wins:
  --data-dir DIR, $MEM0_PLUGIN_DATA, $CLAUDE_PLUGIN_DATA (Claude Code's per-plugin data
  directory), else $MEM0_HOME/plugin (MEM0_HOME defaults to ~/.mem0).
A successful install records its virtualenv in $MEM0_HOME/plugin/current.json; a run
that has no data dir of its own (a skill's shell command, Codex, Cursor) reuses that
virtualenv when its version matches, instead of installing a second copy.

Before running a command: when the working directory is the plugin root and $PWD names
another directory (Codex starts plugin MCP servers in the plugin root and passes PWD
through), it changes to $PWD, the directory the agent was started in; and it drops the
MCP server's `--cwd X` when X is empty or an unexpanded placeholder such as
${workspaceFolder}.

Environment:
  MEM0_PLUGIN_PYTHON        interpreter that creates the virtualenv (default: this one)
  MEM0_PLUGIN_PIP_ARGS      extra pip arguments, e.g. "--no-index --find-links /wheels"
  MEM0_PLUGIN_USE_PATH=1    run a command already on PATH instead (your own install)
  MEM0_PLUGIN_LOCK_TIMEOUT  seconds to wait for another install (default 900)

Standard library only; runs with any python3 >= 3.8 and creates the virtualenv with a
python >= 3.10 (the package's requirement).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMANDS = ("mem0-mcp-server", "mem0-dream", "mem0-health", "mem0-forget", "mem0-memories", "mem0-hook")
MIN_PYTHON = (3, 10)
STAMP_NAME = "mem0-plugin-stamp.json"
POINTER_NAME = "current.json"
LOG_PREFIX = "[mem0-plugin]"

PLUGIN_ROOT = Path(__file__).resolve().parent.parent

# The private install copies only what building the package needs: these top-level files
# and the package directories of [tool.setuptools.packages.find] (a checkout may also hold
# virtualenvs, caches and benchmark data that must not be copied).
_BUILD_FILES = ("pyproject.toml", "setup.py", "setup.cfg", "MANIFEST.in", "README*", "LICENSE*", "COPYING*")
_COPY_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", "dist", ".*")

USAGE = f"""\
usage: launch.py [--data-dir DIR] [--reinstall] COMMAND [ARGS...]
       launch.py [--data-dir DIR] [--reinstall] --setup
       launch.py [--data-dir DIR] --print-venv

Runs a mem0 plugin command from a private virtualenv, installing it on first use.

COMMAND is one of: {", ".join(COMMANDS)}; ARGS are passed to it unchanged.

options:
  --setup         create or update the virtualenv, then exit without running anything
  --reinstall     reinstall even when the installed version matches
  --data-dir DIR  directory that holds the virtualenv (see the module docstring)
  --print-venv    print the virtualenv's path on standard output and exit
  -h, --help      show this help and exit
"""


class LaunchError(Exception):
    """A failure the user can act on; printed as one line on standard error."""


def log(message: str) -> None:
    print(f"{LOG_PREFIX} {message}", file=sys.stderr, flush=True)


# --- configuration -----------------------------------------------------------------


def env_path(name: str, environ=None) -> Path | None:
    """A path from an environment variable; None when unset, empty or an unexpanded ${...}."""
    value = (os.environ if environ is None else environ).get(name, "").strip()
    if not value or "${" in value or value.startswith("$"):
        return None
    return Path(value).expanduser()


def mem0_home(environ=None) -> Path:
    return env_path("MEM0_HOME", environ) or Path.home() / ".mem0"


def resolve_data_dir(explicit: str | None = None, environ=None) -> tuple[Path, bool]:
    """(data dir, chosen explicitly?). Explicit: --data-dir, MEM0_PLUGIN_DATA, CLAUDE_PLUGIN_DATA."""
    if explicit:
        return Path(explicit).expanduser(), True
    for name in ("MEM0_PLUGIN_DATA", "CLAUDE_PLUGIN_DATA"):
        path = env_path(name, environ)
        if path is not None:
            return path, True
    return mem0_home(environ) / "plugin", False


def read_plugin_version(root: Path = PLUGIN_ROOT) -> str:
    """The [project] version of pyproject.toml (tomllib when present, else a small parser)."""
    pyproject = root / "pyproject.toml"
    try:
        text = pyproject.read_text(encoding="utf-8")
    except OSError as exc:
        raise LaunchError(f"cannot read {pyproject}: {exc.strerror or exc}") from None
    try:
        import tomllib  # Python 3.11+
    except ImportError:
        tomllib = None
    if tomllib is not None:
        try:
            version = tomllib.loads(text).get("project", {}).get("version")
        except tomllib.TOMLDecodeError as exc:
            raise LaunchError(f"{pyproject} is not valid TOML: {exc}") from None
    else:
        version = parse_version_fallback(text)
    if not isinstance(version, str) or not version.strip():
        raise LaunchError(f"{pyproject} has no [project] version")
    return version.strip()


def parse_version_fallback(text: str) -> str | None:
    """`version = "..."` inside the [project] table, for Pythons without tomllib."""
    in_project = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("["):
            in_project = stripped == "[project]"
            continue
        if in_project:
            match = re.match(r"""version\s*=\s*["']([^"']+)["']""", stripped)
            if match:
                return match.group(1)
    return None


# --- the virtualenv ----------------------------------------------------------------


def venv_bin(venv: Path) -> Path:
    return venv / ("Scripts" if os.name == "nt" else "bin")


def venv_python(venv: Path) -> Path:
    return venv_bin(venv) / ("python.exe" if os.name == "nt" else "python")


def script_path(venv: Path, command: str) -> Path:
    return venv_bin(venv) / (command + (".exe" if os.name == "nt" else ""))


def read_json(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def private_dir(path: Path) -> None:
    """Create `path` and each missing folder above it 0700, whatever the umask ($MEM0_HOME holds
    the memories; an existing folder keeps its mode). The launcher's own copy of
    `mem0_plugin.private_files.private_folder`: it runs before the package is installed."""
    missing = []
    for folder in (path, *path.parents):
        if folder.exists():
            break
        missing.append(folder)
    for folder in reversed(missing):
        try:
            os.mkdir(str(folder), 0o700)
        except FileExistsError:
            continue
        os.chmod(str(folder), 0o700)


def write_json_atomic(path: Path, data: dict) -> None:
    private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2)
            handle.write("\n")
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def source_fingerprint(root: Path = PLUGIN_ROOT) -> str:
    """A hash of what the install is built from, so that changed code without a new version
    (a local checkout used as the plugin) is reinstalled too. Content-based: copies of the
    same release hash the same."""
    import hashlib

    digest = hashlib.sha256()
    files = [
        root / name for name in ("pyproject.toml", "setup.py", "setup.cfg", "MANIFEST.in") if (root / name).is_file()
    ]
    for name in package_dirs(root):
        for directory, dirnames, filenames in os.walk(str(root / name)):
            dirnames[:] = sorted(d for d in dirnames if d not in _skip_while_copying(directory, dirnames))
            files.extend(Path(directory) / f for f in filenames if f not in _COPY_IGNORE(directory, filenames))
    for path in sorted(files):
        try:
            content = path.read_bytes()
        except OSError:
            continue
        digest.update(path.relative_to(root).as_posix().encode("utf-8") + b"\0")
        digest.update(hashlib.sha256(content).digest())
    return digest.hexdigest()


def venv_ready(venv: Path, version: str, fingerprint: str | None = None) -> bool:
    """True when the virtualenv has this release installed and every command in place."""
    stamp = read_json(venv / STAMP_NAME)
    if not stamp or stamp.get("version") != version:
        return False
    if fingerprint is not None and stamp.get("fingerprint") != fingerprint:
        return False
    if not venv_python(venv).exists():
        return False
    return all(script_path(venv, name).exists() for name in COMMANDS)


def pointer_venv(version: str, fingerprint: str | None = None, environ=None) -> Path | None:
    """The virtualenv another run recorded in $MEM0_HOME/plugin/current.json, if usable."""
    pointer = read_json(mem0_home(environ) / "plugin" / POINTER_NAME)
    if not pointer or pointer.get("version") != version or not pointer.get("venv"):
        return None
    venv = Path(pointer["venv"])
    return venv if venv_ready(venv, version, fingerprint) else None


def record_pointer(venv: Path, version: str) -> None:
    try:
        write_json_atomic(
            mem0_home() / "plugin" / POINTER_NAME, {"version": version, "venv": str(venv), "source": str(PLUGIN_ROOT)}
        )
    except OSError as exc:  # the pointer is an optimisation, never a failure
        log(f"note: could not record the virtualenv location: {exc}")


class InstallLock:
    """An exclusive lock on a file (flock on POSIX, msvcrt on Windows), waiting up to `timeout`.

    Written here rather than taken from `filelock`: the launcher runs before the package and
    its dependencies are installed, so it has the standard library only."""

    def __init__(self, path: Path, timeout: float):
        self.path = path
        self.timeout = timeout
        self.fd: int | None = None

    def _try_lock(self) -> bool:
        if os.name == "nt":
            import msvcrt

            try:
                msvcrt.locking(self.fd, msvcrt.LK_NBLCK, 1)
                return True
            except OSError:
                return False
        import fcntl

        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError:
            return False

    def __enter__(self) -> InstallLock:
        private_dir(self.path.parent)
        self.fd = os.open(str(self.path), os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + self.timeout
        waited = False
        while not self._try_lock():
            if not waited:
                log("another start is installing the plugin; waiting for it to finish")
                waited = True
            if time.monotonic() >= deadline:
                os.close(self.fd)
                self.fd = None
                raise LaunchError(f"timed out after {self.timeout:.0f}s waiting for the install lock {self.path}")
            time.sleep(0.5)
        return self

    def __exit__(self, *exc_info) -> None:
        if self.fd is None:
            return
        try:
            if os.name == "nt":
                import msvcrt

                try:
                    os.lseek(self.fd, 0, os.SEEK_SET)
                    msvcrt.locking(self.fd, msvcrt.LK_UNLCK, 1)
                except OSError:
                    pass
            else:
                import fcntl

                fcntl.flock(self.fd, fcntl.LOCK_UN)
        finally:
            os.close(self.fd)
            self.fd = None


def run_quietly(cmd: list[str], what: str) -> None:
    """Run a helper process with its output on our stderr and no stdin; raise on failure."""
    try:
        target = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # stderr replaced by an object without a fd
        target = None
    try:
        completed = subprocess.run(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=target if target is not None else subprocess.PIPE,
            stderr=target if target is not None else subprocess.STDOUT,
        )
    except OSError as exc:
        raise LaunchError(f"{what} failed: cannot run {cmd[0]}: {exc.strerror or exc}") from None
    if target is None and completed.stdout:
        sys.stderr.write(completed.stdout.decode("utf-8", "replace"))
    if completed.returncode != 0:
        raise LaunchError(f"{what} failed (exit {completed.returncode}); see the messages above")


def base_python() -> str:
    """The interpreter that creates the virtualenv; checked against the package's minimum."""
    chosen = os.environ.get("MEM0_PLUGIN_PYTHON", "").strip()
    if not chosen:
        if sys.version_info < MIN_PYTHON:
            raise LaunchError(
                f"Python {'.'.join(map(str, MIN_PYTHON))}+ is needed, this is {sys.version.split()[0]}; "
                "set MEM0_PLUGIN_PYTHON to a newer interpreter"
            )
        return sys.executable
    try:
        out = subprocess.run(
            [chosen, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LaunchError(f"MEM0_PLUGIN_PYTHON={chosen} cannot be run: {exc}") from None
    try:
        found = tuple(int(part) for part in out.stdout.strip().split("."))
    except ValueError:
        found = ()
    if out.returncode != 0 or found < MIN_PYTHON:
        raise LaunchError(f"MEM0_PLUGIN_PYTHON={chosen} is not Python {'.'.join(map(str, MIN_PYTHON))}+")
    return chosen


def package_dirs(root: Path) -> list[str]:
    """The top-level directories that hold the package: [tool.setuptools.packages.find] where."""
    where = None
    try:
        import tomllib
    except ImportError:
        tomllib = None
    if tomllib is not None:
        try:
            data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
            where = data.get("tool", {}).get("setuptools", {}).get("packages", {}).get("find", {}).get("where")
        except (OSError, ValueError):
            where = None
    if isinstance(where, str):
        where = [where]
    if not isinstance(where, list) or not all(isinstance(item, str) for item in where):
        where = ["plugin"]
    return sorted(
        {Path(item).parts[0] for item in where if item and Path(item).parts and Path(item).parts[0] not in (".", "..")}
    )


def _skip_while_copying(directory: str, names: list[str]) -> set[str]:
    skipped = set(_COPY_IGNORE(directory, names))
    # Never copy a virtualenv that happens to live inside the package directory.
    skipped.update(name for name in names if (Path(directory) / name / "pyvenv.cfg").exists())
    return skipped


def copy_source(root: Path, dest: Path) -> Path:
    """Copy what the build needs into `dest` so pip builds there, never in the (maybe read-only) root."""
    src = dest / "src"
    src.mkdir(parents=True)
    for pattern in _BUILD_FILES:
        for path in root.glob(pattern):
            if path.is_file():
                shutil.copy2(str(path), str(src / path.name))
    for name in package_dirs(root):
        if (root / name).is_dir():
            shutil.copytree(str(root / name), str(src / name), ignore=_skip_while_copying, symlinks=False)
    return src


def install(venv: Path, version: str, root: Path = PLUGIN_ROOT) -> None:
    """Create (or repair) the virtualenv and pip-install the plugin root into it."""
    python = base_python()
    if venv.exists() and not venv_python(venv).exists():
        shutil.rmtree(str(venv), ignore_errors=True)
    if not venv_python(venv).exists():
        log(f"creating a virtualenv in {venv}")
        try:
            run_quietly([python, "-m", "venv", str(venv)], "creating the virtualenv")
        except LaunchError as exc:
            raise LaunchError(
                f"{exc}; the venv module may be missing (Debian/Ubuntu: "
                "apt install python3-venv) or set MEM0_PLUGIN_PYTHON"
            ) from None
    log(f"installing mem0 plugin {version} into {venv} (first start or new version; takes a minute)")
    for stale in venv.parent.glob("build-*"):  # left by an install that was killed
        shutil.rmtree(str(stale), ignore_errors=True)
    build_dir = Path(tempfile.mkdtemp(prefix="build-", dir=str(venv.parent)))
    try:
        source = copy_source(root, build_dir)
        extra = os.environ.get("MEM0_PLUGIN_PIP_ARGS", "").split()
        run_quietly(
            [
                str(venv_python(venv)),
                "-m",
                "pip",
                "install",
                "--disable-pip-version-check",
                "--no-input",
                "--quiet",
                *extra,
                str(source),
            ],
            "pip install of the plugin",
        )
    finally:
        shutil.rmtree(str(build_dir), ignore_errors=True)
    missing = [name for name in COMMANDS if not script_path(venv, name).exists()]
    if missing:
        raise LaunchError(f"the install did not create {', '.join(missing)} in {venv_bin(venv)}")
    write_json_atomic(
        venv / STAMP_NAME,
        {"version": version, "source": str(root), "installed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
    )
    log(f"mem0 plugin {version} is ready")


def ensure_venv(
    data_dir: Path,
    explicit: bool,
    version: str,
    reinstall: bool = False,
    installer=install,
    detach: bool = False,
    fingerprint: str | None = None,
) -> Path:
    """Return a virtualenv that has this release installed, installing it once under a lock.

    A release is `version` and, when given, the source `fingerprint`. With `detach`, the
    install runs in a separate session (see install_detached), so it finishes even when the
    agent gives up waiting for the MCP server and kills it.
    """
    ready = ready_venv(data_dir, explicit, version, reinstall, fingerprint)
    if ready is not None:
        return ready
    venv = data_dir / "venv"
    if detach:
        install_detached(data_dir, reinstall)
        if not venv_ready(venv, version, fingerprint):
            raise LaunchError(f"the install finished but {venv} is not usable; see {data_dir / 'install.log'}")
        record_pointer(venv, version)
        return venv
    try:
        timeout = float(os.environ.get("MEM0_PLUGIN_LOCK_TIMEOUT", "") or 900)
    except ValueError:
        raise LaunchError("MEM0_PLUGIN_LOCK_TIMEOUT must be a number of seconds") from None
    try:
        private_dir(data_dir)
    except OSError as exc:
        raise LaunchError(f"cannot create the data dir {data_dir}: {exc.strerror or exc}") from None
    with InstallLock(data_dir / "install.lock", timeout):
        # Whoever held the lock before us may have finished the same install meanwhile.
        if reinstall or not venv_ready(venv, version, fingerprint):
            installer(venv, version)
            if fingerprint is not None:
                stamp = read_json(venv / STAMP_NAME) or {"version": version}
                stamp["fingerprint"] = fingerprint
                write_json_atomic(venv / STAMP_NAME, stamp)
    record_pointer(venv, version)
    return venv


def ready_venv(
    data_dir: Path, explicit: bool, version: str, reinstall: bool = False, fingerprint: str | None = None
) -> Path | None:
    """A virtualenv with this release installed, without installing: the one another run
    recorded (unless the data dir was chosen explicitly), else the data dir's; None if neither."""
    if reinstall:
        return None
    if not explicit:
        shared = pointer_venv(version, fingerprint)
        if shared is not None:
            return shared
    venv = data_dir / "venv"
    return venv if venv_ready(venv, version, fingerprint) else None


def install_detached(data_dir: Path, reinstall: bool) -> None:
    """Run `launch.py --setup` in its own session, logging to <data dir>/install.log, and wait.

    An agent that starts the MCP server gives it a few seconds to answer; a first install
    takes longer, and the agent kills the server (and its process group) when it gives up.
    The detached installer survives that, so the next start (or a reconnect) finds the
    virtualenv ready instead of starting the install over.
    """
    child, log_path = start_installer(data_dir, reinstall)
    code = child.wait()
    if code != 0:
        try:
            tail = log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-15:]
        except OSError:
            tail = []
        for line in tail:
            print(line, file=sys.stderr)
        raise LaunchError(f"the install failed (exit {code}); full log: {log_path}")


def start_installer(data_dir: Path, reinstall: bool) -> tuple[subprocess.Popen, Path]:
    """`launch.py --setup` started in its own session, logging to <data dir>/install.log (see
    install_detached); the process and the log's path."""
    try:
        private_dir(data_dir)
    except OSError as exc:
        raise LaunchError(f"cannot create the data dir {data_dir}: {exc.strerror or exc}") from None
    log_path = data_dir / "install.log"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--data-dir", str(data_dir), "--setup"]
    if reinstall:
        cmd.append("--reinstall")
    if os.name == "nt":
        flags = {
            "creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
            | getattr(subprocess, "DETACHED_PROCESS", 0)
        }
    else:
        flags = {"start_new_session": True}
    log(f"installing the plugin's Python environment; progress in {log_path}")
    with os.fdopen(os.open(str(log_path), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600), "ab") as out:
        try:
            child = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=out, **flags)
        except OSError as exc:
            raise LaunchError(f"cannot start the installer: {exc.strerror or exc}") from None
    return child, log_path


def serve_while_installing(
    data_dir: Path, explicit: bool, version: str, reinstall: bool, fingerprint: str, args: list[str]
) -> int | None:
    """The MCP server's first start: the install runs detached while `mcp_standin` answers the
    agent within its start-up limit, then hands the connection to the real server. None (the
    caller installs and waits, as for any command) when no stand-in can be used: the manifest is
    missing, or the server was asked for its --help rather than to serve."""
    if any(arg in ("-h", "--help") for arg in args):
        return None
    here = Path(__file__).resolve().parent
    try:
        standin = _sibling("mcp_standin", here)
    except (ImportError, OSError, SyntaxError):
        return None
    manifest = standin.read_manifest(here)
    if manifest is None:
        return None
    installer, log_path = start_installer(data_dir, reinstall)
    venv = data_dir / "venv"
    restore_project_cwd()
    server = [str(script_path(venv, "mem0-mcp-server")), *command_args("mem0-mcp-server", args)]

    def ready() -> bool:
        if not venv_ready(venv, version, fingerprint):
            return False
        record_pointer(venv, version)
        return True

    return standin.run(manifest, server, installer, ready, log_path)


def _sibling(name: str, folder: Path):
    """A module of the launcher's own folder, by path (the launcher may be loaded by path too)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"mem0_plugin_{name}", str(folder / f"{name}.py"))
    if spec is None or spec.loader is None:
        raise ImportError(name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- running a command ---------------------------------------------------------------


def restore_project_cwd(root: Path = PLUGIN_ROOT, environ=None) -> None:
    """Codex starts plugin MCP servers in the plugin root; go back to the user's directory.

    When the working directory is the plugin root but $PWD (passed through by the agent)
    names another existing directory, that directory is where the agent was started.
    """
    environ = os.environ if environ is None else environ
    try:
        here = Path.cwd().resolve()
    except OSError:
        return
    if here != root.resolve():
        return
    pwd = env_path("PWD", environ)
    if pwd is None or not pwd.is_absolute() or not pwd.is_dir():
        return
    if pwd.resolve() != here:
        os.chdir(str(pwd))


def _unusable_dir(value: str) -> bool:
    return not value.strip() or "${" in value


def drop_unexpanded_cwd(args: list[str]) -> list[str]:
    """Remove `--cwd X` when X is empty or a placeholder the agent left unexpanded.

    Cursor's MCP config passes `--cwd ${workspaceFolder}`; a host that does not expand it
    (or has no folder open) must not make the server fail on a directory named "${...}".
    """
    out: list[str] = []
    skip = False
    for index, arg in enumerate(args):
        if skip:
            skip = False
            continue
        if arg == "--cwd" and index + 1 < len(args) and _unusable_dir(args[index + 1]):
            skip = True
            continue
        if arg.startswith("--cwd=") and _unusable_dir(arg.split("=", 1)[1]):
            continue
        out.append(arg)
    return out


def command_args(command: str, args: list[str]) -> list[str]:
    """The arguments to pass on: unchanged, except the MCP server's unusable --cwd."""
    return drop_unexpanded_cwd(args) if command == "mem0-mcp-server" else list(args)


def exec_command(program: str, args: list[str]) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "nt":
        try:
            sys.exit(subprocess.call([program, *args]))
        except KeyboardInterrupt:
            sys.exit(130)
    os.execv(program, [program, *args])


def parse_args(argv: list[str]) -> dict:
    opts = {"setup": False, "reinstall": False, "print_venv": False, "data_dir": None, "command": None, "args": []}
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg in ("-h", "--help"):
            opts["help"] = True
            return opts
        if arg == "--setup":
            opts["setup"] = True
        elif arg == "--reinstall":
            opts["reinstall"] = True
        elif arg == "--print-venv":
            opts["print_venv"] = True
        elif arg == "--data-dir":
            if index + 1 >= len(argv):
                raise LaunchError("--data-dir needs a directory")
            index += 1
            opts["data_dir"] = argv[index]
        elif arg.startswith("--data-dir="):
            opts["data_dir"] = arg.split("=", 1)[1]
        elif arg.startswith("-"):
            raise LaunchError(f"unknown launcher option {arg} (options go before the command)")
        else:
            if arg not in COMMANDS:
                raise LaunchError(f"unknown command {arg!r}; expected one of: {', '.join(COMMANDS)}")
            opts["command"] = arg
            opts["args"] = argv[index + 1 :]
            return opts
        index += 1
    return opts


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        opts = parse_args(argv)
        if opts.get("help"):
            sys.stdout.write(USAGE)
            return 0
        if opts["command"] is None and not (opts["setup"] or opts["print_venv"]):
            raise LaunchError("no command given; run with --help")
        command = opts["command"]
        if command and os.environ.get("MEM0_PLUGIN_USE_PATH", "").strip().lower() in ("1", "true", "yes"):
            on_path = shutil.which(command)
            if on_path:
                restore_project_cwd()
                exec_command(on_path, command_args(command, opts["args"]))
        version = read_plugin_version()
        data_dir, explicit = resolve_data_dir(opts["data_dir"])
        fingerprint = source_fingerprint()
        if command == "mem0-mcp-server" and not opts["print_venv"]:
            if ready_venv(data_dir, explicit, version, opts["reinstall"], fingerprint) is None:
                served = serve_while_installing(
                    data_dir, explicit, version, opts["reinstall"], fingerprint, opts["args"]
                )
                if served is not None:
                    return served
        venv = ensure_venv(
            data_dir,
            explicit,
            version,
            reinstall=opts["reinstall"],
            detach=command == "mem0-mcp-server",
            fingerprint=fingerprint,
        )
        if opts["print_venv"]:
            print(venv)
            return 0
        if command is None:
            return 0
        restore_project_cwd()
        exec_command(str(script_path(venv, command)), command_args(command, opts["args"]))
        return 0  # not reached on POSIX
    except LaunchError as exc:
        print(f"mem0-plugin: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
