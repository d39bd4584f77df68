"""What the MCP server answers before any tool runs — its `initialize` result and its lists of
tools, prompts and resources — as `scripts/mcp_manifest.json` keeps them for the launcher's stand-in (`scripts/mcp_standin.py`),
which answers a client from it while the plugin's environment is first installed. A test
checks the file against the server; after changing a tool, write it again:

    python -m mem0_plugin.cli.mcp_manifest > scripts/mcp_manifest.json
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from typing import Any

LISTS = ("tools/list", "prompts/list", "resources/list", "resources/templates/list")


async def _answers() -> tuple[Any, dict[str, Any]]:
    from mcp.client._memory import InMemoryTransport
    from mcp.client.session import ClientSession

    from .. import server

    with tempfile.TemporaryDirectory() as folder:  # an identity of its own; no store is opened
        identity = server.resolve_identity(
            user_id="manifest", project_id="manifest", store=f"sqlite:///{folder}/m.sqlite3", cwd=folder
        )
        async with InMemoryTransport(server.build_server(server.Resources(identity))) as (read, write):
            async with ClientSession(read, write) as session:
                initialized = await session.initialize()
                lists = (
                    session.list_tools,
                    session.list_prompts,
                    session.list_resources,
                    session.list_resource_templates,
                )
                return initialized, {method: await ask() for method, ask in zip(LISTS, lists)}


def manifest() -> dict[str, Any]:
    """`protocolVersions` (the server's, its latest last), the `initialize` result without the
    version agreed (`capabilities`, `serverInfo`, `instructions`), and `lists`: the result of
    each list method (`LISTS`) by method, as on the wire."""
    from mcp.server.runner import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

    initialized, lists = asyncio.run(_answers())
    wire = initialized.model_dump(by_alias=True, exclude_none=True, mode="json")
    wire.pop("protocolVersion")
    versions = [v for v in HANDSHAKE_PROTOCOL_VERSIONS if v != LATEST_HANDSHAKE_VERSION] + [LATEST_HANDSHAKE_VERSION]
    return {
        "protocolVersions": versions,
        "initialize": wire,
        "lists": {method: _listed(answer) for method, answer in lists.items()},
    }


def _listed(answer: Any) -> dict[str, Any]:
    """A list's result as the client reads it: the list itself (a server that pages would add
    `nextCursor`; this one does not), without the SDK's cache hints."""
    wire = answer.model_dump(by_alias=True, exclude_none=True, mode="json")
    return {key: value for key, value in wire.items() if key in ("tools", "prompts", "resources", "resourceTemplates")}


def render() -> str:
    return json.dumps(manifest(), indent=1, ensure_ascii=False, sort_keys=True) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
