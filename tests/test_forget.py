"""`mem0-forget` (docs/forget.md): search or id, confirm, delete; never without a yes; restorable."""

from __future__ import annotations

import json

import pytest
from mem0_plugin.forget import parse_selection

ID1 = "11111111-1111-4111-8111-111111111111"
ID2 = "22222222-2222-4222-8222-222222222222"
ID3 = "33333333-3333-4333-8333-333333333333"
ID4 = "44444444-4444-4444-8444-444444444444"
OTHER_PROJECT = "55555555-5555-4555-8555-555555555555"
PLANTED = [
    {
        "id": ID1,
        "memory": "Use PostgreSQL for the auth database",
        "metadata": {"type": "decision"},
        "created_at": "2026-05-01T10:00:00Z",
    },
    {
        "id": ID2,
        "memory": "Auth tokens expire after 15 minutes",
        "metadata": {"type": "convention"},
        "created_at": "2026-05-02T10:00:00Z",
    },
    {"id": ID3, "memory": "Deploy the auth service to ECS", "metadata": {}, "created_at": "2026-05-03T10:00:00Z"},
    {
        "id": ID4,
        "memory": "Run tests with pytest -q",
        "metadata": {"type": "convention"},
        "created_at": "2026-05-04T10:00:00Z",
    },
    {
        "id": OTHER_PROJECT,
        "memory": "Auth in the other app uses OAuth",
        "app_id": "other-app",
        "created_at": "2026-05-05T10:00:00Z",
    },
]
PROMPT = "Delete which memories? Enter numbers (e.g., 1,3,5), 'all', or 'cancel'. "
LISTING = (
    "\n".join(
        [
            'Found 3 memories matching "auth":',
            "1. Use PostgreSQL for the auth database (type: decision, created: 2026-05-01) [ID: 11111111]",
            "2. Deploy the auth service to ECS (type: unknown, created: 2026-05-03) [ID: 33333333]",
            "3. Auth tokens expire after 15 minutes (type: convention, created: 2026-05-02) [ID: 22222222]",
        ]
    )
    + "\n"
)


@pytest.fixture
def planted(run_cli, tmp_path):
    source = tmp_path / "planted.json"
    source.write_text(json.dumps(PLANTED))
    done = run_cli("mem0-memories", "import", str(source), cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr


@pytest.fixture
def forget(run_cli, tmp_path):
    def run(*args, input=None):
        return run_cli("mem0-forget", *args, input=input, cwd=str(tmp_path))

    return run


@pytest.fixture
def remaining(run_cli, tmp_path):
    def ids() -> set[str]:
        done = run_cli("mem0-memories", "export", "--all-projects", cwd=str(tmp_path))
        return {json.loads(line)["id"] for line in done.stdout.splitlines()}

    return ids


ALL = {ID1, ID2, ID3, ID4, OTHER_PROJECT}


def restore_lines(*ids: str) -> str:
    return "".join(f"Undo with: mem0-memories restore {i}\n" for i in ids)


def test_cancel_deletes_nothing(planted, forget, remaining):
    done = forget("auth", input="cancel\n")
    assert done.returncode == 0
    assert done.stdout == LISTING + PROMPT + "Cancelled. Nothing deleted.\n"
    assert remaining() == ALL


@pytest.mark.parametrize("answer", ["", None])
def test_empty_answer_or_end_of_input_cancels(planted, forget, remaining, answer):
    done = forget("auth", input=answer if answer is None else answer + "\n")
    tail = "\n" if answer is None else ""
    assert done.stdout == LISTING + PROMPT + tail + "Cancelled. Nothing deleted.\n"
    assert remaining() == ALL


def test_pick_one_and_three(backend, planted, forget, remaining):
    done = forget("auth", input="1,3\n")
    assert done.returncode == 0
    assert done.stdout == LISTING + PROMPT + "Deleted 2 memories.\n" + restore_lines(ID1, ID2)
    assert remaining() == {ID3, ID4, OTHER_PROJECT}


def test_all(planted, forget, remaining):
    done = forget("auth", input="all\n")
    assert done.stdout == LISTING + PROMPT + "Deleted 3 memories.\n" + restore_lines(ID1, ID3, ID2)
    assert remaining() == {ID4, OTHER_PROJECT}, "another project's match is never listed nor deleted"


def test_invalid_answer_asks_again(planted, forget, remaining):
    done = forget("auth", input="7\nfoo\n2\n")
    error = "Not understood: '{}'. Enter numbers from 1 to 3 (e.g., 1,3,5), 'all', or 'cancel'.\n"
    assert done.stdout == (
        LISTING
        + PROMPT
        + error.format("7")
        + PROMPT
        + error.format("foo")
        + PROMPT
        + "Deleted 1 memory.\n"
        + restore_lines(ID3)
    )
    assert remaining() == ALL - {ID3}


def test_by_id_yes(backend, planted, forget, remaining):
    done = forget(ID2, input="y\n")
    assert done.returncode == 0
    assert done.stdout == (
        'Found: "Auth tokens expire after 15 minutes" (created 2026-05-02)\n'
        "Delete this memory? [y/N] Deleted 1 memory.\n" + restore_lines(ID2)
    )
    assert remaining() == ALL - {ID2}


@pytest.mark.parametrize("answer, tail", [("N\n", ""), ("\n", ""), ("", "\n"), ("what\nno\n", "")])
def test_by_id_anything_but_yes_keeps_it(planted, forget, remaining, answer, tail):
    done = forget(ID2, input=answer)
    prompts = "Delete this memory? [y/N] " * (2 if answer.startswith("what") else 1)
    assert done.stdout == (
        'Found: "Auth tokens expire after 15 minutes" (created 2026-05-02)\n'
        + prompts
        + tail
        + "Cancelled. Nothing deleted.\n"
    )
    assert remaining() == ALL


def test_by_id_reaches_the_users_other_projects(planted, forget, remaining):
    done = forget(OTHER_PROJECT, input="yes\n")
    assert "Deleted 1 memory.\n" in done.stdout
    assert remaining() == ALL - {OTHER_PROJECT}


def test_unknown_id_and_no_matches_are_clear(planted, forget, remaining):
    unknown = "99999999-9999-4999-8999-999999999999"
    done = forget(unknown)  # exit 3 and one line, as with --ids
    assert (done.returncode, done.stdout) == (3, "")
    assert done.stderr == f"mem0-forget: error: memory {unknown} not found; nothing was deleted\n"
    done = forget("kubernetes", "helm")
    assert (done.returncode, done.stdout) == (
        0,
        'No memories match "kubernetes helm" in project acme-api. Nothing deleted.\n',
    )
    assert remaining() == ALL


def test_json_lists_full_ids_and_deletes_nothing(planted, forget, remaining):
    done = forget("auth", "--json", input="all\n")
    assert done.returncode == 0
    answer = json.loads(done.stdout)
    assert answer["query"] == "auth" and answer["project_id"] == "acme-api"
    assert [r["id"] for r in answer["results"]] == [ID1, ID3, ID2]
    assert set(answer["results"][0]) == {"id", "memory", "type", "created_at", "lifecycle_state", "app_id", "score"}
    assert remaining() == ALL


def test_ids_yes_deletes_exactly_those(backend, planted, forget, remaining):
    done = forget("--ids", f"{ID1}, {ID4}", "--yes")
    assert done.returncode == 0
    assert done.stdout == "Deleted 2 memories.\n" + restore_lines(ID1, ID4)
    assert remaining() == {ID2, ID3, OTHER_PROJECT}


def test_ids_with_an_unknown_id_delete_nothing(planted, forget, remaining):
    missing = "99999999-9999-4999-8999-999999999999"
    done = forget("--ids", f"{ID1},{missing}", "--yes")
    assert done.returncode == 3
    assert done.stdout == ""
    assert done.stderr == f"mem0-forget: error: memory {missing} not found; nothing was deleted\n"
    assert remaining() == ALL


@pytest.mark.parametrize(
    "args, message",
    [
        (["--ids", ID1], "--ids deletes without asking: add --yes to confirm"),
        (["auth", "--yes"], "--yes only goes with --ids; a search or an id asks before deleting"),
        ([], "what should be forgotten? Give a search query, a memory id, or --ids ID,... --yes"),
    ],
)
def test_refusals(planted, forget, remaining, args, message):
    done = forget(*args)
    assert done.returncode == 2
    assert done.stderr == f"mem0-forget: error: {message}\n"
    assert remaining() == ALL


def test_another_users_memory_is_not_found(planted, run_cli, tmp_path, remaining):
    done = run_cli("mem0-forget", "--ids", ID1, "--yes", "--user-id", "mallory", cwd=str(tmp_path))
    assert done.returncode == 3
    assert remaining() == ALL


def test_deleted_memory_can_be_restored(backend, planted, forget, run_cli, tmp_path, remaining):
    forget("auth", input="1\n")
    assert ID1 not in remaining()
    done = run_cli("mem0-memories", "restore", ID1, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert remaining() == ALL
    record = json.loads(run_cli("mem0-memories", "get", ID1, cwd=str(tmp_path)).stdout)
    assert record["memory"] == "Use PostgreSQL for the auth database"
    assert record["metadata"] == {"type": "decision"}


def test_credentials_are_masked_in_listings(run_cli, tmp_path, forget):
    assert (
        run_cli(
            "mem0-memories", "add", "Staging AWS key AKIAIOSFODNN7EXAMPLE for auth uploads", cwd=str(tmp_path)
        ).returncode
        == 0
    )
    done = forget("auth", input="cancel\n")
    assert "Staging AWS key AKIA**** for auth uploads (type: unknown" in done.stdout
    assert "AKIAIOSFODNN7EXAMPLE" not in done.stdout
    assert "AKIAIOSFODNN7EXAMPLE" not in forget("auth", "--json").stdout


def test_control_characters_are_neutralised(run_cli, tmp_path, forget):
    assert run_cli("mem0-memories", "add", "auth \x1b[31mred\x1b[0m\nline two", cwd=str(tmp_path)).returncode == 0
    done = forget("auth", input="cancel\n")
    assert "1. auth \\x1b[31mred\\x1b[0m line two (type: unknown" in done.stdout
    assert "\x1b" not in done.stdout


@pytest.mark.parametrize(
    "answer, numbers",
    [
        ("1,3", (1, 3)),
        ("3 1", (3, 1)),
        ("1, 1,2", (1, 2)),
        ("2-3", (2, 3)),
        ("ALL", (1, 2, 3)),
    ],
)
def test_parse_selection(answer, numbers):
    assert parse_selection(answer, 3).numbers == numbers


def test_yes_picks_the_only_match_and_asks_which_of_several():
    for answer in ("y", "yes", " YES "):
        assert parse_selection(answer, 1).numbers == (1,)
        refused = parse_selection(answer, 3)
        assert not refused.numbers and not refused.cancel
        assert refused.error == "Which ones? Enter numbers from 1 to 3 (e.g., 1,3,5), 'all', or 'cancel'."


def test_yes_at_the_prompt_deletes_the_one_match(planted, forget, remaining):
    done = forget("pytest", input="yes\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith('Found 1 memory matching "pytest":\n1. Run tests with pytest -q ')
    assert "Deleted 1 memory.\n" in done.stdout
    assert remaining() == ALL - {ID4}


@pytest.mark.parametrize("answer", ["0", "4", "1,x", "3-1", "-1", "1.5", "yes"])
def test_parse_selection_refuses(answer):
    selection = parse_selection(answer, 3)
    assert selection.error and not selection.numbers and not selection.cancel


# -- short ids: the [ID: ...] of a listing is enough ---------------------------------------


def test_the_listed_short_id_finds_the_memory(backend, planted, forget, remaining):
    done = forget(ID2[:8], input="y\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        'Found: "Auth tokens expire after 15 minutes" (created 2026-05-02)\n'
        "Delete this memory? [y/N] Deleted 1 memory.\n" + restore_lines(ID2)
    )
    assert remaining() == ALL - {ID2}


def test_ids_take_short_ids_and_delete_each_once(planted, forget, remaining):
    done = forget("--ids", f"{ID1[:8]},{ID1},{ID4[:12]}", "--yes")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Deleted 2 memories.\n" + restore_lines(ID1, ID4)
    assert remaining() == ALL - {ID1, ID4}


@pytest.mark.parametrize(
    "ids, code, message",
    [
        ("1111", 2, "id prefix 1111 is too short: give at least 8 characters of the id; nothing was deleted"),
        ("99999999", 3, "memory 99999999 not found; nothing was deleted"),
    ],
)
def test_ids_with_a_short_or_unknown_prefix_delete_nothing(planted, forget, remaining, ids, code, message):
    done = forget("--ids", f"{ID2},{ids}", "--yes")
    assert (done.returncode, done.stdout, done.stderr) == (code, "", f"mem0-forget: error: {message}\n")
    assert remaining() == ALL


def test_a_word_that_prefixes_no_id_is_a_search(planted, forget, remaining):
    done = forget("99999999")
    assert (done.returncode, done.stdout) == (0, 'No memories match "99999999" in project acme-api. Nothing deleted.\n')
    assert remaining() == ALL


def test_an_ambiguous_short_id_is_refused(run_cli, tmp_path, forget, remaining):
    twins = [{"id": f"abcdef12-0000-4000-8000-00000000000{n}", "memory": f"twin {n}"} for n in (1, 2)]
    (tmp_path / "twins.json").write_text(json.dumps(twins))
    assert run_cli("mem0-memories", "import", str(tmp_path / "twins.json"), cwd=str(tmp_path)).returncode == 0
    for args in (["abcdef12"], ["--ids", "abcdef12", "--yes"]):
        done = forget(*args, input="y\n")
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr == (
            "mem0-forget: error: id prefix abcdef12 matches 2 memories; give more characters "
            "of the id; nothing was deleted\n"
        )
    assert remaining() == {twin["id"] for twin in twins}
