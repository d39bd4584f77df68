"""The embedder, stored vectors and hybrid search, with the real default model (installed
with the package) and real SQLite stores. docs/embeddings.md, docs/search.md."""

from __future__ import annotations

import http.server
import shutil
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from mem0_plugin import operations
from mem0_plugin.cli import health_cli, memories_cli
from mem0_plugin.embeddings import EmbedderUnavailable, embedder_from_config
from mem0_plugin.embeddings.onnx_local import MINILM_L6_INT8
from mem0_plugin.embeddings.weights import sha256_of
from mem0_plugin.identity import resolve_identity
from mem0_plugin.records import SUPERSEDED
from mem0_plugin.semantic import Semantic, off_notice
from mem0_plugin.store import open_store


@pytest.fixture
def semantic_home(mem0_home, monkeypatch) -> Path:
    monkeypatch.delenv("MEM0_EMBEDDER")
    mem0_home.mkdir(parents=True, exist_ok=True)
    return mem0_home


def caller(home: Path, semantic: Semantic | None, background: bool = False) -> operations.Caller:
    identity = resolve_identity(cwd=str(home))
    return operations.Caller(
        open_store(identity.store_location), identity, actor="cli", semantic=semantic, background=background
    )


def test_default_model_gives_unit_vectors_that_know_paraphrases(semantic_home):
    embedder = embedder_from_config(semantic_home)
    vectors = embedder.embed(
        [
            "Use PostgreSQL for the ledger, not DynamoDB.",
            "Ledger storage is Postgres; DynamoDB was rejected.",
            "The storefront is deployed to Vercel.",
            "",
        ]
    )
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors[:3], axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > 0.8 > vectors[0] @ vectors[2]
    assert embedder.model_id == "onnx-local/all-MiniLM-L6-v2-int8"
    batch = embedder.embed(["short", "a much longer text " * 50, "mid length text here"])
    alone = embedder.embed(["mid length text here"])
    assert np.allclose(batch[2], alone[0], atol=1e-4)  # padding per batch changes nothing


def test_a_damaged_model_file_turns_semantic_matching_off_once(semantic_home, capsys):
    folder = semantic_home / "models" / MINILM_L6_INT8.name
    folder.mkdir(parents=True)
    (folder / "model.onnx").write_bytes(b"not a model")
    semantic = Semantic.from_home(semantic_home)
    assert semantic.embed(["x"]) is None and semantic.embed(["y"]) is None
    err = capsys.readouterr().err
    assert err.count("mem0: semantic matching is off (model file") == 1 and "see mem0-health" in err
    memories = caller(semantic_home, semantic)
    operations.add_memory(memories, "Deploy the storefront to Vercel", infer=False)
    found = operations.search_memories(memories, "storefront deploy")["results"]
    assert [r["memory"] for r in found] == ["Deploy the storefront to Vercel"]  # lexical still works


@pytest.mark.parametrize(
    "text, reason",
    [
        ("embedder: [1, 2", "is not readable YAML"),
        ("embedder: {provider: onnx-local, config: {model: nope}}", "unknown onnx-local model 'nope'"),
        ("embedder: {provider: onnx-local, config: {model_url: 'http://x/m.onnx'}}", "model_url needs model_sha256"),
        ("embedder: {provider: onnx-local, config: {colour: blue}}", "colour: Extra inputs are not permitted"),
    ],
)
def test_bad_configuration_is_one_clear_reason(semantic_home, text, reason):
    (semantic_home / "config.yaml").write_text(text)
    with pytest.raises(EmbedderUnavailable, match=reason.replace("[", r"\[")):
        embedder_from_config(semantic_home)
    assert reason in Semantic.from_home(semantic_home, quiet=True).reason


def test_provider_none_turns_it_off_without_a_notice(semantic_home, capsys):
    (semantic_home / "config.yaml").write_text("embedder:\n  provider: none\n")
    semantic = Semantic.from_home(semantic_home)
    assert semantic.embed(["x"]) is None and capsys.readouterr().err == ""


def test_a_mem0_provider_that_cannot_start_falls_back(semantic_home, capsys):
    pytest.importorskip("mem0")  # the mem0 extra (part of the test extra)
    (semantic_home / "config.yaml").write_text("embedder:\n  provider: no-such-provider\n")
    semantic = Semantic.from_home(semantic_home)
    assert semantic.model_id == "no-such-provider/default"
    assert semantic.embed(["x"]) is None
    assert "Unsupported Embedder provider" in capsys.readouterr().err


def test_a_mem0_provider_without_mem0ai_names_the_extra(semantic_home, capsys, monkeypatch):
    # As if mem0ai were not installed: a None in sys.modules makes its import fail.
    for name in [n for n in sys.modules if n == "mem0" or n.startswith("mem0.")] + ["mem0"]:
        monkeypatch.setitem(sys.modules, name, None)
    (semantic_home / "config.yaml").write_text("embedder:\n  provider: openai\n")
    semantic = Semantic.from_home(semantic_home)
    assert semantic.embed(["x"]) is None
    expected = (
        "embedder provider 'openai' needs the mem0ai package (not installed): pip install 'mem0-dream-plugin[mem0]'"
    )
    assert expected in semantic.reason
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"mem0: semantic matching is off ({expected}); see mem0-health"]
    operations.add_memory(caller(semantic_home, semantic), "Deploy the storefront to Vercel", infer=False)


class _Files(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def file_server(tmp_path):
    root = tmp_path / "served"
    root.mkdir()
    handler = lambda *a, **k: _Files(*a, directory=str(root), **k)  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_a_configured_model_downloads_once_verified(semantic_home, file_server):
    root, base = file_server
    model, tokenizer = MINILM_L6_INT8.model.packaged.path(), MINILM_L6_INT8.tokenizer.packaged.path()
    shutil.copy(model, root / "m.onnx")
    shutil.copy(tokenizer, root / "t.json")
    (semantic_home / "config.yaml").write_text(
        "embedder:\n  provider: onnx-local\n  config:\n    model: mine\n"
        f"    model_url: {base}/m.onnx\n    model_sha256: {sha256_of(model)}\n"
        f"    tokenizer_url: {base}/t.json\n    tokenizer_sha256: {sha256_of(tokenizer)}\n"
    )
    embedder = embedder_from_config(semantic_home)
    assert embedder.model_id == "onnx-local/mine"
    assert embedder.embed(["hello"]).shape == (1, 384)
    assert sorted(p.name for p in (semantic_home / "models" / "mine").iterdir()) == ["model.onnx", "tokenizer.json"]
    (root / "m.onnx").unlink()  # the second start reads the downloaded copy
    assert embedder_from_config(semantic_home).embed(["hello"]).shape == (1, 384)


def test_a_download_with_the_wrong_checksum_is_refused_and_removed(semantic_home, file_server):
    root, base = file_server
    (root / "m.onnx").write_bytes(b"tampered")
    (semantic_home / "config.yaml").write_text(
        "embedder:\n  provider: onnx-local\n  config:\n    model: bad\n"
        f"    model_url: {base}/m.onnx\n    model_sha256: '{'0' * 64}'\n"
        f"    tokenizer_url: {base}/t.json\n    tokenizer_sha256: '{'0' * 64}'\n"
    )
    with pytest.raises(EmbedderUnavailable, match="wrong SHA-256"):
        embedder_from_config(semantic_home).load()
    assert list((semantic_home / "models" / "bad").iterdir()) == []


def test_vectors_follow_the_text_of_their_memory(backend, semantic_home):
    semantic = Semantic.from_home(semantic_home)
    memories = caller(semantic_home, semantic)
    first = operations.add_memory(memories, "Local Postgres listens on port 5432", infer=False)["results"][0]["id"]
    second = operations.add_memory(memories, "Deploy the storefront to Vercel", infer=False)["results"][0]["id"]
    store, user = memories.store, memories.user_id
    assert (
        semantic.backfill(store, user, "acme-api") == (2, 2) and semantic.backfill(store, user, "acme-api").stored == 0
    )
    assert store.vector_counts(user, semantic.model_id, "acme-api") == (2, 2)
    operations.update_memory(memories, first, text="Local Postgres listens on port 5433")
    assert store.without_vectors(user, semantic.model_id, "acme-api") == [
        (first, "Local Postgres listens on port 5433")
    ]
    operations.delete_memory(memories, second)
    assert store.vector_counts(user, semantic.model_id, "acme-api") == (0, 1)


def test_a_memory_is_embedded_as_a_query_of_its_text_is_and_meets_its_english_restatement(semantic_home):
    """With the English-only default, a memory with glossed terms is stored as the blend of its
    vector and its English rendering's: the vector a query of the same text gets. An English
    text is embedded as written."""
    semantic = Semantic.from_home(semantic_home)
    chinese, english = "本地数据库的端口是 5433", "The local database port is 5433"
    vectors = semantic.memory_vectors([chinese, english])
    assert vectors is not None and semantic.model_id == semantic.model_name + "+en"
    assert np.allclose(vectors[0], semantic.query_vector(chinese), atol=1e-3)
    assert np.allclose(vectors[1], semantic.embed([english])[0], atol=1e-6)
    as_written = semantic.embed([chinese])[0]
    assert float(vectors[0] @ vectors[1]) > float(as_written @ vectors[1]) + 0.1


def test_vectors_stored_without_the_rendering_are_made_again_and_english_ones_kept(semantic_home, monkeypatch):
    """A store's vectors of the model's own id were made before memories held their rendering. On
    the next backfill a memory with glossed terms is embedded again under the `+en` id; an
    English one takes its stored vector (the same: nothing to render), not embedded again."""
    semantic = Semantic.from_home(semantic_home)
    memories = caller(semantic_home, semantic)
    texts = ["Локальная база данных слушает порт 5433", "Deploy the storefront to Vercel"]
    added = [operations.add_memory(memories, text, infer=False)["results"][0]["id"] for text in texts]
    store, user = memories.store, memories.user_id
    with store.write() as writer:
        writer.store_vectors(
            user, semantic.model_name, [(i, t, v) for i, t, v in zip(added, texts, semantic.embed(texts))]
        )
    assert store.vector_counts(user, semantic.model_name, "acme-api") == (2, 2)
    embedded: list[str] = []
    real = semantic.embed
    monkeypatch.setattr(semantic, "embed", lambda batch: embedded.extend(batch) or real(batch))
    assert semantic.backfill(store, user, "acme-api").stored == 2
    assert store.vector_counts(user, semantic.model_id, "acme-api") == (2, 2)
    assert store.vector_counts(user, semantic.model_name, "acme-api") == (0, 2)  # replaced, not kept beside them
    assert texts[1] not in embedded and texts[0] in embedded


def test_embed_command_tells_vectors_reused_from_those_it_made(backend, semantic_home, capsys):
    """An English memory whose vector was stored under the model's own id (before vectors held
    their rendering) takes that vector over: the command does not say it embedded it."""
    semantic = Semantic.from_home(semantic_home)
    memories = caller(semantic_home, semantic)
    texts = ["Deploy the storefront to Vercel", "Локальная база данных слушает порт 5433"]
    added = [operations.add_memory(memories, text, infer=False)["results"][0]["id"] for text in texts]
    with memories.store.write() as writer:
        writer.store_vectors(memories.user_id, semantic.model_name, [(added[0], texts[0], semantic.embed(texts)[0])])
    assert memories_cli.main(["embed"]) == 0
    assert capsys.readouterr().out == (
        f"Embedded 1 memory with {semantic.model_name} (1 more took a vector already made for the same text); "
        "2/2 of project acme-api have vectors.\n"
    )


def test_hybrid_search_finds_a_paraphrased_question(backend, semantic_home):
    semantic = Semantic.from_home(semantic_home)
    memories = caller(semantic_home, semantic)
    for text in (
        "All money is kept as integer cents in BIGINT amount_cents columns, never floats",
        "The storefront is deployed to Vercel",
        "Run the API tests with pytest -q",
    ):
        operations.add_memory(memories, text, infer=False)
    lexical = operations.search_memories(caller(semantic_home, None), "how should monetary values be saved?")
    assert lexical["results"] == []
    found = operations.search_memories(memories, "how should monetary values be saved?")["results"]
    assert found[0]["memory"].startswith("All money") and 0 < found[0]["score"] <= 1
    exact = operations.search_memories(memories, "The storefront is deployed to Vercel")["results"][0]
    assert exact["score"] >= 0.99


def test_a_memory_only_the_vector_side_found_is_scored_by_its_stored_terms(backend, semantic_home):
    """The lexical side keeps its best `top_k`; a memory beyond them that the vector side brings
    is scored from its stored terms exactly as the lexical side would score it."""
    from mem0_plugin.store.ranking import Scored

    semantic = Semantic.from_home(semantic_home)
    memories = caller(semantic_home, semantic)
    texts = (
        "Ledger export format: CSV",
        "Ledger Nano wallets are unsupported",
        "The ledger is kept in the primary PostgreSQL cluster, with nightly snapshots shipped to S3 for audits",
    )
    for text in texts:
        operations.add_memory(memories, text, infer=False)
    query = "where is the ledger stored"
    lexical = operations.search_memories(caller(semantic_home, None), query, top_k=2)["results"]
    assert texts[2] not in {r["memory"] for r in lexical}  # the lexical side alone ranks it third (longer)
    found = operations.search_memories(memories, query, top_k=2)["results"]
    assert texts[2] in {r["memory"] for r in found}  # brought by the vector side
    vectors = dict(zip(texts, semantic.embed(list(texts))))
    question = semantic.embed([query])[0]
    alone = memories.store.lexical_search(memories.user_id, query, top_k=10, app_id=memories.identity.project_id)
    lexical_of = {m.memory: score for m, score in alone}  # the lexical side's own score of each
    for result in found:
        text = result["memory"]
        cosine = float(vectors[text] @ question)
        expected = Scored(None, lexical_of[text], cosine).score  # type: ignore[arg-type]
        assert result["score"] == pytest.approx(expected, abs=1e-4)


def test_a_superseded_memory_ranks_below_its_replacement(backend, semantic_home):
    for semantic in (None, Semantic.from_home(semantic_home)):
        memories = caller(semantic_home, semantic)
        old = operations.add_memory(memories, "The dev server listens on port 8080", infer=False)["results"][0]["id"]
        new = operations.add_memory(memories, "The dev server listens on port 3000 now", infer=False)["results"][0][
            "id"
        ]
        with memories.store.write() as writer:
            writer.change(
                writer.get(memories.user_id, old),
                "SUPERSEDE",
                "test",
                lifecycle_state=SUPERSEDED,
                replacement_memory_id=new,
            )
        found = operations.search_memories(memories, "The dev server listens on port 8080")["results"]
        assert [r["id"] for r in found[:2]] == [new, old]
        assert found[0]["score"] >= found[1]["score"]
        latest = operations.search_memories(memories, "dev server port", latest_only=True)["results"]
        assert [r["id"] for r in latest] == [new]
        operations.delete_memory(memories, old)
        operations.delete_memory(memories, new)


@pytest.mark.parametrize(
    "query, expected",
    [
        ("账本数据存储", {"账本数据存储使用PostgreSQL，不用DynamoDB。", "账本数据存储每天UTC 03:00自动做快照。"}),
        ("хранилище журнала", {"Хранилище журнала — Postgres, не DynamoDB"}),
    ],
)
def test_search_in_languages_without_spaces_and_with_inflections(backend, query, expected, semantic_home):
    memories = caller(semantic_home, None)
    for text in (
        "账本数据存储使用PostgreSQL，不用DynamoDB。",
        "账本数据存储每天UTC 03:00自动做快照。",
        "Хранилище журнала — Postgres, не DynamoDB",
        "前端用pnpm管理依赖",
    ):
        operations.add_memory(memories, text, infer=False)
    found = operations.search_memories(memories, query)["results"]
    assert {r["memory"] for r in found} >= expected


def test_the_server_embeds_new_memories_in_the_background(backend, semantic_home):
    semantic = Semantic.from_home(semantic_home)
    memories = caller(semantic_home, semantic, background=True)
    operations.search_memories(memories, "warm up")  # the first search loads the model
    added = operations.add_memory(memories, "Feature flags live in LaunchDarkly", infer=False)["results"][0]["id"]
    semantic.drain()
    assert memories.store.without_vectors(memories.user_id, semantic.model_id, ids=[added]) == []


def test_embed_command_and_health_line(backend, semantic_home, capsys):
    memories = caller(semantic_home, None)
    for text in ("Deploy the storefront to Vercel", "Run the API tests with pytest -q"):
        operations.add_memory(memories, text, infer=False)
    assert memories_cli.main(["embed"]) == 0
    assert capsys.readouterr().out == (
        "Embedded 2 memories with onnx-local/all-MiniLM-L6-v2-int8; 2/2 of project acme-api have vectors.\n"
    )
    assert health_cli.main([]) == 0
    out = capsys.readouterr().out
    assert (
        "PASS  Dream lock       free\n\nEmbedder: onnx-local/all-MiniLM-L6-v2-int8 — 2/2 memories embedded\n"
        "  The default model is English-only: for other languages set a multilingual one (docs/embeddings.md).\n"
        "\nAll checks passed.\n"
    ) in out


def test_health_fails_the_embedder_check_with_a_fix_when_the_model_is_unusable(semantic_home, capsys):
    (semantic_home / "config.yaml").write_text("embedder: {provider: onnx-local, config: {model: nope}}\n")
    assert health_cli.main([]) == 1
    out = capsys.readouterr().out
    assert "FAIL  Embedder         semantic matching is off (unknown onnx-local model 'nope'" in out
    assert "- Embedder: search and dream still work, by words only." in out


def test_embed_command_without_a_model_is_one_line(semantic_home, capsys):
    (semantic_home / "config.yaml").write_text("embedder: {provider: onnx-local, config: {model: nope}}\n")
    assert memories_cli.main(["embed"]) == 6
    err = capsys.readouterr().err
    assert err.startswith("mem0-memories: error: semantic matching is off (unknown onnx-local model 'nope'")
    assert off_notice("x") == "mem0: semantic matching is off (x); see mem0-health"


def test_the_token_vectors_are_read_whichever_output_comes_first():
    from types import SimpleNamespace as Output

    from mem0_plugin.embeddings.onnx_local import vectors_output

    # an export that lists a (batch, tokens) array and a pooled vector before the token vectors
    exported = [
        Output(name="output", shape=["batch_size", "sequence_length"]),
        Output(name="463", shape=["d0", "d1"]),
        Output(name="onnx::Shape_422", shape=["d0", "d1", 384]),
        Output(name="461", shape=["d0", 384]),
    ]
    assert vectors_output(exported, 384) == "onnx::Shape_422"
    assert vectors_output([Output(name="last_hidden_state", shape=["b", "t", 384])], 384) == "last_hidden_state"
    assert vectors_output([Output(name="mask", shape=["b", "t"]), Output(name="pooled", shape=["b", 384])], 384) == (
        "pooled"
    )
    assert vectors_output([Output(name="other", shape=["b", 768])], 384) == "other"  # (then the first)
