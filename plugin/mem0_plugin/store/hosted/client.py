"""The Mem0 platform through mem0ai's `MemoryClient` (docs/hosted.md): the few calls the hosted
store makes, with the SDK's errors turned into ours and every request retried by
`retry.RetryingTransport`.

mem0ai is the optional extra ``mem0`` (``pip install 'mem0-dream-plugin[mem0]'``); it is
imported when a ``mem0://`` store opens, never before. Its usage telemetry is off unless
``MEM0_TELEMETRY`` says otherwise, and the small file it keeps (``config.json``) goes to
``<MEM0_HOME>/cache/mem0ai`` unless ``MEM0_DIR`` says otherwise (docs/decisions.md).
"""

from __future__ import annotations

import functools
import logging
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

from ...errors import ConfigError, NotFoundError, ScopeError, StoreError
from ...mem0_factories import quiet_sdk
from ...records import Memory
from ...store_url import HostedAddress
from ..sqlite.retry import RetryingTransport, RetryPolicy
from .records import add_arguments, added_id

API_KEY_ENV = "MEM0_API_KEY"
DEFAULT_HOST = "https://api.mem0.ai"  # mem0ai's own default, named in messages
PAGE_SIZE = 100
MAX_PAGES = 100_000  # a server whose `next` never ends is a bug, not a reason to loop forever
TIMEOUT_SECONDS = 60.0


def _client_class(sdk_dir: Path | None) -> Any:
    quiet_sdk(sdk_dir)  # before mem0 reads them, at its import
    try:
        from mem0 import MemoryClient
    except ImportError:
        raise ConfigError(
            "a mem0:// store needs mem0ai: pip install 'mem0-dream-plugin[mem0]' (or pip install mem0ai)"
        ) from None
    logging.getLogger("mem0").addHandler(logging.NullHandler())  # its errors become ours, said once
    return MemoryClient


def _status(exc: Exception) -> int | None:
    debug = getattr(exc, "debug_info", None)
    status = debug.get("status_code") if isinstance(debug, dict) else None
    return status if isinstance(status, int) else None


class Platform:
    """One Mem0 platform project, as the API key in `MEM0_API_KEY` (or `api_key`) sees it."""

    def __init__(
        self,
        address: HostedAddress,
        api_key: str | None = None,
        *,
        policy: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        page_size: int = PAGE_SIZE,
        sdk_dir: Path | None = None,
    ):
        self.host = address.base_url or DEFAULT_HOST
        key = api_key if api_key is not None else os.environ.get(API_KEY_ENV, "")
        if not key.strip():
            raise ConfigError(f"a mem0:// store needs an API key: set {API_KEY_ENV}")
        self.key = key.strip()
        self.page_size = page_size
        self.transport = RetryingTransport(httpx.HTTPTransport(), policy, sleep)
        http = httpx.Client(base_url=self.host, transport=self.transport, timeout=TIMEOUT_SECONDS)
        client_class = _client_class(sdk_dir)
        try:
            self.client = client_class(api_key=self.key, host=self.host, client=http)
        except ValueError as exc:  # the SDK's key check (GET /v1/ping/) was refused
            http.close()
            raise ConfigError(f"the Mem0 platform at {self.host} refused the API key in {API_KEY_ENV}: {exc}") from None
        except httpx.HTTPError as exc:
            http.close()
            raise StoreError(f"cannot reach the Mem0 platform at {self.host}: {exc}") from None

    def close(self) -> None:
        self.client.client.close()

    def _call(self, what: str, action: Callable[[], Any]) -> Any:
        try:
            return action()
        except httpx.HTTPError as exc:
            raise StoreError(f"cannot reach the Mem0 platform at {self.host} ({what}): {exc}") from None
        except Exception as exc:
            if type(exc).__module__.split(".")[0] != "mem0":
                raise
            status = _status(exc)
            if status == 404:
                raise NotFoundError(f"{what}: not found on the Mem0 platform") from None
            if status == 401:
                raise ConfigError(
                    f"the Mem0 platform at {self.host} refused {what} ({status}): check {API_KEY_ENV}"
                ) from None
            if status == 403:  # a valid key, another user (or project) than it may touch: exit 4, as mem0-server's 403
                raise ScopeError(
                    f"the Mem0 platform at {self.host} refused {what} ({status}): the key in {API_KEY_ENV} "
                    f"may not touch this user or project; check {API_KEY_ENV}, --user-id and --project-id"
                ) from None
            shown = f"HTTP {status}" if status else type(exc).__name__
            raise StoreError(f"the Mem0 platform at {self.host} failed {what} ({shown}): {exc}") from None

    # -- reads ----------------------------------------------------------------------

    def records(self, user_id: str) -> Iterator[dict[str, Any]]:
        """Every memory record of `user_id` the project holds, page by page until `next` is null."""
        page = 1
        while page <= MAX_PAGES:
            answer = self._call("reading memories", functools.partial(self._page, user_id, page))
            results = answer.get("results") if isinstance(answer, dict) else answer
            if not isinstance(results, list):
                raise StoreError(f"the Mem0 platform at {self.host} answered a read without results")
            yield from (r for r in results if isinstance(r, dict))
            if not isinstance(answer, dict) or answer.get("next") is None or not results:
                return
            page += 1
        raise StoreError(f"the Mem0 platform at {self.host} answered over {MAX_PAGES} pages")

    def _page(self, user_id: str, page: int) -> Any:
        return self.client.get_all(filters={"user_id": user_id}, page=page, page_size=self.page_size)

    def record(self, memory_id: str) -> dict[str, Any] | None:
        """The platform's record of one memory; None when it has none."""
        try:
            found = self._call(f"reading memory {memory_id}", lambda: self.client.get(memory_id))
        except NotFoundError:
            return None
        return found if isinstance(found, dict) and found.get("id") else None

    # -- writes ---------------------------------------------------------------------

    def add(self, memory: Memory) -> tuple[str, bool]:
        """Store `memory` as given (no inference): the id the platform gave it, and whether it is
        a new memory (not one with the same text it already had: `platform_records.added_id`)."""
        answer = self._call("adding a memory", lambda: self.client.add(memory.memory, **add_arguments(memory)))
        added = added_id(answer)
        if added is None:
            raise StoreError(
                f"the Mem0 platform at {self.host} did not answer the add with a memory id "
                "(queued for later processing?); nothing was recorded here"
            )
        return added

    def update(self, memory_id: str, text: str, metadata: dict[str, Any]) -> None:
        self._call(f"updating memory {memory_id}", lambda: self.client.update(memory_id, text=text, metadata=metadata))

    def delete(self, memory_id: str) -> None:
        try:
            self._call(f"deleting memory {memory_id}", lambda: self.client.delete(memory_id))
        except NotFoundError:
            pass  # already gone: what a delete wants
