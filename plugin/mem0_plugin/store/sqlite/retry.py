"""Retries of requests to the Mem0 platform (docs/hosted.md, "Retries").

`RetryPolicy` decides, purely, whether an answer is worth asking again and how long to wait;
`RetryingTransport` is the httpx transport under mem0ai's `MemoryClient` that applies it, so
every SDK call (the key check at start included) is retried the same way and the SDK only
sees the last answer. The clock is injected (`sleep`) so tests wait for nothing.

What is retried: 429 (too many requests) and 5xx answers, and a connection that could not be
made, at most `attempts` times in all. One exception: an add (`POST /v3/memories/add/`) that
got a 500, 502 or 504 may have been stored already, so it is not sent again (a duplicate
memory would be worse than an error); 429 and 503 mean it was not taken, and are retried.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx

ADD_PATH = "/v3/memories/add/"
NOT_TAKEN = frozenset({429, 503})  # the request was refused before any work


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5  # requests in all, the first included
    base_seconds: float = 0.5  # the first wait; each next one doubles
    max_seconds: float = 8.0  # no single wait is longer (a Retry-After too)

    def retry_status(self, status: int, method: str, path: str) -> bool:
        """Whether an answer with `status` to `method path` should be asked again."""
        if status != 429 and not 500 <= status <= 599:
            return False
        if method.upper() == "POST" and path.endswith(ADD_PATH):
            return status in NOT_TAKEN
        return True

    def delay(self, attempt: int, retry_after: str | None = None) -> float:
        """Seconds to wait before attempt `attempt + 1` (attempt counts from 1): the server's
        Retry-After when it gives seconds, else exponential backoff; never over `max_seconds`."""
        wanted = self.base_seconds * 2 ** (attempt - 1)
        if retry_after is not None and retry_after.strip().isdigit():
            wanted = float(retry_after.strip())
        return min(max(wanted, 0.0), self.max_seconds)


class RetryingTransport(httpx.BaseTransport):
    """An httpx transport that retries what `policy` says, sleeping with `sleep` in between."""

    def __init__(
        self,
        inner: httpx.BaseTransport | None = None,
        policy: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.inner = inner or httpx.HTTPTransport()
        self.policy = policy or RetryPolicy()
        self.sleep = sleep
        self.retries = 0  # how many requests were sent again, in all (reported by tests and --debug)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        attempt = 1
        while True:
            try:
                response = self.inner.handle_request(request)
            except httpx.ConnectError:
                if attempt >= self.policy.attempts:
                    raise
                self._wait(attempt, None)
                attempt += 1
                continue
            if attempt >= self.policy.attempts or not self.policy.retry_status(
                response.status_code, request.method, request.url.path
            ):
                return response
            retry_after = response.headers.get("Retry-After")
            response.read()
            response.close()
            self._wait(attempt, retry_after)
            attempt += 1

    def _wait(self, attempt: int, retry_after: str | None) -> None:
        self.retries += 1
        self.sleep(self.policy.delay(attempt, retry_after))

    def close(self) -> None:
        self.inner.close()
