"""`mem0-mcp-server`: the stdio MCP server (SPEC §6). It only maps the protocol onto
`operations`; every anticipated error becomes a tool error carrying its message.
"""

from __future__ import annotations

import argparse
import functools
import logging
import sys
import threading
import traceback
from typing import Annotated, Any, Callable

from pydantic import Field, ValidationError

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from . import __version__, operations
from .arguments import Parser
from .errors import InvalidInputError, Mem0PluginError
from .identity import Identity, resolve_identity
from .store import SqliteStore, open_store
from .store_url import check_directory

log = logging.getLogger("mem0_plugin.server")

Filters = Annotated[dict[str, Any] | str | None, Field(
    description='mem0 filter: {"AND"|"OR"|"NOT": [...]}, entity keys (app_id, agent_id, run_id, id, '
                'created_at, updated_at), {"metadata": {"key": value}}, operators in, nin, eq, ne, gt, gte, '
                'lt, lte, contains, icontains, and "*" for any value. Omit it for the current project; '
                'a filter without app_id reads across all of your projects.')]
MemoryId = Annotated[str | None, Field(description="The memory's id.")]
IdAlias = Annotated[str | None, Field(description="Same as memory_id (accepted for compatibility).")]
LatestOnly = Annotated[bool, Field(description="Only active memories (hide superseded ones).")]
IncludeMerged = Annotated[bool, Field(description="Also return memories merged into another one.")]


class Resources:
    """The identity fixed at start-up and the store, opened on first use."""

    def __init__(self, identity: Identity):
        self.identity = identity
        self._store: SqliteStore | None = None
        self._semantic = None
        self._opening = threading.Lock()  # tool calls run on worker threads

    def caller(self) -> operations.Caller:
        with self._opening:
            if self._store is None:
                self._store = open_store(self.identity.store_location)
            if self._semantic is None:  # the embedder's model loads on the first search, not here
                from .semantic import Semantic

                self._semantic = Semantic.from_home(self.identity.home)
        return operations.Caller(self._store, self.identity, actor="mcp", semantic=self._semantic, background=True)


def _tool_errors(fn: Callable) -> Callable:
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Mem0PluginError as exc:
            raise ToolError(str(exc)) from None
        except Exception as exc:  # a bug: say what broke, keep the traceback on stderr
            log.error("tool %s failed:\n%s", fn.__name__, traceback.format_exc())
            raise ToolError(f"internal error in {fn.__name__}: {type(exc).__name__}: {exc}") from None
    return wrapper


def _pick_id(memory_id: str | None, id: str | None) -> str:
    if memory_id and id and memory_id != id:
        raise InvalidInputError("memory_id and id name different memories; pass one of them")
    chosen = memory_id or id
    if not chosen:
        raise InvalidInputError("memory_id is required (id is accepted too)")
    return chosen


class Mem0MCPServer(MCPServer):
    """MCPServer whose argument-validation errors read as one line naming each bad argument."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context=None):
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(f"Error executing tool {name}: {describe_invalid_arguments(exc.__cause__)}") \
                    from exc.__cause__
            raise


def describe_invalid_arguments(error: ValidationError) -> str:
    """`page: Input should be a valid integer; top_k: ...` — one line, no values echoed."""
    parts = []
    for item in error.errors():
        where = ".".join(str(p) for p in item.get("loc", ()) if p != "__root__") or "arguments"
        parts.append(f"{where}: {item.get('msg', 'invalid')}")
    return "invalid arguments: " + "; ".join(parts)


def build_server(resources: Resources) -> MCPServer:
    server = Mem0MCPServer("mem0", version=__version__,
                       instructions="Long-term memory for this user and project (mem0-compatible).")
    read_only = ToolAnnotations(readOnlyHint=True, destructiveHint=False, openWorldHint=False)

    @server.tool(description="Store a memory for the current user and project.",
                 annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False, openWorldHint=False))
    @_tool_errors
    def add_memory(
        text: Annotated[str, Field(description="The memory text to store.")],
        user_id: Annotated[str | None, Field(description="Must be the server's user if given.")] = None,
        app_id: Annotated[str | None, Field(description="Project id; defaults to the current project.")] = None,
        agent_id: Annotated[str | None, Field(description="Agent scope.")] = None,
        run_id: Annotated[str | None, Field(description="Run/session scope.")] = None,
        metadata: Annotated[dict[str, Any] | None, Field(description="Any JSON object; type, confidence, pinned, source, branch, exclude_from_dream have meaning.")] = None,
        infer: Annotated[bool, Field(description="Extract facts with a language model; without one the text is stored as given.")] = True,
        immutable: Annotated[bool, Field(description="Never changed by update or consolidation.")] = False,
    ) -> dict[str, Any]:
        return operations.add_memory(resources.caller(), text, user_id=user_id, app_id=app_id,
                                     agent_id=agent_id, run_id=run_id, metadata=metadata,
                                     infer=infer, immutable=immutable)

    @server.tool(description="Search memories by meaning of the words; each result has a score in [0, 1].",
                 annotations=read_only)
    @_tool_errors
    def search_memories(
        query: Annotated[str, Field(description="What to look for.")],
        filters: Filters = None,
        top_k: Annotated[int, Field(description="Most results to return (1-1000).")] = 10,
        threshold: Annotated[float | None, Field(description="Minimum score in [0, 1].")] = None,
        latest_only: LatestOnly = False,
        include_merged: IncludeMerged = False,
    ) -> dict[str, Any]:
        return operations.search_memories(resources.caller(), query, filters, top_k, threshold,
                                          latest_only, include_merged)

    @server.tool(description="List memories page by page (stable order: created_at, then id).",
                 annotations=read_only)
    @_tool_errors
    def get_memories(
        filters: Filters = None,
        page: Annotated[int, Field(description="Page number, from 1.")] = 1,
        page_size: Annotated[int, Field(description="Records per page (1-1000).")] = 100,
        latest_only: LatestOnly = False,
        include_merged: IncludeMerged = False,
    ) -> dict[str, Any]:
        return operations.get_memories(resources.caller(), filters, page, page_size, latest_only, include_merged)

    @server.tool(description="Get one memory by id.", annotations=read_only)
    @_tool_errors
    def get_memory(memory_id: MemoryId = None, id: IdAlias = None) -> dict[str, Any]:
        return operations.get_memory(resources.caller(), _pick_id(memory_id, id))

    @server.tool(description="Change a memory's text and/or metadata (metadata keys merge; null removes a key).",
                 annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=True,
                                             openWorldHint=False))
    @_tool_errors
    def update_memory(
        memory_id: MemoryId = None,
        text: Annotated[str | None, Field(description="New text.")] = None,
        metadata: Annotated[dict[str, Any] | None, Field(description="Metadata keys to set (null removes).")] = None,
        id: IdAlias = None,
    ) -> dict[str, Any]:
        return operations.update_memory(resources.caller(), _pick_id(memory_id, id), text, metadata)

    @server.tool(description="Delete a memory (recoverable with `mem0-memories restore ID`).",
                 annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=True,
                                             openWorldHint=False))
    @_tool_errors
    def delete_memory(memory_id: MemoryId = None, id: IdAlias = None) -> dict[str, Any]:
        return operations.delete_memory(resources.caller(), _pick_id(memory_id, id))

    return server


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = Parser(prog="mem0-mcp-server", description="The mem0 memory MCP server (stdio).")
    parser.add_argument("--user-id")
    parser.add_argument("--project-id")
    parser.add_argument("--store", help="store URL or file path (default sqlite:///<MEM0_HOME>/memories.sqlite3)")
    parser.add_argument("--cwd", help="project directory (default: the current directory)")
    parser.add_argument("--debug", action="store_true")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.DEBUG if args.debug else logging.WARNING,
                        format="mem0-mcp-server: %(message)s")
    try:
        identity = resolve_identity(user_id=args.user_id, project_id=args.project_id,
                                    store=args.store, cwd=args.cwd)
        check_directory(identity.store_location)  # a bad --store fails now, not at the first tool call
    except Mem0PluginError as exc:
        print(f"mem0-mcp-server: {exc}", file=sys.stderr)
        return exc.exit_code or 1
    build_server(Resources(identity)).run("stdio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
