"""Numbered schema migrations, applied in order; `PRAGMA user_version` records the last.

A migration is an SQL script, or a function of the connection for one that must read
text with the package's own rules (the tokenizer of `text`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from ...language.gloss import search_terms
from ...language.text import has_unspaced, significant_words, terms_text

Migration = str | Callable[[sqlite3.Connection], None]


def _retokenize_unspaced(conn: sqlite3.Connection) -> None:
    """5: Chinese and Japanese text is indexed by character bigrams (`text.words`): rewrite the
    full-text terms of every row holding such text, and drop its stored features (the
    `features` cache, read from the old words) so they are read again."""
    rows = conn.execute("SELECT rowid, memory FROM memories").fetchall()
    changed = [
        (terms_text(significant_words(text)), rowid)
        for rowid, text in rows
        if isinstance(text, str) and has_unspaced(text)
    ]
    conn.executemany("UPDATE memories SET terms = ?, features = NULL WHERE rowid = ?", changed)


def index_glosses(conn: sqlite3.Connection) -> None:
    """9: a memory is searched by the English glosses of its Russian, Chinese and Japanese
    developer terms too (`gloss`, docs/search.md "Across languages"): rewrite the full-text
    terms of every row whose text is not ASCII. Dream's stored features are not touched.
    (A later edit of the glossary is a migration running this again.)"""
    rows = conn.execute("SELECT rowid, memory FROM memories").fetchall()
    changed = [
        (terms_text(search_terms(text)), rowid) for rowid, text in rows if isinstance(text, str) and not text.isascii()
    ]
    conn.executemany("UPDATE memories SET terms = ? WHERE rowid = ?", changed)


# A memory's search terms as a JSON array, for the triggers below: terms are words of letters
# and digits (`gloss.search_terms`), never a quote or a backslash; anything else counts nothing.
_TERM_ARRAY = """(CASE WHEN json_valid('["' || replace({terms}, ' ', '","') || '"]')
    THEN '["' || replace({terms}, ' ', '","') || '"]' ELSE '[]' END)"""
_APP_KEY = "coalesce('=' || {row}.app_id, '')"

# The statistics BM25 reads (`store.bm25`), per user and project: how many memories hold each
# term, and how many memories and terms in all; kept by triggers in the same transaction as
# every change of a memory's terms, user or project. A count that reaches 0 is deleted: a term
# that no memory holds any more leaves no trace (docs/forget.md, "--purge").
STATISTICS_TABLES = """
    CREATE TABLE term_counts (
        user_id TEXT NOT NULL,
        app_key TEXT NOT NULL,
        term TEXT NOT NULL,
        n INTEGER NOT NULL,
        PRIMARY KEY (user_id, app_key, term)
    ) WITHOUT ROWID;
    CREATE TABLE scope_sizes (
        user_id TEXT NOT NULL,
        app_key TEXT NOT NULL,
        docs INTEGER NOT NULL,
        terms INTEGER NOT NULL,
        PRIMARY KEY (user_id, app_key)
    ) WITHOUT ROWID;
    CREATE INDEX term_counts_user_term ON term_counts (user_id, term);
"""
STATISTICS_BACKFILL = f"""
    INSERT INTO term_counts (user_id, app_key, term, n)
        SELECT user_id, {_APP_KEY.format(row="memories")}, value, count(*)
        FROM memories, json_each({_TERM_ARRAY.format(terms="memories.terms")}) WHERE value <> ''
        GROUP BY 1, 2, 3;
    INSERT INTO scope_sizes (user_id, app_key, docs, terms)
        SELECT user_id, {_APP_KEY.format(row="memories")}, count(*),
            sum(CASE WHEN terms = '' THEN 0 ELSE length(terms) - length(replace(terms, ' ', '')) + 1 END)
        FROM memories GROUP BY 1, 2;
"""


def _counted(row: str) -> str:
    """The statements that count the terms of `row` (new or old) into the statistics."""
    return f"""
        INSERT INTO term_counts (user_id, app_key, term, n)
            SELECT {row}.user_id, {_APP_KEY.format(row=row)}, value, 1
            FROM json_each({_TERM_ARRAY.format(terms=row + ".terms")}) WHERE value <> ''
            ON CONFLICT (user_id, app_key, term) DO UPDATE SET n = n + 1;
        INSERT INTO scope_sizes (user_id, app_key, docs, terms)
            VALUES ({row}.user_id, {_APP_KEY.format(row=row)}, 1,
                    CASE WHEN {row}.terms = '' THEN 0 ELSE length({row}.terms) - length(replace({row}.terms, ' ', '')) + 1 END)
            ON CONFLICT (user_id, app_key) DO UPDATE SET docs = docs + 1, terms = terms + excluded.terms;"""


def _uncounted(row: str) -> str:
    """The statements that take the terms of `row` out of the statistics."""
    scope = f"user_id = {row}.user_id AND app_key = {_APP_KEY.format(row=row)}"
    terms = f"(SELECT value FROM json_each({_TERM_ARRAY.format(terms=row + '.terms')}))"
    return f"""
        UPDATE term_counts SET n = n - 1 WHERE {scope}
            AND term IN {terms};
        DELETE FROM term_counts WHERE {scope} AND n <= 0
            AND term IN {terms};
        UPDATE scope_sizes SET docs = docs - 1, terms = terms -
            (CASE WHEN {row}.terms = '' THEN 0 ELSE length({row}.terms) - length(replace({row}.terms, ' ', '')) + 1 END)
            WHERE {scope};
        DELETE FROM scope_sizes WHERE {scope} AND docs <= 0;"""


STATISTICS_TRIGGERS = f"""
    CREATE TRIGGER bm25_insert AFTER INSERT ON memories BEGIN{_counted("new")}
    END;
    CREATE TRIGGER bm25_delete AFTER DELETE ON memories BEGIN{_uncounted("old")}
    END;
    CREATE TRIGGER bm25_update AFTER UPDATE OF terms, user_id, app_id ON memories
        WHEN new.terms IS NOT old.terms OR new.user_id IS NOT old.user_id OR new.app_id IS NOT old.app_id BEGIN{_uncounted("old")}{_counted("new")}
    END;
"""


def reindex_terms(conn: sqlite3.Connection) -> int:
    """Write every memory's search terms again with the package's rules (`gloss.search_terms`)
    and rebuild the full-text index from them; the triggers keep BM25's statistics. What
    migration 10 does and `mem0-memories reindex` does again. Returns how many rows changed."""
    rows = conn.execute("SELECT rowid, memory, terms FROM memories").fetchall()
    changed = [
        (fresh, rowid)
        for rowid, text, terms in rows
        if isinstance(text, str) and (fresh := terms_text(search_terms(text))) != terms
    ]
    conn.execute("DROP TRIGGER IF EXISTS memories_fts_update")  # one rebuild instead of one update per row
    conn.executemany("UPDATE memories SET terms = ? WHERE rowid = ?", changed)
    conn.execute(MEMORIES_FTS_UPDATE)
    conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('rebuild')")
    return len(changed)


def index_stems(conn: sqlite3.Connection) -> None:
    """10: search by BM25 (`store.bm25`): every memory's terms written again with stems
    (`stems`), and the per-project statistics BM25 reads, kept by triggers."""
    reindex_terms(conn)
    for statement in _statements(STATISTICS_TABLES + STATISTICS_BACKFILL + STATISTICS_TRIGGERS):
        conn.execute(statement)


def recount_statistics(conn: sqlite3.Connection) -> None:
    """BM25's statistics counted again from the memories (`mem0-memories reindex`)."""
    conn.execute("DELETE FROM term_counts")
    conn.execute("DELETE FROM scope_sizes")
    for statement in _statements(STATISTICS_BACKFILL):
        conn.execute(statement)


MEMORIES_FTS_UPDATE = """
    CREATE TRIGGER memories_fts_update AFTER UPDATE OF terms ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, terms) VALUES ('delete', old.rowid, old.terms);
        INSERT INTO memories_fts (rowid, terms) VALUES (new.rowid, new.terms);
    END"""


MIGRATIONS: tuple[Migration, ...] = (
    # 1: memories with a column per record field, the full-text index, history, the dream journal.
    """
    CREATE TABLE memories (
        id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL,
        app_id TEXT,
        agent_id TEXT,
        run_id TEXT,
        memory TEXT NOT NULL,
        text_hash TEXT NOT NULL,
        metadata TEXT NOT NULL DEFAULT '{}',
        type TEXT NOT NULL DEFAULT 'unknown',
        created_at TEXT NOT NULL,
        created_us INTEGER NOT NULL,
        updated_at TEXT NOT NULL,
        updated_us INTEGER NOT NULL,
        lifecycle_state TEXT NOT NULL DEFAULT 'active'
            CHECK (lifecycle_state IN ('active', 'merged', 'superseded')),
        replacement_memory_id TEXT,
        source_memory_ids TEXT NOT NULL DEFAULT '[]',
        immutable INTEGER NOT NULL DEFAULT 0,
        version INTEGER NOT NULL DEFAULT 1,
        terms TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX memories_app_order ON memories (user_id, app_id, created_us, id);
    CREATE INDEX memories_user_order ON memories (user_id, created_us, id);
    CREATE INDEX memories_lifecycle ON memories (user_id, app_id, lifecycle_state);
    CREATE INDEX memories_text_hash ON memories (user_id, text_hash);
    CREATE VIRTUAL TABLE memories_fts USING fts5 (terms, content='memories', content_rowid='rowid');
    CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts (rowid, terms) VALUES (new.rowid, new.terms);
    END;
    CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, terms) VALUES ('delete', old.rowid, old.terms);
    END;
    CREATE TRIGGER memories_fts_update AFTER UPDATE OF terms ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, terms) VALUES ('delete', old.rowid, old.terms);
        INSERT INTO memories_fts (rowid, terms) VALUES (new.rowid, new.terms);
    END;
    CREATE TABLE history (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        memory_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        event TEXT NOT NULL,
        actor TEXT NOT NULL,
        at TEXT NOT NULL,
        before TEXT,
        after TEXT
    );
    CREATE INDEX history_memory ON history (user_id, memory_id, seq);
    CREATE TABLE dream_runs (
        run_id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL,
        app_id TEXT,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        status TEXT NOT NULL CHECK (status IN ('applying', 'done', 'rolled_back')),
        plan TEXT NOT NULL,
        resolutions TEXT NOT NULL DEFAULT '{}'
    );
    CREATE INDEX dream_runs_open ON dream_runs (user_id, app_id, status);
    CREATE TABLE dream_steps (
        run_id TEXT NOT NULL REFERENCES dream_runs (run_id),
        step INTEGER NOT NULL,
        kind TEXT NOT NULL,
        outcome TEXT NOT NULL,
        detail TEXT NOT NULL DEFAULT '',
        at TEXT NOT NULL,
        PRIMARY KEY (run_id, step)
    );
    """,
    # 2: for pages at 100k memories. The paging index also holds lifecycle_state, so OFFSET skips
    # rows inside the index without reading them; memory_counts keeps the count per (user,
    # project, state) in the same transaction as every change, so a page's count reads no rows.
    # app_key is '=' || app_id, or '' for no project (NULL cannot be part of a unique key).
    """
    CREATE INDEX memories_app_page ON memories (user_id, app_id, created_us, id, lifecycle_state);
    DROP INDEX memories_app_order;
    CREATE TABLE memory_counts (
        user_id TEXT NOT NULL,
        app_key TEXT NOT NULL,
        lifecycle_state TEXT NOT NULL,
        n INTEGER NOT NULL,
        PRIMARY KEY (user_id, app_key, lifecycle_state)
    ) WITHOUT ROWID;
    INSERT INTO memory_counts (user_id, app_key, lifecycle_state, n)
        SELECT user_id, coalesce('=' || app_id, ''), lifecycle_state, count(*) FROM memories GROUP BY 1, 2, 3;
    CREATE TRIGGER memory_counts_insert AFTER INSERT ON memories BEGIN
        INSERT INTO memory_counts (user_id, app_key, lifecycle_state, n)
            VALUES (new.user_id, coalesce('=' || new.app_id, ''), new.lifecycle_state, 1)
            ON CONFLICT (user_id, app_key, lifecycle_state) DO UPDATE SET n = n + 1;
    END;
    CREATE TRIGGER memory_counts_delete AFTER DELETE ON memories BEGIN
        UPDATE memory_counts SET n = n - 1 WHERE user_id = old.user_id
            AND app_key = coalesce('=' || old.app_id, '') AND lifecycle_state = old.lifecycle_state;
    END;
    CREATE TRIGGER memory_counts_update AFTER UPDATE OF user_id, app_id, lifecycle_state ON memories BEGIN
        UPDATE memory_counts SET n = n - 1 WHERE user_id = old.user_id
            AND app_key = coalesce('=' || old.app_id, '') AND lifecycle_state = old.lifecycle_state;
        INSERT INTO memory_counts (user_id, app_key, lifecycle_state, n)
            VALUES (new.user_id, coalesce('=' || new.app_id, ''), new.lifecycle_state, 1)
            ON CONFLICT (user_id, app_key, lifecycle_state) DO UPDATE SET n = n + 1;
    END;
    """,
    # 3: the stored features of each text (`stored_features`); NULL until the text is
    # next written or dream --auto fills it in (a cache: dream reads the text when it is missing).
    """
    ALTER TABLE memories ADD COLUMN features TEXT;
    """,
    # 4: one embedding per memory (docs/embeddings.md): the model that made it, the text hash it
    # was made from, float16 values. seq grows with every vector written, so a reader can tell
    # what is new since it last looked; a vector goes with its memory's text (the triggers).
    """
    CREATE TABLE vectors (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        user_id TEXT NOT NULL,
        model TEXT NOT NULL,
        text_hash TEXT NOT NULL,
        vector BLOB NOT NULL
    );
    CREATE INDEX vectors_user_model ON vectors (user_id, model, seq);
    CREATE TRIGGER vectors_memory_delete AFTER DELETE ON memories BEGIN
        DELETE FROM vectors WHERE id = old.id;
    END;
    CREATE TRIGGER vectors_memory_text AFTER UPDATE OF text_hash ON memories
        WHEN new.text_hash IS NOT old.text_hash BEGIN
        DELETE FROM vectors WHERE id = old.id;
    END;
    """,
    _retokenize_unspaced,
    # 6: runs and undo (docs/dream.md, "Runs and undo"). Each run records its mode and what it
    # applied (counted from its journal steps for the runs before this), and when it was undone;
    # each history row a run wrote names the run. Rows written before this are matched to their
    # run by time: runs never overlap (they hold the store's apply lock), and only dream's writes
    # have the actor mem0-dream.
    """
    ALTER TABLE dream_runs ADD COLUMN mode TEXT;
    ALTER TABLE dream_runs ADD COLUMN merged INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE dream_runs ADD COLUMN pruned INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE dream_runs ADD COLUMN resolved INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE dream_runs ADD COLUMN not_applied INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE dream_runs ADD COLUMN undone_at TEXT;
    UPDATE dream_runs SET
        merged = (SELECT count(*) FROM dream_steps s WHERE s.run_id = dream_runs.run_id
                  AND s.kind = 'merge' AND s.outcome = 'applied'),
        pruned = (SELECT count(*) FROM dream_steps s WHERE s.run_id = dream_runs.run_id
                  AND s.kind = 'prune' AND s.outcome = 'applied'),
        resolved = (SELECT count(*) FROM dream_steps s WHERE s.run_id = dream_runs.run_id
                    AND s.kind = 'resolve' AND s.outcome = 'applied'),
        not_applied = (SELECT count(*) FROM dream_steps s WHERE s.run_id = dream_runs.run_id
                       AND s.outcome <> 'applied');
    ALTER TABLE history ADD COLUMN dream_run_id TEXT;
    UPDATE history SET dream_run_id = (
        SELECT r.run_id FROM dream_runs r WHERE r.user_id = history.user_id AND r.status = 'done'
        AND history.at >= r.started_at AND history.at <= r.finished_at ORDER BY r.started_at LIMIT 1)
        WHERE actor = 'mem0-dream' AND event IN ('ADD', 'MERGE', 'SUPERSEDE', 'PRUNE');
    CREATE INDEX history_dream_run ON history (dream_run_id, seq) WHERE dream_run_id IS NOT NULL;
    """,
    # 7: supersedes (docs/dream.md, "Runs and undo"): each run also counts the supersedes it
    # applied (from its journal steps for the runs before this).
    """
    ALTER TABLE dream_runs ADD COLUMN superseded INTEGER NOT NULL DEFAULT 0;
    UPDATE dream_runs SET superseded = (SELECT count(*) FROM dream_steps s WHERE s.run_id = dream_runs.run_id
                                        AND s.kind = 'supersede' AND s.outcome = 'applied');
    """,
    # 8: how many vectors each (user, model) has, kept by triggers (docs/embeddings.md): the
    # in-memory vector index checks it before each search instead of counting the rows.
    """
    CREATE TABLE vector_counts (
        user_id TEXT NOT NULL,
        model TEXT NOT NULL,
        n INTEGER NOT NULL,
        PRIMARY KEY (user_id, model)
    ) WITHOUT ROWID;
    INSERT INTO vector_counts (user_id, model, n) SELECT user_id, model, count(*) FROM vectors GROUP BY user_id, model;
    CREATE TRIGGER vector_counts_insert AFTER INSERT ON vectors BEGIN
        INSERT INTO vector_counts (user_id, model, n) VALUES (new.user_id, new.model, 1)
            ON CONFLICT (user_id, model) DO UPDATE SET n = n + 1;
    END;
    CREATE TRIGGER vector_counts_delete AFTER DELETE ON vectors BEGIN
        UPDATE vector_counts SET n = n - 1 WHERE user_id = old.user_id AND model = old.model;
    END;
    CREATE TRIGGER vector_counts_update AFTER UPDATE OF user_id, model ON vectors
        WHEN new.user_id IS NOT old.user_id OR new.model IS NOT old.model BEGIN
        UPDATE vector_counts SET n = n - 1 WHERE user_id = old.user_id AND model = old.model;
        INSERT INTO vector_counts (user_id, model, n) VALUES (new.user_id, new.model, 1)
            ON CONFLICT (user_id, model) DO UPDATE SET n = n + 1;
    END;
    """,
    index_glosses,
    index_stems,
)


def migrate(conn: sqlite3.Connection) -> None:
    """Bring the schema up to date inside one immediate transaction (safe to race)."""
    if conn.execute("PRAGMA user_version").fetchone()[0] >= len(MIGRATIONS):
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        current = conn.execute("PRAGMA user_version").fetchone()[0]
        for number, script in enumerate(MIGRATIONS[current:], start=current + 1):
            if callable(script):
                script(conn)
                conn.execute(f"PRAGMA user_version = {number:d}")
                continue
            for statement in _statements(script):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number:d}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _statements(script: str) -> list[str]:
    """Split a script on complete statements (trigger bodies hold semicolons)."""
    statements, buffer = [], ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements
