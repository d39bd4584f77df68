"""One hook call answered: the event read, the project's store searched or written, the reply
for the client's standard output (docs/hooks.md). `Hooks.answer` never raises: whatever fails —
a bad payload, a locked store, an unreachable database, a bug — is one line in the hooks' log
and an empty reply.

A `Hooks` keeps what a long-lived process reuses between calls: the open stores, the embedder,
the identity of each folder for a few seconds, and the memories each session was already
shown (not shown again until the session is compacted or cleared).
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from .. import operations
from ..identity import Identity, resolve_identity
from ..mem0_config import load_instructions
from ..store import open_store
from . import bootstrap, capture, opening, recall, summary, transcript
from .events import Event, Kind, parse, reply
from .log import write_line
from .settings import hook_settings

if TYPE_CHECKING:
    from ..semantic import Semantic
    from ..store import Store

ACTOR = "mem0-hook"
IDENTITY_SECONDS = 5.0  # a folder's identity (git asked) is reused this long
SESSIONS_KEPT = 256
# The instruction file each client reads into its context itself: not recalled again.
OWN_FILES = {"claude": ("CLAUDE.md",), "codex": ("AGENTS.md",), "cursor": (".cursorrules", "AGENTS.md")}


def _exit_code(event: Event) -> int | None:
    """The command's exit code: as the client gave it, else (Codex) as its transcript holds it."""
    if event.exit_code is not None or event.client != "codex" or not event.transcript_path:
        return event.exit_code
    return transcript.exit_code_of(transcript.read_lines(event.transcript_path), event.tool_use_id)


class Hooks:
    """Answers hook calls for one process; thread-safe."""

    def __init__(self, env: Mapping[str, str] | None = None, *, background: bool = False):
        self.env = dict(os.environ if env is None else env)
        self.home = self.env.get("MEM0_HOME") or str(Path.home() / ".mem0")  # where the log goes
        self.background = background  # a long-lived process: embed new memories on a thread
        self._lock = threading.Lock()
        self._stores: dict[str, Store] = {}
        self._semantic: dict[Path, Semantic] = {}
        self._identities: dict[str, tuple[float, Identity]] = {}
        self._loading: dict[Path, Callable[[], Semantic]] = {}
        self._seen: OrderedDict[str, set[str]] = OrderedDict()

    # -- the one entry point ---------------------------------------------------------------

    def answer(self, client: str, name: str, payload: object) -> str:
        """The text to print for this hook call ("" for nothing); never raises."""
        try:
            if not isinstance(payload, dict):
                raise ValueError(f"the payload is not a JSON object but {type(payload).__name__}")
            event = parse(client, name, payload)
            return reply(event, self._context(event))
        except Exception as exc:
            write_line(self.home, f"{client} {name}", f"{type(exc).__name__}: {exc}")
            return ""

    # -- what each event does --------------------------------------------------------------

    def _context(self, event: Event) -> str:
        if event.kind is Kind.OTHER:
            return ""
        identity = self.identity(event.cwd)
        settings = hook_settings(identity.home, self.env)
        if event.kind is Kind.START:  # reads no vector: it does not wait for the model to load
            return self._start(event, self.caller(identity, model=False), settings)
        caller = self.caller(identity)
        if event.kind is Kind.PROMPT and settings.on("prompt"):
            return self._shown(
                event,
                recall.for_prompt(caller, event.prompt, seen=self.seen(event), skip_files=OWN_FILES[event.client]),
            )
        if event.kind is Kind.COMMAND and settings.on("tool") and recall.failed(event.output, _exit_code(event)):
            return self._shown(event, recall.for_failure(caller, event.command, event.output, seen=self.seen(event)))
        if event.kind is Kind.READ and settings.on("file_read") and event.file_path:
            return self._shown(event, recall.for_file(caller, event.file_path, seen=self.seen(event)))
        if event.kind in (Kind.PRE_COMPACT, Kind.END) and settings.on("capture") and not event.subagent:
            trigger = "pre-compact" if event.kind is Kind.PRE_COMPACT else "session-end"
            capture.capture_state(caller, event.transcript_path, trigger=trigger, session_id=event.session_id)
        if event.kind is Kind.POST_COMPACT and settings.on("capture") and event.compact_summary.strip():
            text = summary.compact_text(
                event.compact_summary, identity.branch, time.strftime("%Y-%m-%d", time.gmtime())
            )
            capture.write(caller, capture.COMPACT_SUMMARY, text, trigger="compact", session_id=event.session_id)
        return ""

    def _start(self, event: Event, caller: operations.Caller, settings) -> str:
        if event.source in ("compact", "clear"):
            self.forget_session(event.session_id)  # what it was shown is gone from its context
        if settings.on("bootstrap") and event.source in ("startup", "clear"):
            if self.background:  # the recall service answers first and imports after
                threading.Thread(target=self._import_files, args=(caller.identity,), daemon=True).start()
            else:
                bootstrap.import_files(self.caller(caller.identity))
        if not settings.on("session_start"):
            return ""
        found = opening.gather(
            caller,
            instructions=load_instructions(str(caller.identity.cwd)),
            with_state=event.source in ("resume", "compact"),
            skip_files=OWN_FILES[event.client],
        )
        text = opening.render(found)
        self.seen(event).update(memory.id for memory in found.memories)
        return text

    def _import_files(self, identity: Identity) -> None:
        try:
            bootstrap.import_files(self.caller(identity))
        except Exception as exc:
            write_line(self.home, "bootstrap", f"{type(exc).__name__}: {exc}")

    def _shown(self, event: Event, found: recall.Recalled) -> str:
        self.seen(event).update(memory.id for memory, _ in found.memories)
        return found.text()

    # -- what is kept between calls --------------------------------------------------------

    def identity(self, cwd: str) -> Identity:
        folder = cwd or os.getcwd()
        now = time.monotonic()
        with self._lock:
            cached = self._identities.get(folder)
            if cached and now - cached[0] < IDENTITY_SECONDS:
                return cached[1]
        identity = resolve_identity(cwd=folder, env=self.env)
        with self._lock:
            self._identities[folder] = (now, identity)
        return identity

    def caller(self, identity: Identity, *, model: bool = True) -> operations.Caller:
        """The caller for `identity`; with `model` False, without the embedder while it is still
        loading (what reads no vector need not wait for it). The wait for a loading model holds
        no lock: other calls go on meanwhile."""
        with self._lock:
            store = self._stores.get(identity.store_url)
            if store is None:
                store = self._stores[identity.store_url] = open_store(identity.store_location)
            semantic = self._semantic.get(identity.home)
            loading = self._loading.get(identity.home) if semantic is None else None
        if loading is not None:
            if not model:
                return operations.Caller(store, identity, actor=ACTOR, semantic=None, background=self.background)
            loaded = loading()  # waits for the loading thread (any number of callers may)
            with self._lock:
                semantic = self._semantic.setdefault(identity.home, loaded)
                self._loading.pop(identity.home, None)
        if semantic is None:
            from ..semantic import Semantic

            with self._lock:
                semantic = self._semantic.get(identity.home)
                if semantic is None:
                    semantic = self._semantic[identity.home] = Semantic.from_home(identity.home, quiet=True)
        return operations.Caller(store, identity, actor=ACTOR, semantic=semantic, background=self.background)

    def adopt(self, home: Path, loading: Callable[[], Semantic]) -> None:
        """The embedder of `home` is being made elsewhere (the recall service starts loading the
        model before it imports the rest): the first call for that home waits for it."""
        with self._lock:
            self._loading[home] = loading

    def seen(self, event: Event) -> set[str]:
        """The memories this session was already given (a session without an id: none kept)."""
        if not event.session_id:
            return set()
        with self._lock:
            found = self._seen.setdefault(event.session_id, set())
            self._seen.move_to_end(event.session_id)
            while len(self._seen) > SESSIONS_KEPT:
                self._seen.popitem(last=False)
            return found

    def forget_session(self, session_id: str) -> None:
        with self._lock:
            self._seen.pop(session_id, None)

    def warm(self, cwd: str) -> None:
        """Open the store of `cwd`'s project and load the embedder and its vectors, so the first
        call is answered as fast as the next (the recall service does this as it starts)."""
        try:
            operations.search_memories(self.caller(self.identity(cwd)), "warm up the search", top_k=1)
        except Exception as exc:
            write_line(self.home, "warm", f"{type(exc).__name__}: {exc}")

    def close(self) -> None:
        """Finish the embeddings scheduled on the background thread, then close the stores."""
        for semantic in list(self._semantic.values()):
            semantic.drain()
        with self._lock:
            for store in self._stores.values():
                store.close()
            self._stores.clear()
