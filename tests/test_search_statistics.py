"""BM25's statistics (docs/search.md, "The lexical score") stay equal to a count made from the
memories themselves under every kind of write — add, update, delete, restore, import, a dream
merge, a purge — on SQLite and on PostgreSQL; the two give the same scores for the same
memories; `mem0-memories reindex` rebuilds them for an old store, losing no memory."""

from __future__ import annotations

import json
import sqlite3

from mem0_plugin import operations, transfer
from mem0_plugin.identity import resolve_identity
from mem0_plugin.store import open_store

TEXTS = [
    "The billing service deploys to ECS with blue/green task sets",
    "Deploying the billing worker needs the DEPLOY_TOKEN secret",
    "Redis caches session tokens for 15 minutes",
    "Локальный Postgres слушает порт 5433",
    "账本数据存储在 PostgreSQL 里",
]


def counted(store) -> tuple[list[tuple], list[tuple]]:
    """(term counts, scope sizes) as the store keeps them, and as counted from its memories."""
    kept = (
        store._query("SELECT user_id, app_key, term, n FROM term_counts ORDER BY 1, 2, 3"),
        store._query("SELECT user_id, app_key, docs, terms FROM scope_sizes ORDER BY 1, 2"),
    )
    rows = store._query("SELECT user_id, app_id, terms FROM memories")
    terms: dict[tuple, int] = {}
    sizes: dict[tuple, list[int]] = {}
    for user, app, text in rows:
        key = (user, "" if app is None else "=" + app)
        words = set(text.split())
        for word in words:
            terms[(*key, word)] = terms.get((*key, word), 0) + 1
        size = sizes.setdefault(key, [0, 0])
        size[0] += 1
        size[1] += len(words)
    wanted = (
        sorted((*k, n) for k, n in terms.items()),
        sorted((*k, docs, total) for k, (docs, total) in sizes.items()),
    )
    return [list(map(tuple, kept[0])), list(map(tuple, kept[1]))], [wanted[0], wanted[1]]


def test_statistics_follow_every_write(backend, tmp_path, run_cli):
    identity = resolve_identity()
    with open_store(identity.store_location) as store:
        caller = operations.Caller(store, identity, actor="test")
        ids = [operations.add_memory(caller, text, infer=False)["results"][0]["id"] for text in TEXTS]
        other = operations.Caller(store, resolve_identity(project_id="acme-web"), actor="test")
        operations.add_memory(other, "The web app deploys to Vercel", infer=False)
        operations.update_memory(caller, ids[0], "The billing service deploys to Fargate now")
        operations.delete_memory(caller, ids[2])
        operations.restore_memory(caller, ids[2])
        operations.delete_memory(caller, ids[1])
        transfer.import_memories(caller, json.dumps([{"memory": "Imported: pnpm, not npm", "metadata": {}}]))
        kept, wanted = counted(store)
        assert kept == wanted and len(kept[0]) > 20
    assert run_cli("mem0-forget", "--ids", ids[4], "--purge", "--yes").returncode == 0
    with open_store(identity.store_location) as store:
        kept, wanted = counted(store)
        assert kept == wanted
        assert not [row for row in kept[0] if row[2] in ("账本", "本数")]  # a purged text's terms are gone


def test_the_same_memories_score_the_same_on_both_stores(postgres_url, tmp_path):
    scores = []
    for url in (f"sqlite:///{tmp_path}/s.sqlite3", postgres_url):
        identity = resolve_identity(store=url)
        with open_store(identity.store_location) as store:
            caller = operations.Caller(store, identity, actor="test")
            for text in TEXTS:
                operations.add_memory(caller, text, infer=False)
            text_of = lambda r: (r["memory"], r["score"])  # noqa: E731
            scores.append(
                {
                    q: [text_of(r) for r in operations.search_memories(caller, q)["results"]]
                    for q in ("deploy billing", "postgres port", "session tokens redis")
                }
            )
    assert scores[0] == scores[1] and all(scores[0].values())


def test_reindex_rebuilds_an_old_stores_terms_and_statistics(run_cli, mem0_home):
    identity = resolve_identity()
    with open_store(identity.store_location) as store:
        caller = operations.Caller(store, identity, actor="test")
        for text in TEXTS:
            operations.add_memory(caller, text, infer=False)
    path = identity.store_location.path
    with sqlite3.connect(path) as conn:  # as an older release indexed it, and statistics off
        conn.execute("UPDATE memories SET terms = lower(memory)")
        conn.execute("UPDATE term_counts SET n = n + 7")
    before = run_cli("mem0-memories", "export").stdout
    done = run_cli("mem0-memories", "reindex")
    assert done.returncode == 0 and done.stdout.startswith("Reindexed the store: 5 memories with new search terms")
    with open_store(identity.store_location) as store:
        kept, wanted = counted(store)
        assert kept == wanted
    assert run_cli("mem0-memories", "export").stdout == before  # no memory changed
    found = run_cli("mem0-memories", "search", "deploying billing", "--json").stdout
    assert json.loads(found)["results"][0]["memory"].startswith("Deploying the billing worker")
