"""Identity and configuration (docs/identity.md): who, which project, which branch, which store."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from mem0_plugin.errors import ConfigError
from mem0_plugin.identity import default_store_url, remote_slug, resolve_identity
from mem0_plugin.store_url import parse_store_url


def git(cwd: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env)


def make_repo(path: Path, origin: str | None = None, branch: str = "main") -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", branch)
    if origin:
        git(path, "remote", "add", "origin", origin)
    return path


@pytest.fixture
def plain_dir(tmp_path, monkeypatch) -> Path:
    """A directory outside any git repository (git is told not to look above tmp_path)."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    path = tmp_path / "plain-project"
    path.mkdir()
    return path


@pytest.mark.parametrize(
    "flag, env, expected",
    [
        ("carol", {"MEM0_USER_ID": "alice", "USER": "unixname"}, "carol"),
        (None, {"MEM0_USER_ID": "alice", "USER": "unixname"}, "alice"),
        (None, {"USER": "unixname"}, "unixname"),
        (None, {"MEM0_USER_ID": "", "USER": "unixname"}, "unixname"),
        (None, {}, "default"),
        (None, {"USER": ""}, "default"),
    ],
)
def test_user_id_order(plain_dir, flag, env, expected):
    assert resolve_identity(user_id=flag, cwd=plain_dir, env=env).user_id == expected


MEM0_MD = "# Project memory\n\n## Identity\nproject_id: from-mem0-md  # trailing comment\n\n## Retention\nsession_state: 30d\n"


@pytest.mark.parametrize(
    "case, flag, env, expected",
    [
        ("flag beats everything", "from-flag", {"MEM0_PROJECT_ID": "from-env"}, "from-flag"),
        ("env beats mem0.md", None, {"MEM0_PROJECT_ID": "from-env"}, "from-env"),
        ("mem0.md beats git", None, {}, "from-mem0-md"),
    ],
)
def test_project_order_above_git(tmp_path, case, flag, env, expected):
    repo = make_repo(tmp_path / "api", "git@github.com:acme/api.git")
    (repo / "mem0.md").write_text(MEM0_MD)
    assert resolve_identity(project_id=flag, cwd=repo, env=env).project_id == expected


def test_mem0_md_at_the_repo_root_applies_in_a_subdirectory(tmp_path):
    repo = make_repo(tmp_path / "api", "git@github.com:acme/api.git")
    (repo / "mem0.md").write_text(MEM0_MD)
    sub = repo / "src" / "pkg"
    sub.mkdir(parents=True)
    assert resolve_identity(cwd=sub, env={}).project_id == "from-mem0-md"


@pytest.mark.parametrize(
    "content",
    [
        "## Identity\n",
        "## Identity\nproject: nope\n",
        "# Identity\nproject_id: h1-is-not-the-section\n",
        "## Retention\nproject_id: wrong-section\n",
        "\x00\xff binary junk",
    ],
)
def test_mem0_md_without_a_project_id_falls_through_to_git(tmp_path, content):
    repo = make_repo(tmp_path / "api", "git@github.com:acme/api.git")
    (repo / "mem0.md").write_text(content, errors="surrogateescape")
    assert resolve_identity(cwd=repo, env={}).project_id == "acme-api"


@pytest.mark.parametrize(
    "origin",
    [
        "git@github.com:acme/api.git",
        "https://github.com/acme/api.git",
        "https://github.com/acme/api",
        "ssh://git@github.com/acme/api.git",
    ],
)
def test_project_from_the_git_origin(tmp_path, origin):
    repo = make_repo(tmp_path / "checkout-dir", origin)
    assert resolve_identity(cwd=repo, env={}).project_id == "acme-api"
    sub = repo / "deep" / "inside"
    sub.mkdir(parents=True)
    assert resolve_identity(cwd=sub, env={}).project_id == "acme-api"


def test_project_from_the_git_top_level_without_origin(tmp_path):
    repo = make_repo(tmp_path / "toplevel-name")
    sub = repo / "src"
    sub.mkdir()
    assert resolve_identity(cwd=sub, env={}).project_id == "toplevel-name"


def test_project_from_the_directory_name_outside_git(plain_dir):
    assert resolve_identity(cwd=plain_dir, env={}).project_id == "plain-project"


@pytest.mark.parametrize(
    "url, slug",
    [
        ("git@github.com:acme/api.git", "acme-api"),
        ("https://github.com/acme/api.git", "acme-api"),
        ("https://github.com/acme/api", "acme-api"),
        ("https://github.com/acme/api/", "acme-api"),
        ("http://github.com/acme/api.git", "acme-api"),
        ("ssh://git@github.com:2222/acme/api.git", "acme-api"),
        ("https://user:s3cret@github.com/acme/api.git", "acme-api"),
        ("git@gitlab.example.com:platform/web-app.git", "platform-web-app"),
        ("  git@github.com:acme/api.git\n", "acme-api"),
        ("not-a-url", None),
        ("", None),
    ],
)
def test_remote_slug(url, slug):
    assert remote_slug(url) == slug


def test_branch_is_the_current_git_branch(tmp_path):
    repo = make_repo(tmp_path / "api", branch="feature/login")
    assert resolve_identity(cwd=repo, env={}).branch == "feature/login"


def test_branch_is_unknown_outside_git_and_when_detached(tmp_path, plain_dir):
    assert resolve_identity(cwd=plain_dir, env={}).branch == "unknown"
    repo = make_repo(tmp_path / "api")
    (repo / "f").write_text("x")
    git(repo, "add", "f")
    git(repo, "commit", "-q", "-m", "one")
    git(repo, "checkout", "-q", "--detach")
    assert resolve_identity(cwd=repo, env={}).branch == "unknown"


def test_store_defaults_to_sqlite_under_home(tmp_path, plain_dir):
    home = tmp_path / "m0"
    identity = resolve_identity(cwd=plain_dir, env={"MEM0_HOME": str(home)})
    assert identity.home == home
    # sqlite:/// + the absolute path: four slashes (SQLAlchemy's convention)
    assert identity.store_url == f"sqlite:///{home}/memories.sqlite3"
    assert identity.store_url.startswith("sqlite:////")
    assert identity.store_location.path == home / "memories.sqlite3"
    assert not identity.store_explicit and not identity.store_location.explicit


def test_home_defaults_to_dot_mem0(plain_dir):
    identity = resolve_identity(cwd=plain_dir, env={})
    assert identity.home == Path.home() / ".mem0"
    assert identity.store_url == f"sqlite:///{Path.home()}/.mem0/memories.sqlite3"


def test_a_relative_home_is_taken_from_the_current_directory(plain_dir, monkeypatch):
    monkeypatch.chdir(plain_dir)
    identity = resolve_identity(env={"MEM0_HOME": "rel/home"})
    assert identity.home == plain_dir / "rel" / "home"
    assert identity.store_location.path == plain_dir / "rel" / "home" / "memories.sqlite3"


@pytest.mark.parametrize(
    "flag, env, expected",
    [
        ("sqlite:///flag.db", {"MEM0_STORE": "sqlite:///env.db"}, "sqlite:///flag.db"),
        (None, {"MEM0_STORE": "sqlite:///env.db"}, "sqlite:///env.db"),
    ],
)
def test_store_flag_then_env(plain_dir, flag, env, expected):
    identity = resolve_identity(store=flag, cwd=plain_dir, env=env)
    assert identity.store_url == expected and identity.store_explicit


def test_default_store_url_for_a_root_home():
    assert default_store_url(Path("/")) == "sqlite:////memories.sqlite3"
    assert parse_store_url(default_store_url(Path("/"))).path == Path("/memories.sqlite3")
    assert parse_store_url(default_store_url(Path("/srv/m0"))).path == Path("/srv/m0/memories.sqlite3")


def test_cwd_must_be_a_directory(tmp_path):
    with pytest.raises(ConfigError, match="not a directory"):
        resolve_identity(cwd=tmp_path / "missing", env={})


def test_identity_comes_from_the_process_environment_by_default(plain_dir):
    # conftest sets MEM0_USER_ID=alice, MEM0_PROJECT_ID=acme-api and MEM0_HOME
    identity = resolve_identity(cwd=plain_dir)
    assert (identity.user_id, identity.project_id) == ("alice", "acme-api")
    assert identity.home == Path(os.environ["MEM0_HOME"])
    assert identity.cwd == plain_dir
