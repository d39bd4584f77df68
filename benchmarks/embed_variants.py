"""Experiments behind docs/embeddings.md, "Speed": ways to run the default model faster that
keep its vectors, each timed against today's session in the same run (A B A B).

    .venv/bin/pip install onnx sympy        # only for this script (graph building)
    .venv/bin/python benchmarks/embed_variants.py [--texts 1000] [--rounds 4]

Variants, on the benchmark's 2,000 generated ~18-word memories (41 tokens on average):

* ``current``: the shipped graph as the embedder runs it (2 intra-op threads, batches of 32
  sorted by length);
* ``fused``: the same weights in a graph rebuilt with onnxruntime's fused operators
  (``com.microsoft`` Attention with one QKV product, SkipLayerNormalization, BiasGelu);
  onnxruntime's own ``optimizer.optimize_model(model_type="bert")`` finds no Attention in
  this export (its attention ends with IsNaN/Where), hence the graph built here;
* ``optimize_model``: onnxruntime's transformer optimizer on the graph with its int8 weights
  folded to float32 (BiasGelu and SkipLayerNormalization only);
* ``2 threads x 1``: one session with 1 intra-op thread called from 2 Python threads on
  different batches (onnxruntime releases the interpreter lock while it runs);
* ``matmuls only``: a graph of nothing but the model's 36 matrix products with the same shapes,
  the float32 floor: no way of running this model's arithmetic does less;
* ``padded to 128``: the naive way, every text padded to 128 tokens, unsorted.

Printed per variant: texts/s (wall, median) and process CPU milliseconds per text (median),
which is the steadier figure on a shared machine. Vectors of each real variant are compared
with today's (minimum cosine, maximum absolute difference).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT.parent / "plugin"))
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")  # before onnxruntime's import, as the package does

import generate as gen  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
from mem0_plugin.embeddings.onnx_local import MINILM_L6_INT8, padded  # noqa: E402
from mem0_plugin.embeddings.weights import locate  # noqa: E402
from onnx import TensorProto  # noqa: E402
from onnx import helper as oh  # noqa: E402
from onnx import numpy_helper as nh  # noqa: E402


def session(path, threads=2):
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def run(sess, batch, width=None):
    ids, mask = padded(batch)
    if width:
        ids = np.pad(ids, ((0, 0), (0, width - ids.shape[1])))
        mask = np.pad(mask, ((0, 0), (0, width - mask.shape[1])))
    hidden = sess.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
    weights = mask.astype(np.float32)
    return np.einsum("bt,btd->bd", weights, hidden) / weights.sum(axis=1, keepdims=True)


def batches(enc, size, order=True):
    idx = sorted(range(len(enc)), key=lambda i: len(enc[i])) if order else list(range(len(enc)))
    return [idx[s : s + size] for s in range(0, len(idx), size)]


def embed(sess, enc, size=32, workers=1, order=True, width=None):
    out = np.zeros((len(enc), 384), np.float32)
    chosen = batches(enc, size, order)

    def work(k):
        for b in chosen[k::workers]:
            out[b] = run(sess, [enc[i] for i in b], width)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def folded(model_path):
    """The shipped graph with its Cast(int8) * scale weights replaced by float32 initializers."""
    model = onnx.load(str(model_path))
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    made = {o: n for n in graph.node for o in n.output}
    new, drop = [], set()
    for node in graph.node:
        if node.op_type != "Mul":
            continue
        for cast_out, scale in (node.input, node.input[::-1]):
            cast = made.get(cast_out)
            if cast is not None and cast.op_type == "Cast" and cast.input[0] in inits and scale in inits:
                weight = nh.to_array(inits[cast.input[0]]).astype(np.float32) * nh.to_array(inits[scale])
                new.append(nh.from_array(weight.astype(np.float32), node.output[0]))
                drop.update((id(node), id(cast)))
                break
    kept = [n for n in graph.node if id(n) not in drop]
    del graph.node[:]
    graph.node.extend(kept)
    graph.initializer.extend(new)
    used = {x for n in graph.node for x in n.input}
    kept_inits = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept_inits)
    return model


def named_weights(model):
    """PyTorch names (`inner.encoder.layer.0.attention.self.query.weight`, …) to arrays: a
    product's weight is named after the bias added right after it."""
    graph = model.graph
    arrays = {i.name: nh.to_array(i) for i in graph.initializer}
    users = defaultdict(list)
    for n in graph.node:
        for x in n.input:
            users[x].append(n)
    named = {k: v for k, v in arrays.items() if k.startswith("inner.")}
    for n in graph.node:
        if n.op_type == "MatMul" and n.input[1] in arrays:
            add = users[n.output[0]][0]
            bias = next(x for x in add.input if x in arrays)
            named[bias.replace(".bias", ".weight")] = arrays[n.input[1]]
    return named


def fused(model):
    """The same BERT encoder written with onnxruntime's fused CPU operators."""
    w = named_weights(model)
    nodes, inits = [], []

    def init(name, array):
        inits.append(nh.from_array(np.ascontiguousarray(array), name))
        return name

    emb = "inner.embeddings."
    nodes += [
        oh.make_node("Shape", ["input_ids"], ["seq"], start=1, end=2),
        oh.make_node(
            "Slice", [init("positions", np.arange(512, dtype=np.int64)), init("zero", np.array([0])), "seq"], ["pos"]
        ),
        oh.make_node("Gather", [init("word", w[emb + "word_embeddings.weight"]), "input_ids"], ["we"]),
        oh.make_node("Gather", [init("type", w[emb + "token_type_embeddings.weight"]), "token_type_ids"], ["te"]),
        oh.make_node("Gather", [init("place", w[emb + "position_embeddings.weight"]), "pos"], ["pe"]),
        oh.make_node("Add", ["we", "te"], ["e1"]),
        oh.make_node("Add", ["e1", "pe"], ["e2"]),
        oh.make_node(
            "LayerNormalization",
            ["e2", init("eg", w[emb + "LayerNorm.weight"]), init("eb", w[emb + "LayerNorm.bias"])],
            ["h0"],
            epsilon=1e-12,
        ),
        oh.make_node("Cast", ["attention_mask"], ["mask32"], to=TensorProto.INT32),
    ]
    h = "h0"
    for layer in range(6):
        p = f"inner.encoder.layer.{layer}."
        qkv_w = np.concatenate([w[p + f"attention.self.{x}.weight"] for x in ("query", "key", "value")], axis=1)
        qkv_b = np.concatenate([w[p + f"attention.self.{x}.bias"] for x in ("query", "key", "value")])
        ms = "com.microsoft"
        nodes += [
            oh.make_node(
                "Attention",
                [h, init(f"qkvw{layer}", qkv_w), init(f"qkvb{layer}", qkv_b), "mask32"],
                [f"a{layer}"],
                domain=ms,
                num_heads=12,
            ),
            oh.make_node(
                "MatMul", [f"a{layer}", init(f"ow{layer}", w[p + "attention.output.dense.weight"])], [f"ao{layer}"]
            ),
            oh.make_node(
                "SkipLayerNormalization",
                [
                    f"ao{layer}",
                    h,
                    init(f"g1{layer}", w[p + "attention.output.LayerNorm.weight"]),
                    init(f"b1{layer}", w[p + "attention.output.LayerNorm.bias"]),
                    init(f"ob{layer}", w[p + "attention.output.dense.bias"]),
                ],
                [f"x{layer}"],
                domain=ms,
                epsilon=1e-12,
            ),
            oh.make_node(
                "MatMul", [f"x{layer}", init(f"iw{layer}", w[p + "intermediate.dense.weight"])], [f"i{layer}"]
            ),
            oh.make_node(
                "BiasGelu",
                [f"i{layer}", init(f"ib{layer}", w[p + "intermediate.dense.bias"])],
                [f"g{layer}"],
                domain=ms,
            ),
            oh.make_node("MatMul", [f"g{layer}", init(f"fw{layer}", w[p + "output.dense.weight"])], [f"f{layer}"]),
            oh.make_node(
                "SkipLayerNormalization",
                [
                    f"f{layer}",
                    f"x{layer}",
                    init(f"g2{layer}", w[p + "output.LayerNorm.weight"]),
                    init(f"b2{layer}", w[p + "output.LayerNorm.bias"]),
                    init(f"fb{layer}", w[p + "output.dense.bias"]),
                ],
                [f"h{layer + 1}"],
                domain=ms,
                epsilon=1e-12,
            ),
        ]
        h = f"h{layer + 1}"
    nodes.append(oh.make_node("Identity", [h], ["last_hidden_state"]))
    inputs = [
        oh.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"])
        for n in ("input_ids", "attention_mask", "token_type_ids")
    ]
    outputs = [oh.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", 384])]
    graph = oh.make_graph(nodes, "minilm_fused", inputs, outputs, inits)
    return oh.make_model(
        graph, opset_imports=[oh.make_opsetid("", 17), oh.make_opsetid("com.microsoft", 1)], ir_version=10
    )


def matmuls_only():
    rng = np.random.default_rng(0)
    nodes, inits, x = [], [], "x"
    k = 0
    for _layer in range(6):
        for shape in [(384, 384)] * 4 + [(384, 1536), (1536, 384)]:
            inits.append(nh.from_array(((rng.random(shape) - 0.5) * 0.01).astype(np.float32), f"w{k}"))
            nodes.append(oh.make_node("MatMul", [x, f"w{k}"], [f"y{k}"]))
            x, k = f"y{k}", k + 1
    io = [
        oh.make_tensor_value_info("x", TensorProto.FLOAT, ["b", "s", 384]),
        oh.make_tensor_value_info(x, TensorProto.FLOAT, ["b", "s", 384]),
    ]
    graph = oh.make_graph(nodes, "floor", io[:1], io[1:], inits)
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)], ir_version=10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--texts", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    from tokenizers import Tokenizer

    folder = Path(tempfile.mkdtemp())
    model_path = locate(MINILM_L6_INT8.model, folder, download=False)
    tokenizer = Tokenizer.from_file(str(locate(MINILM_L6_INT8.tokenizer, folder, download=False)))
    tokenizer.no_padding()
    tokenizer.enable_truncation(256)
    records = [r["memory"] for r in gen.records(4000, seed=5)]
    texts = [f"{a}; {b}" for a, b in zip(records[::2], records[1::2])][: args.texts]
    enc = [e.ids for e in tokenizer.encode_batch(texts)]
    print(f"{len(enc)} texts, {np.mean([len(e) for e in enc]):.1f} tokens on average")

    from onnxruntime.transformers.optimizer import optimize_model

    flat = folded(model_path)
    onnx.save(flat, folder / "folded.onnx")
    onnx.save(fused(flat), folder / "fused.onnx")
    onnx.save(matmuls_only(), folder / "floor.onnx")
    optimize_model(
        str(folder / "folded.onnx"), model_type="bert", num_heads=12, hidden_size=384, opt_level=0
    ).save_model_to_file(str(folder / "optimize_model.onnx"))
    today, one = session(model_path), session(model_path, threads=1)
    fused_s, fused_one = session(folder / "fused.onnx"), session(folder / "fused.onnx", threads=1)
    opt_s, floor_s = session(folder / "optimize_model.onnx"), session(folder / "floor.onnx")
    shapes = [(len(b), max(len(enc[i]) for i in b)) for b in batches(enc, 32)]
    inputs = {s: np.random.default_rng(1).random((s[0], s[1], 384), dtype=np.float32) for s in shapes}

    def floor():
        for s in shapes:
            floor_s.run(None, {"x": inputs[s]})

    variants = {
        "current (2 intra-op threads, batches of 32)": lambda: embed(today, enc),
        "current, batches of 16": lambda: embed(today, enc, 16),
        "fused graph": lambda: embed(fused_s, enc),
        "optimize_model graph": lambda: embed(opt_s, enc),
        "2 threads x 1 intra-op, batches of 32": lambda: embed(one, enc, 32, workers=2),
        "2 threads x 1 intra-op, batches of 16": lambda: embed(one, enc, 16, workers=2),
        "fused + 2 threads x 1, batches of 16": lambda: embed(fused_one, enc, 16, workers=2),
        "matmuls only (float32 floor)": floor,
        "naive: padded to 128, unsorted": lambda: embed(today, enc, 32, order=False, width=128),
    }
    reference = embed(today, enc)
    for name, fn in variants.items():
        vectors = fn()
        if vectors is not None:
            cos = (vectors * reference).sum(axis=1)
            print(f"{name}: cosine min {cos.min():.7f}, max abs diff {np.abs(vectors - reference).max():.1e}")
    wall, cpu = defaultdict(list), defaultdict(list)
    for _ in range(args.rounds):
        for name, fn in variants.items():
            started, cpu_started = time.perf_counter(), time.process_time()
            fn()
            wall[name].append(len(enc) / (time.perf_counter() - started))
            cpu[name].append(1000 * (time.process_time() - cpu_started) / len(enc))
    for name in variants:
        print(
            f"{name:45s} {statistics.median(wall[name]):6.1f} texts/s (wall)  "
            f"{statistics.median(cpu[name]):5.2f} CPU ms/text  all {[round(x) for x in wall[name]]}"
        )


if __name__ == "__main__":
    main()
