"""Search across languages (docs/search.md, "Across languages"): the glossary's English glosses
of Russian, Chinese and Japanese developer terms, on a memory's indexed terms and on a query,
with a real SQLite store (and the migration that indexes an older store's memories again)."""

from __future__ import annotations

import json
import re
import sqlite3
from importlib import resources

import pytest
from mem0_plugin import operations
from mem0_plugin.identity import Identity
from mem0_plugin.language import gloss, stems
from mem0_plugin.language.text import has_unspaced, significant_words
from mem0_plugin.store import SqliteStore, open_store
from mem0_plugin.store.sqlite.migrations import MIGRATIONS

SMALL = gloss.read_glossary(
    {
        "ru": {
            "порт": "port",
            "база данных": "database",
            "локальный": "local",
            "слушать": "listen",
            "данные": "data",
            "использовать": "use",
        },
        "zh": {"端口": "port", "数据库": "database", "数据": "data", "本地": "local"},
        "ja": {"ポート": "port", "データベース": "database"},
    }
)


def test_russian_words_are_matched_in_any_form_and_phrases_as_consecutive_words():
    assert gloss.english_of("Локальный Postgres слушает порт 5433", SMALL) == ["local", "listen", "port"]
    assert gloss.english_of("Порту базы данных нужен пароль", SMALL) == ["port", "database"]
    assert gloss.english_of("Данные в базе", SMALL) == ["data"]  # "база" alone is not the phrase
    assert gloss.english_of("Используем базу данных; использовали порт", SMALL) == ["use", "database", "port"]


def test_chinese_and_japanese_terms_are_matched_longest_first():
    assert gloss.english_of("本地数据库端口是 5433", SMALL) == ["local", "database", "port"]
    assert gloss.english_of("数据很大", SMALL) == ["data"]
    assert gloss.english_of("データベースのポートは5433", SMALL) == ["database", "port"]


def test_english_text_has_nothing_to_gloss():
    assert gloss.english_of("Local Postgres listens on port 5433", SMALL) == []
    assert gloss.glosses("Local Postgres listens on port 5433") == frozenset()
    text = "Use PostgreSQL for the ledger, not DynamoDB."
    assert gloss.search_terms(text) == significant_words(text)


def test_a_query_is_rendered_in_english_for_the_model():
    assert gloss.english_rendering("какой порт у базы данных Postgres 16?") == "Postgres 16 port database"
    assert gloss.english_rendering("which port?") is None


def test_the_search_terms_of_a_text_add_its_glosses_to_its_own_words():
    terms = gloss.search_terms("Локальный Postgres слушает порт 5433")
    assert {"postgr", "5433", "port", "local", "listen"} <= terms  # stems: docs/search.md
    assert {"порт", "слуша"} <= terms  # the Russian words by their stems: Russian questions match them


def test_the_packaged_glossary_is_well_formed():
    raw = json.loads(resources.files("mem0_plugin").joinpath("data/glossary.json").read_text(encoding="utf-8"))
    assert set(raw) == {"about", "ru", "zh", "ja"}
    for language in ("ru", "zh", "ja"):
        assert len(raw[language]) >= 300, language
        for term, english in raw[language].items():
            assert re.fullmatch(r"[a-z0-9][a-z0-9 -]*", english), (term, english)
            if language == "ru":
                assert term == term.lower() and "ё" not in term and stems.russian_stems(term), term
                assert len(term.split()) <= 2, term
            else:
                assert len(term) >= 2 and has_unspaced(term), term
    loaded = gloss.glossary()
    assert len(loaded.russian) >= 0.9 * len(raw["ru"])  # a few lemmas may share a stem
    assert len(loaded.unspaced) == len(raw["zh"].keys() | raw["ja"].keys())


def _caller(store, tmp_path) -> operations.Caller:
    url = f"sqlite:///{tmp_path}/store.sqlite3"
    identity = Identity(user_id="alice", project_id="acme", branch="main", home=tmp_path, store_url=url, cwd=tmp_path)
    return operations.Caller(store, identity, actor="test")


MEMORIES = [
    "Local Postgres from docker-compose listens on port 5433.",
    "The staging database is backed up every night.",
    "Redis caches session tokens for 30 minutes.",
    "Локальный Redis слушает порт 6380.",
    "本地数据库的端口是 5433。",
]


@pytest.mark.parametrize(
    "question, wanted",
    [
        ("На каком порту слушает локальная база данных?", 0),  # Russian question, English memory
        ("本地数据库端口", 0),  # Chinese question, English memory
        ("which port does local redis listen on?", 3),  # English question, Russian memory
        ("local database port", 4),  # English question, Chinese memory
    ],
)
def test_a_question_finds_a_memory_written_in_another_language(tmp_path, question, wanted):
    with open_store(f"sqlite:///{tmp_path}/store.sqlite3") as store:
        c = _caller(store, tmp_path)
        ids = [operations.add_memory(c, text, infer=False)["results"][0]["id"] for text in MEMORIES]
        found = [r["id"] for r in operations.search_memories(c, question, top_k=2)["results"]]
    assert ids[wanted] in found


def test_an_older_store_indexes_its_memories_glosses_when_opened(tmp_path):
    path = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(path)
    for number, script in enumerate(MIGRATIONS[:8], start=1):
        if callable(script):
            script(conn)
        else:
            conn.executescript(script)
        conn.execute(f"PRAGMA user_version = {number}")
    for i, text in enumerate(["Локальный Redis слушает порт 6380.", "Redis caches session tokens."]):
        conn.execute(
            "INSERT INTO memories (id, user_id, app_id, memory, text_hash, metadata, type, created_at, "
            "created_us, updated_at, updated_us, terms) VALUES (?, 'alice', 'acme', ?, '', '{}', 'unknown', "
            "'1970-01-01T00:00:00+00:00', 0, '1970-01-01T00:00:00+00:00', 0, ?)",
            (f"00000000-0000-4000-8000-00000000000{i}", text, " ".join(sorted(significant_words(text)))),
        )
    conn.commit()
    conn.close()
    with SqliteStore(path) as store:
        c = _caller(store, tmp_path)
        found = operations.search_memories(c, "which port does redis listen on", top_k=1)["results"]
    assert found[0]["memory"] == "Локальный Redis слушает порт 6380."
    terms = dict(sqlite3.connect(path).execute("SELECT memory, terms FROM memories").fetchall())
    assert {"port", "listen", "local"} <= set(terms["Локальный Redis слушает порт 6380."].split())
    english = "Redis caches session tokens."
    assert terms[english] == " ".join(sorted(gloss.search_terms(english)))  # by stems since migration 10


def test_a_glossed_query_is_embedded_closer_to_its_english_answer(tmp_path, monkeypatch):
    import numpy as np
    from mem0_plugin.semantic import Semantic

    monkeypatch.delenv("MEM0_EMBEDDER")
    semantic = Semantic.from_home(tmp_path)  # the default model, English-only
    assert semantic.model_id is not None, semantic.reason
    answer, question = "Local Redis listens on port 6380.", "На каком порту слушает локальный Redis?"
    own, english_answer = semantic.embed([question, answer])
    blended = semantic.query_vector(question)
    assert blended is not None and abs(float(np.linalg.norm(blended)) - 1) < 1e-5
    assert float(blended @ english_answer) > float(own @ english_answer) + 0.1
    plain = "which port does local redis listen on?"
    assert np.array_equal(semantic.query_vector(plain), semantic.embed([plain])[0])


def test_russian_words_are_stemmed_alike_on_many_threads_at_once():
    from concurrent.futures import ThreadPoolExecutor

    text = "Локальные базы данных слушают нестандартные порты; миграции запускаются перед деплоем " * 20
    alone = stems.russian_stems(text)
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(stems.russian_stems, [text] * 64))
    assert all(result == alone for result in results)


@pytest.mark.parametrize("content", [None, "{not json", '["a list"]'])
def test_a_missing_or_broken_glossary_leaves_search_working_without_glosses(tmp_path, monkeypatch, content):
    if content is not None:
        (tmp_path / "broken.json").write_text(content, encoding="utf-8")
    monkeypatch.setattr(gloss, "GLOSSARY_FILE", str(tmp_path / "broken.json"))
    gloss.glossary.cache_clear()
    try:
        assert gloss.glossary().russian == {} and gloss.english_of("Локальный порт") == []
        with open_store(f"sqlite:///{tmp_path}/store.sqlite3") as store:
            c = _caller(store, tmp_path)
            kept = operations.add_memory(c, "Локальный Redis слушает порт 6380.", infer=False)["results"][0]
            found = operations.search_memories(c, "redis порт")["results"]
        assert [r["id"] for r in found] == [kept["id"]]
    finally:
        gloss.glossary.cache_clear()


def test_a_long_text_is_glossed_by_its_beginning():
    head = "Локальный Postgres слушает порт 5433. "
    tail = "Данные лежат в базе данных. " * (gloss.GLOSSED_CHARS // 20)
    assert gloss.english_of(head + tail, SMALL)[:3] == ["local", "listen", "port"]
    assert "data" in gloss.english_of(head + tail, SMALL)  # within the first GLOSSED_CHARS
    assert gloss.english_of("x" * gloss.GLOSSED_CHARS + "Локальный порт", SMALL) == []
