"""`mem0-server`'s access rules (docs/server.md, "Access" and "Limits"): every request refused
for its key, its user, its project, its size or its id gets the right status, and neither reads
nor writes anything (the store's rows are the same after it, the answer holds no memory)."""

from __future__ import annotations

import sqlite3

import httpx
import pytest
from server_fixture import running_server

ALICE_KEY = "m0-alice-0123456789abcdef"
WEB_KEY = "m0-web-only-0123456789abc"  # alice, project "web" only
MAX_BODY = 4096
KEYS = [
    {"key": ALICE_KEY, "users": ["alice"]},
    {"key": "m0-bob-0123456789abcdef00", "users": ["bob"]},
    {"key": WEB_KEY, "users": ["alice"], "projects": ["web"]},
]
BOB_TEXT = "bob keeps the launch codes in the blue folder"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    home = tmp_path_factory.mktemp("access") / "home"
    with running_server(home, KEYS, max_body_bytes=MAX_BODY) as url:
        ids = {}
        with httpx.Client(base_url=url) as http:
            for name, key, user, app in (
                ("bob", KEYS[1]["key"], "bob", "web"),
                ("alice", ALICE_KEY, "alice", "web"),
                ("alice_other", ALICE_KEY, "alice", "other"),
            ):
                text = BOB_TEXT if name == "bob" else f"{name} memory"
                answer = http.post(
                    "/v3/memories/add/",
                    headers={"Authorization": f"Token {key}"},
                    json={
                        "messages": [{"role": "user", "content": text}],
                        "user_id": user,
                        "app_id": app,
                        "infer": False,
                    },
                )
                assert answer.status_code == 200, answer.text
                ids[name] = answer.json()["results"][0]["id"]
        yield url, home / "memories.sqlite3", ids


def snapshot(store) -> tuple[list, list]:
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as conn:
        return (
            conn.execute(
                "SELECT id, user_id, app_id, memory, lifecycle_state, updated_at FROM memories ORDER BY id"
            ).fetchall(),
            conn.execute("SELECT seq FROM history ORDER BY seq").fetchall(),
        )


def add_body(user: str, **extra) -> dict:
    return {
        "messages": [{"role": "user", "content": "should never be stored"}],
        "user_id": user,
        "infer": False,
        **extra,
    }


CASES = {
    # name: (key, method, path (with {bob}/{alice}/{alice_other} ids), json body, status)
    "no token": (None, "GET", "/v1/memories/{alice}/", None, 401),
    "wrong token": ("m0-wrong-0123456789abcdef", "GET", "/v1/memories/{alice}/", None, 401),
    "no token on add": (None, "POST", "/v3/memories/add/", add_body("alice"), 401),
    "no token on /mcp": (None, "POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, 401),
    "no token on ping": (None, "GET", "/v1/ping/", None, 401),
    "another user's id in the path: get": (ALICE_KEY, "GET", "/v1/memories/{bob}/", None, 403),
    "another user's id in the path: update": (ALICE_KEY, "PUT", "/v1/memories/{bob}/", {"text": "pwned"}, 403),
    "another user's id in the path: delete": (ALICE_KEY, "DELETE", "/v1/memories/{bob}/", None, 403),
    "another user's id in the path: history": (ALICE_KEY, "GET", "/v1/memories/{bob}/history/", None, 403),
    "another user in the body: add": (ALICE_KEY, "POST", "/v3/memories/add/", add_body("bob"), 403),
    "another user in add's filters": (
        ALICE_KEY,
        "POST",
        "/v3/memories/add/",
        {**add_body(""), "filters": {"user_id": "bob"}},
        403,
    ),
    "another user in the filters: get_all": (ALICE_KEY, "POST", "/v3/memories/", {"filters": {"user_id": "bob"}}, 403),
    "another user nested in the filters": (
        ALICE_KEY,
        "POST",
        "/v3/memories/",
        {"filters": {"AND": [{"app_id": "web"}, {"OR": [{"user_id": "bob"}]}]}},
        403,
    ),
    "another user among in: search": (
        ALICE_KEY,
        "POST",
        "/v3/memories/search/",
        {"query": "launch codes", "filters": {"user_id": {"in": ["alice", "bob"]}}},
        403,
    ),
    "another user in the query: delete_all": (ALICE_KEY, "DELETE", "/v1/memories/?user_id=bob", None, 403),
    "another user's id in a batch update": (
        ALICE_KEY,
        "PUT",
        "/v1/batch/",
        {"memories": [{"memory_id": "{alice}", "text": "x"}, {"memory_id": "{bob}", "text": "x"}]},
        403,
    ),
    "another user's id in a batch delete": (
        ALICE_KEY,
        "DELETE",
        "/v1/batch/",
        {"memories": [{"memory_id": "{alice}"}, {"memory_id": "{bob}"}]},
        403,
    ),
    "another user on /mcp": (ALICE_KEY, "POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, 403),
    "another project: add": (WEB_KEY, "POST", "/v3/memories/add/", add_body("alice", app_id="other"), 403),
    "another project: get by id": (WEB_KEY, "GET", "/v1/memories/{alice_other}/", None, 403),
    "another project in the filters": (
        WEB_KEY,
        "POST",
        "/v3/memories/search/",
        {"query": "memory", "filters": {"user_id": "alice", "app_id": "other"}},
        403,
    ),
    "oversized body": (
        ALICE_KEY,
        "POST",
        "/v3/memories/add/",
        add_body("alice", metadata={"pad": "x" * MAX_BODY}),
        413,
    ),
    "malformed id: spaces and quotes": (ALICE_KEY, "GET", "/v1/memories/x' OR '1'='1/", None, 400),
    "malformed id: too long": (ALICE_KEY, "DELETE", "/v1/memories/" + "a" * 200 + "/", None, 400),
    "malformed id in a batch": (ALICE_KEY, "DELETE", "/v1/batch/", {"memories": [{"memory_id": "../../etc"}]}, 400),
    "unknown id": (ALICE_KEY, "GET", "/v1/memories/00000000-0000-4000-8000-000000000000/", None, 404),
    "delete_all naming nothing": (ALICE_KEY, "DELETE", "/v1/memories/", None, 400),
    "not JSON": (ALICE_KEY, "POST", "/v3/memories/", "{not json", 400),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_refused_request_reads_and_writes_nothing(server, case):
    url, store, ids = server
    key, method, path, body, status = CASES[case]
    headers = {"Authorization": f"Token {key}"} if key else {}
    if path == "/mcp":
        headers |= {"Accept": "application/json, text/event-stream", "X-Mem0-User-Id": "bob" if key else ""}
    before = snapshot(store)
    content = (body if isinstance(body, str) else None) if body is not None else None
    data = None if body is None or isinstance(body, str) else _fill(body, ids)
    with httpx.Client(base_url=url) as http:
        answer = http.request(method, path.format(**ids), headers=headers, json=data, content=content)
    assert answer.status_code == status, answer.text
    assert answer.json()["detail"]
    assert BOB_TEXT not in answer.text and "alice memory" not in answer.text
    assert snapshot(store) == before


def _fill(body, ids):
    if isinstance(body, dict):
        return {k: _fill(v, ids) for k, v in body.items()}
    if isinstance(body, list):
        return [_fill(v, ids) for v in body]
    return body.format(**ids) if isinstance(body, str) and body.startswith("{") else body


def test_a_body_without_content_length_is_capped_too(server):
    url, store, _ = server
    before = snapshot(store)

    def chunks():
        yield b'{"messages": [{"role": "user", "content": "'
        for _ in range(MAX_BODY // 512 + 1):
            yield b"x" * 512
        yield b'"}], "user_id": "alice", "infer": false}'

    with httpx.Client(base_url=url) as http:
        answer = http.post("/v3/memories/add/", headers={"Authorization": f"Token {ALICE_KEY}"}, content=chunks())
    assert answer.status_code == 413, answer.text
    assert snapshot(store) == before


def test_a_key_of_one_project_reads_only_that_project(server):
    url, _, ids = server
    with httpx.Client(base_url=url, headers={"Authorization": f"Token {WEB_KEY}"}) as http:
        listed = http.post("/v3/memories/", json={"filters": {"user_id": "alice"}}).json()
        assert [m["id"] for m in listed["results"]] == [ids["alice"]]
        added = http.post(
            "/v3/memories/add/", json=add_body("alice") | {"messages": [{"role": "user", "content": "web note"}]}
        )
        assert added.status_code == 200
        assert http.get(f"/v1/memories/{added.json()['results'][0]['id']}/").json()["app_id"] == "web"


def test_a_metadata_field_named_user_id_is_not_a_user(server):
    url, _, _ = server
    with httpx.Client(base_url=url, headers={"Authorization": f"Token {ALICE_KEY}"}) as http:
        answer = http.post("/v3/memories/", json={"filters": {"user_id": "alice", "metadata": {"user_id": "bob"}}})
    assert answer.status_code == 200 and answer.json()["count"] == 0
