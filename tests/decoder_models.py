"""Small random-weight decoders with a KV cache, built in code the way exporters lay them
out: a GPT-2 (every head its own key and value) and a Llama with grouped-query attention
(fewer key/value heads than query heads). Each takes input_ids, attention_mask and
position_ids and one past key and value per layer, and gives logits and one present key
and value per layer: present = Concat(past, new) on the sequence axis, so feeding present
back as past generates as a real decoder does.

`names` picks the exporter's spelling: "optimum" (past_key_values.N.key -> present.N.key,
dims batch_size / past_sequence_length), "dynamo" (the same names, dims s0, s1, s0 + s1),
"legacy" (GPT-2's old past_N / present_N, key and value stacked: [2, batch, heads, past,
head_size]), "genai" (onnxruntime-genai's names, head size left symbolic as kv_cache_dim:
it is read from the graph)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tests.transformer_models import _Graph
from tests.models import _model, save

NAMES = ("optimum", "dynamo", "legacy", "genai")


def _dims(names: str) -> tuple[str, str, str, str]:
    """(batch, new tokens, past, total) as the exporter names them."""
    if names == "dynamo":
        return "s0", "s1", "s2", "s2 + s1"
    if names == "genai":
        return "batch_size", "sequence_length", "past_sequence_length", "total_sequence_length"
    return "batch_size", "sequence_length", "past_sequence_length", "past_sequence_length + sequence_length"


def decoder(layers: int = 2, hidden: int = 32, heads: int = 4, kv_heads: int | None = None, vocab: int = 64,
            positions: int | None = 512, names: str = "optimum", seed: int = 0, cross: bool = False) -> onnx.ModelProto:
    """A decoder of `layers` layers; kv_heads < heads makes it a Llama-like GQA one. `cross`: a
    Whisper-like decoder run with its cache (Optimum's decoder_with_past): each layer attends to
    the encoder too, through past_key_values.N.encoder.key/value, which it does not give back;
    its own cache is then past_key_values.N.decoder.key -> present.N.decoder.key."""
    kv_heads = kv_heads or heads
    size = hidden // heads
    batch, new, past, total = _dims(names)
    g = _Graph(seed)
    f32 = TensorProto.FLOAT
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [batch, new]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [batch, total]),
              helper.make_tensor_value_info("position_ids", TensorProto.INT64, [batch, new])]
    outputs = [helper.make_tensor_value_info("logits", f32, [batch, new, vocab])]
    head_dim = "kv_cache_dim" if names == "genai" else size
    x = g.op("Gather", g.weight(vocab, hidden), "input_ids", axis=0)
    if positions:           # None: no position table (as rotary models), so no longest context either
        x = g.op("Add", x, g.op("Gather", g.weight(positions, hidden), "position_ids", axis=0))
    # who may attend to whom: key position <= query position, where the mask is 1
    query_at = g.op("Unsqueeze", "position_ids", g.const(np.array([1, 3], np.int64)))        # [b, 1, s, 1]
    keep = g.op("Cast", g.op("Unsqueeze", "attention_mask", g.const(np.array([1, 2], np.int64))), to=TensorProto.BOOL)
    for layer in range(layers):
        if names == "legacy":
            past_name, present_name = f"past_{layer}", f"present_{layer}"
            inputs.append(helper.make_tensor_value_info(past_name, f32, [2, batch, kv_heads, past, size]))
            outputs.append(helper.make_tensor_value_info(present_name, f32, [2, batch, kv_heads, total, size]))
            halves = g.op("Split", past_name, g.const(np.array([1, 1], np.int64)), axis=0, outputs=2)
            past_k, past_v = (g.op("Squeeze", half, g.const(np.array([0], np.int64))) for half in halves)
        else:
            part = ".decoder" if cross else ""
            past_k, past_v = f"past_key_values.{layer}{part}.key", f"past_key_values.{layer}{part}.value"
            for name, out in ((past_k, f"present.{layer}{part}.key"), (past_v, f"present.{layer}{part}.value")):
                inputs.append(helper.make_tensor_value_info(name, f32, [batch, kv_heads, past, head_dim]))
                outputs.append(helper.make_tensor_value_info(out, f32, [batch, kv_heads, total, head_dim]))
        normed = g.layer_norm(x, hidden)

        def heads_of(width_heads: int, x=normed) -> str:
            projected = g.op("MatMul", x, g.weight(hidden, width_heads * size))
            shaped = g.op("Reshape", projected, g.const(np.array([0, 0, width_heads, size], np.int64)))
            return g.op("Transpose", shaped, perm=[0, 2, 1, 3])

        q, k, v = heads_of(heads), heads_of(kv_heads), heads_of(kv_heads)
        if names == "legacy":
            key = g.op("Concat", past_k, k, axis=2)
            value = g.op("Concat", past_v, v, axis=2)
            g.nodes.append(helper.make_node("Concat", [g.op("Unsqueeze", key, g.const(np.array([0], np.int64))),
                                                       g.op("Unsqueeze", value, g.const(np.array([0], np.int64)))],
                                            [f"present_{layer}"], axis=0))
        else:
            key, value = past_k.replace("past_key_values", "present"), past_v.replace("past_key_values", "present")
            g.nodes.append(helper.make_node("Concat", [past_k, k], [key], axis=2))
            g.nodes.append(helper.make_node("Concat", [past_v, v], [value], axis=2))
        if kv_heads != heads:           # each key/value head serves heads // kv_heads query heads
            repeats = g.const(np.array([1, 1, heads // kv_heads, 1, 1], np.int64))
            back = g.const(np.array([0, heads, -1, size], np.int64))
            key, value = (g.op("Reshape", g.op("Tile", g.op("Unsqueeze", t, g.const(np.array([2], np.int64))), repeats),
                               back) for t in (key, value))
        scores = g.op("Mul", g.op("MatMul", q, g.op("Transpose", key, perm=[0, 1, 3, 2])),
                      g.const(np.array(1 / np.sqrt(size), np.float32)))
        length = g.op("Gather", g.op("Shape", key), g.const(np.array(2, np.int64)), axis=0)
        key_at = g.op("Range", g.const(np.array(0, np.int64)), length, g.const(np.array(1, np.int64)))
        allowed = g.op("And", g.op("LessOrEqual", key_at, query_at), keep)
        probs = g.op("Softmax", g.op("Where", allowed, scores, g.const(np.array(-1e4, np.float32))), axis=-1)
        attended = g.op("Transpose", g.op("MatMul", probs, value), perm=[0, 2, 1, 3])
        merged = g.op("Reshape", attended, g.const(np.array([0, 0, hidden], np.int64)))
        x = g.op("Add", x, g.op("MatMul", merged, g.weight(hidden, hidden)))
        if cross:
            encoder_k, encoder_v = f"past_key_values.{layer}.encoder.key", f"past_key_values.{layer}.encoder.value"
            for name in (encoder_k, encoder_v):
                inputs.append(helper.make_tensor_value_info(name, f32, [batch, heads, "encoder_sequence_length_out",
                                                                        size]))
            asked = heads_of(heads, g.layer_norm(x, hidden))
            weights = g.op("Softmax", g.op("MatMul", asked, g.op("Transpose", encoder_k, perm=[0, 1, 3, 2])), axis=-1)
            heard = g.op("Transpose", g.op("MatMul", weights, encoder_v), perm=[0, 2, 1, 3])
            x = g.op("Add", x, g.op("MatMul", g.op("Reshape", heard, g.const(np.array([0, 0, hidden], np.int64))),
                                    g.weight(hidden, hidden)))
        x = g.op("Add", x, g.op("MatMul", g.op("Relu", g.linear(g.layer_norm(x, hidden), hidden, 4 * hidden)),
                                g.weight(4 * hidden, hidden)))
    g.nodes.append(helper.make_node("MatMul", [g.layer_norm(x, hidden), g.weight(hidden, vocab)], ["logits"]))
    graph = helper.make_graph(g.nodes, f"decoder_{names}", inputs, outputs, g.inits)
    return _model(graph, opset=17)


def gpt2(names: str = "optimum", **kwargs) -> onnx.ModelProto:
    return decoder(names=names, **kwargs)


def llama_gqa(names: str = "optimum", **kwargs) -> onnx.ModelProto:
    return decoder(heads=4, kv_heads=2, names=names, **kwargs)


def genai_folder(folder, layers: int = 2, hidden: int = 32, heads: int = 4, kv_heads: int = 2, vocab: int = 64,
                 context: int = 512, seed: int = 0):
    """An onnxruntime-genai model folder: a Llama-like GQA decoder in genai's spelling
    (model.onnx) beside the genai_config.json its generator reads — the decoder's input and
    output names, its sizes, and greedy search settings. The cache is grown by Concat, so the
    config says past and present do not share one buffer. The last token is the end of text;
    its column of the output weights is zeroed so that greedy generation (its logit 0 against
    the largest of the others) does not stop early and runs the tokens asked for."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model = decoder(layers=layers, hidden=hidden, heads=heads, kv_heads=kv_heads, vocab=vocab, positions=context,
                    names="genai", seed=seed)
    head = next(node for node in reversed(model.graph.node) if node.output[0] == "logits")
    weights = next(init for init in model.graph.initializer if init.name == head.input[1])
    matrix = numpy_helper.to_array(weights).copy()
    matrix[:, vocab - 1] = 0
    weights.CopyFrom(numpy_helper.from_array(matrix, weights.name))
    save(model, folder / "model.onnx")
    config = {
        "model": {"type": "llama", "vocab_size": vocab, "context_length": context, "bos_token_id": 0,
                  "eos_token_id": vocab - 1, "pad_token_id": vocab - 1,
                  "decoder": {"filename": "model.onnx", "session_options": {"provider_options": []},
                              "head_size": hidden // heads, "hidden_size": hidden, "num_attention_heads": heads,
                              "num_hidden_layers": layers, "num_key_value_heads": kv_heads,
                              "inputs": {"input_ids": "input_ids", "attention_mask": "attention_mask",
                                         "position_ids": "position_ids",
                                         "past_key_names": "past_key_values.%d.key",
                                         "past_value_names": "past_key_values.%d.value"},
                              "outputs": {"logits": "logits", "present_key_names": "present.%d.key",
                                          "present_value_names": "present.%d.value"}}},
        "search": {"do_sample": False, "num_beams": 1, "num_return_sequences": 1, "max_length": context,
                   "min_length": 0, "past_present_share_buffer": False, "repetition_penalty": 1.0,
                   "temperature": 1.0, "top_k": 1, "top_p": 1.0, "early_stopping": True, "length_penalty": 1.0,
                   "no_repeat_ngram_size": 0, "diversity_penalty": 0.0}}
    (folder / "genai_config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    return folder
