"""`mem0-memories` (docs/commands.md, docs/records.md), run as the installed command in a subprocess."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from mem0_plugin.identity import Identity
from mem0_plugin.operations import Caller, add_memory, delete_memory, update_memory
from mem0_plugin.records import MERGED, SUPERSEDED
from mem0_plugin.store import SqliteStore, open_store

SUBCOMMANDS = ["add", "list", "get", "search", "delete", "import", "export", "copy", "history", "restore"]


def one_line_error(done, code: int) -> str:
    """The command failed with `code` and said so in exactly one line, without a traceback."""
    assert done.returncode == code, (done.returncode, done.stdout, done.stderr)
    err = done.stderr.strip()
    assert err and "\n" not in err, done.stderr
    assert "Traceback" not in done.stderr
    assert err.startswith("mem0-memories")
    return err


def ok(done) -> str:
    assert done.returncode == 0, done.stderr
    return done.stdout


def added_id(done) -> str:
    out = ok(done).split()
    assert out[0] in ("ADD", "NOOP"), out
    return out[1]


@pytest.fixture
def mem(run_cli):
    """run_cli bound to mem0-memories."""
    return lambda *args, **kw: run_cli("mem0-memories", *args, **kw)


@pytest.mark.parametrize("sub", [None, *SUBCOMMANDS])
def test_help_for_every_subcommand(mem, sub):
    done = mem(*([sub] if sub else []), "--help")
    out = ok(done)
    assert out.startswith(f"usage: mem0-memories{' ' + sub if sub else ''}")
    for flag in ("--user-id", "--project-id", "--store", "--cwd"):
        assert flag in out
    assert done.stderr == ""


def test_add_list_get_search_delete_history_restore(backend, mem):
    first = added_id(mem("add", "Use pnpm, not npm", "--type", "convention", "--metadata", '{"confidence": 0.8}'))
    assert mem("add", "Use pnpm, not npm").stdout == f"NOOP {first} (an identical memory exists)\n"
    second = added_id(mem("add", "Deploy with terraform", "--immutable", "--agent-id", "claude", "--run-id", "r1"))

    listing = ok(mem("list"))
    assert first in listing and second in listing and "[convention]" in listing
    assert listing.splitlines()[-1] == "(2 memories, page 1)"
    page = json.loads(ok(mem("list", "--json", "--page-size", "1")))
    assert set(page) == {"count", "page", "page_size", "next", "previous", "results"}
    assert (page["count"], page["next"], len(page["results"])) == (2, 2, 1)
    filtered = json.loads(ok(mem("list", "--json", "--filters", '{"metadata": {"type": "convention"}}')))
    assert [r["id"] for r in filtered["results"]] == [first]

    record = json.loads(ok(mem("get", first)))
    assert (record["memory"], record["user_id"], record["app_id"]) == ("Use pnpm, not npm", "alice", "acme-api")
    assert record["metadata"] == {"confidence": 0.8, "type": "convention"}
    frozen = json.loads(ok(mem("get", second)))
    assert (frozen["immutable"], frozen["agent_id"], frozen["run_id"]) == (True, "claude", "r1")

    found = ok(mem("search", "pnpm npm"))
    assert found.splitlines()[0].startswith("1.00  " + first)
    hits = json.loads(ok(mem("search", "pnpm", "--json")))
    assert hits["results"][0]["id"] == first and 0 < hits["results"][0]["score"] <= 1
    assert ok(mem("search", "kubernetes")) == "No matching memories.\n"

    assert ok(mem("delete", first)) == "Memory deleted successfully!\n"
    one_line_error(mem("get", first), 3)
    history = ok(mem("history", first)).splitlines()
    assert [line.split()[1] for line in history] == ["ADD", "DELETE"]
    assert "Use pnpm, not npm" in history[0]
    entries = json.loads(ok(mem("history", first, "--json")))
    assert entries[0]["before"] is None and entries[1]["after"] is None
    assert entries[1]["before"]["memory"] == "Use pnpm, not npm"

    assert ok(mem("restore", first)) == f"Restored {first} (active).\n"
    assert json.loads(ok(mem("get", first)))["lifecycle_state"] == "active"
    assert [line.split()[1] for line in ok(mem("history", first)).splitlines()] == ["ADD", "DELETE", "RESTORE"]
    one_line_error(mem("restore", first), 2)


def test_list_labels_states_and_reads_modes(backend, mem, mem0_home):
    ids = [added_id(mem("add", text)) for text in ("keep me", "old news", "folded in")]
    where = os.environ.get("MEM0_STORE") or str(mem0_home / "memories.sqlite3")
    with open_store(where) as store, store.write() as writer:
        writer.change(
            writer.get("alice", ids[1]), "SUPERSEDE", "test", lifecycle_state=SUPERSEDED, replacement_memory_id=ids[0]
        )
        writer.change(
            writer.get("alice", ids[2]), "MERGE", "test", lifecycle_state=MERGED, replacement_memory_id=ids[0]
        )
    default = ok(mem("list"))
    assert "(superseded) old news" in default and "folded in" not in default
    assert "old news" not in ok(mem("list", "--latest-only"))
    assert "(merged) folded in" in ok(mem("list", "--include-merged"))
    history = ok(mem("history", ids[2]))
    assert f"merged → {ids[0]}" in history


ERRORS = [
    (["list", "--filters", "{not json"], 2, "--filters is not valid JSON"),
    (["search", "x", "--filters", "[1"], 2, "--filters is not valid JSON"),
    (["list", "--filters", '{"app_id": {"like": "x"}}'], 2, "unknown operator 'like'"),
    (["list", "--filters", '{"user_id": "bob"}'], 4, "another user"),
    (["list", "--filters", "[" * 50_000], 2, "--filters"),
    (["list", "--page-size", "5000"], 2, "argument --page-size: must be between 1 and 1000, got 5000"),
    (["list", "--page", "abc"], 2, "argument --page: invalid int value"),
    (["list", "--page", "0"], 2, "argument --page: must be between 1 and"),
    (["search", "x", "--top-k", "0"], 2, "argument --top-k: must be between 1 and 1000, got 0"),
    (["search", "x", "--threshold", "1.5"], 2, "argument --threshold: must be between 0 and 1"),
    (["search", "x", "--threshold", "nan"], 2, "argument --threshold: must be between 0 and 1"),
    (
        ["list", "--latest-only", "--include-merged"],
        2,
        "argument --include-merged: not allowed with argument --latest-only",
    ),
    (["add", "x", "--metadata", "{oops"], 2, "--metadata is not valid JSON"),
    (["add", "x", "--metadata", "[1, 2]"], 2, "metadata must be a JSON object"),
    (["add", "   "], 2, "memory text is empty"),
    (["get", "no-such-id"], 3, "memory no-such-id not found"),
    (["delete", "no-such-id"], 3, "not found"),
    (["history", "no-such-id"], 3, "no history"),
    (["restore", "no-such-id"], 3, "not found"),
    (["--store", "mysql://db/x", "list"], 2, "is not supported"),
    (["--store", "postgresql://127.0.0.1:1/x", "list"], 6, "cannot open the store postgresql://127.0.0.1:1/x"),
    (["list", "--cwd", "/no/such/dir"], 2, "not a directory"),
    (["import", "/no/such/file.json"], 2, "cannot read /no/such/file.json"),
    (["frobnicate"], 2, "invalid choice"),
    ([], 2, "required"),
]


@pytest.mark.parametrize("args, code, message", ERRORS, ids=lambda v: " ".join(v)[:40] if isinstance(v, list) else None)
def test_errors_are_one_line_with_an_exit_code(mem, args, code, message):
    assert message in one_line_error(mem(*args), code)


def test_debug_shows_the_traceback(mem):
    done = mem("get", "no-such-id", "--debug")
    assert done.returncode == 3 and "Traceback" in done.stderr


def test_a_corrupt_store_is_one_line(mem, mem0_home):
    mem0_home.mkdir(parents=True)
    (mem0_home / "memories.sqlite3").write_bytes(b"not sqlite" * 500)
    assert "not a database" in one_line_error(mem("list"), 6)


def test_another_user_cannot_reach_alices_memory(backend, mem):
    memory_id = added_id(mem("add", "alice only"))
    for args in (["get", memory_id], ["delete", memory_id], ["history", memory_id]):
        one_line_error(mem(*args, "--user-id", "bob"), 3)
        one_line_error(mem("--user-id", "bob", *args), 3)
        one_line_error(mem(*args, env={"MEM0_USER_ID": "bob"}), 3)
    assert "alice only" not in ok(mem("list", "--filters", '{"user_id": "*"}', "--user-id", "bob"))
    assert ok(mem("search", "alice only", "--user-id", "bob")) == "No matching memories.\n"
    assert json.loads(ok(mem("get", memory_id)))["memory"] == "alice only"


# -- import ----------------------------------------------------------------------------

PLATFORM_PAGE = {
    "count": 2,
    "next": None,
    "previous": None,
    "results": [
        {
            "id": "0b3f1c1e-4a52-4d7c-9c1c-1f2f3a4b5c6d",
            "memory": "Prefers window seats",
            "user_id": "alice",
            "metadata": {"type": "user_preference", "confidence": 0.7},
            "categories": ["travel"],
            "created_at": "2024-07-20T10:00:00-07:00",
            "updated_at": "2024-07-21T09:30:00-07:00",
            "immutable": False,
            "hash": "abc",
        },
        {
            "id": "6c1d7a5e-9f0b-4e8a-8d3c-2b1a0f9e8d7c",
            "memory": "Allergic to peanuts",
            "user_id": "alice",
            "metadata": None,
            "categories": ["health"],
            "created_at": "2024-08-01T12:00:00-07:00",
            "updated_at": None,
            "immutable": True,
        },
    ],
}


def write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("shape", ["platform page", "json array", "json lines"])
def test_import_keeps_created_at_metadata_and_immutable(backend, mem, tmp_path, shape):
    records = PLATFORM_PAGE["results"]
    text = {
        "platform page": json.dumps(PLATFORM_PAGE, indent=2),
        "json array": json.dumps(records),
        "json lines": "\n".join(json.dumps(r) for r in records) + "\n",
    }[shape]
    done = mem("import", write(tmp_path / "in.json", text))
    assert ok(done) == "Imported 2 memories (0 already present).\n"

    window = json.loads(ok(mem("get", records[0]["id"])))
    assert window["created_at"] == "2024-07-20T17:00:00+00:00"  # -07:00 kept as the same instant, in UTC
    assert window["updated_at"] == "2024-07-21T16:30:00+00:00"
    assert window["metadata"] == {"type": "user_preference", "confidence": 0.7, "categories": ["travel"]}
    assert (window["user_id"], window["app_id"], window["immutable"]) == ("alice", "acme-api", False)
    peanuts = json.loads(ok(mem("get", records[1]["id"])))
    assert (peanuts["immutable"], peanuts["metadata"]) == (True, {"categories": ["health"]})
    assert peanuts["updated_at"] == peanuts["created_at"] == "2024-08-01T19:00:00+00:00"
    assert [e["event"] for e in json.loads(ok(mem("history", records[1]["id"], "--json")))] == ["IMPORT"]

    again = mem("import", write(tmp_path / "in.json", text))
    assert ok(again) == "Imported 0 memories (2 already present).\n"


def test_import_from_stdin_with_missing_fields_taking_the_identity(mem):
    lines = '{"memory": "no id, no user, no app"}\n\n{"text": "the text key works too", "app_id": "acme-web"}\n'
    assert ok(mem("import", "-", input=lines)) == "Imported 2 memories (0 already present).\n"
    page = json.loads(ok(mem("list", "--json", "--filters", '{"app_id": "*"}')))
    got = {r["memory"]: r for r in page["results"]}
    assert got["no id, no user, no app"]["app_id"] == "acme-api"
    assert got["no id, no user, no app"]["user_id"] == "alice"
    assert got["the text key works too"]["app_id"] == "acme-web"
    assert all(len(r["id"]) == 36 for r in page["results"])


def test_a_broken_line_imports_nothing_unless_skip_invalid(mem, tmp_path):
    path = write(
        tmp_path / "in.jsonl", '{"memory": "one"}\n{"memory": "two"}\n{"memory": "three"\n{"memory": "four"}\n'
    )
    err = one_line_error(mem("import", path), 2)
    assert "line 3" in err and "nothing imported" in err and "--skip-invalid" in err
    assert json.loads(ok(mem("list", "--json")))["count"] == 0

    done = mem("import", path, "--skip-invalid")
    assert ok(done) == "Imported 3 memories (0 already present, 1 invalid skipped).\n"
    assert "line 3" in done.stderr
    assert sorted(r["memory"] for r in json.loads(ok(mem("list", "--json")))["results"]) == ["four", "one", "two"]


@pytest.mark.parametrize(
    "record, message",
    [
        ({"memory": "x", "user_id": "bob"}, "belongs to user 'bob'"),
        ({"memory": ""}, "memory text is empty"),
        ({"memory": 5}, "must be a string"),
        ({"id": "x"}, "must be a string, got NoneType"),
        ({"memory": "x", "created_at": "last tuesday"}, "created_at is not an ISO-8601 timestamp"),
        ({"memory": "x", "created_at": 1721494800}, "created_at is not an ISO-8601 timestamp"),
        ({"memory": "x", "created_at": "2999-01-01T00:00:00Z"}, "created_at is in the future"),
        ({"memory": "x", "metadata": "type=x"}, "metadata must be a JSON object"),
        ({"memory": "x", "metadata": {"c": float("nan")}}, "metadata"),
        ({"memory": "x", "immutable": "yes"}, "immutable must be true or false"),
        ({"memory": "x", "lifecycle_state": "archived"}, "lifecycle_state must be one of"),
        ({"memory": "x", "source_memory_ids": "a,b"}, "source_memory_ids must be a list"),
        ({"memory": "x", "app_id": 7}, "app_id must be a string"),
        ("just a string", "must be a JSON object"),
    ],
)
def test_invalid_records_are_named_and_nothing_is_imported(mem, tmp_path, record, message):
    good = {"memory": "a good record"}
    path = write(tmp_path / "in.json", json.dumps([good, record]))
    err = one_line_error(mem("import", path), 2)
    assert "item 2" in err and message in err
    assert json.loads(ok(mem("list", "--json")))["count"] == 0
    assert "1 invalid skipped" in ok(mem("import", path, "--skip-invalid"))


@pytest.mark.parametrize(
    "content, message",
    [
        ('[{"memory": "x"},', "not valid JSON"),
        ('{"count": 1}', '"results" list'),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"memory": "' + "9" * 10 + '"}\n{"n": ' + "9" * 5000 + "}\n", "line 2"),
    ],
)
def test_unreadable_files_are_one_line(mem, tmp_path, content, message):
    assert message in one_line_error(mem("import", write(tmp_path / "in.json", content)), 2)


def test_binary_and_empty_files(mem, tmp_path):
    (tmp_path / "bin").write_bytes(b"\xff\xfe\x00\x01" * 100)
    assert "cannot read" in one_line_error(mem("import", str(tmp_path / "bin")), 2)
    assert ok(mem("import", write(tmp_path / "empty", ""))) == "Imported 0 memories (0 already present).\n"


# -- export and the round trip -----------------------------------------------------------


def build_history_rich_store(home: Path) -> None:
    """Memories in every state with pointers, updated ones, unicode, another project."""
    me = Identity("alice", "acme-api", "main", home, f"sqlite:///{home}/memories.sqlite3", home)
    with SqliteStore(home / "memories.sqlite3") as store:
        caller = Caller(store, me, actor="test")
        ids = [
            add_memory(caller, text, metadata=meta)["results"][0]["id"]
            for text, meta in [
                ("Deploy to ECS", {"type": "decision", "confidence": 0.9}),
                ("Deploy to Heroku", {"type": "decision"}),
                ("Use pnpm", {"type": "convention", "tags": ["js", "tooling"]}),
                ("Use pnpm for installs", {"type": "convention"}),
                ('ünïcödé ✓ — "quoted" \\ back\\slash\nsecond line', {"z": None, "nested": {"a": [1, 2.5, True]}}),
                ("to be deleted", {}),
            ]
        ]
        add_memory(caller, "another project's memory", app_id="acme-web")
        add_memory(caller, "frozen fact", immutable=True, agent_id="claude", run_id="r9")
        update_memory(caller, ids[2], metadata={"confidence": 0.4})
        delete_memory(caller, ids[5])
        with store.write() as writer:
            writer.change(
                writer.get("alice", ids[1]),
                "SUPERSEDE",
                "test",
                lifecycle_state=SUPERSEDED,
                replacement_memory_id=ids[0],
            )
            writer.change(
                writer.get("alice", ids[2]), "MERGE", "test", lifecycle_state=MERGED, replacement_memory_id=ids[3]
            )
            writer.change(writer.get("alice", ids[3]), "SYNTHESIZE", "test", source_memory_ids=(ids[2],))


def test_export_then_import_into_a_fresh_home_round_trips_byte_identical(mem, mem0_home, tmp_path):
    build_history_rich_store(mem0_home)
    exported = ok(mem("export"))
    lines = exported.splitlines()
    assert len(lines) == 6  # every state of the project, the deleted one only in history
    states = sorted(json.loads(line)["lifecycle_state"] for line in lines)
    assert states == ["active", "active", "active", "active", "merged", "superseded"]
    assert all(json.loads(line)["app_id"] == "acme-api" for line in lines)

    fresh = {"MEM0_HOME": str(tmp_path / "fresh-home")}
    assert ok(mem("import", "-", input=exported, env=fresh)) == "Imported 6 memories (0 already present).\n"
    assert ok(mem("export", env=fresh)) == exported
    assert ok(mem("import", "-", input=exported, env=fresh)) == "Imported 0 memories (6 already present).\n"
    assert ok(mem("export", env=fresh)) == exported

    everything = ok(mem("export", "--all-projects"))
    assert len(everything.splitlines()) == 7
    assert ok(mem("import", "-", input=everything, env=fresh)) == "Imported 1 memory (6 already present).\n"
    assert ok(mem("export", "--all-projects", env=fresh)) == everything


def test_export_to_a_file(mem, mem0_home, tmp_path):
    build_history_rich_store(mem0_home)
    target = tmp_path / "backup.jsonl"
    done = mem("export", "-o", str(target))
    assert ok(done) == ""
    assert done.stderr == f"Exported 6 memories to {target}\n"
    assert target.read_text(encoding="utf-8") == ok(mem("export"))
    assert not (tmp_path / "backup.jsonl.partial").exists()
    assert "cannot write" in one_line_error(mem("export", "-o", str(tmp_path / "no" / "dir" / "x")), 2)
    (tmp_path / "a-directory").mkdir()
    assert "cannot write" in one_line_error(mem("export", "-o", str(tmp_path / "a-directory")), 2)
    assert not (tmp_path / "a-directory.partial").exists()


def test_import_of_identical_text_records_with_ids_keeps_both(mem, tmp_path):
    records = [
        {"id": "11111111-1111-4111-8111-111111111111", "memory": "same text"},
        {"id": "22222222-2222-4222-8222-222222222222", "memory": "same text"},
    ]
    assert ok(mem("import", write(tmp_path / "a.json", json.dumps(records)))).startswith("Imported 2 ")
    no_ids = [{"memory": "plain"}, {"memory": "plain"}]
    assert (
        ok(mem("import", write(tmp_path / "b.json", json.dumps(no_ids)))) == "Imported 1 memory (1 already present).\n"
    )


# -- short ids, masked credentials, counts -------------------------------------------------


def test_every_subcommand_taking_an_id_takes_a_unique_prefix(backend, mem):
    memory_id = added_id(mem("add", "Use pnpm, not npm"))
    short = memory_id[:8]
    assert json.loads(ok(mem("get", short)))["id"] == memory_id
    assert ok(mem("delete", short)) == "Memory deleted successfully!\n"
    assert [line.split()[1] for line in ok(mem("history", short)).splitlines()] == ["ADD", "DELETE"]
    assert ok(mem("restore", short)) == f"Restored {memory_id} (active).\n"
    assert "too short: give at least 8 characters" in one_line_error(mem("get", memory_id[:7]), 2)
    assert "memory 0000000000 not found" in one_line_error(mem("get", "0000000000"), 3)


def test_an_ambiguous_prefix_says_how_many_match(mem, tmp_path):
    twins = [{"id": f"abcdef12-0000-4000-8000-00000000000{n}", "memory": f"twin {n}"} for n in (1, 2, 3)]
    ok(mem("import", write(tmp_path / "twins.json", json.dumps(twins))))
    for sub in ("get", "delete", "history", "restore"):
        assert "id prefix abcdef12 matches 3 memories; give more characters of the id" in one_line_error(
            mem(sub, "abcdef12"), 2
        )
    assert json.loads(ok(mem("get", "abcdef12-0000-4000-8000-000000000002")))["memory"] == "twin 2"


SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def test_credentials_are_masked_wherever_a_text_is_printed_unless_asked(mem):
    memory_id = added_id(mem("add", f"CI deploy token {SECRET} for the release job"))
    mem("add", "CI runs on every push")
    printed = {
        "list": ok(mem("list")),
        "list --json": ok(mem("list", "--json")),
        "get": ok(mem("get", memory_id)),
        "search": ok(mem("search", "deploy token")),
        "search --json": ok(mem("search", "deploy token", "--json")),
        "history": ok(mem("history", memory_id)),
        "history --json": ok(mem("history", memory_id, "--json")),
        "add --json": ok(mem("add", f"CI deploy token {SECRET} for the release job", "--json")),
    }
    for what, out in printed.items():
        assert SECRET not in out and "ghp_****" in out, what
    for args in (["list"], ["get", memory_id], ["search", "deploy token"], ["history", memory_id, "--json"]):
        assert SECRET in ok(mem(*args, "--show-secrets")), args
    assert SECRET in ok(mem("export"))  # a backup keeps the text as stored


def test_counts_are_singular_for_one(mem, tmp_path):
    mem("add", "only one")
    assert ok(mem("list")).splitlines()[-1] == "(1 memory, page 1)"
    done = mem("export", "-o", str(tmp_path / "one.jsonl"))
    assert ok(done) == "" and done.stderr == f"Exported 1 memory to {tmp_path / 'one.jsonl'}\n"


def test_import_with_project_id_puts_every_record_into_that_project(backend, mem, tmp_path):
    records = [
        {"id": "0b3f1c1e-4a52-4d7c-9c1c-1f2f3a4b5c6d", "memory": "kept elsewhere", "app_id": "acme-web"},
        {"memory": "no project given"},
        {"memory": "carried its own", "app_id": "acme-web"},
    ]
    path = write(tmp_path / "in.json", json.dumps(records))
    assert (
        ok(mem("import", path, "--project-id", "other"))
        == "Imported 3 memories into project other (0 already present).\n"
    )
    page = json.loads(ok(mem("list", "--json", "--filters", '{"app_id": "*"}')))
    assert {r["memory"]: r["app_id"] for r in page["results"]} == {
        "kept elsewhere": "other",
        "no project given": "other",
        "carried its own": "other",
    }

    exported = ok(mem("export", "--project-id", "other"))  # already in the store: said, not moved
    done = mem("import", "-", "--project-id", "third", input=exported)
    assert ok(done) == "Imported 0 memories into project third (3 already present).\n"
    assert done.stderr == (
        "mem0-memories: note: 3 memories already in the store under another project stayed "
        "there (an id is unique in a store; import into another store to copy them)\n"
    )
    assert json.loads(ok(mem("list", "--json", "--project-id", "third")))["count"] == 0


def test_stats_counts_agree_in_number_and_name_the_command_to_run(mem):
    for text in ("Deploy the storefront to ECS", "Deploy the storefront to Vercel"):
        ok(mem("add", text, "--type", "decision"))
    out = ok(mem("stats"))
    assert out.splitlines()[-1] == (
        "Dream would propose: 0 merges, 0 supersedes, 1 conflict, 0 prunes "
        "(review it with /mem0:dream, or mem0-dream in a terminal)"
    )


def test_history_columns_line_up_and_a_deleted_memory_is_shown_deleted(mem, run_cli, tmp_path):
    """Actors and states of any length share one column each; an event that left no record
    (a delete, a prune) shows `deleted`, not the state the memory had before."""
    older = added_id(mem("add", "Use PostgreSQL for auth", "--type", "decision"))
    ok(mem("add", "Auth DB is PostgreSQL", "--type", "decision"))
    assert ok(run_cli("mem0-dream", "--auto", cwd=str(tmp_path))).startswith("[mem0-dream --auto]")
    merged_into = json.loads(ok(mem("get", older)))["replacement_memory_id"]
    ok(mem("restore", older))
    ok(mem("delete", older))
    lines = ok(mem("history", older)).splitlines()
    rows = [line.split() for line in lines]
    assert [(row[1], row[2]) for row in rows] == [
        ("ADD", "cli"),
        ("MERGE", "mem0-dream"),
        ("RESTORE", "cli"),
        ("DELETE", "cli"),
    ]
    assert [row[3] for row in rows] == ["active", "merged", "active", "deleted"]
    assert rows[1][4:6] == ["→", merged_into]
    text_columns = {line.index("Use PostgreSQL for auth") for line in lines}
    actor_columns = {line.index(row[2], len(row[0]) + len(row[1])) for line, row in zip(lines, rows)}
    assert len(text_columns) == 1 and len(actor_columns) == 1, lines
