"""The stored features of each text (`stored_features`): a cache that never changes a plan.

The store writes the `features` column with every text it writes; dream decodes it instead
of reading the text again, and falls back to reading the text whenever the value is missing,
malformed, of older rules, or of another text. Whatever the column holds, the plan is the
same: these tests compare plans made with good, missing and wrong values.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from importlib import resources

import pytest
from dream_support import BASE, PROJECT, USER, big_records, make_project, record, store_file, uid, write_jsonl
from mem0_plugin import operations
from mem0_plugin.identity import resolve_identity
from mem0_plugin.language import stored_features
from mem0_plugin.language.analysed import analysed
from mem0_plugin.language.features import text_features
from mem0_plugin.language.stored_features import FEATURES_VERSION, decode_for, encode, encode_for
from mem0_plugin.records import Memory
from mem0_plugin.store import SqliteStore
from mem0_plugin.store.sqlite.migrations import MIGRATIONS

NOW = "2026-12-01T00:00:00+00:00"
EARLIER = "2026-11-20T10:00:00+00:00"


@pytest.fixture
def dream(run_cli, tmp_path):
    project = make_project(tmp_path / "project")

    def run(*args: str):
        return run_cli("mem0-dream", *args, "--now", NOW, cwd=str(project))

    return run


@pytest.fixture
def seed(run_cli, tmp_path):
    def do(records: list[dict]) -> None:
        done = run_cli("mem0-memories", "import", str(write_jsonl(tmp_path / "seed.jsonl", records)))
        assert done.returncode == 0, done.stderr

    return do


TEXTS = [
    "Use PostgreSQL for auth",
    "Don't use Redis for session caching",
    "The API listens on port 8080 only if DEBUG is set",
    "Docs are at https://docs.acme.dev/v2/start and `make docs` builds them",
    "Preview runs Ruby 2.17.3 with Vault 4.17.5",
    "Never call build_roles_price inside a transaction in settings/",
    "Alice moved to Osaka",
    "",
    "   ",
    "émoji 🎉 and naïve café ünïcode Zürich",
    "a `code span with \x1f unit separator` inside",
    "a path /srv/\x1eodd/file.txt with a record separator",
    "Strings live in src/i18n/locales/<lang>/common.json, pages in src/routes/[slug]/",
    "翻译文件放在messages/目录下，GE suite 在 gx/expectations/<表名>.json",
    "Money goes in *_cents columns; the APPLE_API_* secrets stay in CI",
]


def demo_texts() -> list[str]:
    data = resources.files("mem0_plugin").joinpath("data/demo_memories.json").read_text("utf-8")
    return [r["memory"] for r in json.loads(data)["memories"]]


@pytest.mark.parametrize("text", TEXTS + demo_texts())
def test_stored_features_decode_to_the_features_of_their_text(text):
    value = encode_for(text)
    if value is None:  # only when a word holds a separator: such a text is read every run
        features = text_features(text)
        assert any("\x1e" in w or "\x1f" in w for w in features.literals | features.sig | features.names)
        return
    assert decode_for(value, text) == text_features(text)


def test_a_literal_holding_a_separator_is_not_stored():
    text = "a `code span with \x1f unit separator` inside"
    assert any("\x1f" in literal for literal in text_features(text).literals)
    assert encode_for(text) is None


def _replace_field(value: str, index: int, new: str) -> str:
    fields = value.split("\x1e")
    fields[index] = new
    return "\x1e".join(fields)


GOOD = encode_for("The API listens on port 8080")


@pytest.mark.parametrize(
    "value, text, why",
    [
        (GOOD, "The API listens on port 3000", "the features of another text"),
        (
            GOOD.replace(f"f{FEATURES_VERSION}", f"f{FEATURES_VERSION + 1}", 1),
            "The API listens on port 8080",
            "another version of the rules",
        ),
        (GOOD.replace(f"f{FEATURES_VERSION}", "f0", 1), "The API listens on port 8080", "older rules"),
        (GOOD + "\x1eextra", "The API listens on port 8080", "a field too many"),
        (GOOD.rsplit("\x1e", 1)[0], "The API listens on port 8080", "a field missing"),
        (_replace_field(GOOD, 2, "yes"), "The API listens on port 8080", "a flag that is neither 1 nor empty"),
        ("", "The API listens on port 8080", "empty"),
        ("garbage", "The API listens on port 8080", "garbage"),
        (None, "The API listens on port 8080", "missing"),
        (42, "The API listens on port 8080", "not text"),
    ],
)
def test_a_value_that_is_not_valid_for_the_text_decodes_to_nothing(value, text, why):
    assert decode_for(value, text) is None, why
    assert not stored_features.is_valid_for(value, text), why  # (what dream checks before decoding later)


def test_a_valid_value_decodes_later_to_the_features_of_its_text():
    """Dream checks a value at fetch and decodes it only when the analysis reads the features
    (`AnalysedMemory.features`): once, and to what the text reads as."""
    text = "The API listens on port 8080"
    assert stored_features.is_valid_for(GOOD, text)
    calls = []

    def decode_later():
        calls.append(1)
        return stored_features.decode(GOOD)

    memory = Memory(id=uid(1), memory=text, user_id=USER, created_at=EARLIER, updated_at=EARLIER)
    item = analysed(memory, {}, {text: decode_later})
    assert calls == []  # nothing decoded yet
    assert item.features == text_features(text) and item.features == text_features(text)
    assert calls == [1]


def test_the_rules_have_not_changed_without_a_new_features_version():
    """If this fails, the features of texts changed: bump FEATURES_VERSION in
    plugin/mem0_plugin/language/stored_features.py (so stores stop serving features read by the old rules), then
    update both pinned values here."""
    corpus = TEXTS + demo_texts()
    digest = hashlib.sha256("\n".join(str(encode(text_features(t), t)) for t in corpus).encode()).hexdigest()
    assert (FEATURES_VERSION, digest) == (3, PINNED_DIGEST)


PINNED_DIGEST = "10bd3248bc25d2ffafbb901f1f122581e3a1fcb2c6d9ea8f60a4a5014607b432"  # the corpus includes the demo texts


# -- the store keeps the column ------------------------------------------------------------


def _column(memory_id: str) -> str | None:
    with sqlite3.connect(store_file()) as conn:
        return conn.execute("SELECT features FROM memories WHERE id = ?", (memory_id,)).fetchone()[0]


def _row(memory_id: str) -> tuple:
    with sqlite3.connect(store_file()) as conn:
        return conn.execute(
            "SELECT terms, features, text_hash, version FROM memories WHERE id = ?", (memory_id,)
        ).fetchone()


def test_every_written_text_gets_its_features_and_a_new_text_new_ones(seed, tmp_path):
    seed(BASE[:1])
    memory_id = BASE[0]["id"]
    assert decode_for(_column(memory_id), BASE[0]["memory"]) == text_features(BASE[0]["memory"])
    with SqliteStore(store_file()) as store:  # what the update_memory tool does
        caller = operations.Caller(store, resolve_identity(cwd=str(tmp_path)), actor="test")
        operations.update_memory(caller, memory_id, "Use MySQL for auth")
    assert decode_for(_column(memory_id), "Use MySQL for auth") == text_features("Use MySQL for auth")


def test_a_change_that_keeps_the_text_keeps_what_is_read_from_it(dream, seed):
    seed(BASE)
    terms, features, hashed, version = _row(BASE[0]["id"])
    done = dream("--auto")  # merges BASE[0] into a new memory: its state changes, its text does not
    assert done.returncode == 0, done.stderr
    after = _row(BASE[0]["id"])
    assert after[:3] == (terms, features, hashed) and after[3] == version + 1


# -- a plan is the same whatever the column holds --------------------------------------------


def _plan(dream, tmp_path, name: str) -> str:
    out = tmp_path / f"{name}.json"
    done = dream("--plan", "--json", "-o", str(out))
    assert done.returncode == 0, done.stderr
    return out.read_text()


def _set_every_column(value_for) -> None:
    with sqlite3.connect(store_file()) as conn:
        rows = conn.execute("SELECT id, memory FROM memories").fetchall()
        conn.executemany(
            "UPDATE memories SET features = ? WHERE id = ?",
            [(value_for(i, text), memory_id) for i, (memory_id, text) in enumerate(rows)],
        )


def test_the_plan_is_the_same_with_stored_missing_or_wrong_features(dream, seed, tmp_path):
    records, _, _ = big_records(30, conflicts=4)
    seed(records + BASE)
    stored = _plan(dream, tmp_path, "stored")
    texts = [r["memory"] for r in records]
    variants = {
        "missing": lambda i, text: None,
        "garbage": lambda i, text: "f1\x1enot\x1ea\x1ereading",
        "another text's": lambda i, text: encode_for(texts[(i + 7) % len(texts)]),
        "older rules": lambda i, text: encode_for(text).replace("f1", "f0", 1),
        "half missing": lambda i, text: encode_for(text) if i % 2 else None,
    }
    for name, value_for in variants.items():
        _set_every_column(value_for)
        assert _plan(dream, tmp_path, name) == stored, name


def test_auto_stores_the_features_it_had_to_read_and_changes_nothing_else(dream, seed, run_cli):
    seed(
        [
            record(uid(1), "Format Python with ruff format", "convention", 0.8, EARLIER),
            record(uid(2), "The billing worker reads jobs from billing-queue", "project_profile", 0.8, EARLIER),
        ]
    )
    _set_every_column(lambda i, text: None)
    before = run_cli("mem0-memories", "export").stdout
    done = dream("--auto")
    assert done.returncode == 0, done.stderr
    assert run_cli("mem0-memories", "export").stdout == before  # no version, time or history change
    for memory_id, text in (
        (uid(1), "Format Python with ruff format"),
        (uid(2), "The billing worker reads jobs from billing-queue"),
    ):
        assert decode_for(_column(memory_id), text) == text_features(text)


def test_auto_stores_the_column_another_memory_of_the_same_text_holds(dream, seed):
    """A memory without the column whose text another memory holds valid features for gets
    that column (the same text has the same features), whichever is read first."""
    text = "Never format Python with black"
    seed(
        [
            record(uid(1), text, "convention", 0.8, EARLIER),
            record(uid(2), text, "anti_pattern", 0.8, EARLIER),  # (another type: no merge)
        ]
    )
    _set_every_column(lambda i, _: encode_for(text) if i == 0 else None)
    done = dream("--auto")
    assert done.returncode == 0, done.stderr
    assert _column(uid(1)) == _column(uid(2)) == encode_for(text)


def test_plan_does_not_store_features(dream, seed):
    seed(BASE[:2])
    _set_every_column(lambda i, text: None)
    assert dream("--plan").returncode == 0
    assert _column(BASE[0]["id"]) is None


# -- a store from before the column ------------------------------------------------------------


def _old_store(path) -> None:
    """A store at schema version 2 (no features column) holding one memory."""
    conn = sqlite3.connect(path)
    for number, script in enumerate(MIGRATIONS[:2], start=1):
        conn.executescript(script)
        conn.execute(f"PRAGMA user_version = {number}")
    conn.execute(
        "INSERT INTO memories (id, user_id, app_id, memory, text_hash, metadata, type, created_at, "
        "created_us, updated_at, updated_us, terms) VALUES (?, ?, ?, ?, '', '{}', 'unknown', ?, 0, ?, 0, '')",
        (uid(1), USER, PROJECT, "Use PostgreSQL for auth", "1970-01-01T00:00:00+00:00", "1970-01-01T00:00:00+00:00"),
    )
    conn.commit()
    conn.close()


def test_a_store_from_before_the_column_is_read_read_only_without_it(tmp_path):
    path = tmp_path / "old.sqlite3"
    _old_store(path)
    with SqliteStore(path, readonly=True) as store:
        page = store.page(USER, page_size=10, with_features=True)
    assert [m.memory for m in page.results] == ["Use PostgreSQL for auth"] and page.features == (None,)


def test_a_store_from_before_the_column_gains_it_empty_when_opened(tmp_path):
    path = tmp_path / "old.sqlite3"
    _old_store(path)
    with SqliteStore(path) as store:
        page = store.page(USER, page_size=10, with_features=True)
        assert page.features == (None,)
        with store.write() as writer:
            writer.insert(
                Memory(
                    id=uid(2),
                    memory="Auth DB is PostgreSQL",
                    user_id=USER,
                    app_id=PROJECT,
                    created_at=NOW,
                    updated_at=NOW,
                ),
                actor="test",
            )
        page = store.page(USER, page_size=10, with_features=True)
    assert page.features[0] is None
    assert decode_for(page.features[1], "Auth DB is PostgreSQL") == text_features("Auth DB is PostgreSQL")


def test_the_module_says_what_it_is():
    assert "cache" in stored_features.__doc__


# -- an import reads its texts in a second process ---------------------------------------------


def test_encode_all_of_a_large_batch_is_encode_for_of_each_text_in_order():
    texts = [f"{t} #{i}" for i, t in enumerate((TEXTS + demo_texts()) * 200)]
    assert len(texts) >= stored_features.PARALLEL_FROM
    assert list(stored_features.encode_all(texts)) == [encode_for(t) for t in texts]


def test_a_large_import_stores_the_features_of_every_text(run_cli, tmp_path):
    records = [
        {"memory": f"The service{i} worker listens on port {8000 + i % 50}", "metadata": {"type": "environmental"}}
        for i in range(stored_features.PARALLEL_FROM + 100)
    ]
    done = run_cli("mem0-memories", "import", str(write_jsonl(tmp_path / "big.jsonl", records)))
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(store_file()) as conn:
        rows = conn.execute("SELECT memory, features FROM memories").fetchall()
    assert len(rows) == len(records)
    assert all(decode_for(value, text) == text_features(text) for text, value in rows)
