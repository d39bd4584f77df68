"""The command that mcp_config.json registers starts a server that lists the tools.

The launcher is told to use the installed console script (MEM0_PLUGIN_USE_PATH=1) so the
test does not build a second virtual environment; test_plugin_files covers that install.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest
from conftest import BIN
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from test_mcp_server import TOOLS

ROOT = Path(__file__).resolve().parent.parent


def expand(value: str, variables: dict[str, str]) -> str:
    for name, replacement in variables.items():
        value = value.replace("${" + name + "}", replacement)
    return value


@pytest.mark.parametrize(
    "config, variables",
    [
        ("mcp_config.json", {"CLAUDE_PLUGIN_ROOT": str(ROOT)}),
        ("mcp_config.cursor.json", {"CURSOR_PLUGIN_ROOT": str(ROOT), "workspaceFolder": str(ROOT)}),
    ],
)
def test_registered_command_serves_the_tools(config, variables, mem0_home):
    server = json.loads((ROOT / config).read_text())["mcpServers"]["mem0"]
    env = {
        **os.environ,
        "MEM0_PLUGIN_USE_PATH": "1",
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "MEM0_HOME": str(mem0_home),
    }
    params = StdioServerParameters(
        command=expand(server["command"], variables),
        args=[expand(a, variables) for a in server.get("args", [])],
        env=env,
        cwd=str(ROOT),
    )

    async def session() -> tuple[set[str], dict]:
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as client:
                await client.initialize()
                tools = {t.name for t in (await client.list_tools()).tools}
                added = await client.call_tool("add_memory", {"text": "Registered through mcp_config"})
                return tools, added.structured_content

    tools, added = anyio.run(session)
    assert tools == TOOLS
    assert added["status"] == "SUCCEEDED" and added["results"][0]["event"] == "ADD"
