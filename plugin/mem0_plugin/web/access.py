"""Who a request is and what it may touch (docs/server.md, "Access"): the API key of its
`Authorization: Token <key>` header, compared in constant time with every configured key,
and the users and projects that key is bound to. Pure: no I/O, nothing logged."""

from __future__ import annotations

import hmac
import reprlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import AuthError, InvalidInputError, ScopeError
from ..filters import WILDCARD
from .config import ApiKey

SCHEMES = ("token", "bearer")  # the SDK sends Token; MCP clients often send Bearer
NO_KEY = "Invalid API key: send `Authorization: Token <key>` with a key from the server's config.yaml."


def authenticate(keys: Sequence[ApiKey], header: str | None) -> ApiKey:
    """The configured key the header carries; `AuthError` when none. Every key is compared
    (with `hmac.compare_digest`) whatever the earlier ones gave: the time taken says nothing
    about which key, or how much of one, matched."""
    scheme, _, given = (header or "").strip().partition(" ")
    if scheme.lower() not in SCHEMES or not given.strip():
        raise AuthError(NO_KEY)
    offered = given.strip().encode("utf-8", "replace")
    found: ApiKey | None = None
    for key in keys:
        if hmac.compare_digest(key.key.encode("utf-8"), offered):
            found = key
    if found is None:
        raise AuthError(NO_KEY)
    return found


def check_user(key: ApiKey, user_id: str) -> str:
    if not key.all_users and user_id not in key.users:
        raise ScopeError(f"this API key may not touch user {reprlib.repr(user_id)}")
    return user_id


def check_project(key: ApiKey, app_id: str | None) -> None:
    if key.all_projects:
        return
    if app_id is None or app_id not in (key.projects or ()):
        raise ScopeError(f"this API key may not touch project {reprlib.repr(app_id)}")


def only_user(key: ApiKey) -> str | None:
    """The one user a key is bound to, if it names exactly one."""
    return key.users[0] if len(key.users) == 1 and not key.all_users else None


def named_values(filters: object, name: str) -> list[object]:
    """Every value `filters` gives `name`, at any depth (plain values and operator arguments),
    outside `metadata` conditions."""
    found: list[object] = []

    def walk(node: object) -> None:
        if isinstance(node, Mapping):
            for key, value in node.items():
                if key == name:
                    found.extend(_flat(value))
                elif key != "metadata":  # a metadata key of the same name is the user's data, not a scope
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(filters)
    return found


def _flat(value: object) -> Iterable[object]:
    if isinstance(value, Mapping):
        for item in value.values():
            yield from _flat(item)
    elif isinstance(value, list):
        yield from value
    else:
        yield value


def request_user(key: ApiKey, filters: object, *given: object) -> str:
    """The one user a request is about: named in `filters` (anywhere) or in `given` (a body's or
    query's `user_id`), each checked against the key (`ScopeError` → 403 before anything is read);
    the key's only user when the request names none."""
    named = [v for v in [*named_values(filters, "user_id"), *given] if v not in (None, "")]
    for value in named:
        if not isinstance(value, str):
            raise InvalidInputError(f"user_id must be a string, got {reprlib.repr(value)}")
        if value != WILDCARD:
            check_user(key, value)
    users = {v for v in named if isinstance(v, str) and v != WILDCARD}
    if len(users) > 1:
        raise InvalidInputError("a request reads or writes one user's memories: name one user_id")
    if users:
        return users.pop()
    user = only_user(key)
    if user is None:
        raise InvalidInputError('name the user: filters {"user_id": ...} (this key may touch several users)')
    return user


def project_filter(key: ApiKey, filters: object) -> dict[str, Any] | None:
    """`filters` confined to the key's projects: every `app_id` named must be one of them (else
    `ScopeError`), and the read is ANDed with `app_id in <projects>`. Unchanged for a key of
    every project."""
    if key.all_projects:
        return filters if isinstance(filters, dict) else None
    for value in named_values(filters, "app_id"):
        if value != WILDCARD:
            check_project(key, value if isinstance(value, str) else None)
    confine = {"app_id": {"in": list(key.projects or ())}}
    return {"AND": [filters, confine]} if isinstance(filters, dict) and filters else confine
