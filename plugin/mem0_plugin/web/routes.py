"""The Mem0 platform routes `mem0ai`'s `MemoryClient` calls (docs/server.md, "Routes"). Each
handler reads the request, checks it against the caller's key (`access`), calls `operations` on
a worker thread and shapes the answer (`shapes`); errors become statuses in `app`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from .. import operations
from ..errors import InvalidInputError
from ..jsontext import parse_json_text
from ..timeutil import utc_now
from . import access, shapes
from .config import ApiKey
from .service import Service

KEY = "mem0.key"  # the scope entry where `app.Guard` leaves the request's ApiKey
DELETE_ALL_SCOPES = ("agent_id", "app_id", "run_id")


def key_of(request: Request) -> ApiKey:
    return request.scope[KEY]


def service_of(request: Request) -> Service:
    return request.app.state.mem0


async def body_of(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw.strip():
        return {}
    return shapes.json_object(parse_json_text(raw.decode("utf-8", "replace"), "the request body is", InvalidInputError))


async def ping(request: Request) -> JSONResponse:
    key, service = key_of(request), service_of(request)
    return JSONResponse(
        {
            "status": "ok",
            "org_id": "mem0-server",
            "project_id": service.default_project(key),
            "user_email": None,
            "user_id": access.only_user(key),
        }
    )


async def add(request: Request) -> JSONResponse:
    key, service, body = key_of(request), service_of(request), await body_of(request)
    filters = shapes.optional_object(body, "filters") or {}
    user = access.request_user(key, filters, body.get("user_id"))
    app_id = body.get("app_id") or filters.get("app_id") or service.default_project(key)
    access.check_project(key, app_id if isinstance(app_id, str) else None)
    texts = shapes.messages_texts(body.get("messages"))
    options: dict[str, Any] = {
        "user_id": user,
        "app_id": app_id,
        "agent_id": body.get("agent_id") or filters.get("agent_id"),
        "run_id": body.get("run_id") or filters.get("run_id"),
        "metadata": shapes.optional_object(body, "metadata"),
        "infer": shapes.flag(body, "infer", True),
        "immutable": shapes.flag(body, "immutable"),
        "now": shapes.created_at(body.get("timestamp"), utc_now()),
    }
    caller = service.caller(user)

    def store_all() -> list[dict[str, Any]]:
        return [item for text in texts for item in operations.add_memory(caller, text, **options)["results"]]

    results = await run_in_threadpool(store_all)
    return JSONResponse(
        {"status": "SUCCEEDED", "results": [{**item, "data": {"memory": item["memory"]}} for item in results]}
    )


def _read_filters(key: ApiKey, body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    filters = shapes.optional_object(body, "filters")
    user = access.request_user(key, filters, body.get("user_id"))
    confined = access.project_filter(key, filters)
    return user, confined or {"user_id": user}  # never empty: no filter reads every project of the user


def _page_url(request: Request, page: int | None, page_size: int) -> str | None:
    if page is None:
        return None
    return str(request.url.include_query_params(page=page, page_size=page_size))


async def get_all(request: Request) -> JSONResponse:
    key, service, body = key_of(request), service_of(request), await body_of(request)
    user, filters = _read_filters(key, body)
    query = request.query_params
    page = shapes.integer(query.get("page", body.get("page")), "page", 1)
    page_size = shapes.integer(query.get("page_size", body.get("page_size")), "page_size", 100)
    latest, merged = shapes.flag(body, "latest_only"), shapes.flag(body, "include_merged")
    caller = service.caller(user)
    found = await run_in_threadpool(operations.get_memories, caller, filters, page, page_size, latest, merged)
    return JSONResponse(
        {
            "count": found["count"],
            "next": _page_url(request, found["next"], page_size),
            "previous": _page_url(request, found["previous"], page_size),
            "page": found["page"],
            "page_size": found["page_size"],
            "results": [shapes.record(m) for m in found["results"]],
        }
    )


async def search(request: Request) -> JSONResponse:
    key, service, body = key_of(request), service_of(request), await body_of(request)
    user, filters = _read_filters(key, body)
    top_k = shapes.integer(body.get("top_k"), "top_k", 10)
    threshold = body.get("threshold")
    latest, merged = shapes.flag(body, "latest_only"), shapes.flag(body, "include_merged")
    caller = service.caller(user)
    found = await run_in_threadpool(
        operations.search_memories, caller, body.get("query"), filters, top_k, threshold, latest, merged
    )
    return JSONResponse({"results": [shapes.record(m) for m in found["results"]]})


async def _path_caller(request: Request) -> tuple[operations.Caller, str]:
    """The caller for the memory of the path, once the key may touch it."""
    key, service = key_of(request), service_of(request)
    memory_id = shapes.memory_id(request.path_params["memory_id"])
    user = await run_in_threadpool(service.owner, key, memory_id)
    return service.caller(user), memory_id


async def get_one(request: Request) -> JSONResponse:
    caller, memory_id = await _path_caller(request)
    return JSONResponse(shapes.record(await run_in_threadpool(operations.get_memory, caller, memory_id)))


async def update_one(request: Request) -> JSONResponse:
    caller, memory_id = await _path_caller(request)
    body = await body_of(request)
    text, metadata = body.get("text"), shapes.optional_object(body, "metadata")
    updated = await run_in_threadpool(operations.update_memory, caller, memory_id, text, metadata)
    return JSONResponse(shapes.record(updated))


async def delete_one(request: Request) -> JSONResponse:
    caller, memory_id = await _path_caller(request)
    return JSONResponse(await run_in_threadpool(operations.delete_memory, caller, memory_id))


async def history(request: Request) -> JSONResponse:
    caller, memory_id = await _path_caller(request)
    entries = await run_in_threadpool(operations.memory_history, caller, memory_id)
    return JSONResponse([shapes.history_entry(memory_id, e) for e in entries])


async def delete_all(request: Request) -> JSONResponse:
    key, service, query = key_of(request), service_of(request), request.query_params
    named = {name: query[name] for name in ("user_id", *DELETE_ALL_SCOPES) if query.get(name)}
    if not named:
        raise InvalidInputError("name at least one of user_id, agent_id, app_id, run_id to delete memories")
    filters = {name: value for name, value in named.items() if name != "user_id" and value != "*"}
    if named.get("user_id") == "*":
        users = await run_in_threadpool(service.users, key)
    else:
        users = [access.request_user(key, None, named.get("user_id"))]
    confined = access.project_filter(key, filters) or None

    def delete() -> int:
        return sum(operations.delete_memories(service.caller(user), confined) for user in users)

    deleted = await run_in_threadpool(delete)
    return JSONResponse({"message": "Memories deleted successfully!", "count": deleted})


async def entities(request: Request) -> JSONResponse:
    key, service = key_of(request), service_of(request)

    def listing() -> list[dict[str, Any]]:
        found = []
        for user in service.users(key):
            for entity in operations.entities(service.caller(user)):
                if entity["type"] != "app" or key.all_projects or entity["name"] in (key.projects or ()):
                    found.append(
                        {"id": f"{entity['type']}:{entity['name']}", "owner": user, "metadata": None, **entity}
                    )
        return found

    results = await run_in_threadpool(listing)
    totals = {
        f"total_{kind}s": sum(1 for e in results if e["type"] == kind) for kind in ("user", "agent", "app", "run")
    }
    return JSONResponse({"count": len(results), "next": None, "previous": None, "results": results, **totals})


ENTITY_COLUMNS = {"agent": "agent_id", "app": "app_id", "run": "run_id"}


async def delete_entity(request: Request) -> JSONResponse:
    """`delete_users(...)` / `reset()`: every memory of a user, or of an agent, app or run among
    the users the key may touch (as `delete_all`, recoverable one by one)."""
    key, service = key_of(request), service_of(request)
    kind, name = request.path_params["entity_type"], request.path_params["entity_id"]
    if kind == "user":
        users, filters = [access.check_user(key, name)], access.project_filter(key, None)
    elif kind in ENTITY_COLUMNS:
        users = await run_in_threadpool(service.users, key)
        filters = access.project_filter(key, {ENTITY_COLUMNS[kind]: name})
    else:
        raise InvalidInputError(f"entity type must be user, agent, app or run, got {shapes.brief(kind)}")

    def delete() -> int:
        return sum(operations.delete_memories(service.caller(user), filters) for user in users)

    deleted = await run_in_threadpool(delete)  # 0 is no error: reset() deletes a user, then its apps
    return JSONResponse({"message": "Entity deleted successfully!", "count": deleted})


async def _batch(request: Request, change: Callable[[operations.Caller, dict[str, Any]], object], verb: str):
    """Every item checked (id, owner, key) before the first is changed: a refused batch writes nothing."""
    key, service, body = key_of(request), service_of(request), await body_of(request)
    items = shapes.batch_items(body)

    def apply() -> int:
        owners = [service.owner(key, item["memory_id"]) for item in items]
        for user, item in zip(owners, items):
            change(service.caller(user), item)
        return len(items)

    done = await run_in_threadpool(apply)
    return JSONResponse({"message": f"Successfully {verb} {done} memories"})


async def batch_update(request: Request) -> JSONResponse:
    def change(caller: operations.Caller, item: dict[str, Any]) -> object:
        metadata = shapes.optional_object(item, "metadata")
        return operations.update_memory(caller, item["memory_id"], item.get("text"), metadata)

    return await _batch(request, change, "updated")


async def batch_delete(request: Request) -> JSONResponse:
    return await _batch(request, lambda caller, item: operations.delete_memory(caller, item["memory_id"]), "deleted")


ROUTES = [
    Route("/v1/ping/", ping, methods=["GET"]),
    Route("/v3/memories/add/", add, methods=["POST"]),
    Route("/v3/memories/search/", search, methods=["POST"]),
    Route("/v3/memories/", get_all, methods=["POST"]),
    Route("/v1/memories/", delete_all, methods=["DELETE"]),
    Route("/v1/memories/{memory_id}/history/", history, methods=["GET"]),
    Route("/v1/memories/{memory_id}/", get_one, methods=["GET"]),
    Route("/v1/memories/{memory_id}/", update_one, methods=["PUT"]),
    Route("/v1/memories/{memory_id}/", delete_one, methods=["DELETE"]),
    Route("/v1/entities/", entities, methods=["GET"]),
    Route("/v1/entities/{entity_type}/{entity_id}/", delete_entity, methods=["DELETE"]),
    Route("/v2/entities/{entity_type}/{entity_id}/", delete_entity, methods=["DELETE"]),
    Route("/v1/batch/", batch_update, methods=["PUT"]),
    Route("/v1/batch/", batch_delete, methods=["DELETE"]),
]
