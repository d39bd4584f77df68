"""`mem0-health`: run every check, print one summary (docs/health.md); `--deep` adds the quality scan.

Exit status: 0 when no check fails, 1 when any does (SKIP is not a failure). `--json`
prints `{"ok", "checks": [{"name", "status", "ok", "detail", "fix"}], "quality"}` instead,
`quality` being null without `--deep`. `--deep` opens the store read-only, skips the
write probe (printed as SKIP) and changes no file. Its findings are dream's plan for the
memories the Store line counts (`quality`), with the vectors dream would use: those
stored, and the missing ones embedded in memory, never written (as `mem0-dream --plan`).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING

from .. import health
from .. import health_probes as probes
from ..dream.pipeline import fetch_vectors, step1_retention
from ..errors import ConfigError, Mem0PluginError
from ..identity import Identity
from ..locks.auto_lock import lock_path_from_env
from ..mem0_config import find_mem0_config, parse_categories, read_config_text
from ..quality import (
    IN_SCOPE_STATES,
    QualityReport,
    known_types,
    render_findings,
    render_summary,
    report_to_dict,
    scan_quality,
)
from ..records import Memory
from ..sanitize import inert_json
from ..store import SqliteStore, Store
from ..timeutil import parse_timestamp, utc_now
from .common import Parser, identity_arguments, identity_from, run_command

if TYPE_CHECKING:
    from ..semantic import Semantic

PROG = "mem0-health"


@dataclass(frozen=True)
class StoreRead:
    """What one pass over an open store observed."""

    count: int | None = None
    millis: float | None = None
    search_error: str = ""
    memories: tuple[Memory, ...] | None = None
    error: str = ""
    vectors: dict = field(default_factory=dict)  # --deep: the in-scope memories' vectors, by id


def _read(store: Store, identity: Identity, *, deep: bool, semantic: Semantic | None = None) -> StoreRead:
    try:
        count = probes.count_memories(store, identity)
        memories = tuple(store.iter_scope(identity.user_id, identity.project_id)) if deep else None
        vectors = _vectors(store, memories, semantic) if memories else {}
    except Mem0PluginError as exc:
        return StoreRead(error=str(exc))
    millis, search_error = probes.time_search(store, identity)
    return StoreRead(count, millis, search_error, memories, vectors=vectors)


def _vectors(store: Store, memories: tuple[Memory, ...], semantic: Semantic | None) -> dict:
    """The vectors dream would use for these memories, nothing written (`fetch_vectors`)."""
    in_scope = [m for m in memories if m.lifecycle_state in IN_SCOPE_STATES]
    return fetch_vectors(store, in_scope, semantic, store_new=False)[0]


def _read_deep(store: Store, identity: Identity, semantic: Semantic | None) -> StoreRead:
    """Read everything through the snapshot; read again if a writer changed the files meanwhile."""
    with store:
        observed = _read(store, identity, deep=True, semantic=semantic)
        moved = isinstance(store, probes.SnapshotStore) and not store.still_valid()
    if not moved or not isinstance(store, probes.SnapshotStore):
        return observed
    with SqliteStore(store.path, readonly=True) as again:
        return _read(again, identity, deep=True, semantic=semantic)


def categories_of(identity: Identity) -> list[str]:
    try:
        path = find_mem0_config(str(identity.cwd))
        return parse_categories(read_config_text(path)) if path else []
    except (OSError, ValueError):
        return []


def store_checks(
    identity: Identity, deep: bool, now: datetime, semantic: Semantic | None = None
) -> tuple[list[health.CheckResult], QualityReport | None]:
    """Store, Search and Write/Read, and (with `deep`) the quality report (by meaning too when
    `semantic` is available)."""
    probe, store = probes.open_store_probe(
        identity.store_url, readonly=deep, explicit=identity.store_explicit, identity=identity
    )
    observed = StoreRead()
    write: tuple[str | None, str] = (None, "")
    if store is not None:
        if deep:
            observed = _read_deep(store, identity, semantic)
        else:
            with store:
                observed = _read(store, identity, deep=False)
                write = probes.write_probe(store, identity) if not observed.error else write
        probe = (
            replace(probe, count=observed.count)
            if not observed.error
            else replace(probe, problem=probes.diagnose(probe.path, observed.error), error=observed.error)
        )
    results = [
        health.store_check(probe),
        health.search_check(probe, observed.millis, observed.search_error),
        health.write_check(probe, skipped=deep, problem=write[0], error=write[1]),
    ]
    quality = None
    if deep and probe.problem is None:
        policy, source = step1_retention(identity.cwd)
        quality = scan_quality(
            observed.memories or (),
            known_types(categories_of(identity)),
            now,
            user_id=identity.user_id,
            project_id=identity.project_id,
            policy=policy,
            policy_source=source,
            vectors=observed.vectors,
        )
    return results, quality


def run_checks(args: argparse.Namespace, now: datetime) -> tuple[list[health.CheckResult], QualityReport | None]:
    try:
        identity = identity_from(args)
    except ConfigError as exc:
        identity, error = None, str(exc)
    if identity is None:
        not_run = [
            health.CheckResult(name, False, "not run: the identity did not resolve", "fix the Identity check first.")
            for name in (health.STORE, health.SEARCH, health.WRITE_READ)
        ]
        stores, quality = not_run, None
        ident = health.identity_check(None, None, None, error)
    else:
        semantic = _semantic(identity)
        stores, quality = store_checks(identity, args.deep, now, semantic if args.deep else None)
        ident = health.identity_check(identity.user_id, identity.project_id, identity.branch)
    lock = health.lock_check(probes.inspect_lock(lock_path_from_env()))
    checks = [stores[0], ident, stores[1], stores[2], lock]
    if identity is not None:
        embedder = embedder_check(identity, stores[0].ok, semantic)
        if embedder is not None:
            checks.append(embedder)
    codex = probes.codex_clash()
    if codex is not None:
        checks.append(health.codex_check(codex[0], codex[1].command))
    return checks, quality


def _semantic(identity: Identity) -> Semantic:
    """The configured embedder (its model loads on first use), quiet: health reports it itself."""
    from ..semantic import Semantic

    return Semantic.from_home(identity.home, quiet=True)


def embedder_check(identity: Identity, store_ok: bool, semantic: Semantic) -> health.CheckResult | None:
    """Count the project's memories that have the configured embedder's vectors; None (no
    row) when semantic matching is turned off on purpose."""
    from ..semantic import TURNED_OFF

    if semantic.reason == TURNED_OFF:
        return None
    if not semantic.available():
        return health.embedder_check(None, semantic.reason, None)
    counts = None
    if store_ok:
        try:
            with probes.open_readonly(identity.store_location) as store:  # no side files
                counts = store.vector_counts(identity.user_id, semantic.model_id or "", identity.project_id)
        except Mem0PluginError:
            counts = None
    return health.embedder_check(semantic.model_name, None, counts, english_only=semantic.english_only)


def render_text(results: list[health.CheckResult], quality: QualityReport | None, deep: bool) -> str:
    lines = health.render_checks(results)
    if deep:
        lines.append("")
        if quality is None:
            lines += ["## Memory Quality", "", "Not scanned: the store could not be read (see Store above)."]
        else:
            lines += render_findings(quality) + render_summary(quality)
    return "\n".join(lines)


def cmd_health(args: argparse.Namespace) -> int:
    now = parse_timestamp(args.now, "--now") if args.now else utc_now()
    results, quality = run_checks(args, now)
    if args.json:
        print(
            inert_json(
                json.dumps(
                    {
                        "ok": not health.any_failed(results),
                        "checks": [r.to_dict() for r in results],
                        "quality": report_to_dict(quality) if quality is not None else None,
                    },
                    indent=2,
                    ensure_ascii=False,
                )
            )
        )
    else:
        print(render_text(results, quality, args.deep))
    return 1 if health.any_failed(results) else 0


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=PROG,
        description="Check the memory store, identity, search, "
        "writes and the dream lock; --deep adds a read-only quality scan.",
    )
    identity_arguments(parser)
    parser.add_argument(
        "--deep",
        action="store_true",
        help="also scan memory quality (duplicates, stale, contradictions, orphans, credentials); "
        "read-only: the write probe is skipped",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON object instead of the report")
    parser.add_argument("--now", help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_command(PROG, cmd_health, args)


if __name__ == "__main__":
    sys.exit(main())
