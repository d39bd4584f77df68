"""Numbered schema migrations of the PostgreSQL store (docs/stores.md), applied in order.

`mem0_schema` records the last one applied. They run in one transaction under an advisory
lock, so two processes opening a new database at once migrate it once. The schema holds
the same tables and columns as the SQLite store's (`store.sqlite.migrations`, all seven of its
migrations at once), with PostgreSQL's own means: `tsvector` + GIN for full-text search,
`bytea` vectors, PL/pgSQL triggers for the per-project counts.
"""

from __future__ import annotations

from collections.abc import Callable

from ...language.gloss import search_terms
from ...language.text import terms_text

MIGRATE_LOCK = 0x6D656D30_0001  # pg_advisory_xact_lock key while migrating

# The rows migration 2's triggers keep, computed from the tables at once (the migration itself,
# and a bulk load that ran with the triggers off).
TERMS_BACKFILL = """
    INSERT INTO memory_terms (term, memory, size)
        SELECT w, rowid, count(*) OVER (PARTITION BY rowid) FROM (SELECT DISTINCT rowid, w FROM memories,
            unnest(string_to_array(terms, ' ')) w WHERE w <> '') d
"""
VECTOR_COUNTS_BACKFILL = """
    INSERT INTO vector_counts (user_id, model, n) SELECT user_id, model, count(*) FROM vectors GROUP BY user_id, model
"""


def index_glosses(conn) -> None:
    """3: the SQLite store's migration 9 (`store.migrations.index_glosses`): the full-text terms
    of every memory whose text is not ASCII gain the English glosses of its words (the
    `memory_terms` trigger follows)."""
    rows = conn.execute("SELECT rowid, memory FROM memories WHERE memory ~ '[^[:ascii:]]'").fetchall()
    changed = [(terms_text(search_terms(text)), rowid) for rowid, text in rows]
    if changed:
        conn.cursor().executemany("UPDATE memories SET terms = %s WHERE rowid = %s", changed)


# BM25's statistics (`store.bm25`), as the SQLite store's migration 10 keeps them: per user and
# project, how many memories hold each term, and how many memories and terms in all.
STATISTICS_BACKFILL = """
    INSERT INTO term_counts (user_id, app_key, term, n)
        SELECT user_id, coalesce('=' || app_id, ''), w, count(*) FROM (SELECT DISTINCT rowid, user_id, app_id, w
            FROM memories, unnest(string_to_array(terms, ' ')) w WHERE w <> '') d GROUP BY 1, 2, 3;
    INSERT INTO scope_sizes (user_id, app_key, docs, terms)
        SELECT user_id, coalesce('=' || app_id, ''), count(*), coalesce(sum(array_length(array_remove(
            string_to_array(terms, ' '), ''), 1)), 0) FROM memories GROUP BY 1, 2
"""
STATISTICS = (
    """
    CREATE TABLE term_counts (
        user_id text COLLATE "C" NOT NULL,
        app_key text COLLATE "C" NOT NULL,
        term text COLLATE "C" NOT NULL,
        n integer NOT NULL,
        PRIMARY KEY (user_id, app_key, term)
    );
    CREATE INDEX term_counts_user_term ON term_counts (user_id, term);
    CREATE TABLE scope_sizes (
        user_id text COLLATE "C" NOT NULL,
        app_key text COLLATE "C" NOT NULL,
        docs integer NOT NULL,
        terms bigint NOT NULL,
        PRIMARY KEY (user_id, app_key)
    );
    """
    + STATISTICS_BACKFILL
    + """;
    CREATE FUNCTION mem0_bm25() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP IN ('DELETE', 'UPDATE') THEN
            UPDATE term_counts SET n = n - 1 WHERE user_id = OLD.user_id AND app_key = coalesce('=' || OLD.app_id, '')
                AND term = ANY(array_remove(string_to_array(OLD.terms, ' '), ''));
            DELETE FROM term_counts WHERE user_id = OLD.user_id AND app_key = coalesce('=' || OLD.app_id, '')
                AND n <= 0 AND term = ANY(array_remove(string_to_array(OLD.terms, ' '), ''));
            UPDATE scope_sizes SET docs = docs - 1,
                terms = terms - coalesce(array_length(array_remove(string_to_array(OLD.terms, ' '), ''), 1), 0)
                WHERE user_id = OLD.user_id AND app_key = coalesce('=' || OLD.app_id, '');
            DELETE FROM scope_sizes WHERE user_id = OLD.user_id AND app_key = coalesce('=' || OLD.app_id, '')
                AND docs <= 0;
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
            INSERT INTO term_counts (user_id, app_key, term, n)
                SELECT NEW.user_id, coalesce('=' || NEW.app_id, ''), w, 1
                FROM (SELECT DISTINCT w FROM unnest(string_to_array(NEW.terms, ' ')) w WHERE w <> '') d
                ON CONFLICT (user_id, app_key, term) DO UPDATE SET n = term_counts.n + 1;
            INSERT INTO scope_sizes (user_id, app_key, docs, terms)
                VALUES (NEW.user_id, coalesce('=' || NEW.app_id, ''), 1,
                        coalesce(array_length(array_remove(string_to_array(NEW.terms, ' '), ''), 1), 0))
                ON CONFLICT (user_id, app_key) DO UPDATE SET docs = scope_sizes.docs + 1,
                    terms = scope_sizes.terms + excluded.terms;
        END IF;
        RETURN NULL;
    END $$;
    CREATE TRIGGER bm25_change AFTER INSERT OR DELETE OR UPDATE OF terms, user_id, app_id ON memories
        FOR EACH ROW EXECUTE FUNCTION mem0_bm25();
    """
)


def reindex_terms(conn) -> int:
    """Every memory's search terms written again with the package's rules (`gloss.search_terms`;
    the postings and statistics triggers follow). Migration 4, and `mem0-memories reindex`."""
    rows = conn.execute("SELECT rowid, memory, terms FROM memories").fetchall()
    changed = [(fresh, rowid) for rowid, text, terms in rows if (fresh := terms_text(search_terms(text))) != terms]
    if changed:
        conn.cursor().executemany("UPDATE memories SET terms = %s WHERE rowid = %s", changed)
    return len(changed)


def index_stems(conn) -> None:
    """4: the SQLite store's migration 10 (`store.migrations.index_stems`): terms with stems, and
    BM25's statistics kept by a trigger."""
    reindex_terms(conn)
    conn.execute(STATISTICS)


def recount_statistics(conn) -> None:
    """BM25's statistics counted again from the memories (`mem0-memories reindex`)."""
    conn.execute("DELETE FROM term_counts")
    conn.execute("DELETE FROM scope_sizes")
    conn.execute(STATISTICS_BACKFILL)


# Text columns that are compared or ordered use the "C" collation: byte order, as SQLite.
MIGRATIONS: tuple[str | Callable[..., None], ...] = (
    # 1: everything the SQLite store has after its migration 7.
    """
    CREATE FUNCTION mem0_json(t text) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
    BEGIN
        RETURN t::jsonb;
    EXCEPTION WHEN others THEN
        RETURN NULL;  -- not valid JSON: the row has no metadata fields (docs/reads.md)
    END $$;

    CREATE FUNCTION mem0_num(j jsonb) RETURNS numeric LANGUAGE sql IMMUTABLE AS $$
        SELECT CASE jsonb_typeof(j) WHEN 'number' THEN (j #>> '{}')::numeric
            WHEN 'boolean' THEN CASE WHEN j = 'true'::jsonb THEN 1 ELSE 0 END END
    $$;
    CREATE FUNCTION mem0_text(j jsonb) RETURNS text LANGUAGE sql IMMUTABLE AS $$
        SELECT CASE jsonb_typeof(j) WHEN 'string' THEN j #>> '{}'
            WHEN 'array' THEN j::text WHEN 'object' THEN j::text END
    $$;
    CREATE FUNCTION mem0_present(j jsonb) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
        SELECT j IS NOT NULL AND jsonb_typeof(j) <> 'null'
    $$;
    CREATE FUNCTION mem0_order(j jsonb, v text) RETURNS integer LANGUAGE sql IMMUTABLE AS $$
        SELECT CASE WHEN mem0_text(j) IS NOT NULL
                    THEN CASE WHEN mem0_text(j) COLLATE "C" < v COLLATE "C" THEN -1
                              WHEN mem0_text(j) = v THEN 0 ELSE 1 END
                    WHEN mem0_num(j) IS NOT NULL THEN -1 END
    $$;
    CREATE FUNCTION mem0_order(j jsonb, v numeric) RETURNS integer LANGUAGE sql IMMUTABLE AS $$
        SELECT CASE WHEN mem0_num(j) IS NOT NULL THEN sign(mem0_num(j) - v)::integer
                    WHEN mem0_text(j) IS NOT NULL THEN 1 END
    $$;
    CREATE FUNCTION mem0_contains(j jsonb, v text, fold boolean) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
        SELECT CASE jsonb_typeof(j)
            WHEN 'array' THEN EXISTS (SELECT 1 FROM jsonb_array_elements(j) e WHERE
                CASE WHEN fold THEN lower(mem0_text(e)) = lower(v) ELSE mem0_text(e) = v END)
            ELSE CASE WHEN fold THEN strpos(lower(j #>> '{}'), lower(v)) > 0
                      ELSE strpos(j #>> '{}', v) > 0 END END
    $$;
    CREATE FUNCTION instr(haystack text, needle text) RETURNS integer LANGUAGE sql IMMUTABLE AS $$
        SELECT strpos(haystack, needle)
    $$;

    CREATE TABLE memories (
        rowid bigserial UNIQUE,
        id text COLLATE "C" PRIMARY KEY,
        user_id text COLLATE "C" NOT NULL,
        app_id text COLLATE "C",
        agent_id text COLLATE "C",
        run_id text COLLATE "C",
        memory text COLLATE "C" NOT NULL,
        text_hash text COLLATE "C" NOT NULL,
        metadata text NOT NULL DEFAULT '{}',
        meta jsonb GENERATED ALWAYS AS (mem0_json(metadata)) STORED,
        type text NOT NULL DEFAULT 'unknown',
        created_at text COLLATE "C" NOT NULL,
        created_us bigint NOT NULL,
        updated_at text COLLATE "C" NOT NULL,
        updated_us bigint NOT NULL,
        lifecycle_state text COLLATE "C" NOT NULL DEFAULT 'active'
            CHECK (lifecycle_state IN ('active', 'merged', 'superseded')),
        replacement_memory_id text COLLATE "C",
        source_memory_ids text NOT NULL DEFAULT '[]',
        immutable integer NOT NULL DEFAULT 0,
        version integer NOT NULL DEFAULT 1,
        terms text NOT NULL DEFAULT '',
        terms_vector tsvector GENERATED ALWAYS AS (array_to_tsvector(array_remove(string_to_array(terms, ' '), ''))) STORED,
        features text
    );
    CREATE INDEX memories_user_order ON memories (user_id, created_us, id);
    CREATE INDEX memories_app_page ON memories (user_id, app_id, created_us, id, lifecycle_state);
    CREATE INDEX memories_lifecycle ON memories (user_id, app_id, lifecycle_state);
    CREATE INDEX memories_text_hash ON memories (user_id, text_hash);
    CREATE INDEX memories_terms ON memories USING gin (terms_vector);

    CREATE TABLE memory_counts (
        user_id text COLLATE "C" NOT NULL,
        app_key text COLLATE "C" NOT NULL,
        lifecycle_state text COLLATE "C" NOT NULL,
        n integer NOT NULL,
        PRIMARY KEY (user_id, app_key, lifecycle_state)
    );
    CREATE FUNCTION mem0_count() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP IN ('DELETE', 'UPDATE') THEN
            UPDATE memory_counts SET n = n - 1 WHERE user_id = OLD.user_id
                AND app_key = coalesce('=' || OLD.app_id, '') AND lifecycle_state = OLD.lifecycle_state;
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
            INSERT INTO memory_counts (user_id, app_key, lifecycle_state, n)
                VALUES (NEW.user_id, coalesce('=' || NEW.app_id, ''), NEW.lifecycle_state, 1)
                ON CONFLICT (user_id, app_key, lifecycle_state) DO UPDATE SET n = memory_counts.n + 1;
        END IF;
        RETURN NULL;
    END $$;
    CREATE TRIGGER memory_counts_change AFTER INSERT OR DELETE OR UPDATE OF user_id, app_id, lifecycle_state
        ON memories FOR EACH ROW EXECUTE FUNCTION mem0_count();

    CREATE TABLE history (
        seq bigserial PRIMARY KEY,
        memory_id text COLLATE "C" NOT NULL,
        user_id text COLLATE "C" NOT NULL,
        event text NOT NULL,
        actor text NOT NULL,
        at text COLLATE "C" NOT NULL,
        before text,
        after text,
        dream_run_id text COLLATE "C"
    );
    CREATE INDEX history_memory ON history (user_id, memory_id, seq);
    CREATE INDEX history_dream_run ON history (dream_run_id, seq) WHERE dream_run_id IS NOT NULL;

    CREATE TABLE dream_runs (
        run_id text COLLATE "C" PRIMARY KEY,
        user_id text COLLATE "C" NOT NULL,
        app_id text COLLATE "C",
        started_at text COLLATE "C" NOT NULL,
        finished_at text,
        status text NOT NULL CHECK (status IN ('applying', 'done', 'rolled_back')),
        plan text NOT NULL,
        resolutions text NOT NULL DEFAULT '{}',
        mode text,
        merged integer NOT NULL DEFAULT 0,
        superseded integer NOT NULL DEFAULT 0,
        pruned integer NOT NULL DEFAULT 0,
        resolved integer NOT NULL DEFAULT 0,
        not_applied integer NOT NULL DEFAULT 0,
        undone_at text
    );
    CREATE INDEX dream_runs_open ON dream_runs (user_id, app_id, status);
    CREATE TABLE dream_steps (
        run_id text COLLATE "C" NOT NULL REFERENCES dream_runs (run_id),
        step integer NOT NULL,
        kind text NOT NULL,
        outcome text NOT NULL,
        detail text NOT NULL DEFAULT '',
        at text NOT NULL,
        PRIMARY KEY (run_id, step)
    );

    CREATE TABLE vectors (
        seq bigserial PRIMARY KEY,
        id text COLLATE "C" NOT NULL UNIQUE,
        user_id text COLLATE "C" NOT NULL,
        model text COLLATE "C" NOT NULL,
        text_hash text COLLATE "C" NOT NULL,
        vector bytea NOT NULL
    );
    CREATE INDEX vectors_user_model ON vectors (user_id, model, seq);
    CREATE FUNCTION mem0_drop_vector() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        DELETE FROM vectors WHERE id = OLD.id;
        RETURN NULL;
    END $$;
    CREATE TRIGGER vectors_memory_delete AFTER DELETE ON memories
        FOR EACH ROW EXECUTE FUNCTION mem0_drop_vector();
    CREATE TRIGGER vectors_memory_text AFTER UPDATE OF text_hash ON memories
        FOR EACH ROW WHEN (NEW.text_hash IS DISTINCT FROM OLD.text_hash) EXECUTE FUNCTION mem0_drop_vector();
    """,
    # 2: lexical search's word postings, and the vector counts, both kept by triggers
    # (docs/stores.md, "Speed at 100k"). `memory_terms` holds one row per (word, memory) with
    # the memory's word count, so search ranks its candidates from an index-only scan of the
    # query's words without reading the wide `memories` rows; `vector_counts` is the SQLite
    # store's (its migration 8): the in-memory vector index asks it instead of counting rows.
    """
    CREATE TABLE memory_terms (
        term text COLLATE "C" NOT NULL,
        memory bigint NOT NULL,
        size integer NOT NULL,
        PRIMARY KEY (term, memory) INCLUDE (size)
    );
    CREATE FUNCTION mem0_terms() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP IN ('DELETE', 'UPDATE') THEN
            DELETE FROM memory_terms WHERE term = ANY(string_to_array(OLD.terms, ' ')) AND memory = OLD.rowid;
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
            INSERT INTO memory_terms (term, memory, size)
                SELECT w, NEW.rowid, count(*) OVER () FROM (SELECT DISTINCT w FROM
                    unnest(string_to_array(NEW.terms, ' ')) w WHERE w <> '') d;
        END IF;
        RETURN NULL;
    END $$;
    CREATE TRIGGER memory_terms_change AFTER INSERT OR DELETE OR UPDATE OF terms ON memories
        FOR EACH ROW EXECUTE FUNCTION mem0_terms();
    """
    + TERMS_BACKFILL
    + """;
    CREATE TABLE vector_counts (
        user_id text COLLATE "C" NOT NULL,
        model text COLLATE "C" NOT NULL,
        n integer NOT NULL,
        PRIMARY KEY (user_id, model)
    );
    """
    + VECTOR_COUNTS_BACKFILL
    + """;
    CREATE FUNCTION mem0_count_vector() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP IN ('DELETE', 'UPDATE') THEN
            UPDATE vector_counts SET n = n - 1 WHERE user_id = OLD.user_id AND model = OLD.model;
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
            INSERT INTO vector_counts (user_id, model, n) VALUES (NEW.user_id, NEW.model, 1)
                ON CONFLICT (user_id, model) DO UPDATE SET n = vector_counts.n + 1;
        END IF;
        RETURN NULL;
    END $$;
    CREATE TRIGGER vector_counts_change AFTER INSERT OR DELETE OR UPDATE OF user_id, model ON vectors
        FOR EACH ROW EXECUTE FUNCTION mem0_count_vector();
    """,
    index_glosses,
    index_stems,
)


def migrate(conn) -> None:
    """Bring the schema up to date (`conn`: a psycopg connection in autocommit mode)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATE_LOCK,))
        conn.execute("CREATE TABLE IF NOT EXISTS mem0_schema (version integer NOT NULL)")
        row = conn.execute("SELECT max(version) FROM mem0_schema").fetchone()
        current = row[0] or 0
        for number, script in enumerate(MIGRATIONS[current:], start=current + 1):
            if callable(script):
                script(conn)
            else:
                conn.execute(script)
            conn.execute("INSERT INTO mem0_schema (version) VALUES (%s)", (number,))
