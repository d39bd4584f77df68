"""Scope and secrets (docs/reads.md, docs/safety.md): no tool or command reaches another user's memories — by id, by
filter or by search — nor another project's unless asked; credentials are flagged by
`mem0-health --deep` and never printed in full.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import anyio
import pytest
from conftest import mcp_session
from mem0_plugin.records import Memory
from mem0_plugin.store import SqliteStore

ALICE_TEXT = "Alice deploys the billing API to ECS"
IDS = {
    name: f"00000000-0000-4000-8000-0000000000{n:02d}"
    for n, name in enumerate(["active", "dup", "old", "merged", "super", "other", "bob"], start=1)
}


def stamp(days: float) -> str:
    return (datetime.now(timezone.utc) - timedelta(days=days)).isoformat()


@pytest.fixture
def shared_store(mem0_home):
    """One store holding alice's memories (two projects, every lifecycle state) and one of bob's."""
    mem0_home.mkdir(parents=True, exist_ok=True)
    db = mem0_home / "memories.sqlite3"

    def memory(memory_id, text, user="alice", app="acme-api", **fields):
        return Memory(
            id=memory_id,
            memory=text,
            user_id=user,
            app_id=app,
            created_at=stamp(fields.pop("age", 5)),
            updated_at=stamp(1),
            metadata=fields.pop("metadata", {"type": "decision"}),
            **fields,
        )

    with SqliteStore(db) as store, store.write() as writer:
        for item in (
            memory(IDS["active"], ALICE_TEXT),
            memory(IDS["dup"], "Alice deploys the billing API to ECS", age=4),
            memory(IDS["old"], "Old session of alice", metadata={"type": "session_state"}, age=300),
            memory(IDS["merged"], "Alice merged note", lifecycle_state="merged", replacement_memory_id=IDS["active"]),
            memory(
                IDS["super"], "Alice superseded note", lifecycle_state="superseded", replacement_memory_id=IDS["active"]
            ),
            memory(IDS["other"], "Alice in another project", app="acme-web"),
            memory(IDS["bob"], "Bob's own note about ECS", user="bob"),
        ):
            writer.insert(item, actor="test")
    return db


def alice_state(db) -> dict:
    with SqliteStore(db, readonly=True) as store:
        return {m.id: (m.memory, m.lifecycle_state, m.version) for m in store.iter_scope("alice", None)}


# ------------------------------------------------------------------ the MCP server of bob on alice's store


def test_an_mcp_server_for_bob_never_reaches_alices_memories(shared_store):
    before = alice_state(shared_store)

    async def main():
        async with mcp_session(env={"MEM0_USER_ID": "bob"}) as session:

            async def answer(tool, **arguments):
                result = await session.call_tool(tool, arguments)
                return result.is_error, (result.content[0].text if result.is_error else result.structured_content)

            for memory_id in before:  # by id, whatever its state or project
                for tool, arguments in (
                    ("get_memory", {"memory_id": memory_id}),
                    ("get_memory", {"id": memory_id}),
                    ("update_memory", {"memory_id": memory_id, "text": "bob was here"}),
                    ("update_memory", {"id": memory_id, "metadata": {"pinned": True}}),
                    ("delete_memory", {"memory_id": memory_id}),
                    ("delete_memory", {"id": memory_id}),
                ):
                    error, text = await answer(tool, **arguments)
                    assert error and "not found" in text, (tool, memory_id, text)

            for filters in (
                {"user_id": "alice"},
                {"user_id": {"in": ["bob", "alice"]}},
                {"user_id": {"nin": ["alice"]}},
                {"OR": [{"user_id": "bob"}, {"user_id": "alice"}]},
                {"NOT": [{"user_id": "alice"}]},
                {"AND": [{"app_id": "*"}, {"user_id": {"eq": "alice"}}]},
                '{"user_id": "alice"}',
            ):
                for tool, extra in (("get_memories", {}), ("search_memories", {"query": ALICE_TEXT})):
                    error, text = await answer(tool, filters=filters, **extra)
                    assert error and "another user" in text, (filters, text)

            seen = set()
            for filters in (
                None,
                {"app_id": "*"},
                {"user_id": "*"},
                {"user_id": "bob"},
                {"id": {"in": list(before)}},
                {"NOT": [{"user_id": "bob"}]},
                {"app_id": "acme-web"},
                {"user_id": {"ne": "bob"}},
                {"memory": {"icontains": "alice"}},
                {"metadata": {"type": "*"}},
            ):
                arguments = {} if filters is None else {"filters": filters}
                for tool, extra in (
                    ("get_memories", {"include_merged": True}),
                    ("search_memories", {"query": ALICE_TEXT, "include_merged": True}),
                ):
                    error, result = await answer(tool, **arguments, **extra)
                    assert not error, (filters, result)
                    seen |= {(r["user_id"], r["id"]) for r in result["results"]}
            assert seen <= {("bob", IDS["bob"])}

            error, text = await answer("add_memory", text="x", user_id="alice")
            assert error and "alice" in text
            error, added = await answer("add_memory", text=ALICE_TEXT)  # alice's identical text is not bob's
            assert not error and added["results"][0]["event"] == "ADD"
            assert added["results"][0]["id"] not in before

    anyio.run(main)
    assert alice_state(shared_store) == before


# ------------------------------------------------------------------ every command with --user-id bob


@pytest.mark.parametrize(
    "args",
    [
        ("mem0-memories", "get", IDS["active"]),
        ("mem0-memories", "delete", IDS["active"]),
        ("mem0-memories", "history", IDS["active"]),
        ("mem0-memories", "restore", IDS["merged"]),
        ("mem0-memories", "restore", IDS["other"]),
        ("mem0-forget", IDS["active"]),
        ("mem0-forget", "--ids", IDS["active"], "--yes"),
    ],
)
def test_commands_for_bob_find_none_of_alices_memories_by_id(shared_store, run_cli, args):
    before = alice_state(shared_store)
    done = run_cli(*args, "--user-id", "bob", input="y\n")
    said = (done.stdout + done.stderr).lower()
    assert done.returncode == 3, (done.stdout, done.stderr)
    assert "not found" in said or "no history" in said or "no memory with id" in said, said
    assert "Alice" not in done.stdout + done.stderr
    assert alice_state(shared_store) == before


@pytest.mark.parametrize(
    "args, code",
    [
        (("mem0-memories", "list", "--filters", '{"user_id": "alice"}'), 4),
        (("mem0-memories", "search", "billing", "--filters", '{"OR": [{"user_id": "alice"}]}'), 4),
        (("mem0-memories", "list", "--filters", '{"app_id": "*"}', "--include-merged"), 0),
        (("mem0-memories", "search", ALICE_TEXT, "--filters", '{"user_id": "*"}'), 0),
        (("mem0-memories", "export", "--all-projects"), 0),
        (("mem0-forget", "deploys billing"), 0),
        (("mem0-health", "--deep"), 0),
        (("mem0-health", "--deep", "--json"), 0),
        (("mem0-dream", "--plan", "--json"), 0),
        (("mem0-dream", "--auto"), 0),
    ],
)
def test_commands_for_bob_read_and_change_none_of_alices_memories(shared_store, run_cli, args, code):
    before = alice_state(shared_store)
    done = run_cli(*args, "--user-id", "bob", input="cancel\n")
    assert done.returncode == code, (done.stdout, done.stderr)
    for memory_id in before:
        assert memory_id not in done.stdout
    assert ALICE_TEXT not in done.stdout and "Alice in another project" not in done.stdout
    assert alice_state(shared_store) == before


def test_a_plan_of_alice_is_refused_for_bob_and_a_forged_one_touches_nothing(shared_store, run_cli, tmp_path):
    plan_file = tmp_path / "plan.json"
    assert run_cli("mem0-dream", "--plan", "--json", "-o", str(plan_file)).returncode == 0
    plan = json.loads(plan_file.read_text())
    assert plan["merges"] and plan["prunes"]  # active + dup, old
    before = alice_state(shared_store)
    refused = run_cli("mem0-dream", "--apply", str(plan_file), "--yes", "--user-id", "bob")
    assert refused.returncode == 4 and "belongs to user 'alice'" in refused.stderr
    forged = {**plan, "user_id": "bob"}
    plan_file.write_text(json.dumps(forged))
    done = run_cli("mem0-dream", "--apply", str(plan_file), "--yes", "--user-id", "bob")
    assert done.returncode == 0, done.stderr
    assert "merged: 0, pruned: 0" in done.stdout
    assert alice_state(shared_store) == before


def test_a_plan_edited_to_name_another_project_touches_nothing_there(shared_store, run_cli, tmp_path):
    """Dream reaches another of the user's projects (docs/safety.md, "Scope") only when asked: an id of acme-web slipped
    into an acme-api plan is not applied."""
    plan_file = tmp_path / "plan.json"
    assert run_cli("mem0-dream", "--plan", "--json", "-o", str(plan_file)).returncode == 0
    plan = json.loads(plan_file.read_text())
    plan["prunes"].append({"id": IDS["other"], "type": "decision", "age_days": 5, "reason": "retention"})
    plan["fingerprints"][IDS["other"]] = "1"
    plan_file.write_text(json.dumps(plan))
    done = run_cli("mem0-dream", "--apply", str(plan_file), "--yes")
    assert done.returncode == 0, done.stderr
    assert f"Not applied — prune {IDS['other']}" in done.stdout
    assert alice_state(shared_store)[IDS["other"]] == ("Alice in another project", "active", 1)


def test_import_refuses_records_of_another_user(shared_store, run_cli, tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps({"memory": "mine"}) + "\n" + json.dumps({"memory": "theirs", "user_id": "alice"}) + "\n")
    done = run_cli("mem0-memories", "import", str(path), "--user-id", "bob")
    assert done.returncode == 2 and "line 2: belongs to user 'alice'" in done.stderr
    before = alice_state(shared_store)
    run_cli("mem0-memories", "import", str(path), "--user-id", "bob", "--skip-invalid")
    assert alice_state(shared_store) == before


# ------------------------------------------------------------------ credentials


JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
SECRETS = {
    "aws": ("CI uploads with AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    "github": (
        "token ghp_16C7e42F292c6912E7710c838347Ae178B4a for the bot",
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    ),
    "openai": ("OPENAI_API_KEY=sk-proj-Abc123def456ghi789jkl012mno", "sk-proj-Abc123def456ghi789jkl012mno"),
    "jwt": (f"staging session {JWT}", JWT),
    "pem": (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq98KZ2e4uJpQZ2e4uJpQ\n-----END RSA PRIVATE KEY-----",
        "MIIEowIBAAKCAQEA7bq98KZ2e4uJpQZ2e4uJpQ",
    ),
    "password": ("the staging db password=Tr0ub4dor&3xyz", "Tr0ub4dor&3xyz"),
    "url": ("connect to postgres://app:s3cr3tpass@db:5432/main", "s3cr3tpass"),
}


@pytest.fixture
def secret_store(run_cli, tmp_path):
    records = [
        {"id": f"s-{name}", "memory": text, "metadata": {"type": "environmental"}}
        for name, (text, _) in SECRETS.items()
    ]
    # a duplicate pair, a merged and a superseded memory that also hold secrets: listed, and masked everywhere
    records += [
        {"id": "s-dup", "memory": "CI uploads with AKIAIOSFODNN7EXAMPLE", "metadata": {"type": "environmental"}},
        {
            "id": "s-merged",
            "memory": "old key sk-live-ZZZZZZZZZZZZZZZZZZZZZZZZ",
            "lifecycle_state": "merged",
            "replacement_memory_id": "s-aws",
            "metadata": {"type": "environmental"},
        },
        {
            "id": "s-super",
            "memory": "xoxb-123456789012-abcdefghijkl is the slack bot",
            "lifecycle_state": "superseded",
            "replacement_memory_id": "s-aws",
            "metadata": {},
        },
        {"id": "s-plain", "memory": "The token is refreshed every 10 minutes", "metadata": {"type": "convention"}},
    ]
    path = tmp_path / "secrets.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert run_cli("mem0-memories", "import", str(path)).returncode == 0
    bob = tmp_path / "bob.jsonl"
    bob.write_text(json.dumps({"id": "bob-secret", "memory": "bob key AKIAI44QH8DHBEXAMPLE"}) + "\n")
    assert run_cli("mem0-memories", "import", str(bob), "--user-id", "bob").returncode == 0
    return records


FULL_SECRETS = [secret for _, secret in SECRETS.values()] + [
    "sk-live-ZZZZZZZZZZZZZZZZZZZZZZZZ",
    "xoxb-123456789012-abcdefghijkl",
]


def test_health_deep_flags_every_credential_and_never_prints_one_in_full(secret_store, run_cli):
    done = run_cli("mem0-health", "--deep")
    assert done.returncode == 0, done.stderr
    for secret in FULL_SECRETS:
        assert secret not in done.stdout, secret
    section = done.stdout.split("Credentials (", 1)[1].split("\n\n", 1)[0]
    for memory_id in [f"s-{name}" for name in SECRETS] + ["s-dup", "s-merged", "s-super"]:
        assert f"[mem0:{memory_id}]" in section, memory_id
    assert "s-plain" not in section and "bob-secret" not in done.stdout
    assert "(merged)" in section and "(superseded)" in section
    assert "mem0-forget --ids" in section  # what to do about it


def test_health_deep_json_lists_credentials_masked(secret_store, run_cli):
    done = run_cli("mem0-health", "--deep", "--json")
    assert done.returncode == 0, done.stderr
    for secret in FULL_SECRETS:
        assert secret not in done.stdout, secret
    quality = json.loads(done.stdout)["quality"]
    flagged = {c["id"]: c["kinds"] for c in quality["credentials"]}
    assert set(flagged) == {f"s-{name}" for name in SECRETS} | {"s-dup", "s-merged", "s-super"}
    assert flagged["s-pem"] == ["private key"] and flagged["s-aws"] == ["AWS access key"]
    assert quality["counts"]["credentials"] == len(flagged)


@pytest.mark.parametrize(
    "args", [("mem0-forget", "CI uploads"), ("mem0-forget", "s-aws"), ("mem0-forget", "staging", "--json")]
)
def test_forget_listings_mask_credentials(secret_store, run_cli, args):
    done = run_cli(*args, input="cancel\n")
    assert done.returncode == 0, done.stderr
    for secret in FULL_SECRETS:
        assert secret not in done.stdout, secret
