"""The hosted store's pure parts (docs/hosted.md): the mem0:// URL, our record on the platform
and back, and the retry policy; then the retrying transport under mem0ai's real `MemoryClient`
against a real loopback HTTP server that answers 429 and 503 before it answers (no mock: a
tiny server of this test, with an injected sleep so nothing waits)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from mem0_plugin.errors import ConfigError, StoreError
from mem0_plugin.records import Memory
from mem0_plugin.store.hosted.records import (
    LIFECYCLE_KEY,
    add_arguments,
    added_id,
    memory_of_platform,
    platform_metadata,
    same_content,
)
from mem0_plugin.store.sqlite.retry import RetryPolicy
from mem0_plugin.store_url import HostedAddress, parse_store_url

NOW = "2026-12-01T00:00:00+00:00"

# ------------------------------------------------------------------ the URL


@pytest.mark.parametrize(
    ("url", "base"),
    [
        ("mem0://", None),
        ("mem0://api.mem0.ai", "https://api.mem0.ai"),
        ("mem0+https://api.mem0.ai/", "https://api.mem0.ai"),
        ("mem0+http://127.0.0.1:8765", "http://127.0.0.1:8765"),
        ("mem0://mem0.example.com:8443/proxy/", "https://mem0.example.com:8443/proxy"),
        ("MEM0+HTTP://[::1]:80", "http://[::1]:80"),
    ],
)
def test_hosted_urls_name_the_platform_host(url, base):
    assert parse_store_url(url).hosted == HostedAddress(base)


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("mem0://m0-secret:x@api.mem0.ai", "MEM0_API_KEY"),
        ("mem0://api.mem0.ai?tls=0", "query"),
        ("mem0+http://", "names no host"),
        ("mem0://:8080", "names no host"),
        ("mem0://host:port", "not a valid address"),
    ],
)
def test_bad_hosted_urls_are_refused_with_the_reason(url, says):
    with pytest.raises(ConfigError, match=says) as caught:
        parse_store_url(url)
    assert "m0-secret" not in str(caught.value)


# ------------------------------------------------------------------ the record


def record(**fields):
    base = {
        "id": "m-1",
        "memory": "Use Postgres",
        "user_id": "alice",
        "app_id": "acme",
        "agent_id": None,
        "run_id": None,
        "metadata": {"type": "decision"},
        "created_at": "2026-11-29T10:00:00Z",
        "updated_at": "2026-11-29T11:00:00-08:00",
    }
    return {**base, **fields}


def test_a_plain_platform_record_is_an_active_memory():
    memory = memory_of_platform(record(), "alice", NOW)
    assert memory == Memory(
        id="m-1",
        memory="Use Postgres",
        user_id="alice",
        app_id="acme",
        metadata={"type": "decision"},
        created_at="2026-11-29T10:00:00+00:00",
        updated_at="2026-11-29T19:00:00+00:00",
    )


def test_the_lifecycle_comes_from_our_key_and_goes_back_into_it():
    retired = Memory(
        id="m-1",
        memory="Use Postgres",
        user_id="alice",
        app_id="acme",
        metadata={"type": "decision"},
        lifecycle_state="merged",
        replacement_memory_id="m-2",
    )
    metadata = platform_metadata(retired)
    assert metadata == {
        "type": "decision",
        LIFECYCLE_KEY: {"lifecycle_state": "merged", "replacement_memory_id": "m-2", "source_memory_ids": []},
    }
    back = memory_of_platform(record(metadata=metadata), "alice", NOW)
    assert back is not None and same_content(back, retired)
    assert LIFECYCLE_KEY not in back.metadata


def test_a_pruned_memory_stays_on_the_platform_but_out_of_reads():
    memory = memory_of_platform(record(), "alice", NOW)
    assert memory is not None
    metadata = platform_metadata(memory, deleted=True)
    assert metadata[LIFECYCLE_KEY]["lifecycle_state"] == "deleted"
    assert metadata["type"] == "decision"  # the memory's own metadata is kept
    assert memory_of_platform(record(metadata=metadata), "alice", NOW) is None


def test_records_we_cannot_keep_are_left_out():
    assert memory_of_platform(record(user_id="bob"), "alice", NOW) is None
    assert memory_of_platform(record(id=None), "alice", NOW) is None
    assert memory_of_platform(record(memory=None), "alice", NOW) is None


def test_a_servers_own_lifecycle_is_read_when_our_key_is_absent():
    memory = memory_of_platform(record(lifecycle_state="superseded", replacement_memory_id="m-9"), "alice", NOW)
    assert memory is not None and (memory.lifecycle_state, memory.replacement_memory_id) == ("superseded", "m-9")
    odd = memory_of_platform(record(metadata={LIFECYCLE_KEY: {"lifecycle_state": "gone?"}}), "alice", NOW)
    assert odd is not None and odd.lifecycle_state == "active"


def test_unreadable_timestamps_fall_back():
    memory = memory_of_platform(record(created_at="yesterday", updated_at=None), "alice", NOW)
    assert memory is not None and memory.created_at == memory.updated_at == NOW


def test_an_add_stores_the_text_as_given_and_synchronously():
    memory = Memory(id="x", memory="t", user_id="alice", app_id="acme", created_at=NOW, immutable=True)
    arguments = add_arguments(memory)
    assert arguments == {
        "user_id": "alice",
        "app_id": "acme",
        "metadata": {},
        "infer": False,
        "async_mode": False,
        "timestamp": 1796083200,
        "immutable": True,
    }
    merged = Memory(id="x", memory="t", user_id="alice", source_memory_ids=("a", "b"))
    assert add_arguments(merged)["metadata"][LIFECYCLE_KEY]["source_memory_ids"] == ["a", "b"]


def test_the_added_id_is_read_from_the_answer():
    assert added_id({"results": [{"id": "m-7", "event": "ADD"}]}) == ("m-7", True)
    assert added_id({"results": [{"id": "m-6", "event": "NOOP"}]}) == ("m-6", False)
    assert added_id([{"id": "m-8"}]) == ("m-8", True)
    assert added_id({"results": [{"message": "queued", "status": "PENDING"}]}) is None


# ------------------------------------------------------------------ the retry policy


def test_what_is_retried():
    policy = RetryPolicy()
    assert policy.retry_status(429, "GET", "/v1/memories/x/")
    assert policy.retry_status(500, "POST", "/v3/memories/")
    assert policy.retry_status(503, "PUT", "/v1/memories/x/")
    assert not policy.retry_status(404, "GET", "/v1/memories/x/")
    assert not policy.retry_status(400, "POST", "/v3/memories/")
    # an add that may have been stored is not sent twice
    assert policy.retry_status(429, "POST", "/v3/memories/add/")
    assert policy.retry_status(503, "POST", "/v3/memories/add/")
    assert not policy.retry_status(500, "POST", "/v3/memories/add/")
    assert not policy.retry_status(504, "POST", "/v3/memories/add/")


def test_backoff_doubles_honours_retry_after_and_is_capped():
    policy = RetryPolicy(attempts=6, base_seconds=0.5, max_seconds=8.0)
    assert [policy.delay(n) for n in range(1, 7)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]
    assert policy.delay(1, "3") == 3.0
    assert policy.delay(1, "120") == 8.0
    assert policy.delay(2, "Wed, 21 Oct 2026 07:28:00 GMT") == 1.0  # a date: the backoff


# ------------------------------------------------------------------ retries over real HTTP


class Flaky:
    """What the tiny server does: fail the first `failures` requests of each path with the
    statuses given, in turn, then answer like the platform would (a ping, pages of records)."""

    def __init__(self, failures: dict[str, list[int]], pages: int = 1):
        self.failures = {path: list(codes) for path, codes in failures.items()}
        self.pages = pages
        self.seen: list[tuple[str, str, int]] = []

    def answer(self, method: str, path: str, query: str) -> tuple[int, dict]:
        codes = self.failures.get(path.split("?")[0], [])
        if codes:
            status = codes.pop(0)
            self.seen.append((method, path, status))
            return status, {"detail": "try again"}
        self.seen.append((method, path, 200))
        if path.startswith("/v1/ping/"):
            return 200, {"status": "ok", "org_id": "o", "project_id": "p", "user_email": None}
        if path.startswith("/v3/memories/add/"):
            return 200, {"results": [{"id": "new-1", "memory": "x", "event": "ADD"}]}
        page = int(dict(p.split("=") for p in query.split("&") if p).get("page", "1"))
        more = page < self.pages
        results = [record(id=f"m-{page}-{n}", memory=f"text {page} {n}") for n in range(2)]
        return 200, {
            "count": 2 * self.pages,
            "next": f"/v3/memories/?page={page + 1}" if more else None,
            "results": results,
        }


@pytest.fixture
def flaky_server():
    servers = []

    def start(flaky: Flaky) -> str:
        class Handler(BaseHTTPRequestHandler):
            def _reply(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                path, _, query = self.path.partition("?")
                status, body = flaky.answer(self.command, path, query)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if status == 429:
                    self.send_header("Retry-After", "2")
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = _reply

            def log_message(self, *args) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def platform(base: str, waits: list[float], **options):
    from mem0_plugin.store.hosted.client import Platform

    return Platform(HostedAddress(base), "m0-test-key", sleep=waits.append, **options)


def test_429_and_503_are_retried_with_backoff_then_answered(flaky_server):
    flaky = Flaky({"/v1/ping/": [503], "/v3/memories/": [429, 503, 502]}, pages=3)
    waits: list[float] = []
    hosted = platform(flaky_server(flaky), waits, page_size=2)
    try:
        ids = [r["id"] for r in hosted.records("alice")]
    finally:
        hosted.close()
    assert ids == ["m-1-0", "m-1-1", "m-2-0", "m-2-1", "m-3-0", "m-3-1"]  # every page, until next is null
    assert waits == [0.5, 2.0, 1.0, 2.0]  # ping 503; 429 (Retry-After: 2), then 503 and 502 backing off
    assert [s for _, p, s in flaky.seen if p == "/v3/memories/"] == [429, 503, 502, 200, 200, 200]


def test_retries_are_bounded_and_end_in_a_clear_error(flaky_server):
    flaky = Flaky({"/v3/memories/": [503] * 10})
    waits: list[float] = []
    hosted = platform(flaky_server(flaky), waits, policy=RetryPolicy(attempts=3))
    try:
        with pytest.raises(StoreError, match="HTTP 503"):
            list(hosted.records("alice"))
    finally:
        hosted.close()
    assert waits == [0.5, 1.0]
    assert len([s for _, p, s in flaky.seen if p == "/v3/memories/"]) == 3


def test_an_add_that_may_have_been_stored_is_not_sent_again(flaky_server):
    flaky = Flaky({"/v3/memories/add/": [500]})
    waits: list[float] = []
    hosted = platform(flaky_server(flaky), waits)
    memory = Memory(id="x", memory="Use Postgres", user_id="alice", created_at=NOW)
    try:
        with pytest.raises(StoreError, match="HTTP 500"):
            hosted.add(memory)
        assert hosted.add(memory) == ("new-1", True)  # the next add, answered
    finally:
        hosted.close()
    assert waits == [] and [s for _, p, s in flaky.seen if p == "/v3/memories/add/"] == [500, 200]


def test_a_refused_key_and_an_unreachable_host_are_clear(flaky_server, monkeypatch):
    flaky = Flaky({"/v1/ping/": [401]})
    with pytest.raises(ConfigError, match="refused the API key"):
        platform(flaky_server(flaky), [])
    with pytest.raises(StoreError, match="cannot reach the Mem0 platform"):
        platform("http://127.0.0.1:9", [], policy=RetryPolicy(attempts=2))
    monkeypatch.delenv("MEM0_API_KEY", raising=False)
    from mem0_plugin.store.hosted.client import Platform

    with pytest.raises(ConfigError, match="MEM0_API_KEY"):
        Platform(HostedAddress("http://127.0.0.1:9"))
