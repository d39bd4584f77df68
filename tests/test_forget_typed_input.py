"""What `mem0-forget` does with what the user types (docs/forget.md, docs/safety.md), run as installed.

* A credential typed as the query is never printed back in full. Listings already mask
  memory text (`secrets.mask`); the echoed query ("Found N memories matching …", "No
  memories match …", the `query` of `--json`, a refused answer at the prompt) is masked
  the same way.
* The selection prompt takes ASCII digits only: other Unicode digits (which `int()`
  would read) are not understood, and the question is asked again.
"""

from __future__ import annotations

import json

import pytest

MEMORY = "Auth service notes for the staging cluster"
# (the secret as typed, how it is shown)
SECRETS = [
    ("AKIAIOSFODNN7EXAMPLE", "AKIA****"),
    ("sk-proj-Abc123Def456Ghi789Jkl012", "sk-p****"),
    ("password=hunter2hunter2", "password=hun****"),
    ("ghp_" + "a1B2c3D4e5" * 4, "ghp_****"),
    ("Bearer abcdefghijklmnopqrstuvwxyz123456", "Bearer abcd****"),
    ("postgres://admin:s3cretpassw0rd@db.example.com/app", "postgres://admin:s3c****@db.example.com/app"),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "eyJh****"),
    ("api_key: 9f8e7d6c5b4a39281706", "api_key: 9f8e****"),
]
SECRET_IDS = [shown for _, shown in SECRETS]


def _raw_parts(secret: str) -> list[str]:
    """The pieces of the secret that must not appear (the whole, and its long words)."""
    return [secret] + [word for word in secret.replace("=", " ").replace(":", " ").split() if len(word) >= 16]


@pytest.fixture
def forget(run_cli, tmp_path):
    assert run_cli("mem0-memories", "add", MEMORY, cwd=str(tmp_path)).returncode == 0

    def run(*args, input=None):
        done = run_cli("mem0-forget", *args, input=input, cwd=str(tmp_path))
        assert done.returncode == 0, done.stderr
        return done

    return run


def _assert_hidden(done, secret: str) -> None:
    for part in _raw_parts(secret):
        assert part not in done.stdout and part not in done.stderr, part


@pytest.mark.parametrize("secret, shown", SECRETS, ids=SECRET_IDS)
def test_a_query_that_matches_is_echoed_masked(forget, secret, shown):
    done = forget("auth", *secret.split(" "), input="cancel\n")
    assert done.stdout.startswith(f'Found 1 memory matching "auth {shown}":\n1. {MEMORY} (type: unknown')
    assert "Cancelled. Nothing deleted." in done.stdout
    _assert_hidden(done, secret)


@pytest.mark.parametrize("secret, shown", SECRETS, ids=SECRET_IDS)
def test_a_query_without_matches_is_echoed_masked(forget, secret, shown):
    done = forget(secret)
    assert done.stdout == f'No memories match "{shown}" in project acme-api. Nothing deleted.\n'
    _assert_hidden(done, secret)


@pytest.mark.parametrize("secret, shown", SECRETS, ids=SECRET_IDS)
def test_json_carries_the_query_masked(forget, secret, shown):
    done = forget("auth", secret, "--json")
    answer = json.loads(done.stdout)
    assert answer["query"] == f"auth {shown}"
    assert [r["memory"] for r in answer["results"]] == [MEMORY]
    _assert_hidden(done, secret)


@pytest.mark.parametrize(
    "secret, shown",
    [s for s in SECRETS if " " not in s[0]],
    ids=[shown for secret, shown in SECRETS if " " not in secret],
)
def test_a_secret_pasted_at_the_prompt_is_refused_masked(forget, secret, shown):
    done = forget("auth", input=f"{secret}\ncancel\n")
    assert f"Not understood: {shown!r}." in done.stdout
    _assert_hidden(done, secret)


@pytest.mark.parametrize("query", ["auth", "auth service", "staging auth notes"])
def test_a_plain_query_is_echoed_as_typed(forget, query):
    assert forget(*query.split(" "), input="cancel\n").stdout.startswith(f'Found 1 memory matching "{query}":\n')
    assert json.loads(forget(query, "--json").stdout)["query"] == query


@pytest.mark.parametrize(
    "answer",
    [
        "\u0661",  # Arabic-Indic 1
        "\uff11",  # full-width 1
        "\u0967",  # Devanagari 1
        "\u0661-\u0661",  # a range of them
        "1,\u0661",  # one good number does not carry a bad one
        "\u00b9",  # superscript 1
    ],
)
def test_non_ascii_digits_at_the_prompt_are_not_understood_and_delete_nothing(forget, answer):
    done = forget("auth", input=f"{answer}\ncancel\n")
    assert "Not understood: " in done.stdout
    assert done.stdout.count("Delete which memories?") == 2
    assert done.stdout.endswith("Cancelled. Nothing deleted.\n")
    assert "Deleted" not in done.stdout
