"""PostgreSQL lexical search from the word postings (docs/stores.md, "Speed at 100k"): the
`memory_terms` rows the triggers keep always match the memories' words, a database migrated
from before them gets them, and a store opened read-only on such a database still searches.
A real PostgreSQL server (`pg_server`)."""

from __future__ import annotations

import psycopg
from mem0_plugin import operations
from mem0_plugin.identity import Identity
from mem0_plugin.store import open_store
from mem0_plugin.store.postgres import migrations as migrations

TEXTS = [
    "The billing service uses PostgreSQL 15 in production",
    "Billing retries failed payments three times",
    "The search service caches results for 60 seconds",
    "Deploy the billing worker with make deploy-billing",
    "PostgreSQL connection pool holds 8 connections",
]


def caller(url: str, tmp_path, *, readonly: bool = False) -> operations.Caller:
    identity = Identity(
        user_id="alice", project_id="acme-api", branch="main", home=tmp_path, store_url=url, cwd=tmp_path
    )
    return operations.Caller(open_store(url, readonly=readonly), identity, actor="test")


def postings(url: str) -> tuple[list[tuple], list[tuple]]:
    """(the rows of memory_terms, the rows they should be), each sorted."""
    with psycopg.connect(url) as conn:
        kept = conn.execute("SELECT term, memory, size FROM memory_terms ORDER BY 1, 2").fetchall()
        words = conn.execute("SELECT rowid, terms FROM memories").fetchall()
    wanted = sorted((w, rowid, len(set(terms.split()))) for rowid, terms in words for w in set(terms.split()))
    return kept, wanted


def search(c: operations.Caller, query: str) -> list[tuple[str, float]]:
    return [(r["id"], r["score"]) for r in operations.search_memories(c, query)["results"]]


def test_postings_follow_every_write(postgres_url, tmp_path):
    c = caller(postgres_url, tmp_path)
    ids = [operations.add_memory(c, text, infer=False)["results"][0]["id"] for text in TEXTS]
    operations.update_memory(c, ids[0], "The billing service runs on PostgreSQL 16")
    operations.delete_memory(c, ids[2])
    kept, wanted = postings(postgres_url)
    assert kept == wanted and len(kept) > 15
    assert search(c, "billing postgresql")[0][0] == ids[0]
    c.store.close()


def test_a_database_from_before_the_postings_searches_alike_and_is_migrated(postgres_server, tmp_path, monkeypatch):
    url = postgres_server.url("mem0_before_postings")
    postgres_server._admin("DROP DATABASE IF EXISTS mem0_before_postings", "CREATE DATABASE mem0_before_postings")
    try:
        monkeypatch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:1])
        old = caller(url, tmp_path)
        for text in TEXTS:
            operations.add_memory(old, text, infer=False)
        before = {q: search(old, q) for q in ("billing postgresql", "service", "deploy worker")}
        old.store.close()
        monkeypatch.undo()
        readonly = caller(url, tmp_path, readonly=True)  # no migration: the scan of the GIN index
        assert {q: search(readonly, q) for q in before} == before
        readonly.store.close()
        new = caller(url, tmp_path)  # migrated: postings, stems and BM25's statistics
        text_of = {r["id"]: r["memory"] for r in operations.get_memories(new)["results"]}
        migrated = {q: [(text_of[i], s) for i, s in search(new, q)] for q in before}
        new.store.close()
        assert {q: sorted(text_of[i] for i, _ in found) for q, found in before.items()} == {
            q: sorted(t for t, _ in found) for q, found in migrated.items()
        }  # the same memories found, ranked by BM25 now
        kept, wanted = postings(url)
        assert kept == wanted
        fresh_url = postgres_server.url("mem0_before_postings_fresh")
        postgres_server._admin(
            "DROP DATABASE IF EXISTS mem0_before_postings_fresh", "CREATE DATABASE mem0_before_postings_fresh"
        )
        fresh = caller(fresh_url, tmp_path)  # the same memories written to a new database
        for text in TEXTS:
            operations.add_memory(fresh, text, infer=False)
        text_of = {r["id"]: r["memory"] for r in operations.get_memories(fresh)["results"]}
        assert {q: [(text_of[i], s) for i, s in search(fresh, q)] for q in before} == migrated
        fresh.store.close()
        postgres_server.drop_database(fresh_url)
    finally:
        postgres_server.drop_database(url)


def test_a_database_from_before_the_glosses_indexes_them_when_opened(postgres_server, tmp_path, monkeypatch):
    url = postgres_server.url("mem0_before_glosses")
    postgres_server._admin("DROP DATABASE IF EXISTS mem0_before_glosses", "CREATE DATABASE mem0_before_glosses")
    russian = "Локальный Redis слушает порт 6380."
    try:
        old = caller(url, tmp_path)
        ids = [operations.add_memory(old, text, infer=False)["results"][0]["id"] for text in (*TEXTS, russian)]
        with psycopg.connect(url, autocommit=True) as conn:  # as migration 2 left it: no glosses
            conn.execute("UPDATE memories SET terms = %s WHERE id = %s", ("6380 redis локальный порт слушает", ids[-1]))
            conn.execute("DELETE FROM mem0_schema WHERE version >= 3")
            conn.execute("DROP TRIGGER bm25_change ON memories")
            conn.execute("DROP FUNCTION mem0_bm25()")
            conn.execute("DROP TABLE term_counts, scope_sizes")
        assert search(old, "which local port does it listen on") == []
        old.store.close()
        new = caller(url, tmp_path)  # migration 3 runs
        assert search(new, "which local port does it listen on")[0][0] == ids[-1]
        assert search(new, "на каком порту слушает redis")[0][0] == ids[-1]
        new.store.close()
        kept, wanted = postings(url)
        assert kept == wanted
    finally:
        postgres_server.drop_database(url)
