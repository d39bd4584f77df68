"""`mem0-server` driven by real clients (docs/server.md): mem0ai's own `MemoryClient` over the
platform routes and the `mcp` client over streamable HTTP at /mcp, against one real server on a
loopback port over a real SQLite store (`server_fixture.running_server`, one per module)."""

from __future__ import annotations

import json

import anyio
import httpx
import pytest
from mem0 import MemoryClient
from server_fixture import running_server

ALICE_KEY = "m0-alice-0123456789abcdef"
BOB_KEY = "m0-bob-0123456789abcdef00"
ADMIN_KEY = "m0-admin-0123456789abcdef"
KEYS = [
    {"key": ALICE_KEY, "users": ["alice"]},
    {"key": BOB_KEY, "users": ["bob"]},
    {"key": ADMIN_KEY, "users": ["*"]},
]


@pytest.fixture(scope="module")
def base_url(tmp_path_factory):
    with running_server(tmp_path_factory.mktemp("server") / "home", KEYS) as url:
        yield url


@pytest.fixture(scope="module")
def alice(base_url) -> MemoryClient:
    return MemoryClient(api_key=ALICE_KEY, host=base_url)


def test_ping_resolves_the_project_and_a_bad_key_fails_at_construction(base_url, alice):
    assert alice.project_id == "default"
    with pytest.raises(ValueError, match="Invalid API key"):
        MemoryClient(api_key="m0-not-a-configured-key", host=base_url)


def test_add_get_update_history_delete_round_trip(alice):
    added = alice.add("I prefer tea over coffee", user_id="alice", app_id="sdk-crud", infer=False)
    assert added["status"] == "SUCCEEDED"
    (result,) = added["results"]
    assert result["event"] == "ADD" and result["data"] == {"memory": "I prefer tea over coffee"}
    memory_id = result["id"]

    got = alice.get(memory_id)
    assert got["memory"] == "I prefer tea over coffee" and got["user_id"] == "alice" and got["app_id"] == "sdk-crud"
    assert got["lifecycle_state"] == "active" and got["replaced_by"] is None

    updated = alice.update(memory_id, text="I prefer green tea", metadata={"type": "preference"})
    assert updated["memory"] == "I prefer green tea" and updated["metadata"] == {"type": "preference"}

    events = [entry["event"] for entry in alice.history(memory_id)]
    assert events == ["ADD", "UPDATE"]
    assert alice.history(memory_id)[1]["old_memory"] == "I prefer tea over coffee"

    assert alice.delete(memory_id) == {"message": "Memory deleted successfully!"}
    with pytest.raises(Exception, match="not found"):
        alice.get(memory_id)
    assert [entry["event"] for entry in alice.history(memory_id)] == ["ADD", "UPDATE", "DELETE"]


def test_add_with_infer_goes_through_the_write_path(alice):
    first = alice.add("The deploy uses terraform apply in the staging cluster", user_id="alice", app_id="sdk-infer")
    again = alice.add("The deploy uses terraform apply in the staging cluster", user_id="alice", app_id="sdk-infer")
    assert first["results"][0]["event"] == "ADD"
    assert again["results"][0] == {**first["results"][0], "event": "NOOP"}  # the identical text is not stored twice


def test_get_all_pages_until_next_is_null_and_search_filters(alice):
    for i in range(5):
        alice.add(f"pagination fact number {i}", user_id="alice", app_id="sdk-pages", metadata={"n": i}, infer=False)
    seen, page = [], 1
    while True:
        answer = alice.get_all(filters={"AND": [{"user_id": "alice"}, {"app_id": "sdk-pages"}]}, page=page, page_size=2)
        assert answer["count"] == 5
        seen += [m["memory"] for m in answer["results"]]
        if answer["next"] is None:
            break
        assert f"page={page + 1}" in answer["next"]
        page += 1
    assert seen == [f"pagination fact number {i}" for i in range(5)] and page == 3

    found = alice.search(
        "pagination fact", filters={"AND": [{"user_id": "alice"}, {"metadata": {"n": {"gte": 3}}}]}, top_k=10
    )
    assert sorted(m["memory"] for m in found["results"]) == ["pagination fact number 3", "pagination fact number 4"]
    assert all(0 <= m["score"] <= 1 for m in found["results"])


def test_batch_update_batch_delete_and_delete_all(alice):
    ids = [
        alice.add(f"batch item {i}", user_id="alice", app_id="sdk-batch", infer=False)["results"][0]["id"]
        for i in range(3)
    ]
    assert alice.batch_update([{"memory_id": ids[0], "text": "batch item zero"}]) == {
        "message": "Successfully updated 1 memories"
    }
    assert alice.get(ids[0])["memory"] == "batch item zero"
    assert alice.batch_delete([{"memory_id": ids[1]}])["message"] == "Successfully deleted 1 memories"
    listed = alice.get_all(filters={"AND": [{"user_id": "alice"}, {"app_id": "sdk-batch"}]})
    assert sorted(m["id"] for m in listed["results"]) == sorted([ids[0], ids[2]])

    assert alice.delete_all(user_id="alice", app_id="sdk-batch")["count"] == 2
    assert alice.get_all(filters={"AND": [{"user_id": "alice"}, {"app_id": "sdk-batch"}]})["count"] == 0


def test_users_lists_the_entities_the_key_may_see(base_url, alice):
    alice.add("entity fact", user_id="alice", agent_id="planner", app_id="sdk-entities", infer=False)
    bob = MemoryClient(api_key=BOB_KEY, host=base_url)
    bob.add("bob's own fact", user_id="bob", infer=False)
    names = {(e["type"], e["name"]) for e in alice.users()["results"]}
    assert {("user", "alice"), ("agent", "planner"), ("app", "sdk-entities")} <= names
    assert ("user", "bob") not in names
    admin = MemoryClient(api_key=ADMIN_KEY, host=base_url)
    assert {("user", "alice"), ("user", "bob")} <= {(e["type"], e["name"]) for e in admin.users()["results"]}


def test_mcp_over_streamable_http_lists_tools_and_adds_and_searches(base_url):
    anyio.run(_mcp_add_and_search, base_url)


async def _mcp_add_and_search(base_url: str) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    http = create_mcp_http_client(headers={"Authorization": f"Token {ALICE_KEY}"})
    async with http, streamable_http_client(f"{base_url}/mcp", http_client=http) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = {tool.name for tool in (await session.list_tools()).tools}
            assert {"add_memory", "search_memories", "get_memories", "get_memory"} <= tools
            added = await session.call_tool("add_memory", {"text": "MCP over HTTP remembers this", "infer": False})
            assert not added.is_error, added
            found = await session.call_tool(
                "search_memories", {"query": "MCP over HTTP", "filters": {"user_id": "alice"}}
            )
            results = json.loads(found.content[0].text)["results"]
            assert [r["memory"] for r in results] == ["MCP over HTTP remembers this"]
            assert results[0]["user_id"] == "alice"

    # a key of every user picks one with X-Mem0-User-Id (and a project with X-Mem0-Project-Id)
    headers = {"Authorization": f"Token {ADMIN_KEY}", "X-Mem0-User-Id": "carol", "X-Mem0-Project-Id": "mcp-http"}
    http = create_mcp_http_client(headers=headers)
    async with http, streamable_http_client(f"{base_url}/mcp", http_client=http) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            added = await session.call_tool("add_memory", {"text": "carol's note over MCP", "infer": False})
            assert not added.is_error, added
    carol = MemoryClient(api_key=ADMIN_KEY, host=base_url).get_all(filters={"user_id": "carol"})["results"]
    assert [(m["memory"], m["app_id"]) for m in carol] == [("carol's note over MCP", "mcp-http")]


def test_an_unknown_route_and_a_wrong_method_answer_json(base_url):
    with httpx.Client(base_url=base_url, headers={"Authorization": f"Token {ALICE_KEY}"}) as http:
        assert http.get("/v9/nothing/").status_code == 404
        assert http.patch("/v1/ping/").status_code == 405


def test_lifecycle_fields_and_read_modes_pass_through(alice):
    scope = {"AND": [{"user_id": "alice"}, {"app_id": "sdk-lifecycle"}]}
    old = alice.add("Use PostgreSQL for auth", user_id="alice", app_id="sdk-lifecycle")["results"][0]["id"]
    answer = alice.add("Auth DB is PostgreSQL", user_id="alice", app_id="sdk-lifecycle")
    new = answer["results"][0]["id"]
    assert [(r["id"], r["event"]) for r in answer["results"]] == [(new, "ADD"), (old, "MERGE")]

    assert [m["id"] for m in alice.get_all(filters=scope)["results"]] == [new]  # merged ones are hidden
    merged = alice.get_all(filters=scope, include_merged=True)["results"]
    assert [(m["id"], m["lifecycle_state"], m["replaced_by"]) for m in merged] == [
        (old, "merged", new),
        (new, "active", None),
    ]
    assert alice.get(old)["replacement_memory_id"] == new
    assert [m["id"] for m in alice.search("PostgreSQL auth", filters=scope, latest_only=True)["results"]] == [new]
    with pytest.raises(Exception, match="cannot both be true"):
        alice.get_all(filters=scope, latest_only=True, include_merged=True)


def test_an_add_with_a_timestamp_keeps_when_the_memory_was_made(alice):
    added = alice.add("made long ago", user_id="alice", app_id="sdk-time", timestamp=1_700_000_000, infer=False)
    got = alice.get(added["results"][0]["id"])
    assert got["created_at"].startswith("2023-11-14T22:13:20")
    with pytest.raises(Exception, match="timestamp is in the future"):
        alice.add("from the future", user_id="alice", timestamp=4_000_000_000, infer=False)


def test_delete_users_and_reset_delete_an_entitys_memories(base_url):
    # alice's own memory, here: the module's server is shared, but which of its tests ran
    # before this one on the same worker depends on how pytest-xdist shared them out
    MemoryClient(api_key=ALICE_KEY, host=base_url).add("alice's keeper", user_id="alice", infer=False)
    admin = MemoryClient(api_key=ADMIN_KEY, host=base_url)
    admin.add("dave's first", user_id="dave", agent_id="dave-bot", infer=False)
    admin.add("dave's second", user_id="dave", infer=False)
    assert admin.delete_users(agent_id="dave-bot") == {"message": "Entity deleted successfully."}
    assert [m["memory"] for m in admin.get_all(filters={"user_id": "dave"})["results"]] == ["dave's second"]
    admin.delete_users(user_id="dave")
    assert admin.get_all(filters={"user_id": "dave"})["count"] == 0
    bob = MemoryClient(api_key=BOB_KEY, host=base_url)
    with pytest.raises(Exception, match="may not touch user"):
        bob.delete_users(user_id="alice")
    bob.add("bob's soon gone", user_id="bob", app_id="bob-app", infer=False)
    assert bob.reset()["message"].startswith("Client reset successful")
    assert bob.get_all(filters={"user_id": "bob"})["count"] == 0
    assert alice_count(base_url) > 0  # reset with bob's key touched only bob


def alice_count(base_url: str) -> int:
    return MemoryClient(api_key=ALICE_KEY, host=base_url).get_all(filters={"user_id": "alice"})["count"]
