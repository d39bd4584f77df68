"""The default embedder's faster paths give the same vectors, and the model loads ahead of need
only when something must be embedded. Real model, real SQLite stores. docs/embeddings.md."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from mem0_plugin import operations
from mem0_plugin.dream import pipeline
from mem0_plugin.dream.report import reminder_text
from mem0_plugin.embeddings import embedder_from_config
from mem0_plugin.embeddings.onnx_local import MINILM_L6_INT8, padded
from mem0_plugin.identity import resolve_identity
from mem0_plugin.semantic import Semantic, off_notice
from mem0_plugin.store import open_store

TEXTS = [
    "Use PostgreSQL for the ledger, not DynamoDB.",
    "Local Postgres from docker-compose listens on port 5433 now (5432 clashes with Homebrew postgres).",
    "Sales tax is calculated with Stripe Tax now; the TaxJar client was removed.",
    "账本数据存储使用 PostgreSQL。",
    "",
    "All money is kept as integer cents in BIGINT amount_cents columns — never as floats or NUMERIC. " * 6,
]


@pytest.fixture
def semantic_home(mem0_home, monkeypatch) -> Path:
    monkeypatch.delenv("MEM0_EMBEDDER")
    mem0_home.mkdir(parents=True, exist_ok=True)
    return mem0_home


def test_padding_matches_one_row_at_a_time():
    batch = [[101, 7, 8, 102], [101, 102], [], [101, 5, 6, 9, 10, 102]]
    ids, mask = padded(batch)
    assert ids.shape == mask.shape == (4, 6) and ids.dtype == mask.dtype == np.int64
    for row, tokens in enumerate(batch):
        assert ids[row, : len(tokens)].tolist() == tokens and not ids[row, len(tokens) :].any()
        assert mask[row].tolist() == [1] * len(tokens) + [0] * (6 - len(tokens))
    assert padded([[]])[0].shape == (1, 1)


def reference_vectors(embedder, texts: list[str]) -> np.ndarray:
    """The plain way, one text per call, padded by a Python loop and pooled element-wise (what the
    embedder did before its batched path): the faster path must agree with it."""
    loaded = embedder._loaded
    rows = []
    for text in texts:
        tokens = loaded.tokenizer.encode(text).ids
        ids = np.array([tokens or [0]], dtype=np.int64)
        mask = np.array([[1] * len(tokens) or [0]], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = loaded.session.run(None, feed)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norm = np.linalg.norm(pooled)
        rows.append(pooled[0] / norm if norm > 0 else pooled[0])
    return np.array(rows, dtype=np.float32)


def test_batched_vectors_equal_the_plain_ones_within_tolerance(semantic_home):
    embedder = embedder_from_config(semantic_home)
    batched = embedder.embed(TEXTS)
    reference = reference_vectors(embedder, TEXTS)
    assert np.allclose(batched, reference, atol=2e-5)
    assert embedder.model_id == "onnx-local/all-MiniLM-L6-v2-int8"  # same vectors: stores keep theirs


def test_load_soon_loads_on_a_thread_and_embed_waits_for_it(semantic_home):
    semantic = Semantic.from_home(semantic_home)
    semantic.load_soon()
    loaders = [t for t in threading.enumerate() if t.name == "mem0-model-load"]
    assert loaders and not loaders[0].daemon  # a process never exits in the middle of a load
    assert semantic.query_vector("ledger storage").shape == (384,)
    loaders[0].join(timeout=30)
    assert semantic.embedder._loaded is not None


def test_load_soon_with_a_broken_model_is_silent_until_the_model_is_needed(semantic_home, capsys):
    folder = semantic_home / "models" / MINILM_L6_INT8.name
    folder.mkdir(parents=True)
    (folder / "model.onnx").write_bytes(b"not a model")
    semantic = Semantic.from_home(semantic_home)
    semantic.load_soon()
    for thread in threading.enumerate():
        if thread.name == "mem0-model-load":
            thread.join(timeout=30)
    assert capsys.readouterr().err == ""
    assert semantic.embed(["x"]) is None
    assert capsys.readouterr().err.count(off_notice("")[:30]) == 1


def test_dream_loads_the_model_ahead_only_when_a_memory_lacks_a_vector(semantic_home, monkeypatch):
    identity = resolve_identity(cwd=str(semantic_home))
    with open_store(identity.store_location) as store:
        writer = operations.Caller(store, identity, actor="cli")
        operations.add_memory(writer, "Use PostgreSQL for the ledger, not DynamoDB.", infer=False)
        started: list[bool] = []
        monkeypatch.setattr(Semantic, "load_soon", lambda self: started.append(True))
        semantic = Semantic.from_home(semantic_home)
        pipeline.load_model_if_needed(store, identity, semantic)
        assert started == [True]  # one memory without a vector
        pipeline.fetch_vectors(store, pipeline.step2_fetch(store, identity), semantic, store_new=True)
        pipeline.load_model_if_needed(store, identity, semantic)
        assert started == [True]  # every memory has its vector: nothing loads
        pipeline.load_model_if_needed(store, identity, None)
        with store.write() as raw:  # the same text again, as a merge's draft is (add_memory would refuse it)
            raw.insert(replace(pipeline.step2_fetch(store, identity)[0], id="copy-of-the-first"), actor="test")
        operations.add_memory(writer, reminder_text(3), infer=False)
        assert len(store.without_vectors(identity.user_id, semantic.model_id, identity.project_id)) == 2
        pipeline.load_model_if_needed(store, identity, semantic)
        assert started == [True]  # a text another memory has a vector for, and the reminder: nothing loads
        operations.add_memory(writer, "Deploys run from the release branch only.", infer=False)
        pipeline.load_model_if_needed(store, identity, semantic)
        assert started == [True, True]  # a new text: the model loads ahead


def test_the_early_look_reads_only_the_project_s_newest_memories(semantic_home, backend):
    identity = resolve_identity(cwd=str(semantic_home))
    with open_store(identity.store_location) as store:
        writer = operations.Caller(store, identity, actor="cli")
        texts = ["Ledger lives in PostgreSQL.", "Deploys run from the release branch.", "Node 20 is the runtime."]
        for text in texts:
            operations.add_memory(writer, text, infer=False)
        model = Semantic.from_home(semantic_home).model_id
        everything = store.without_vectors(identity.user_id, model, identity.project_id)
        assert [text for _, text in everything] == texts
        newest = store.without_vectors(identity.user_id, model, identity.project_id, newest=2)
        assert newest == everything[1:]  # oldest first, as the full look
        assert store.without_vectors(identity.user_id, model, "another-project", newest=2) == []
