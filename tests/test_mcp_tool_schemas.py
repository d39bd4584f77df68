"""What a client sees of each MCP tool before calling it: required arguments, ranges,
`additionalProperties: false`, honest annotations; and what a bad call answers. Driven by the
`mcp` package's own client, in process (the server runs on the real SQLite store).
"""

from __future__ import annotations

import anyio
import pytest
from mcp import Client
from mem0_plugin import server as mcp_server
from mem0_plugin.identity import resolve_identity
from mem0_plugin.server import Resources, build_server

REQUIRED = {
    "add_memory": ["text"],
    "search_memories": ["query"],
    "get_memories": [],
    "get_memory": ["memory_id"],
    "update_memory": ["memory_id"],
    "delete_memory": ["memory_id"],
    "delete_all_memories": [],
    "get_event_status": ["event_id"],
    "list_entities": [],
}


def session(check):
    """Run `check(client, resources)` against a fresh server for the test's identity."""
    resources = Resources(resolve_identity())

    async def main():
        async with Client(build_server(resources)) as client:
            return await check(client, resources)

    return anyio.run(main)


async def ok(client, tool: str, **arguments):
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, f"{tool}({arguments}) failed: {result.content[0].text}"
    return result.structured_content


async def refused(client, tool: str, **arguments) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, f"{tool}({arguments}) should have failed: {result.structured_content}"
    text = result.content[0].text
    assert "\n" not in text and "Traceback" not in text, text
    return text


async def schemas(client) -> dict:
    return {tool.name: tool for tool in (await client.list_tools()).tools}


def test_every_schema_lists_its_required_arguments_and_refuses_others():
    async def check(client, _):
        return await schemas(client)

    tools = session(check)
    assert set(tools) == set(REQUIRED)
    for name, tool in tools.items():
        assert tool.input_schema.get("required", []) == REQUIRED[name], name
        assert tool.input_schema["additionalProperties"] is False, name
        for argument, schema in tool.input_schema["properties"].items():
            assert schema.get("description"), f"{name}.{argument}"


def test_numbers_carry_their_ranges_in_the_schema():
    async def check(client, _):
        return await schemas(client)

    tools = session(check)
    page = tools["get_memories"].input_schema["properties"]
    assert (page["page"]["minimum"], page["page"]["maximum"]) == (1, 10**9)
    assert (page["page_size"]["minimum"], page["page_size"]["maximum"]) == (1, 1000)
    search = tools["search_memories"].input_schema["properties"]
    assert (search["top_k"]["minimum"], search["top_k"]["maximum"]) == (1, 1000)
    [number] = [part for part in search["threshold"]["anyOf"] if part.get("type") == "number"]
    assert (number["minimum"], number["maximum"]) == (0, 1)


@pytest.mark.parametrize(
    "tool, arguments",
    [
        ("add_memory", {"text": "x"}),
        ("search_memories", {"query": "x"}),
        ("get_memories", {}),
        ("get_memory", {"memory_id": "x"}),
        ("update_memory", {"memory_id": "x", "text": "y"}),
        ("delete_memory", {"memory_id": "x"}),
    ],
)
def test_an_unknown_argument_is_a_tool_error_naming_it_and_nothing_is_written(tool, arguments):
    async def check(client, _):
        kept = (await ok(client, "add_memory", text="kept"))["results"][0]["id"]
        if "memory_id" in arguments:
            arguments["memory_id"] = kept
        text = await refused(client, tool, **arguments, bogus=1)
        assert "bogus: unknown argument (this tool takes " in text
        assert ", ".join(REQUIRED[tool]) in text
        page = await ok(client, "get_memories")
        return [(r["memory"], r["lifecycle_state"]) for r in page["results"]]

    assert session(check) == [("kept", "active")]


def test_an_unknown_argument_name_is_echoed_as_one_short_inert_line():
    async def check(client, _):
        return (
            await refused(client, "get_memories", **{"x\n\x1b[2J\u202e": 1}),
            await refused(client, "get_memories", **{"y" * 10_000: 1}),
        )

    hostile, long = session(check)
    assert "x \\x1b[2J\\u202e: unknown argument" in hostile and "\x1b" not in hostile
    assert "y" * 79 + "…: unknown argument" in long and len(long) < 300


@pytest.mark.parametrize(
    "tool, arguments, message",
    [
        ("get_memories", {"page": 0}, "page must be between 1 and 1000000000"),
        ("get_memories", {"page_size": 0}, "page_size must be between 1 and 1000"),
        ("get_memories", {"page_size": 1001}, "page_size must be between 1 and 1000"),
        ("get_memories", {"page_size": 2.5}, "page_size: Input should be a valid integer"),
        ("search_memories", {"query": "x", "top_k": 0}, "top_k must be between 1 and 1000"),
        ("search_memories", {"query": "x", "top_k": 1001}, "top_k must be between 1 and 1000"),
        ("search_memories", {"query": "x", "threshold": -0.1}, "threshold must be between 0 and 1"),
        ("search_memories", {"query": "x", "threshold": 1.5}, "threshold must be between 0 and 1"),
        (
            "get_memories",
            {"page_size": 0, "page": 0, "other": 1},
            "invalid arguments: page must be between 1 and 1000000000; page_size must be between 1 and 1000; "
            "other: unknown argument",
        ),
        ("add_memory", {}, "text is required"),
        ("update_memory", {"text": "x"}, "memory_id is required"),
    ],
)
def test_values_out_of_range_are_named_with_the_range(tool, arguments, message):
    async def check(client, _):
        return await refused(client, tool, **arguments)

    text = session(check)
    assert text.startswith(f"Error executing tool {tool}: ")
    assert message in text


def test_the_limits_themselves_are_accepted():
    async def check(client, _):
        await ok(client, "add_memory", text="limits")
        assert (await ok(client, "get_memories", page_size=1000, page=10**9))["results"] == []
        assert len((await ok(client, "get_memories", page_size=1))["results"]) == 1
        assert len((await ok(client, "search_memories", query="limits", top_k=1000, threshold=0))["results"]) == 1
        assert len((await ok(client, "search_memories", query="limits", top_k=1, threshold=1))["results"]) == 1

    session(check)


def test_id_is_accepted_for_memory_id_and_only_where_a_memory_id_is_taken():
    async def check(client, _):
        memory_id = (await ok(client, "add_memory", text="alias"))["results"][0]["id"]
        assert (await ok(client, "get_memory", id=memory_id))["memory"] == "alias"
        assert (await ok(client, "get_memory", id=memory_id, memory_id=memory_id))["id"] == memory_id
        assert "different memories" in await refused(client, "get_memory", id=memory_id, memory_id="other")
        assert (await ok(client, "update_memory", id=memory_id, text="alias 2"))["memory"] == "alias 2"
        assert "id: unknown argument" in await refused(client, "search_memories", query="alias", id=memory_id)
        assert await ok(client, "delete_memory", id=memory_id) == {"message": "Memory deleted successfully!"}

    session(check)


def test_infer_is_true_by_default_and_the_answer_lists_each_event():
    async def check(client, _):
        tools = await schemas(client)
        infer = tools["add_memory"].input_schema["properties"]["infer"]
        assert infer["default"] is True and "MERGE, SUPERSEDE" in infer["description"]
        first = await ok(client, "add_memory", text="Use PostgreSQL for auth")
        default = await ok(client, "add_memory", text="Auth DB is PostgreSQL")
        plain = await ok(client, "add_memory", text="Auth database is PostgreSQL", infer=False)
        return first, default, plain

    first, default, plain = session(check)
    old, new = first["results"][0]["id"], default["results"][0]["id"]
    assert "infer" not in default and default["results"] == [
        {"id": new, "memory": "Auth DB is PostgreSQL", "event": "ADD"},
        {"id": old, "memory": "Use PostgreSQL for auth", "event": "MERGE", "replacement_memory_id": new},
    ]
    assert "infer" not in plain and [r["event"] for r in plain["results"]] == ["ADD"]


def test_deleting_twice_is_an_error_saying_it_was_deleted_as_the_annotation_admits():
    async def check(client, _):
        tools = await schemas(client)
        assert tools["delete_memory"].annotations.destructive_hint is True
        assert tools["delete_memory"].annotations.idempotent_hint is False
        memory_id = (await ok(client, "add_memory", text="delete me"))["results"][0]["id"]
        assert await ok(client, "delete_memory", memory_id=memory_id) == {"message": "Memory deleted successfully!"}
        again = await refused(client, "delete_memory", memory_id=memory_id)
        never = await refused(client, "delete_memory", memory_id="never-existed")
        updated = await refused(client, "update_memory", memory_id=memory_id, text="x")
        return memory_id, again, never, updated

    memory_id, again, never, updated = session(check)
    assert f"memory {memory_id} not found: it was deleted (`mem0-memories restore {memory_id}`" in again
    assert "it was deleted" in updated
    assert never.endswith("memory never-existed not found")


def test_the_same_update_twice_makes_one_change_as_idempotent_hint_says():
    async def check(client, resources):
        tools = await schemas(client)
        assert tools["update_memory"].annotations.idempotent_hint is True
        memory_id = (await ok(client, "add_memory", text="v1", metadata={"a": 1}))["results"][0]["id"]
        first = await ok(client, "update_memory", memory_id=memory_id, text="v2", metadata={"b": 2})
        second = await ok(client, "update_memory", memory_id=memory_id, text="v2", metadata={"b": 2})
        removed = await ok(client, "update_memory", memory_id=memory_id, metadata={"a": None})
        caller = resources.caller()
        return first, second, removed, [e.event for e in caller.store.history(caller.user_id, memory_id)]

    first, second, removed, events = session(check)
    assert first == second and first["metadata"] == {"a": 1, "b": 2}
    assert removed["metadata"] == {"b": 2}
    assert events == ["ADD", "UPDATE", "UPDATE"]


def test_every_server_option_has_help_text(capsys):
    with pytest.raises(SystemExit) as done:
        mcp_server.main(["--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # however argparse wrapped it
    for option, words in [
        ("--user-id", "the user whose memories it serves"),
        ("--project-id", "the current project"),
        ("--store", "store URL"),
        ("--cwd", "project directory"),
        ("--debug", "debug logging on stderr"),
    ]:
        assert option in text and words in text, option
