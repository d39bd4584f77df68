"""The MCP server (docs/mcp-tools.md), driven by the `mcp` package's own client: in memory (the SDK's
InMemoryTransport) for the tools, over a real subprocess's stdio for the smoke tests (the six
tools listed, nothing but protocol on stdout, the start-up errors)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import asynccontextmanager

import anyio
from conftest import command_path, mcp_session
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

TOOLS = {
    "add_memory",
    "search_memories",
    "get_memories",
    "get_memory",
    "update_memory",
    "delete_memory",
    "delete_all_memories",
    "get_event_status",
    "list_entities",
}
READS = {"search_memories", "get_memories", "get_memory", "get_event_status", "list_entities"}
RECORD_KEYS = {
    "id",
    "memory",
    "user_id",
    "app_id",
    "agent_id",
    "run_id",
    "metadata",
    "created_at",
    "updated_at",
    "lifecycle_state",
    "replacement_memory_id",
    "source_memory_ids",
    "immutable",
}


@asynccontextmanager
async def server(*args: str, **env: str):
    """The server of `mem0-mcp-server *args`, in memory, for the identity in the environment (+ overrides)."""
    async with mcp_session(*args, env=env) as session:
        yield session


async def ok(session: ClientSession, tool: str, **arguments):
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, f"{tool}({arguments}) failed: {result.content[0].text}"
    return result.structured_content


async def refused(session: ClientSession, tool: str, **arguments) -> str:
    result = await session.call_tool(tool, arguments)
    assert result.is_error, f"{tool}({arguments}) should have failed: {result.structured_content}"
    text = result.content[0].text
    assert "Traceback" not in text
    return text


def run(fn, *args):
    return anyio.run(fn, *args)


def test_lists_the_tools_with_annotations():
    async def main():
        params = StdioServerParameters(command=command_path("mem0-mcp-server"), env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                assert init.server_info.name == "mem0"
                return (await session.list_tools()).tools

    tools = {t.name: t for t in run(main)}
    assert set(tools) == TOOLS
    for name, tool in tools.items():
        assert tool.description, name
        assert tool.annotations.read_only_hint is (name in READS), name
        assert bool(tool.annotations.destructive_hint) is (name in ("delete_memory", "delete_all_memories")), name
    props = {name: set(t.input_schema["properties"]) for name, t in tools.items()}
    assert props["add_memory"] == {"text", "user_id", "app_id", "agent_id", "run_id", "metadata", "infer", "immutable"}
    scope = {"user_id", "app_id", "agent_id", "run_id"}  # the top-level scope mem0's clients send
    assert props["search_memories"] == {
        "query",
        "filters",
        "top_k",
        "threshold",
        "latest_only",
        "include_merged",
        "rerank",
        "keyword_search",
        *scope,
    }
    assert props["get_memories"] == {"filters", "page", "page_size", "latest_only", "include_merged", *scope}
    assert props["delete_all_memories"] == scope
    assert props["get_event_status"] == {"event_id"}
    assert props["list_entities"] == {"page", "page_size"}
    assert props["get_memory"] == {"memory_id"}  # `id` is accepted too, but not advertised
    assert props["update_memory"] == {"memory_id", "text", "metadata"}
    assert props["delete_memory"] == {"memory_id"}
    assert tools["add_memory"].input_schema["required"] == ["text"]
    assert tools["search_memories"].input_schema["required"] == ["query"]
    for name in ("get_memory", "update_memory", "delete_memory"):
        assert tools[name].input_schema["required"] == ["memory_id"], name
    assert tools["update_memory"].annotations.idempotent_hint is True
    assert not tools["delete_memory"].annotations.idempotent_hint
    for name in TOOLS:
        assert tools[name].input_schema["additionalProperties"] is False, name
    for name in TOOLS:
        for arg, schema in tools[name].input_schema["properties"].items():
            assert schema.get("description"), f"{name}.{arg} has no description"


def test_the_tools_answer_as_spec_section_6(backend):
    async def main():
        async with server() as s:
            added = await ok(s, "add_memory", text="Use pnpm, not npm", metadata={"type": "convention"})
            assert added["status"] == "SUCCEEDED" and "infer" not in added
            [result] = added["results"]
            assert result["event"] == "ADD" and result["memory"] == "Use pnpm, not npm"
            memory_id = result["id"]

            again = await ok(s, "add_memory", text="Use pnpm, not npm")
            assert again["results"] == [{"id": memory_id, "memory": "Use pnpm, not npm", "event": "NOOP"}]

            plain = await ok(
                s,
                "add_memory",
                text="Run pytest -q",
                infer=False,
                immutable=True,
                agent_id="claude",
                run_id="r1",
                app_id="acme-web",
            )
            assert "infer" not in plain and plain["results"][0]["event"] == "ADD"

            hits = await ok(s, "search_memories", query="pnpm npm")
            assert list(hits) == ["results"]
            assert hits["results"][0]["id"] == memory_id
            assert set(hits["results"][0]) == RECORD_KEYS | {"score"}
            assert 0 <= hits["results"][0]["score"] <= 1
            exact = await ok(s, "search_memories", query="Use pnpm, not npm", top_k=1)
            assert exact["results"][0]["score"] >= 0.99

            page = await ok(s, "get_memories")
            assert set(page) == {"count", "page", "page_size", "next", "previous", "results"}
            assert (page["count"], page["page"], page["page_size"], page["next"], page["previous"]) == (
                1,
                1,
                100,
                None,
                None,
            )
            assert set(page["results"][0]) == RECORD_KEYS
            everywhere = await ok(s, "get_memories", filters={"app_id": "*"}, page_size=1)
            assert (everywhere["count"], everywhere["next"], len(everywhere["results"])) == (2, 2, 1)
            as_text = await ok(s, "get_memories", filters='{"app_id": "acme-web"}')
            assert [r["memory"] for r in as_text["results"]] == ["Run pytest -q"]
            assert as_text["results"][0]["immutable"] is True

            by_memory_id = await ok(s, "get_memory", memory_id=memory_id)
            by_id = await ok(s, "get_memory", id=memory_id)
            assert by_memory_id == by_id
            assert set(by_id) == RECORD_KEYS
            assert (by_id["user_id"], by_id["app_id"], by_id["lifecycle_state"]) == ("alice", "acme-api", "active")
            assert by_id["metadata"] == {"type": "convention"}

            updated = await ok(
                s, "update_memory", memory_id=memory_id, text="Use pnpm 9, not npm", metadata={"confidence": 0.9}
            )
            assert updated["memory"] == "Use pnpm 9, not npm"
            assert updated["metadata"] == {"type": "convention", "confidence": 0.9}
            assert (await ok(s, "update_memory", id=memory_id, metadata={"type": None}))["metadata"] == {
                "confidence": 0.9
            }

            assert await ok(s, "delete_memory", memory_id=memory_id) == {"message": "Memory deleted successfully!"}
            assert "not found" in await refused(s, "get_memory", memory_id=memory_id)
            assert (await ok(s, "get_memories"))["count"] == 0
            other = (await ok(s, "add_memory", text="another"))["results"][0]["id"]
            assert await ok(s, "delete_memory", id=other) == {"message": "Memory deleted successfully!"}

    run(main)


ERRORS = [
    ("get_memories", dict(filters={"metadata": {"type": {"like": "dec%"}}}), "unknown operator 'like'"),
    ("get_memories", dict(filters={"and": [{"app_id": "x"}]}), "must be upper case"),
    ("get_memories", dict(filters="{not json"), "not valid JSON"),
    ("get_memories", dict(filters={"user_id": "bob"}), "another user"),
    ("search_memories", dict(query="x", filters={"user_id": {"in": ["bob"]}}), "another user"),
    ("get_memories", dict(page_size=0), "page_size must be between 1 and 1000"),
    ("get_memories", dict(page_size=1001), "page_size must be between 1 and 1000"),
    ("get_memories", dict(page_size="abc"), "page_size"),
    ("get_memories", dict(page=0), "page must be between"),
    ("get_memories", dict(latest_only=True, include_merged=True), "latest_only and include_merged"),
    ("search_memories", dict(query=""), "query must be a non-empty string"),
    ("search_memories", dict(query="x", threshold=2), "threshold"),
    ("search_memories", dict(query="x", top_k=-1), "top_k"),
    ("add_memory", dict(text="x", user_id="bob"), "user_id 'bob' is not this server's user"),
    ("add_memory", dict(text="   "), "memory text is empty"),
    ("add_memory", dict(), "text"),
    ("get_memory", dict(memory_id="no-such-id"), "memory no-such-id not found"),
    ("get_memory", dict(), "memory_id is required"),
    ("get_memory", dict(memory_id="a", id="b"), "different memories"),
    ("update_memory", dict(memory_id="no-such-id", text="x"), "not found"),
    ("update_memory", dict(memory_id="no-such-id"), "needs text, metadata, or both"),
    ("delete_memory", dict(memory_id="no-such-id"), "not found"),
    ("delete_memory", dict(id=""), "memory_id is required"),
]


def test_errors_are_tool_errors_with_a_clear_message_and_the_server_keeps_working(backend):
    async def main():
        async with server() as s:
            kept = (await ok(s, "add_memory", text="survives every error"))["results"][0]["id"]
            immutable = (await ok(s, "add_memory", text="frozen", immutable=True))["results"][0]["id"]
            failures = []
            for tool, arguments, message in ERRORS:
                text = await refused(s, tool, **arguments)
                if message not in text:
                    failures.append((tool, arguments, text))
                assert (await ok(s, "get_memory", memory_id=kept))["memory"] == "survives every error"
            assert "immutable" in await refused(s, "update_memory", memory_id=immutable, text="thawed")
            deep: dict = {"app_id": "acme-api"}
            for _ in range(40):  # the limit is 32; the client's own JSON encoder stops near 100
                deep = {"AND": [deep]}
            assert "nested deeper" in await refused(s, "get_memories", filters=deep)
            assert (await ok(s, "get_memories"))["count"] == 2
            return failures

    assert run(main) == []


def test_a_server_for_another_user_cannot_see_or_touch_alices_memories(backend):
    async def main():
        async with server() as alice:
            ids = [
                (await ok(alice, "add_memory", text=text, metadata={"type": "decision"}))["results"][0]["id"]
                for text in ("alice deploys with terraform", "alice's api key is in vault")
            ]
        for bob_server in (server(MEM0_USER_ID="bob"), server("--user-id", "bob")):
            async with bob_server as bob:
                for memory_id in ids:
                    assert "not found" in await refused(bob, "get_memory", memory_id=memory_id)
                    assert "not found" in await refused(bob, "get_memory", id=memory_id)
                    assert "not found" in await refused(bob, "update_memory", memory_id=memory_id, text="x")
                    assert "not found" in await refused(bob, "delete_memory", memory_id=memory_id)
                    assert "not found" in await refused(bob, "delete_memory", id=memory_id)
                for filters in (
                    {"id": ids[0]},
                    {"id": {"in": ids}},
                    {"app_id": "acme-api"},
                    {"app_id": "*"},
                    {"user_id": "*"},
                    {"metadata": {"type": "decision"}},
                    None,
                ):
                    args = {} if filters is None else {"filters": filters}
                    page = await ok(bob, "get_memories", include_merged=True, **args)
                    assert (page["count"], page["results"]) == (0, [])
                    hits = await ok(bob, "search_memories", query="alice deploys with terraform", **args)
                    assert hits["results"] == []
                for filters in ({"user_id": "alice"}, {"OR": [{"user_id": "alice"}]}):
                    assert "another user" in await refused(bob, "get_memories", filters=filters)
                    assert "another user" in await refused(bob, "search_memories", query="vault", filters=filters)
                assert "not this server's user" in await refused(bob, "add_memory", text="x", user_id="alice")
        async with server() as alice:
            page = await ok(alice, "get_memories")
            assert sorted(r["id"] for r in page["results"]) == sorted(ids)

    run(main)


def test_concurrent_calls_on_one_session(backend):
    async def main():
        async with server() as s:
            answers = {}

            async def add(i):
                answers[i] = await ok(s, "add_memory", text=f"concurrent memory {i}")

            async def read(i):
                answers[f"r{i}"] = await ok(s, "get_memories", page_size=5)

            async with anyio.create_task_group() as tg:
                for i in range(40):
                    tg.start_soon(add, i)
                    tg.start_soon(read, i)
            page = await ok(s, "get_memories", page_size=1000)
            return answers, page

    answers, page = run(main)
    assert page["count"] == 40
    assert all(answers[i]["results"][0]["event"] == "ADD" for i in range(40))


def test_nothing_but_protocol_on_stdout():
    # a real JSON-RPC exchange by hand: every stdout line must be a JSON-RPC message
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "add_memory", "arguments": {"text": "hello from raw json-rpc"}},
        },
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "get_memories", "arguments": {"filters": {"bad": 1}}},
        },
    ]
    proc = subprocess.Popen(
        [command_path("mem0-mcp-server")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    lines = []
    for request in requests:
        proc.stdin.write(json.dumps(request) + "\n")
        proc.stdin.flush()
        if "id" in request:
            lines.append(proc.stdout.readline())
    proc.stdin.close()  # end of input: the server exits
    rest, err = proc.stdout.read(), proc.stderr.read()
    proc.wait(timeout=30)
    assert rest == ""
    messages = [json.loads(line) for line in lines]
    assert [m["id"] for m in messages] == [1, 2, 3]
    assert all(m["jsonrpc"] == "2.0" for m in messages)
    assert messages[2]["result"]["isError"] is True
    assert "Traceback" not in err
    assert proc.returncode == 0


def test_server_start_imports_nothing_heavy():
    code = "import sys, mem0_plugin.server; print(sorted(m for m in sys.modules if m.split('.')[0] in ('mem0', 'torch', 'openai')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_server_with_a_bad_store_url_exits_with_one_line(tmp_path, run_cli):
    done = run_cli("mem0-mcp-server", "--cwd", str(tmp_path / "missing"), input="")
    assert done.returncode != 0
    assert done.stdout == ""
    assert done.stderr.strip().count("\n") == 0 and "not a directory" in done.stderr


def test_server_with_a_corrupt_store_reports_the_store_error():
    home = os.environ["MEM0_HOME"]
    os.makedirs(home, exist_ok=True)
    with open(os.path.join(home, "memories.sqlite3"), "wb") as handle:
        handle.write(b"garbage" * 1000)

    async def main():
        async with server() as s:
            first = await refused(s, "get_memories")
            second = await refused(s, "add_memory", text="x")
            return first, second

    first, second = run(main)
    assert "not a database" in first and "not a database" in second


def test_tools_taking_an_id_take_a_unique_prefix_of_8_characters(backend):
    async def main():
        async with server() as s:
            memory_id = (await ok(s, "add_memory", text="Use pnpm, not npm"))["results"][0]["id"]
            assert (await ok(s, "get_memory", memory_id=memory_id[:8]))["id"] == memory_id
            assert (await ok(s, "update_memory", id=memory_id[:8], text="Use pnpm"))["memory"] == "Use pnpm"
            assert "too short: give at least 8 characters" in await refused(s, "get_memory", memory_id=memory_id[:7])
            assert await ok(s, "delete_memory", memory_id=memory_id[:8]) == {"message": "Memory deleted successfully!"}
            assert "not found" in await refused(s, "get_memory", memory_id=memory_id[:8])

    run(main)


def test_the_official_plugins_skill_calls_work_as_they_write_them(tmp_path):
    """mem0's own plugin's skills (remember, search, pin, stats, forget) call the tools with
    these arguments: each works here as it does on the hosted platform, and a scoped
    delete_all_memories can be taken back."""
    env = {"MEM0_USER_ID": "alice", "MEM0_PROJECT_ID": "ledger", "MEM0_EMBEDDER": "none"}
    scope = {"AND": [{"user_id": "alice"}, {"app_id": "ledger"}]}

    async def main():
        async with server(**env) as s:
            added = await ok(
                s,
                "add_memory",
                text="Deploys go through the Helm chart in deploy/helm",
                user_id="alice",
                app_id="ledger",
                metadata={"type": "decision", "branch": "main", "confidence": 1.0, "source": "remember_command"},
                infer=False,
            )
            event = added["event_id"]
            status = await ok(s, "get_event_status", event_id=event)
            assert status["status"] == "SUCCEEDED"
            pinned = await ok(
                s,
                "add_memory",
                text="Never run kubectl apply by hand",
                user_id="alice",
                app_id="ledger",
                metadata={"pinned": True, "type": "decision", "confidence": 1.0},
                infer=False,
            )
            found = await ok(s, "search_memories", query="how do we deploy?", filters=scope, top_k=5, rerank=True)
            assert found["results"][0]["memory"].startswith("Deploys go through the Helm chart")
            week = {"AND": [*scope["AND"], {"created_at": {"gte": "2020-01-01"}}]}
            recent = await ok(s, "search_memories", query="deploy decisions made this week", filters=week, top_k=20)
            assert [m["memory"] for m in recent["results"]][:1] == ["Deploys go through the Helm chart in deploy/helm"]
            listed = await ok(s, "get_memories", filters=scope, page_size=100)
            assert {m["memory"] for m in listed["results"]} >= {"Never run kubectl apply by hand"}
            await ok(s, "update_memory", memory_id=pinned["event_id"], text="Never run kubectl apply by hand (pinned)")
            entities = await ok(s, "list_entities")
            assert any(e.get("id") == "alice" or e.get("name") == "alice" for e in entities["results"])
            gone = await ok(s, "delete_all_memories", user_id="alice", app_id="ledger")
            assert gone["count"] == 2 and "restore" in gone
            assert (await ok(s, "get_memories", filters=scope, page_size=100))["results"] == []
        return event

    event = run(main)
    restored = subprocess.run(
        [command_path("mem0-memories"), "restore", event],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
    )
    assert restored.returncode == 0, restored.stderr
