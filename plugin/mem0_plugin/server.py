"""`mem0-mcp-server`: the stdio MCP server (docs/mcp-tools.md). It only maps the protocol onto
`operations`; every anticipated error becomes a tool error carrying its message.

Each tool's input schema lists its required arguments, the range of each number and
`additionalProperties: false`: an unknown argument is a tool error naming it, not ignored.
"""

from __future__ import annotations

import argparse
import contextvars
import functools
import logging
import sys
import threading
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from . import __version__, operations
from .arguments import Parser
from .errors import Mem0PluginError
from .identity import Identity, resolve_identity
from .sanitize import printable
from .store import Store, open_store
from .store_url import check_directory

if TYPE_CHECKING:
    from .judges.llm_judge import WritePathJudge
    from .semantic import Semantic

log = logging.getLogger("mem0_plugin.server")

Filters = Annotated[
    dict[str, Any] | str | None,
    Field(
        description='mem0 filter: {"AND"|"OR"|"NOT": [...]}, entity keys (app_id, agent_id, run_id, id, '
        'created_at, updated_at), {"metadata": {"key": value}}, operators in, nin, eq, ne, gt, gte, '
        'lt, lte, contains, icontains, and "*" for any value. Omit it for the current project; '
        "a filter without app_id reads across all of your projects."
    ),
]
MemoryId = Annotated[str, Field(description="The memory's id (also accepted as `id`).")]
LatestOnly = Annotated[
    bool, Field(description="Only active memories (hide superseded ones); not together with include_merged.")
]
IncludeMerged = Annotated[
    bool, Field(description="Also return memories merged into another one; not together with latest_only.")
]
Page = Annotated[int, Field(ge=1, le=operations.MAX_PAGE, description="Page number, from 1.")]
PageSize = Annotated[
    int, Field(ge=1, le=operations.MAX_PAGE_SIZE, description=f"Records per page (1-{operations.MAX_PAGE_SIZE}).")
]
TopK = Annotated[
    int, Field(ge=1, le=operations.MAX_TOP_K, description=f"Most results to return (1-{operations.MAX_TOP_K}).")
]
Threshold = Annotated[float | None, Field(ge=0, le=1, description="Minimum score, from 0 to 1.")]
Infer = Annotated[
    bool,
    Field(
        description=(
            "Compare the new text with at most 10 similar memories of its project and type; where the "
            "rules are certain, an old memory is merged into the new one or superseded by it at once, "
            "and results list each event (ADD, NOOP, MERGE, SUPERSEDE). The text is always stored as "
            "given (no language model extracts facts). Pass false to only store."
        )
    ),
]

Rerank = Annotated[
    bool, Field(description="Accepted for mem0 clients; results are always ranked by the fused score (docs/search.md).")
]
KeywordSearch = Annotated[bool, Field(description="Accepted for mem0 clients; word matches always take part.")]
ScopeUser = Annotated[str | None, Field(description="Must be the server's user if given.")]
ScopeApp = Annotated[str | None, Field(description='Project (app_id) to confine to; "*" for every project.')]
ScopeAgent = Annotated[str | None, Field(description="Agent scope.")]
ScopeRun = Annotated[str | None, Field(description="Run/session scope.")]

_REQUEST: contextvars.ContextVar[Any] = contextvars.ContextVar("mem0_http_request", default=None)


def current_request() -> Any:
    """The HTTP request of the tool call being served (`mem0-server`'s /mcp: docs/server.md);
    None over stdio. Tool functions run on worker threads that inherit it."""
    return _REQUEST.get()


ID_ALIAS_TOOLS = frozenset({"get_memory", "update_memory", "delete_memory"})


class Resources:
    """The identity fixed at start-up and the store, opened on first use."""

    def __init__(self, identity: Identity):
        self.identity = identity
        self._store: Store | None = None
        self._semantic: Semantic | None = None
        self._judge: WritePathJudge | None = None
        self._opening = threading.Lock()  # tool calls run on worker threads

    def caller(self) -> operations.Caller:
        with self._opening:
            if self._store is None:
                self._store = open_store(self.identity.store_location)
            if self._semantic is None:  # the embedder's model loads on the first search, not here
                from .semantic import Semantic

                self._semantic = Semantic.from_home(self.identity.home)
            if self._judge is None:  # reads nothing yet: the configuration, on the first uncertain pair
                from .judges.llm_judge import WritePathJudge

                self._judge = WritePathJudge(self.identity.home)
        return operations.Caller(
            self._store, self.identity, actor="mcp", semantic=self._semantic, background=True, judge=self._judge
        )


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


def accept_id_alias(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Clients of the original server send `id` for `memory_id`; the schema names only `memory_id`."""
    if name not in ID_ALIAS_TOOLS or "id" not in arguments:
        return arguments
    renamed = {key: value for key, value in arguments.items() if key != "id"}
    if renamed.setdefault("memory_id", arguments["id"]) != arguments["id"]:
        raise ToolError(f"Error executing tool {name}: memory_id and id name different memories; pass one of them")
    return renamed


def forbid_unknown_arguments(tool: Tool) -> Tool:
    """The tool with an arguments model that refuses undeclared names (`additionalProperties: false`)."""
    loose = tool.fn_metadata.arg_model
    strict: type[BaseModel] = type(
        loose.__name__, (loose,), {"model_config": ConfigDict(extra="forbid"), "__module__": __name__}
    )
    metadata = tool.fn_metadata.model_copy(update={"arg_model": strict})
    return tool.model_copy(update={"fn_metadata": metadata, "parameters": strict.model_json_schema(by_alias=True)})


def writing(*, destructive: bool, idempotent: bool | None = None) -> ToolAnnotations:
    """The annotations of a tool that writes to the store (and nothing outside it)."""
    return ToolAnnotations(
        read_only_hint=False, destructive_hint=destructive, idempotent_hint=idempotent, open_world_hint=False
    )


class Mem0MCPServer(MCPServer):
    """MCPServer whose argument-validation errors read as one line naming each bad argument."""

    def __init__(self, tools: list[Tool]):
        super().__init__(
            "mem0",
            version=__version__,
            tools=tools,
            instructions="Long-term memory for this user and project (mem0-compatible).",
        )
        self._schemas = {tool.name: tool.parameters for tool in tools}

    async def call_tool(self, name: str, arguments: dict[str, Any], context=None):
        arguments = accept_id_alias(name, arguments)
        served = _REQUEST.set(_http_request(context))
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                problems = describe_invalid_arguments(exc.__cause__, self._schemas.get(name, {}))
                raise ToolError(f"Error executing tool {name}: {problems}") from exc.__cause__
            raise
        finally:
            _REQUEST.reset(served)


def _http_request(context: Any) -> Any:
    """The HTTP request a tool call arrived in (streamable HTTP), or None (stdio, in memory)."""
    try:
        return context.request_context.request
    except (AttributeError, ValueError):  # no context, or one outside a request
        return None


def describe_invalid_arguments(error: ValidationError, schema: dict[str, Any]) -> str:
    """`page_size must be between 1 and 1000; bogus: unknown argument (...)` — one line, no values echoed."""
    return "invalid arguments: " + "; ".join(_describe(item, schema) for item in error.errors())


def _describe(item: Any, schema: dict[str, Any]) -> str:
    where = ".".join(str(p) for p in item.get("loc", ()) if p != "__root__") or "arguments"
    where = printable(where)  # an unknown name is the client's text: one inert, short line
    where = where if len(where) <= 80 else where[:79] + "…"
    kind = item.get("type")
    properties = schema.get("properties", {})
    if kind == "missing":
        return f"{where} is required"
    if kind == "extra_forbidden":
        return f"{where}: unknown argument (this tool takes {', '.join(properties) or 'no arguments'})"
    if kind in ("greater_than_equal", "less_than_equal") and where in properties:
        low, high = _bounds(properties[where])
        if low is not None and high is not None:
            return f"{where} must be between {low} and {high}"
    return f"{where}: {item.get('msg', 'invalid')}"


def _bounds(prop: dict[str, Any]) -> tuple[Any, Any]:
    """An argument's minimum and maximum, also when it is optional (`anyOf` with null)."""
    for part in (prop, *prop.get("anyOf", ())):
        if "minimum" in part or "maximum" in part:
            return part.get("minimum"), part.get("maximum")
    return None, None


def build_server(resources: Resources) -> MCPServer:
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)

    @_tool_errors
    def add_memory(
        text: Annotated[str, Field(description="The memory text to store.")],
        user_id: Annotated[str | None, Field(description="Must be the server's user if given.")] = None,
        app_id: Annotated[str | None, Field(description="Project id; defaults to the current project.")] = None,
        agent_id: Annotated[str | None, Field(description="Agent scope.")] = None,
        run_id: Annotated[str | None, Field(description="Run/session scope.")] = None,
        metadata: Annotated[
            dict[str, Any] | None,
            Field(
                description="Any JSON object; type, confidence, pinned, source, branch, exclude_from_dream have meaning."
            ),
        ] = None,
        infer: Infer = True,
        immutable: Annotated[bool, Field(description="Never changed by update or consolidation.")] = False,
    ) -> dict[str, Any]:
        answer = operations.add_memory(
            resources.caller(),
            text,
            user_id=user_id,
            app_id=app_id,
            agent_id=agent_id,
            run_id=run_id,
            metadata=metadata,
            infer=infer,
            immutable=immutable,
        )
        # mem0's platform writes are asynchronous and answer an event id to poll; ours are done
        # when answered, and get_event_status says so for this id (docs/mcp-tools.md).
        return {**answer, "event_id": answer["results"][0]["id"]}

    @_tool_errors
    def search_memories(
        query: Annotated[str, Field(description="What to look for.")],
        filters: Filters = None,
        top_k: TopK = 10,
        threshold: Threshold = None,
        latest_only: LatestOnly = False,
        include_merged: IncludeMerged = False,
        rerank: Rerank = False,
        keyword_search: KeywordSearch = False,
        user_id: ScopeUser = None,
        app_id: ScopeApp = None,
        agent_id: ScopeAgent = None,
        run_id: ScopeRun = None,
    ) -> dict[str, Any]:
        scoped = operations.scope_filters(filters, user_id=user_id, app_id=app_id, agent_id=agent_id, run_id=run_id)
        return operations.search_memories(
            resources.caller(), query, scoped, top_k, threshold, latest_only, include_merged
        )

    @_tool_errors
    def get_memories(
        filters: Filters = None,
        page: Page = 1,
        page_size: PageSize = 100,
        latest_only: LatestOnly = False,
        include_merged: IncludeMerged = False,
        user_id: ScopeUser = None,
        app_id: ScopeApp = None,
        agent_id: ScopeAgent = None,
        run_id: ScopeRun = None,
    ) -> dict[str, Any]:
        scoped = operations.scope_filters(filters, user_id=user_id, app_id=app_id, agent_id=agent_id, run_id=run_id)
        return operations.get_memories(resources.caller(), scoped, page, page_size, latest_only, include_merged)

    @_tool_errors
    def get_memory(memory_id: MemoryId) -> dict[str, Any]:
        return operations.get_memory(resources.caller(), memory_id)

    @_tool_errors
    def update_memory(
        memory_id: MemoryId,
        text: Annotated[str | None, Field(description="New text.")] = None,
        metadata: Annotated[dict[str, Any] | None, Field(description="Metadata keys to set (null removes).")] = None,
    ) -> dict[str, Any]:
        return operations.update_memory(resources.caller(), memory_id, text, metadata)

    @_tool_errors
    def delete_memory(memory_id: MemoryId) -> dict[str, Any]:
        return operations.delete_memory(resources.caller(), memory_id)

    @_tool_errors
    def delete_all_memories(
        user_id: ScopeUser = None, app_id: ScopeApp = None, agent_id: ScopeAgent = None, run_id: ScopeRun = None
    ) -> dict[str, Any]:
        caller = resources.caller()
        operations.check_user(caller, user_id)
        project = caller.identity.project_id if app_id is None else app_id
        scope = {"app_id": project, "agent_id": agent_id, "run_id": run_id}
        conditions = [{key: value} for key, value in scope.items() if value not in (None, "", "*")]
        deleted = operations.delete_memories(caller, {"AND": conditions} if conditions else None)
        return {
            "message": "Memories deleted successfully!",
            "count": deleted,
            "restore": "each one comes back with `mem0-memories restore <id>` (ids: `mem0-memories history`)",
        }

    @_tool_errors
    def get_event_status(
        event_id: Annotated[str, Field(description="The event_id add_memory answered.")],
    ) -> dict[str, Any]:
        return operations.event_status(resources.caller(), event_id)

    @_tool_errors
    def list_entities(page: Page = 1, page_size: PageSize = 100) -> dict[str, Any]:
        found = operations.entities(resources.caller())
        start = (page - 1) * page_size
        shown = found[start : start + page_size]
        totals = {
            f"total_{kind}s": sum(1 for e in found if e["type"] == kind) for kind in ("user", "agent", "app", "run")
        }
        return {
            "count": len(found),
            "next": page + 1 if start + page_size < len(found) else None,
            "previous": page - 1 if page > 1 else None,
            "results": [{"id": f"{e['type']}:{e['name']}", **e} for e in shown],
            **totals,
        }

    tools = [
        Tool.from_function(
            add_memory,
            description="Store a memory for the current user and project.",
            annotations=writing(destructive=False),
        ),
        Tool.from_function(
            search_memories,
            annotations=read_only,
            description="Search memories by meaning of the words; each result has a score in [0, 1].",
        ),
        Tool.from_function(
            get_memories,
            annotations=read_only,
            description="List memories page by page (stable order: created_at, then id).",
        ),
        Tool.from_function(get_memory, description="Get one memory by id.", annotations=read_only),
        # The same update again changes nothing (no new version): idempotent.
        Tool.from_function(
            update_memory,
            description=("Change a memory's text and/or metadata (metadata keys merge; null removes a key)."),
            annotations=writing(destructive=False, idempotent=True),
        ),
        Tool.from_function(
            delete_all_memories,
            description=(
                "Delete every memory of the current project (app_id names another; agent_id and run_id narrow). "
                "Each is recoverable with `mem0-memories restore ID`. Only when the user asks for it."
            ),
            annotations=writing(destructive=True, idempotent=False),
        ),
        Tool.from_function(
            get_event_status,
            annotations=read_only,
            description="The status of a write by the event_id add_memory answered: writes here are synchronous, "
            "so it is SUCCEEDED with the memory written.",
        ),
        Tool.from_function(
            list_entities,
            annotations=read_only,
            description="The user, and each agent, app (project) and run that has memories, with their counts.",
        ),
        # As in mem0, deleting a memory that is gone is an error ("not found: it was deleted"): not idempotent.
        Tool.from_function(
            delete_memory,
            description=(
                "Delete a memory (recoverable with `mem0-memories restore ID`). "
                "Deleting it again is an error saying it was deleted."
            ),
            annotations=writing(destructive=True, idempotent=False),
        ),
    ]
    return Mem0MCPServer([forbid_unknown_arguments(tool) for tool in tools])


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = Parser(prog="mem0-mcp-server", description="The mem0 memory MCP server (stdio).")
    parser.add_argument("--user-id", help="the user whose memories it serves (default: MEM0_USER_ID, $USER, 'default')")
    parser.add_argument(
        "--project-id", help="the current project (default: MEM0_PROJECT_ID, mem0.md, git origin, directory name)"
    )
    parser.add_argument(
        "--store", help="store URL or file path (default: MEM0_STORE or sqlite:///<MEM0_HOME>/memories.sqlite3)"
    )
    parser.add_argument("--cwd", help="project directory (default: the current directory)")
    parser.add_argument("--debug", action="store_true", help="debug logging on stderr")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(
        stream=sys.stderr, level=logging.DEBUG if args.debug else logging.WARNING, format="mem0-mcp-server: %(message)s"
    )
    try:
        identity = resolve_identity(user_id=args.user_id, project_id=args.project_id, store=args.store, cwd=args.cwd)
        check_directory(identity.store_location)  # a bad --store fails now, not at the first tool call
    except Mem0PluginError as exc:
        print(f"mem0-mcp-server: {exc}", file=sys.stderr)
        return exc.exit_code or 1
    build_server(Resources(identity)).run("stdio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
