"""Realistic coding-agent memories at 1k / 10k / 100k, deterministic for a seed.

    python benchmarks/generate.py 10000            # -> benchmarks/.data/mem-10000-s7.sqlite3 (+ .jsonl)
    python benchmarks/generate.py 1000 10000 100000 --seed 7

The memories are what an agent on a few long-lived projects writes: decisions, conventions,
bug fixes with file paths and identifiers, environment facts with ports and versions,
session states (many of them old enough for retention), low-confidence notes, plus about
6% near-duplicates (the same fact worded again, differing in weak words) and about 2%
conflicts (the same predicate with another port, version or tool).

The store holds `n` memories in the benchmark scope (user `bench`, project `acme-api`)
and, as a team store would, `n / 10` more in another project of the same user and `n / 10`
of another user, so that scoping has work to do. Files are cached under
`benchmarks/.data/` (gitignored); `--force` rebuilds them.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sqlite3
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent
DATA = ROOT / ".data"
sys.path.insert(0, str(ROOT.parent / "plugin"))

USER, PROJECT = "bench", "acme-api"
OTHER_PROJECT, OTHER_USER = "acme-web", "mallory"
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)
DEFAULT_SEED = 7

# -- vocabulary ------------------------------------------------------------------------

AREAS = """auth billing checkout cart payments invoices refunds webhooks search catalog inventory
pricing shipping orders users accounts sessions tokens notifications emails reports analytics
metrics logging tracing cache queue scheduler workers uploads media images exports imports
migrations fixtures settings config permissions roles teams tenants audit ledger subscriptions
coupons reviews ratings recommendations feeds gateway proxy router middleware storage backups
healthcheck admin dashboard onboarding signup login oauth sso ratelimit throttling retries""".split()
THINGS = """handler service client model view serializer schema controller repository adapter
factory worker consumer producer parser validator formatter builder resolver loader provider
manager registry store mapper filter hook task job command query mutation endpoint route
middleware helper util component form table modal widget spec fixture""".split()
VERBS = """compute fetch load build parse validate render sync refresh retry enqueue dispatch
normalize serialize reconcile apportion settle authorize capture refund invalidate prefetch
paginate hydrate debounce throttle migrate seed export import archive purge notify""".split()
NOUNS = """total amount balance token session payload header cursor offset batch chunk record
entry event message signature checksum digest snapshot state status config limit timeout
threshold window budget quota price rate tax discount currency locale timezone""".split()
TOOLS = """PostgreSQL Redis SQLite MySQL Kafka RabbitMQ Celery Sidekiq Docker Kubernetes Terraform
Helm Vercel Netlify ECS Lambda Fargate CloudRun Nginx Caddy Traefik Sentry Datadog Grafana
Prometheus OpenTelemetry Stripe Postmark Mailgun Twilio Auth0 Okta Keycloak Elasticsearch
OpenSearch Meilisearch Typesense MinIO S3 GCS Pydantic SQLAlchemy Alembic FastAPI Django
Flask Starlette Uvicorn Gunicorn pytest Hypothesis Playwright Cypress Jest Vitest webpack
Vite esbuild Turborepo pnpm Poetry uv ruff mypy black isort pre-commit GitHub GitLab
CircleCI Buildkite ArgoCD Flux Vault Consul""".split()
LANGS = ["Python", "Node", "TypeScript", "Go", "Rust", "Java", "Ruby", "PHP"]
PORTS = [3000, 3001, 4000, 5000, 5173, 5432, 6379, 8000, 8080, 8081, 8443, 9000, 9090, 9200, 11211]
BRANCHES = ["main", "develop", "feature/checkout-v2", "fix/webhook-retries", "release/2026.11"]
ENVS = ["staging", "production", "preview", "local", "ci"]
PEOPLE = ["Alice", "Bruno", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hana"]

TYPES_WEIGHTED = (
    ("decision", 14),
    ("convention", 14),
    ("bug_fix", 14),
    ("task_learning", 12),
    ("environmental", 9),
    ("anti_pattern", 7),
    ("user_preference", 6),
    ("project_profile", 4),
    ("session_summary", 7),
    ("session_state", 6),
    ("compact_summary", 3),
    ("auto_capture", 3),
    ("health_check", 1),
)


@dataclass
class Draft:
    text: str
    type: str
    confidence: float
    days_ago: float
    extra: dict | None = None


class Vocab:
    def __init__(self, rng: random.Random):
        self.rng = rng

    def pick(self, seq):
        return self.rng.choice(seq)

    def ident(self) -> str:
        return f"{self.pick(VERBS)}_{self.pick(AREAS)}_{self.pick(NOUNS)}"

    def camel(self) -> str:
        a, t = self.pick(AREAS), self.pick(THINGS)
        return a.capitalize() + t.capitalize()

    def path(self) -> str:
        r = self.rng.random()
        area, thing = self.pick(AREAS), self.pick(THINGS)
        if r < 0.45:
            return f"src/{area}/{thing}s.py"
        if r < 0.7:
            return f"api/{area}/{self.pick(NOUNS)}_{thing}.py"
        if r < 0.85:
            return f"web/src/components/{area.capitalize()}{thing.capitalize()}.tsx"
        return f"tests/{area}/test_{self.pick(NOUNS)}_{thing}.py"

    def version(self) -> str:
        return f"{self.rng.randint(0, 9)}.{self.rng.randint(0, 30)}.{self.rng.randint(0, 20)}"

    def sha(self) -> str:
        return f"{self.rng.getrandbits(28):07x}"

    def ticket(self) -> str:
        return f"{self.pick(['ENG', 'OPS', 'PAY', 'WEB'])}-{self.rng.randint(100, 9999)}"


def _templates(v: Vocab) -> dict[str, list]:
    p = v.pick
    return {
        "decision": [
            lambda: f"Use {p(TOOLS)} for {p(AREAS)} instead of {p(TOOLS)}",
            lambda: f"Deploy the {p(AREAS)} {p(THINGS)} to {p(TOOLS)}",
            lambda: f"The {p(AREAS)} {p(THINGS)} talks to {p(TOOLS)} through {v.camel()}",
            lambda: f"Store {p(NOUNS)} values for {p(AREAS)} in {p(TOOLS)} with a {v.rng.randint(1, 90)} day TTL",
            lambda: f"We picked {p(TOOLS)} {v.version()} for {p(AREAS)} after the {v.ticket()} spike",
            lambda: f"{p(AREAS).capitalize()} events go through {p(TOOLS)}; {p(THINGS)}s consume them in {v.path()}",
        ],
        "convention": [
            lambda: f"Run the {p(AREAS)} tests with pytest -q {v.path()}",
            lambda: f"Name {p(AREAS)} {p(THINGS)}s like {v.camel()} and keep them in {v.path()}",
            lambda: f"Every {p(THINGS)} in {p(AREAS)} must call {v.ident()} before returning",
            lambda: f"Format {p(LANGS)} code with {p(TOOLS)}; lint with {p(TOOLS)}",
            lambda: f"Commit messages reference the ticket, e.g. {v.ticket()}, in the first line",
            lambda: f"Put shared {p(NOUNS)} helpers for {p(AREAS)} in {v.path()}",
            lambda: f"Money amounts in {p(AREAS)} are integer cents; {v.ident()} converts at the edge",
        ],
        "bug_fix": [
            lambda: (
                f"Fixed {p(['a race', 'an off-by-one', 'a deadlock', 'a memory leak', 'a timezone bug', 'a crash'])} "
                f"in {v.ident()} ({v.path()}) by {p(['adding a lock', 'clamping the offset', 'retrying on 409', 'using UTC', 'closing the cursor', 'checking for None'])}"
            ),
            lambda: f"{v.camel()} raised KeyError on empty {p(NOUNS)}; fixed in commit {v.sha()}",
            lambda: (
                f"The {p(AREAS)} {p(THINGS)} double-counted {p(NOUNS)}s; {v.ident()} now dedupes by id ({v.ticket()})"
            ),
            lambda: f"Flaky test {v.path()}::test_{v.ident()} fixed by freezing time",
        ],
        "task_learning": [
            lambda: f"{v.ident()} in {v.path()} is called from {v.camel()}, not directly",
            lambda: f"To regenerate the {p(AREAS)} fixtures run make fixtures-{p(AREAS)} then {p(TOOLS)} import",
            lambda: (
                f"The {p(AREAS)} {p(THINGS)} caches {p(NOUNS)} for {v.rng.randint(1, 120)} seconds; clear it with {v.ident()}"
            ),
            lambda: (
                f"{p(TOOLS)} {v.version()} changed the default {p(NOUNS)} {p(['timeout', 'limit', 'encoding', 'isolation level'])}"
            ),
            lambda: f"Learned that {v.camel()} retries {v.rng.randint(2, 9)} times before giving up",
        ],
        "environmental": [
            lambda: f"The {p(AREAS)} dev server listens on port {p(PORTS)}",
            lambda: f"{p(ENVS).capitalize()} runs {p(LANGS)} {v.version()} with {p(TOOLS)} {v.version()}",
            lambda: (
                f"{p(TOOLS)} in {p(ENVS)} is at {p(['localhost', 'db.internal', 'cache.internal', 'queue.internal'])}:{p(PORTS)}"
            ),
            lambda: f"Set {p(AREAS).upper()}_{p(NOUNS).upper()} in .env.{p(ENVS)} before starting {p(TOOLS)}",
        ],
        "anti_pattern": [
            lambda: f"Never call {v.ident()} inside a transaction in {p(AREAS)}",
            lambda: f"Don't use {p(TOOLS)} for {p(AREAS)} {p(NOUNS)}s; it loses messages under load",
            lambda: f"Avoid importing {v.camel()} from {v.path()} at module level (circular import)",
        ],
        "user_preference": [
            lambda: (
                f"{p(PEOPLE)} prefers {p(['small pull requests', 'type hints everywhere', 'dataclasses over dicts', 'tabs', 'early returns', 'explicit imports'])}"
            ),
            lambda: f"Prefers {p(TOOLS)} over {p(TOOLS)} for {p(AREAS)}",
            lambda: f"Wants {p(AREAS)} changes reviewed by {p(PEOPLE)}",
        ],
        "project_profile": [
            lambda: f"The {p(AREAS)} module is written in {p(LANGS)} on {p(TOOLS)} with {p(TOOLS)}",
            lambda: f"acme-api is a monorepo: api/ ({p(LANGS)}), web/ ({p(LANGS)}), infra/ ({p(TOOLS)})",
        ],
        "session_summary": [
            lambda: (
                f"Session summary: refactored {v.ident()} and moved it to {v.path()}; {v.rng.randint(1, 40)} tests pass"
            ),
            lambda: f"Session summary: investigated {v.ticket()} in {p(AREAS)}; root cause in {v.camel()}",
        ],
        "session_state": [
            lambda: (
                f"Session state: halfway through {p(VERBS)}ing {p(AREAS)} {p(NOUNS)}s in {v.path()} on {p(BRANCHES)}"
            ),
            lambda: f"Session state: waiting for CI on {p(BRANCHES)} ({v.sha()})",
        ],
        "compact_summary": [
            lambda: f"Compact summary: moved {p(AREAS)} from {p(TOOLS)} to {p(TOOLS)}; {v.ident()} removed",
        ],
        "auto_capture": [
            lambda: (
                f"Ran {p(['pytest', 'npm test', 'make lint', 'alembic upgrade head', 'docker compose up'])} in {p(AREAS)}: {p(['passed', 'failed', '3 warnings', 'timed out'])}"
            ),
        ],
        "health_check": [
            lambda: f"Health check {v.sha()}: {p(['store ok', 'search 3ms', 'lock free'])}",
        ],
    }


# Near-duplicate rewrites: the same fact with weak words changed (dream should merge these).
def _near_duplicate(text: str, rng: random.Random) -> str:
    swaps = [
        ("Use ", "Prefer "),
        ("Use ", "We use "),
        ("Run the ", "Always run the "),
        ("The ", "Currently the "),
        (" talks to ", " currently talks to "),
        ("Deploy the ", "Go deploy the "),
    ]
    rng.shuffle(swaps)
    for old, new in swaps:
        if old in text:
            return text.replace(old, new, 1)
    return text + " (confirmed)" if rng.random() < 0.5 else "Note: " + text


def _conflict(draft: Draft, v: Vocab) -> Draft | None:
    """The same predicate with another value (port, deploy target, tool)."""
    text = draft.text
    if "listens on port" in text:
        head = text.rsplit(" ", 1)[0]
        return Draft(
            f"{head} {v.pick([p for p in PORTS if str(p) not in text])}",
            draft.type,
            draft.confidence,
            max(0.0, draft.days_ago - v.rng.uniform(1, 60)),
        )
    if text.startswith("Deploy the ") and " to " in text:
        head = text.rsplit(" to ", 1)[0]
        return Draft(
            f"{head} to {v.pick(TOOLS)}", draft.type, draft.confidence, max(0.0, draft.days_ago - v.rng.uniform(1, 60))
        )
    if text.startswith("Use ") and " for " in text:
        return Draft(
            "Don't u" + text[1:], draft.type, draft.confidence, max(0.0, draft.days_ago - v.rng.uniform(1, 60))
        )
    return None


def drafts(n: int, seed: int) -> Iterator[Draft]:
    rng = random.Random(seed)
    v = Vocab(rng)
    templates = _templates(v)
    types = [t for t, _ in TYPES_WEIGHTED]
    weights = [w for _, w in TYPES_WEIGHTED]
    recent: list[Draft] = []
    made = 0
    while made < n:
        roll = rng.random()
        if recent and roll < 0.06:
            base = rng.choice(recent)
            draft = Draft(
                _near_duplicate(base.text, rng),
                base.type,
                round(rng.uniform(0.5, 0.95), 2),
                max(0.0, base.days_ago - rng.uniform(0, 30)),
            )
        elif recent and roll < 0.08:
            draft = _conflict(rng.choice(recent), v)
            if draft is None:
                continue
        else:
            kind = rng.choices(types, weights)[0]
            text = rng.choice(templates[kind])()
            days = rng.expovariate(1 / 120) if kind != "session_state" else rng.uniform(0, 400)
            confidence = round(rng.uniform(0.1, 0.35), 2) if rng.random() < 0.04 else round(rng.uniform(0.4, 1.0), 2)
            draft = Draft(text, kind, confidence, min(days, 1500))
            if rng.random() < 0.01:
                draft.extra = {"pinned": True}
            recent.append(draft)
            if len(recent) > 400:
                recent.pop(rng.randrange(len(recent)))
        if rng.random() < 0.03:  # some records carry no confidence at all
            draft.confidence = None  # type: ignore[assignment]
        made += 1
        yield draft


def records(n: int, seed: int, *, user: str = USER, project: str = PROJECT) -> Iterator[dict]:
    """Records in the docs/records.md shape (what `mem0-memories import` reads) for one scope."""
    rng = random.Random(seed * 7919 + 1)
    for draft in drafts(n, seed):
        created = NOW - timedelta(days=draft.days_ago, seconds=rng.randint(0, 86399))
        metadata = {"type": draft.type, "branch": rng.choice(BRANCHES), "source": "claude-code"}
        if draft.confidence is not None:
            metadata["confidence"] = draft.confidence
        if draft.extra:
            metadata.update(draft.extra)
        stamp = created.isoformat()
        yield {
            "id": f"{rng.getrandbits(128):032x}",
            "memory": draft.text,
            "user_id": user,
            "app_id": project,
            "metadata": metadata,
            "created_at": stamp,
            "updated_at": stamp,
        }


def _uuid(hex32: str) -> str:
    return f"{hex32[:8]}-{hex32[8:12]}-4{hex32[13:16]}-a{hex32[17:20]}-{hex32[20:32]}"


def all_records(n: int, seed: int) -> Iterator[dict]:
    """The benchmark scope's n records, then n/10 of another project and n/10 of another user."""
    for record in records(n, seed):
        yield {**record, "id": _uuid(record["id"])}
    for record in records(max(1, n // 10), seed + 1, project=OTHER_PROJECT):
        yield {**record, "id": _uuid(record["id"])}
    for record in records(max(1, n // 10), seed + 2, user=OTHER_USER):
        yield {**record, "id": _uuid(record["id"])}


def queries(count: int, seed: int) -> list[str]:
    """What an agent asks: 2-6 words, some common, some a rare identifier or a path."""
    rng = random.Random(seed * 31 + 5)
    v = Vocab(rng)
    shapes = [
        lambda: f"how do we deploy the {v.pick(AREAS)} {v.pick(THINGS)}",
        lambda: f"{v.pick(TOOLS)} {v.pick(AREAS)}",
        lambda: f"tests for {v.pick(AREAS)} {v.pick(THINGS)}",
        lambda: f"{v.ident()}",
        lambda: f"bug in {v.pick(AREAS)} {v.pick(NOUNS)}",
        lambda: f"which port does the {v.pick(AREAS)} dev server listen on",
        lambda: f"{v.path()}",
        lambda: f"convention for {v.pick(AREAS)} {v.pick(THINGS)} names",
        lambda: f"{v.pick(TOOLS)} version in {v.pick(ENVS)}",
        lambda: f"session state {v.pick(BRANCHES)}",
    ]
    return [rng.choice(shapes)() for _ in range(count)]


def data_path(n: int, seed: int = DEFAULT_SEED, suffix: str = ".sqlite3") -> Path:
    """The cached file; a store's name carries the schema version, so a store written by an
    older schema (without, say, dream's stored readings) is never measured as a new one."""
    if suffix == ".sqlite3":
        from mem0_plugin.store.sqlite.migrations import MIGRATIONS

        suffix = f"-schema{len(MIGRATIONS)}{suffix}"
    return DATA / f"mem-{n}-s{seed}{suffix}"


def write_jsonl(n: int, seed: int = DEFAULT_SEED, *, force: bool = False) -> Path:
    """The benchmark scope's records as JSON Lines (what `mem0-memories import` reads)."""
    path = data_path(n, seed, ".jsonl")
    if path.exists() and not force:
        return path
    DATA.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as out:
        for record in records(n, seed):
            out.write(json.dumps({**record, "id": _uuid(record["id"])}, ensure_ascii=False) + "\n")
    tmp.replace(path)
    return path


def build_store(n: int, seed: int = DEFAULT_SEED, *, force: bool = False) -> Path:
    """The cached store file with every record of `all_records(n, seed)`, history included."""
    from mem0_plugin.records import memory_from_record
    from mem0_plugin.store import SqliteStore

    path = data_path(n, seed)
    if path.exists() and not force:
        return path
    DATA.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    for leftover in (tmp, Path(str(tmp) + "-wal"), Path(str(tmp) + "-shm")):
        leftover.unlink(missing_ok=True)
    started = time.perf_counter()
    store = SqliteStore(tmp)
    now = NOW.isoformat()
    with store.write() as writer:
        for record in all_records(n, seed):
            memory = memory_from_record(record, default_user=USER, default_app=PROJECT, now=now)
            writer.insert(memory, event="IMPORT", actor="benchmark")
    store._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    tmp.replace(path)
    print(
        f"generated {path.name}: {n:,} in scope (+{2 * max(1, n // 10):,} elsewhere) "
        f"in {time.perf_counter() - started:.1f}s",
        file=sys.stderr,
    )
    return path


def _vectors_model(path: Path) -> str | None:
    """The model of a cached store's vectors (a store made by an earlier version may hold
    another kind: it is made again)."""
    with sqlite3.connect(path) as conn:
        row = conn.execute("SELECT model FROM vectors LIMIT 1").fetchone()
    return row[0] if row else None


def build_vector_store(n: int, seed: int = DEFAULT_SEED) -> Path:
    """`build_store(n)` with a vector of the default embedder for every memory (cached): what a
    store looks like once `mem0-memories embed` or `--auto` has run. Embedding 120k texts takes
    about ten minutes on 2 cores, once."""
    from mem0_plugin.semantic import Semantic
    from mem0_plugin.store import SqliteStore

    path = data_path(n, seed, "-vectors.sqlite3")
    semantic = Semantic.from_home(DATA)
    if path.exists() and _vectors_model(path) == semantic.model_id:
        return path
    tmp = path.with_name(path.name + ".tmp")
    shutil.copyfile(build_store(n, seed), tmp)
    started = time.perf_counter()
    with SqliteStore(tmp) as store:
        for user in (USER, OTHER_USER):
            semantic.backfill(store, user)
        store._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    tmp.replace(path)
    print(f"embedded {path.name} with {semantic.model_id} in {time.perf_counter() - started:.0f}s", file=sys.stderr)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[1000, 10000, 100000])
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--force", action="store_true")
    parser.add_argument("--vectors", action="store_true", help="also the stores with every memory embedded")
    args = parser.parse_args(argv)
    for n in args.sizes:
        print(build_store(n, args.seed, force=args.force))
        print(write_jsonl(n, args.seed, force=args.force))
        if args.vectors:
            print(build_vector_store(n, args.seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
