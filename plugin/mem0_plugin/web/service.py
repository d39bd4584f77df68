"""What the HTTP server holds for its whole life: the store, the embedder and the defaults,
and a `Caller` (`operations`) per request for the user and project it is about."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from .. import operations
from ..errors import NotFoundError
from ..identity import Identity
from ..store import Store, open_store
from . import access
from .config import ApiKey, ServerSection

if TYPE_CHECKING:
    from ..semantic import Semantic

ACTOR = "http"


@dataclass
class Service:
    identity: Identity  # home and store; user and project are the request's
    config: ServerSection
    _store: Store | None = None
    _semantic: Semantic | None = None
    _opening: threading.Lock = field(default_factory=threading.Lock)

    @property
    def store(self) -> Store:
        with self._opening:
            if self._store is None:
                self._store = open_store(self.identity.store_location)
            return self._store

    @property
    def semantic(self) -> Semantic:
        with self._opening:
            if self._semantic is None:  # the model loads on the first search or infer, not here
                from ..semantic import Semantic

                self._semantic = Semantic.from_home(self.identity.home)
            return self._semantic

    def default_project(self, key: ApiKey) -> str:
        """Where a memory added without app_id goes: the key's first project, else the server's."""
        return key.projects[0] if not key.all_projects and key.projects else self.identity.project_id

    def caller(self, user_id: str, project_id: str | None = None) -> operations.Caller:
        identity = replace(self.identity, user_id=user_id, project_id=project_id or self.identity.project_id)
        return operations.Caller(self.store, identity, actor=ACTOR, semantic=self.semantic, background=True)

    def owner(self, key: ApiKey, memory_id: str) -> str:
        """The user whose memory `memory_id` is, once the key may touch it (and its project):
        `NotFoundError` when no one has it, `ScopeError` when another user (or project) does."""
        found = self.store.owner_of(memory_id)
        if found is None:
            raise NotFoundError("Memory not found!")
        user_id, app_id = found
        access.check_user(key, user_id)
        access.check_project(key, app_id)
        return user_id

    def users(self, key: ApiKey) -> list[str]:
        """The users a key may touch that the store knows (every one for a key of "*")."""
        known = self.store.user_ids()
        return known if key.all_users else [u for u in key.users if u in known]

    def close(self) -> None:
        """At shutdown: the embeddings scheduled after writes finished, then the store closed."""
        if self._semantic is not None:
            self._semantic.drain()
        if self._store is not None:
            self._store.close()
