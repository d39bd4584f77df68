"""The files the agents load: manifests, MCP registrations, hooks, skills and the launcher.

Claude Code, Codex and Cursor each read their own manifest (`claude-code/.claude-plugin/`,
`.codex-plugin/`, `.cursor-plugin/`). Each manifest points at an MCP config that starts the
stdio server `mem0` through `scripts/launch.py`, at the hooks that prepare the launcher's
virtualenv, and at `skills/`. These tests keep those files consistent with each other,
with pyproject.toml and with the exact strings of docs/dream.md, docs/health.md and
docs/forget.md. The last test runs a real first install through the launcher, which
takes about a minute.

Claude Code installs from `claude-code/`, a directory of relative symlinks into the
repository: it copies a plugin's whole source directory into its plugin cache (only
`.git` left out, no ignore file honoured), so a checkout's `.venv` and `.hypothesis` must
not be inside that directory. Codex reads `.agents/plugins/marketplace.json` first and
installs from the repository root, because it drops symlinks when it copies a plugin.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import py_compile
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
LAUNCHER = ROOT / "scripts" / "launch.py"

CLAUDE_DIR = ROOT / "claude-code"
PLUGIN_ROOTS = {"claude": CLAUDE_DIR, "codex": ROOT, "cursor": ROOT}
PLUGIN_MANIFESTS = {
    "claude": CLAUDE_DIR / ".claude-plugin" / "plugin.json",
    "codex": ROOT / ".codex-plugin" / "plugin.json",
    "cursor": ROOT / ".cursor-plugin" / "plugin.json",
}
MARKETPLACES = {
    "claude": ROOT / ".claude-plugin" / "marketplace.json",
    "codex": ROOT / ".agents" / "plugins" / "marketplace.json",
    "cursor": ROOT / ".cursor-plugin" / "marketplace.json",
}
# What claude-code/ holds: the manifest, the MCP config, and links to what the plugin runs
# (hooks, skills, the launcher) and what the launcher installs from (pyproject.toml, README, plugin/).
CLAUDE_DIR_LINKS = {
    ".mcp.json": "../mcp_config.json",
    "README.md": "../README.md",
    "hooks": "../hooks",
    "plugin": "../plugin",
    "pyproject.toml": "../pyproject.toml",
    "scripts": "../scripts",
    "skills": "../skills",
}
PATH_FIELDS = ("skills", "hooks", "mcpServers", "commands", "agents", "rules")
SKILLS = ("dream", "health", "forget")
ROOT_PLACEHOLDERS = ("${CLAUDE_PLUGIN_ROOT}", "${CURSOR_PLUGIN_ROOT}", "${PLUGIN_ROOT}")

# Keys .cursor-plugin/plugin.json may hold: Cursor's manifest schema has additionalProperties false.
CURSOR_MANIFEST_KEYS = {
    "name",
    "displayName",
    "description",
    "version",
    "author",
    "publisher",
    "homepage",
    "repository",
    "license",
    "logo",
    "keywords",
    "category",
    "tags",
    "commands",
    "agents",
    "skills",
    "rules",
    "hooks",
    "variables",
    "mcpServers",
}


def load_launcher():
    spec = importlib.util.spec_from_file_location("mem0_plugin_launch", LAUNCHER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


launch = load_launcher()


def read_json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def manifest_path(value: str, root: Path = ROOT) -> Path:
    """A manifest's component path, relative to the plugin root."""
    assert not value.startswith("/"), f"{value!r} must be relative to the plugin root"
    assert ".." not in Path(value).parts, f"{value!r} must stay inside the plugin root"
    return (root / value).resolve()


def mcp_config_paths() -> dict[str, Path]:
    """mcp_config.json plus every MCP file a manifest references, by agent. Claude Code reads
    its plugin's `.mcp.json` by itself."""
    found = {"generic": ROOT / "mcp_config.json", "claude": (CLAUDE_DIR / ".mcp.json").resolve()}
    for agent, path in PLUGIN_MANIFESTS.items():
        value = read_json(path).get("mcpServers")
        if isinstance(value, str):
            found[agent] = manifest_path(value, PLUGIN_ROOTS[agent])
    return found


def marketplace_source(agent: str) -> str:
    entries = [entry for entry in read_json(MARKETPLACES[agent])["plugins"] if entry["name"] == "mem0"]
    assert len(entries) == 1
    source = entries[0]["source"]
    if isinstance(source, dict):  # Codex: {"source": "local", "path": "./"}
        assert source["source"] == "local"
        source = source["path"]
    assert isinstance(source, str) and not source.startswith("/")
    return source


def frontmatter(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    match = re.match(r"---\n(.*?)\n---\n", text, re.S)
    assert match, f"{path} must start with a YAML frontmatter block"
    data = yaml.safe_load(match.group(1))
    assert isinstance(data, dict), f"{path}: frontmatter must be a mapping"
    return data


# --- manifests --------------------------------------------------------------------------


@pytest.mark.parametrize("agent", sorted(PLUGIN_MANIFESTS))
def test_plugin_manifest_is_json_named_mem0(agent):
    data = read_json(PLUGIN_MANIFESTS[agent])
    assert data["name"] == "mem0"
    assert re.fullmatch(r"[a-z0-9]([a-z0-9.-]*[a-z0-9])?", data["name"])
    assert isinstance(data.get("description"), str) and data["description"]


@pytest.mark.parametrize("agent", sorted(PLUGIN_MANIFESTS))
def test_every_path_a_manifest_names_exists(agent):
    data = read_json(PLUGIN_MANIFESTS[agent])
    for field in PATH_FIELDS:
        values = data.get(field)
        if values is None or isinstance(values, dict):
            continue
        for value in [values] if isinstance(values, str) else values:
            assert value.startswith("./"), f"{agent} {field}: {value!r} must start with ./"
            assert manifest_path(value, PLUGIN_ROOTS[agent]).exists(), f"{agent} {field}: {value} does not exist"


@pytest.mark.parametrize("agent", sorted(MARKETPLACES))
def test_marketplace_lists_mem0_at_its_plugin_root(agent):
    data = read_json(MARKETPLACES[agent])
    assert data["name"] == "mem0-dream"
    plugin_dir = (ROOT / marketplace_source(agent)).resolve()
    assert plugin_dir == PLUGIN_ROOTS[agent].resolve()
    assert (plugin_dir / f".{agent}-plugin" / "plugin.json").is_file()


def test_claude_marketplace_source_is_the_claude_code_directory():
    # Claude Code rejects "." as a relative plugin source; a directory is written "./name".
    assert marketplace_source("claude") == "./claude-code"


def test_codex_marketplace_shape():
    # Codex reads .agents/plugins/marketplace.json before .claude-plugin/marketplace.json;
    # without it Codex would install claude-code/ and drop every symlink in it.
    data = read_json(MARKETPLACES["codex"])
    assert data["interface"]["displayName"]
    entry = data["plugins"][0]
    assert entry["policy"] == {"installation": "AVAILABLE", "authentication": "ON_INSTALL"}
    assert entry["category"]


def test_versions_agree_with_pyproject():
    version = launch.read_plugin_version(ROOT)
    for path in [*PLUGIN_MANIFESTS.values()]:
        assert read_json(path)["version"] == version, path
    for path in MARKETPLACES.values():
        for entry in read_json(path)["plugins"]:
            if "version" in entry:
                assert entry["version"] == version, path


def test_claude_manifest_does_not_redeclare_standard_files():
    data = read_json(PLUGIN_MANIFESTS["claude"])
    # Claude Code loads hooks/hooks.json by itself; naming it again is a "Duplicate hooks file" error.
    assert data.get("hooks") not in ("./hooks/hooks.json", "hooks/hooks.json")
    # Its MCP server comes from claude-code/.mcp.json: with "mcpServers" naming a file,
    # `claude plugin details` counted "MCP servers (0)".
    assert "mcpServers" not in data
    # A .mcp.json at the repo root would also be read as the project's own MCP config by anyone
    # who opens this repository in Claude Code; the plugin's lives in claude-code/.
    assert not (ROOT / ".mcp.json").exists()


def test_claude_code_directory_holds_only_the_plugin():
    found = {entry.name for entry in CLAUDE_DIR.iterdir()}
    assert found == {".claude-plugin", *CLAUDE_DIR_LINKS}, found
    assert {entry.name for entry in (CLAUDE_DIR / ".claude-plugin").iterdir()} == {"plugin.json"}
    for name, target in CLAUDE_DIR_LINKS.items():
        link = CLAUDE_DIR / name
        # Relative links inside the repository: Claude Code skips a link that escapes the
        # marketplace directory, and a clone anywhere else keeps them working.
        assert link.is_symlink() and os.readlink(link) == target, name
        assert link.exists(), f"claude-code/{name} -> {target} is dangling"


def test_claude_code_directory_links_what_the_launcher_installs_from():
    needed = {"pyproject.toml", *launch.package_dirs(ROOT)}
    assert needed <= set(CLAUDE_DIR_LINKS), needed - set(CLAUDE_DIR_LINKS)
    # The launcher run through the link finds the repository's own files.
    assert (CLAUDE_DIR / "scripts" / "launch.py").resolve() == LAUNCHER.resolve()


def test_the_claude_code_cache_copy_is_a_working_plugin(tmp_path):
    """Claude Code copies claude-code/ with each symlink replaced by what it names: that copy
    alone must install the same package and run the launcher."""
    cache = tmp_path / "cache" / "mem0"
    shutil.copytree(CLAUDE_DIR, cache, symlinks=False)
    assert not any(path.is_symlink() for path in cache.rglob("*"))
    for unwanted in (".venv", ".hypothesis", ".git", "tests", "benchmarks", "docs"):
        assert not (cache / unwanted).exists(), unwanted
    assert launch.read_plugin_version(cache) == launch.read_plugin_version(ROOT)
    assert launch.source_fingerprint(cache) == launch.source_fingerprint(ROOT)
    assert read_json(cache / ".mcp.json") == read_json(ROOT / "mcp_config.json")
    shown = run_launcher("--help", launcher=cache / "scripts" / "launch.py")
    assert shown.returncode == 0 and "usage:" in shown.stdout
    for skill in SKILLS:  # "two levels above this file" is the plugin root in the copy too
        assert (cache / "skills" / skill / "SKILL.md").resolve().parents[2] == cache.resolve()


def test_cursor_manifest_keeps_to_the_cursor_schema():
    data = read_json(PLUGIN_MANIFESTS["cursor"])
    assert set(data) <= CURSOR_MANIFEST_KEYS, set(data) - CURSOR_MANIFEST_KEYS
    assert set(data["author"]) <= {"name", "email"}


def test_codex_manifest_interface():
    data = read_json(PLUGIN_MANIFESTS["codex"])
    interface = data["interface"]
    assert interface["displayName"]
    prompts = interface.get("defaultPrompt", [])
    assert len(prompts) <= 3 and all(len(prompt) <= 128 for prompt in prompts)


# --- MCP registration -------------------------------------------------------------------


@pytest.mark.parametrize("agent", ["generic", "claude", "codex", "cursor"])
def test_mcp_config_registers_mem0_as_a_stdio_command(agent):
    path = mcp_config_paths()[agent]
    servers = read_json(path)["mcpServers"]
    assert list(servers) == ["mem0"], f"{path.name} must register exactly the server mem0"
    server = servers["mem0"]
    assert server.get("type", "stdio") == "stdio"
    assert "url" not in server
    assert server["command"] == "python3"
    script, command = server["args"][0], server["args"][1]
    assert command == "mem0-mcp-server"
    for placeholder in ROOT_PLACEHOLDERS:
        script = script.replace(placeholder, str(ROOT))
    base = ROOT / server.get("cwd", ".")
    assert (base / script).resolve() == LAUNCHER.resolve(), f"{path.name}: {server['args'][0]}"


def test_claude_uses_the_canonical_mcp_config():
    assert mcp_config_paths()["claude"] == (ROOT / "mcp_config.json").resolve()
    assert (CLAUDE_DIR / ".mcp.json").is_symlink()
    args = read_json(ROOT / "mcp_config.json")["mcpServers"]["mem0"]["args"]
    assert args[0].startswith("${CLAUDE_PLUGIN_ROOT}/")


def test_codex_mcp_config_runs_from_the_plugin_root():
    # Codex expands no placeholder in plugin MCP commands; a relative cwd is rooted at the plugin.
    server = read_json(mcp_config_paths()["codex"])["mcpServers"]["mem0"]
    assert server["cwd"] == "."
    assert not any("${" in arg for arg in server["args"])
    # Codex passes a server only a few variables; these carry identity, store and the
    # user's directory (the launcher returns to $PWD from the plugin root).
    assert {"PWD", "MEM0_HOME", "MEM0_STORE", "MEM0_USER_ID", "MEM0_PROJECT_ID"} <= set(server["env_vars"])


# --- hooks ------------------------------------------------------------------------------


def test_claude_session_start_hook_runs_the_setup():
    hooks = read_json(ROOT / "hooks" / "hooks.json")["hooks"]["SessionStart"]
    commands = [hook for group in hooks for hook in group["hooks"]]
    assert commands and all(hook["type"] == "command" for hook in commands)
    command = commands[0]["command"]
    assert "scripts/launch.py" in command and command.endswith("--setup")
    assert commands[0]["timeout"] >= 300


def test_cursor_session_start_hook_runs_the_setup():
    data = read_json(ROOT / "hooks" / "cursor-hooks.json")
    assert data["version"] == 1
    command = data["hooks"]["sessionStart"][0]["command"]
    assert "scripts/launch.py" in command and command.endswith("--setup")


# --- skills -----------------------------------------------------------------------------


@pytest.mark.parametrize("skill", SKILLS)
def test_skill_frontmatter(skill):
    data = frontmatter(ROOT / "skills" / skill / "SKILL.md")
    assert data["name"] == skill
    assert isinstance(data["description"], str) and 20 <= len(data["description"]) <= 1024
    assert f"/mem0:{skill}" in data["description"]


SPEC_STRINGS = {
    "dream": [
        "No memories found for project <project_id>. Nothing to consolidate.",
        "Dream complete. No duplicate, contradictory, or stale memories found.",
        "## dream — consolidation report",
        "Merges (<N>):",
        '  [mem0:<id1>] + [mem0:<id2>] → "<merged content, first 100 chars>"',
        "Conflicts (<N>):",
        '  [mem0:<idA>] vs [mem0:<idB>] — "<topic>" [A/B/skip]',
        "Prune (<N>):",
        "  [mem0:<id>] — <type>, <age>d old",
        "Proposed: <N> merges, <N> prunes, <N> conflicts. Apply? [Y/n]",
        'Conflict <i>/<N>: [mem0:<idA>] vs [mem0:<idB>] — "<topic>" [A/B/skip]',
        "Cancelled. No changes made.",
        "Dream complete — merged: <N>, pruned: <N>, conflicts resolved: <N>, skipped: <N>",
        "[mem0-dream --auto] Another run in progress — skipping.",
        "[mem0-dream --auto] project=<id>  merged=<N>  pruned=<N>  conflicts_skipped=<N>",
        "mem0-dream detected <N> contradiction(s) requiring manual review. "
        "Run /mem0:dream to resolve them interactively.",
        '"source": "mem0-dream"',
        '"source": "mem0-dream-auto"',
        "infer=false",
        "page_size=200",
        "mem0-dream --plan --json -o",
        "mem0-dream --apply",
        "--resolve <idA>=A",
        "--yes",
        "mem0-dream --auto",
    ],
    "health": [
        "mem0-health --deep",
        "## Troubleshooting",
        "## Memory Quality",
        "Duplicates: <N> · Stale: <N> · Contradictions: <N> · Orphans: <N>",
        "Memory quality: clean.",
        "Run /mem0:dream (or mem0-dream in a terminal) to fix.",
        "/mem0:dream",
        "--json",
    ],
    "forget": [
        "<n>. <first 120 chars> (type: <type>, created: <date>) [ID: <short id>]",
        "Delete which memories? Enter numbers (e.g., 1,3,5), 'all', or 'cancel'.",
        'Found: "<first 120 chars>" (created <date>)',
        "Delete this memory? [y/N]",
        "Deleted <N> memories.",
        "--json",
        "mem0-forget --ids <id1>,<id2>,... --yes",
        "mem0-memories restore <id>",
    ],
}


@pytest.mark.parametrize("skill", SKILLS)
def test_skill_uses_the_exact_spec_strings(skill):
    text = (ROOT / "skills" / skill / "SKILL.md").read_text(encoding="utf-8")
    missing = [string for string in SPEC_STRINGS[skill] if string not in text]
    assert not missing, f"skills/{skill}/SKILL.md lacks: {missing}"


@pytest.mark.parametrize("skill", SKILLS)
def test_skill_runs_commands_through_the_launcher(skill):
    text = (ROOT / "skills" / skill / "SKILL.md").read_text(encoding="utf-8")
    assert 'python3 "${CLAUDE_PLUGIN_ROOT}/scripts/launch.py"' in text
    assert "two levels above this file" in text


# --- the launcher, without installing ------------------------------------------------------


@pytest.mark.parametrize("script", [LAUNCHER, LAUNCHER.with_name("mcp_standin.py")], ids=lambda p: p.name)
def test_launcher_compiles_with_a_bare_python(tmp_path, script):
    py_compile.compile(str(script), cfile=str(tmp_path / "launch.pyc"), doraise=True)
    tree = ast.parse(script.read_text(encoding="utf-8"))
    imports = {
        alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    }
    imports |= {
        node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    }
    assert imports <= set(sys.stdlib_module_names) | {"__future__"}, imports


def run_launcher(*args, env=None, cwd=None, timeout=60, launcher=LAUNCHER):
    return subprocess.run(
        [sys.executable, str(launcher), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def test_launcher_help_and_errors():
    shown = run_launcher("--help")
    assert shown.returncode == 0 and "usage:" in shown.stdout
    for name in launch.COMMANDS:
        assert name in shown.stdout
    for args in (["no-such-command"], [], ["--bogus", "mem0-dream"], ["--data-dir"]):
        failed = run_launcher(*args)
        assert failed.returncode == 1, args
        assert failed.stdout == ""
        lines = failed.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("mem0-plugin: error: "), failed.stderr


def test_version_parser_without_tomllib():
    text = '[build-system]\nversion = "9"\n[project]\nname = "x"\nversion = "1.2.3"\n[tool.x]\nversion = "7"\n'
    assert launch.parse_version_fallback(text) == "1.2.3"
    assert launch.parse_version_fallback("[project]\nname = 'x'\n") is None


def test_data_dir_precedence_and_unexpanded_placeholders(tmp_path):
    home = tmp_path / "home"
    env = {"MEM0_HOME": str(home)}
    assert launch.resolve_data_dir(None, env) == (home / "plugin", False)
    env["CLAUDE_PLUGIN_DATA"] = "${CLAUDE_PLUGIN_DATA}"  # an agent that did not expand it
    assert launch.resolve_data_dir(None, env) == (home / "plugin", False)
    env["CLAUDE_PLUGIN_DATA"] = str(tmp_path / "claude")
    assert launch.resolve_data_dir(None, env) == (tmp_path / "claude", True)
    env["MEM0_PLUGIN_DATA"] = str(tmp_path / "mine")
    assert launch.resolve_data_dir(None, env) == (tmp_path / "mine", True)
    assert launch.resolve_data_dir(str(tmp_path / "flag"), env) == (tmp_path / "flag", True)


def test_mcp_server_drops_an_unexpanded_cwd_only():
    drop = launch.command_args
    assert drop("mem0-mcp-server", ["--cwd", "${workspaceFolder}"]) == []
    assert drop("mem0-mcp-server", ["--cwd", "", "--debug"]) == ["--debug"]
    assert drop("mem0-mcp-server", ["--cwd=${workspaceFolder}"]) == []
    assert drop("mem0-mcp-server", ["--cwd", "/work/x"]) == ["--cwd", "/work/x"]
    assert drop("mem0-memories", ["add", "--cwd", "${x}"]) == ["add", "--cwd", "${x}"]


def test_returns_from_the_plugin_root_to_the_users_directory(tmp_path, monkeypatch):
    root, project = tmp_path / "plugin", tmp_path / "project"
    root.mkdir()
    project.mkdir()
    monkeypatch.chdir(root)
    launch.restore_project_cwd(root, {"PWD": str(project)})
    assert Path.cwd() == project.resolve()
    # Anywhere else, or without a usable PWD, the directory stays as it is.
    launch.restore_project_cwd(root, {"PWD": str(root)})
    assert Path.cwd() == project.resolve()
    monkeypatch.chdir(root)
    launch.restore_project_cwd(root, {"PWD": "${PWD}"})
    assert Path.cwd() == root.resolve()


def fake_installer(calls, delay=0.0):
    """Stands in for pip: makes a venv that venv_ready() accepts."""

    def install(venv, version, fingerprint=None):
        calls.append(version)
        time.sleep(delay)
        bin_dir = launch.venv_bin(venv)
        bin_dir.mkdir(parents=True, exist_ok=True)
        for name in ("python", *launch.COMMANDS):
            (bin_dir / name).write_text("")
        launch.write_json_atomic(venv / launch.STAMP_NAME, {"version": version})

    return install


def test_concurrent_first_starts_install_once(tmp_path):
    calls, errors = [], []
    data = tmp_path / "data"

    def start():
        try:
            launch.ensure_venv(data, True, "0.1.0", installer=fake_installer(calls, delay=0.5))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not errors
    assert calls == ["0.1.0"]


def test_a_new_version_reinstalls_and_the_same_version_does_not(tmp_path):
    calls = []
    data = tmp_path / "data"
    launch.ensure_venv(data, True, "0.0.9", installer=fake_installer(calls))
    launch.ensure_venv(data, True, "0.0.9", installer=fake_installer(calls))
    assert calls == ["0.0.9"]
    launch.ensure_venv(data, True, "0.1.0", installer=fake_installer(calls))
    assert calls == ["0.0.9", "0.1.0"]
    launch.ensure_venv(data, True, "0.1.0", reinstall=True, installer=fake_installer(calls))
    assert calls == ["0.0.9", "0.1.0", "0.1.0"]


def test_changed_source_without_a_new_version_reinstalls(tmp_path):
    calls = []
    data = tmp_path / "data"
    launch.ensure_venv(data, True, "0.1.0", installer=fake_installer(calls), fingerprint="aaa")
    launch.ensure_venv(data, True, "0.1.0", installer=fake_installer(calls), fingerprint="aaa")
    assert calls == ["0.1.0"]
    launch.ensure_venv(data, True, "0.1.0", installer=fake_installer(calls), fingerprint="bbb")
    assert calls == ["0.1.0", "0.1.0"]
    assert launch.read_json(data / "venv" / launch.STAMP_NAME)["fingerprint"] == "bbb"


def test_source_fingerprint_covers_the_package_and_nothing_else(tmp_path):
    root = tmp_path / "root"
    (root / "plugin" / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "x"\nversion = "1"\n[tool.setuptools.packages.find]\nwhere = ["plugin"]\n'
    )
    (root / "plugin" / "pkg" / "mod.py").write_text("A = 1\n")
    first = launch.source_fingerprint(root)
    (root / "README.md").write_text("docs\n")
    (root / "plugin" / "pkg" / "__pycache__").mkdir()
    (root / "plugin" / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"x")
    (root / "tests").mkdir()
    (root / "tests" / "test_x.py").write_text("")
    assert launch.source_fingerprint(root) == first
    (root / "plugin" / "pkg" / "mod.py").write_text("A = 2\n")
    assert launch.source_fingerprint(root) != first


def test_a_run_without_data_dir_reuses_the_recorded_virtualenv(tmp_path, mem0_home):
    calls = []
    agent_data = tmp_path / "claude-plugin-data"
    venv = launch.ensure_venv(agent_data, True, "0.1.0", installer=fake_installer(calls))
    assert launch.read_json(mem0_home / "plugin" / launch.POINTER_NAME)["venv"] == str(venv)
    # A skill's shell command has no CLAUDE_PLUGIN_DATA: it finds the same venv.
    again = launch.ensure_venv(mem0_home / "plugin", False, "0.1.0", installer=fake_installer(calls))
    assert again == venv and calls == ["0.1.0"]


# --- the launcher, for real -----------------------------------------------------------------


def pip_reaches_an_index() -> bool:
    try:
        probe = subprocess.run(
            [sys.executable, "-m", "pip", "index", "versions", "pip", "--disable-pip-version-check"],
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


class FirstInstall:
    """The launcher's real first install into an empty data dir, started on a background thread
    as soon as the session has collected the test that checks it (`start_early`, conftest.py):
    pip takes about a minute, mostly waiting on one core, while the rest of the suite runs.

    One install per run: every pytest-xdist worker collects the test, and the worker that
    creates the run's folder first owns the install. It waits for it before it exits
    (`wait`, called at the session's end), and writes what happened to `result.json`; the test,
    on whichever worker, reads that file.

    Its own folder and environment, fixed when it starts (tests meanwhile change the process's
    environment and working directory): MEM0_HOME in the folder, as mem0_home gives every test."""

    started: FirstInstall | None = None

    def __init__(self):
        run = os.environ.get("PYTEST_XDIST_TESTRUNUID") or f"{os.getpid()}-{time.time_ns()}"
        self.folder = Path(tempfile.gettempdir()) / f"mem0-first-install-{run}"
        self.data = self.folder / "data"
        self.root = self.folder / "agent-cache" / "src"  # where launch.copy_source puts it
        self.result = self.folder / "result.json"
        self.env = {
            **os.environ,
            "MEM0_HOME": str(self.folder / "mem0home"),
            "MEM0_USER_ID": "alice",
            "MEM0_PROJECT_ID": "acme-api",
            "MEM0_DREAM_LOCK": str(self.folder / "dream_auto.lock"),
            "MEM0_PLUGIN_USE_PATH": "",
            "CLAUDE_PLUGIN_DATA": "",
            "MEM0_PLUGIN_DATA": "",
        }
        self.env.pop("MEM0_STORE", None)
        self.thread: threading.Thread | None = None

    @classmethod
    def start(cls) -> FirstInstall:
        if cls.started is None:
            cls.started = cls()
            try:
                cls.started.folder.mkdir()
            except FileExistsError:
                return cls.started  # another worker owns it
            cls.started.thread = threading.Thread(target=cls.started._install, name="first-install", daemon=True)
            cls.started.thread.start()
        return cls.started

    def wait(self) -> None:
        if self.thread is not None:
            self.thread.join(timeout=1000)

    def _install(self) -> None:
        outcome: dict = {"reachable": False}
        try:
            outcome["reachable"] = pip_reaches_an_index()
            if outcome["reachable"]:
                # The plugin as an agent receives it: plain files, here a snapshot (which also
                # keeps edits made to the working tree meanwhile from changing the source under
                # the test). The MCP server's first start installs in a detached process (log:
                # install.log) and keeps standard output for the server alone.
                copied = launch.copy_source(ROOT, self.root.parent)
                assert copied == self.root, copied
                (self.root / "scripts").mkdir()
                (self.root / "scripts" / "launch.py").write_bytes(LAUNCHER.read_bytes())
                first = self.run("--data-dir", str(self.data), "mem0-mcp-server", "--help", timeout=900)
                outcome.update(returncode=first.returncode, stdout=first.stdout, stderr=first.stderr)
        except BaseException as exc:  # reported by the test
            outcome["failure"] = f"{type(exc).__name__}: {exc}"
        partial = self.folder / "result.part"
        partial.write_text(json.dumps(outcome), encoding="utf-8")
        partial.replace(self.result)

    def run(self, *args, timeout=120) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, str(self.root / "scripts" / "launch.py"), *args],
            capture_output=True,
            text=True,
            env=self.env,
            cwd=self.folder,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )

    def outcome(self) -> dict:
        """What the owner's install did, once it has finished (on this worker or another)."""
        deadline = time.monotonic() + 1000
        while not self.result.exists():
            assert time.monotonic() < deadline, "the first install did not finish"
            time.sleep(0.2)
        outcome = json.loads(self.result.read_text(encoding="utf-8"))
        assert "failure" not in outcome, outcome.get("failure")
        return outcome


@pytest.mark.start_early.with_args(FirstInstall.start)
def test_launcher_installs_once_and_runs_a_command():
    """A first start into an empty data dir: pip install, then the commands run from the venv."""
    install = FirstInstall.start()  # (already started at collection unless the session could not)
    try:
        outcome = install.outcome()
        if not outcome["reachable"]:
            pytest.skip("pip cannot reach a package index; the first install needs one")
        check_first_install(install, outcome)
    finally:
        shutil.rmtree(install.folder, ignore_errors=True)


def check_first_install(install: FirstInstall, first: dict) -> None:
    root, data = install.root, install.data
    assert first["returncode"] == 0, first["stderr"][-3000:]
    assert first["stdout"].startswith("usage: mem0-mcp-server"), first["stdout"][:500]
    assert "is ready" in (data / "install.log").read_text(encoding="utf-8")
    stamp = data / "venv" / launch.STAMP_NAME
    assert launch.read_json(stamp)["version"] == launch.read_plugin_version(root)
    installed_at = stamp.stat().st_mtime

    shown = install.run("--data-dir", str(data), "mem0-memories", "--help")
    assert shown.returncode == 0, shown.stderr[-3000:]
    assert "usage" in shown.stdout.lower() and "mem0-memories" in shown.stdout
    assert "[mem0-plugin]" not in shown.stderr  # nothing to install the second time

    setup = install.run("--data-dir", str(data), "--setup")
    assert setup.returncode == 0 and setup.stdout == "" and setup.stderr == ""
    assert stamp.stat().st_mtime == installed_at

    where = install.run("--data-dir", str(data), "--print-venv")
    assert where.returncode == 0 and Path(where.stdout.strip()) == data / "venv"
