"""The ASGI application of `mem0-server` (docs/server.md): the platform routes (`routes`) and
MCP over streamable HTTP at `/mcp` (the stdio server's own tools, `server.build_server`), behind
one guard that checks the API key and caps the body, and the one place where errors become
HTTP statuses (`status_of`)."""

from __future__ import annotations

import json
import logging
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .. import operations
from ..errors import (
    AuthError,
    ImmutableError,
    InvalidInputError,
    Mem0PluginError,
    NotFoundError,
    ScopeError,
    StaleWriteError,
    StoreError,
    TooLargeError,
)
from ..identity import Identity
from ..server import Resources, build_server, current_request
from . import access
from .config import ServerSection
from .routes import KEY, ROUTES
from .service import Service

log = logging.getLogger("mem0_plugin.web")
MCP_PATH = "/mcp"
USER_HEADER = "x-mem0-user-id"  # /mcp: which user, for a key of several
PROJECT_HEADER = "x-mem0-project-id"  # /mcp: which project (default: the key's first, else the server's)
MCP_IDENTITY = "mem0.mcp"  # the scope entry with (user, project) of an /mcp request

# The one table of statuses: the most specific class listed first wins.
STATUSES: tuple[tuple[type[Mem0PluginError], int], ...] = (
    (AuthError, 401),
    (ScopeError, 403),
    (NotFoundError, 404),
    (TooLargeError, 413),
    (ImmutableError, 409),
    (StaleWriteError, 409),
    (InvalidInputError, 400),
    (StoreError, 503),
)


def status_of(exc: Mem0PluginError) -> int:
    return next((status for kind, status in STATUSES if isinstance(exc, kind)), 500)


def error_response(status: int, message: str) -> JSONResponse:
    """The platform's error body: the SDK reads `detail`; its OpenAPI document shows `error`."""
    return JSONResponse({"detail": message, "error": message}, status_code=status)


async def mem0_errors(request: Request, exc: Exception) -> Response:
    if isinstance(exc, Mem0PluginError):
        return error_response(status_of(exc), str(exc))
    log.error("%s %s failed:\n%s", request.method, request.url.path, traceback.format_exc())
    return error_response(500, f"internal error: {type(exc).__name__}")


async def http_errors(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return error_response(exc.status_code, str(exc.detail))


class HttpResources(Resources):
    """The MCP tools' store and caller for the /mcp request being served (`current_request`)."""

    def __init__(self, service: Service):
        super().__init__(service.identity)
        self.service = service

    def caller(self) -> operations.Caller:
        request = current_request()
        if request is None or MCP_IDENTITY not in request.scope:
            raise AuthError(access.NO_KEY)
        user, project = request.scope[MCP_IDENTITY]
        return self.service.caller(user, project)


Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]


class Guard:
    """In front of every route: `Authorization: Token <key>` (401 without a valid one), the body
    cap (413), and for /mcp the user and project the request is about (403 outside the key)."""

    def __init__(self, app: Any, service: Service):
        self.app = app
        self.service = service
        self.keys = service.config.api_keys
        self.max_body = service.config.max_body_bytes

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":  # no route takes one: refused before any app code runs
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] != "http":  # lifespan
            await self.app(scope, receive, send)
            return
        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}
        try:
            key = access.authenticate(self.keys, headers.get("authorization"))
            self._check_length(headers.get("content-length"))
            scope[KEY] = key
            if scope["path"].rstrip("/") == MCP_PATH:
                user = access.request_user(key, None, headers.get(USER_HEADER))
                project = headers.get(PROJECT_HEADER) or self.service.default_project(key)
                access.check_project(key, project)
                scope[MCP_IDENTITY] = (user, project)
        except Mem0PluginError as exc:
            await _send_error(send, status_of(exc), str(exc))
            return
        await self.app(scope, self._capped(receive), send)

    def _check_length(self, length: str | None) -> None:
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            raise TooLargeError(f"the request body is over {self.max_body} bytes")

    def _capped(self, receive: Receive) -> Receive:
        seen = 0

        async def capped() -> dict[str, Any]:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.max_body:
                raise TooLargeError(f"the request body is over {self.max_body} bytes")
            return message

        return capped


async def _send_error(send: Send, status: int, message: str) -> None:
    body = json.dumps({"detail": message, "error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


def build_app(identity: Identity, config: ServerSection, *, host: str = "127.0.0.1") -> Guard:
    """The whole server: the platform routes and /mcp on one Starlette app, behind the guard."""
    service = Service(identity, config)
    mcp = build_server(HttpResources(service))
    app: Starlette = mcp.streamable_http_app(
        streamable_http_path=MCP_PATH,
        stateless_http=True,
        json_response=True,
        max_request_body_size=config.max_body_bytes,
        host=host,
    )
    app.router.routes[0:0] = ROUTES
    app.state.mem0 = service
    app.add_exception_handler(Mem0PluginError, mem0_errors)
    app.add_exception_handler(Exception, mem0_errors)
    app.add_exception_handler(HTTPException, http_errors)
    return Guard(app, service)
