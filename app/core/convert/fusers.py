"""Two transformer fusers, tried side by side.

ONNX Runtime's transformer optimizer (onnxruntime.transformers) knows the graphs of the
older TorchScript exporter; onnxscript's ORT fusions (onnxscript.rewriter.ort_fusions) know
those PyTorch's dynamo exporter writes today, where ONNX Runtime's optimizer fuses no
attention or writes a model it cannot load. Each fuser writes its result into a folder of
its own; each result is loaded and, when the conversion checks fidelity, run and held to the
tolerance. Of those that pass, the one that fuses the most attention (then the most
operators) is kept; every fuser's outcome is reported."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

from app.core.convert.work import Problem, Work
from app.core.ort_messages import first_line

#: contrib operators that hold a whole attention block
ATTENTION_OPS = frozenset({"Attention", "MultiHeadAttention", "GroupQueryAttention", "PackedAttention",
                           "PackedMultiHeadAttention", "DecoderMaskedMultiHeadAttention",
                           "DecoderMaskedSelfAttention", "DecoderAttention", "SparseAttention"})
#: operators a fuser writes in place of a subgraph (standard LayerNormalization and Gelu are
#: exported as they are, so they are counted only where a fuser added them)
FUSED_OPS = ATTENTION_OPS | {"SkipLayerNormalization", "SkipSimplifiedLayerNormalization", "EmbedLayerNormalization",
                             "SimplifiedLayerNormalization", "LayerNormalization", "BiasGelu", "FastGelu", "Gelu",
                             "BiasSplitGelu", "QuickGelu", "BiasAdd", "RotaryEmbedding"}
FUSERS = ("onnxruntime", "onnxscript")


def onnxscript_available() -> str:
    """'' where onnxscript's fusions can run here, else why not."""
    try:
        from onnxscript.rewriter.ort_fusions import optimize_for_ort  # noqa: F401
    except Exception as exc:  # an absent or broken install: the other fuser still runs
        return f"onnxscript is not usable here ({type(exc).__name__}: {first_line(str(exc), 200)})"
    return ""


def fuse_with_onnxscript(work: Work, target: Path) -> None:
    import onnx_ir as ir
    from onnxruntime.transformers.onnx_model import OnnxModel
    from onnxscript.rewriter.ort_fusions import optimize_for_ort

    from onnx.external_data_helper import load_external_data_for_model

    from app.core.convert.decoder_fusion import rotary_source

    source = rotary_source(work)
    fused, _ = optimize_for_ort(ir.load(str(source)))
    proto = ir.serde.serialize_model(fused)
    flatten_attention_into_gemm(proto.graph)
    load_external_data_for_model(proto, str(source.parent))   # the result gets its own data file
    model = OnnxModel(proto)
    if work.options["fp16"]:
        model.convert_float_to_float16(keep_io_types=True)
    model.save_model_to_file(str(target), use_external_data_format=work.large)


def flatten_attention_into_gemm(graph) -> int:
    """Put back the reshape to two dimensions between an attention block and the Gemm it feeds.

    onnxscript's attention fusion replaces the subgraph that ended in a reshape of the
    attention's [batch, sequence, hidden] result to [batch×sequence, hidden] (as PyTorch's
    dynamo exporter writes a linear layer) and keeps that result's name, so a Gemm is left
    with a rank-3 input ONNX Runtime refuses. The result is flattened again, as the export
    had it; the stale two-dimensional type of that name is dropped."""
    from onnx import helper, numpy_helper
    import numpy as np

    attention = {out: node for node in graph.node if node.op_type in ATTENTION_OPS for out in node.output[:1]}
    stale, nodes = set(), []
    for node in graph.node:
        if node.op_type == "Gemm" and node.input and node.input[0] in attention:
            flat, shape = f"{node.input[0]}_flat", f"{node.input[0]}_flat_shape"
            width = _gemm_width(graph, node)
            graph.initializer.append(numpy_helper.from_array(np.array([-1, width], dtype=np.int64), shape))
            nodes.append(helper.make_node("Reshape", [node.input[0], shape], [flat], name=f"{node.name}_flatten"))
            stale.add(node.input[0])
            node.input[0] = flat
        nodes.append(node)
    if stale:
        del graph.node[:]
        graph.node.extend(nodes)
        kept = [v for v in graph.value_info if v.name not in stale]
        del graph.value_info[:]
        graph.value_info.extend(kept)
    return len(stale)


def _gemm_width(graph, node) -> int:
    """The inner dimension of a Gemm: its weight's rows (columns when transposed); -1 is not
    allowed twice in a reshape, so an unknown weight leaves 0 (copy) for the last axis."""
    weights = {t.name: t for t in graph.initializer}
    weight = weights.get(node.input[1])
    if weight is None or len(weight.dims) != 2:
        return 0
    trans_b = next((a.i for a in node.attribute if a.name == "transB"), 0)
    return int(weight.dims[1] if trans_b else weight.dims[0])


def fused_counts(source_ops: dict, path: Path) -> dict:
    """The fused operators a result has beyond the source's."""
    from app.core.model.output import op_counts

    def plain(counts: dict) -> Counter:
        return Counter({op.rsplit(".", 1)[-1]: n for op, n in counts.items()})

    before, after = plain(source_ops), plain(op_counts(path))
    return {op: after[op] - before[op] for op in sorted(FUSED_OPS) if after[op] > before[op]}


def assess(work: Work, path: Path) -> dict:
    """Whether a fuser's result loads (and, with a reference, keeps to the tolerance)."""
    from app.core.jobs.stdio import unrelayed

    with unrelayed():
        return _assess(work, path)


def _assess(work: Work, path: Path) -> dict:
    from app.core.convert.fidelity import RunFailed, compare, load_session, run_variant

    try:
        if work.reference is None:
            load_session(path, work.config)
            return {"passed": None}
        report = compare(work.reference, run_variant(path, work.reference, work.config, work.ctx), work.tolerance)
        return {"passed": report["passed"], "max_abs_diff": report["max_abs_diff"]}
    except RunFailed as exc:
        return {"passed": False, "problem": Problem(exc.stage, exc.detail).describe()}


def score(outcome: dict) -> tuple:
    fused = outcome.get("fused_operators", {})
    return (sum(n for op, n in fused.items() if op in ATTENTION_OPS), sum(fused.values()))


def pick(outcomes: dict) -> str | None:
    """The fuser to keep: among the results that load and keep to the tolerance, the one that
    fuses the most attention, then the most operators; ONNX Runtime's on a tie."""
    usable = [name for name in FUSERS if name in outcomes and "fused_operators" in outcomes[name]
              and outcomes[name].get("passed") is not False]
    return max(usable, key=lambda name: score(outcomes[name])) if usable else None


def move_into_place(folder: Path, target: Path) -> None:
    """Move a fuser's result (and its data file) from its own folder to the staged target."""
    for item in folder.iterdir():
        shutil.move(str(item), str(target.parent / item.name))
    shutil.rmtree(folder, ignore_errors=True)


def attention_blocks(path: Path) -> int:
    """The attention blocks a graph holds unfused: Softmax over the product of two computed
    tensors (the scores of queries against keys), through scaling, masking and casts."""
    import onnx

    from app.core.model.intake import iter_graphs

    model = onnx.load(str(path), load_external_data=False)
    nodes = [node for graph in iter_graphs(model.graph) for node in graph.node]
    constants = {t.name for graph in iter_graphs(model.graph) for t in graph.initializer}
    constants.update(node.output[0] for node in nodes if node.op_type == "Constant")
    producers = {out: node for node in nodes for out in node.output}
    passing = {"Add", "Div", "Mul", "Where", "Cast", "Sub", "Reshape", "Identity"}
    blocks = 0
    for node in nodes:
        if node.op_type != "Softmax":
            continue
        frontier, seen = [node.input[0]], set()
        while frontier:
            name = frontier.pop()
            producer = producers.get(name)
            if name in seen or producer is None:
                continue
            seen.add(name)
            if producer.op_type == "MatMul" and not any(i in constants for i in producer.input):
                blocks += 1
                break
            if producer.op_type in passing:
                frontier.extend(producer.input)
    return blocks


def torchscript_export(path: Path) -> bool:
    """Whether the graph reads as PyTorch's TorchScript exporter writes it (most nodes named after
    the module path, "/encoder/layer.0/…"), not as its dynamo exporter does ("node_…")."""
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    names = [node.name for node in model.graph.node]
    return model.producer_name == "pytorch" and sum(name.startswith("/") for name in names) > len(names) / 2


#: what to do where a TorchScript export's attention matched neither fuser, as measured on transformers'
#: exports (BERT, GPT-2, Llama): onnxscript fused attention in every layer of each dynamo export; ONNX
#: Runtime's fusion matched BERT's only where its attention was exported in transformers' "eager" form,
#: and the default ("sdpa") form matched neither
EXPORT_ADVICE = ("This graph came from PyTorch's TorchScript exporter: export it again with "
                 "torch.onnx.export(..., dynamo=True), whose graphs onnxscript's fusions match, or, for a "
                 "BERT-like encoder, with attn_implementation=\"eager\", whose attention ONNX Runtime's fusion matches.")


def attention_layers(blocks: int, fused: dict) -> dict:
    """{"fused", "of", "ops"}: how many of the graph's `blocks` attention blocks (layers) the
    kept result fused, from its fused operators (one attention operator a layer), and which
    operators took them ({"GroupQueryAttention": 3, "MultiHeadAttention": 1})."""
    ops = {op: n for op, n in fused.items() if op in ATTENTION_OPS}
    return {"fused": min(blocks, sum(ops.values())), "of": blocks, "ops": ops}


def attention_text(layers: dict) -> str:
    """"GroupQueryAttention in 4 of 4 layers", "attention fused in 4 of 4 layers
    (GroupQueryAttention ×3, MultiHeadAttention ×1)", "attention fused in 0 of 4 layers"."""
    ops, plural = layers.get("ops") or {}, "s" if layers["of"] > 1 else ""
    if len(ops) == 1:
        return f"{next(iter(ops))} in {layers['fused']} of {layers['of']} layer{plural}"
    which = f" ({', '.join(f'{op} ×{n}' for op, n in ops.items())})" if ops else ""
    return f"attention fused in {layers['fused']} of {layers['of']} layer{plural}{which}"


def rotations(path: Path) -> int:
    """The rotary position embeddings a graph applies unfused: rotate_half, the Concat of a
    negated Slice of a tensor's second half with a Slice of its first (HF's Llama, Phi, Qwen …)."""
    import onnx

    from app.core.model.intake import iter_graphs

    model = onnx.load(str(path), load_external_data=False)
    nodes = [node for graph in iter_graphs(model.graph) for node in graph.node]
    producers = {out: node for node in nodes for out in node.output}

    def op(name: str) -> str:
        return producers[name].op_type if name in producers else ""

    count = 0
    for node in nodes:
        if node.op_type == "Concat" and len(node.input) == 2 and op(node.input[0]) == "Neg" and \
                op(node.input[1]) == "Slice" and op(producers[node.input[0]].input[0]) == "Slice":
            count += 1
    return count


def fused_rotations(path: Path) -> dict:
    """{"RotaryEmbedding": n, "GroupQueryAttention": m}: the rotations a fused graph applies in
    RotaryEmbedding operators, and inside GroupQueryAttention (do_rotary: query and key, two a node)."""
    import onnx

    from app.core.model.intake import iter_graphs

    model = onnx.load(str(path), load_external_data=False)
    counts = Counter()
    for graph in iter_graphs(model.graph):
        for node in graph.node:
            if node.op_type == "RotaryEmbedding":
                counts["RotaryEmbedding"] += 1
            elif node.op_type == "GroupQueryAttention" and any(a.name == "do_rotary" and a.i for a in node.attribute):
                counts["GroupQueryAttention"] += 2
    return dict(counts)


def rotary_layers(source_rotations: int, fused: dict) -> dict:
    """{"fused", "of", "ops"}: how many of the source's rotations the result applies fused, and where."""
    return {"fused": min(source_rotations, sum(fused.values())), "of": source_rotations, "ops": fused}


def rotary_text(rotary: dict) -> str:
    """"fused for 8 of 8 rotations (6 inside GroupQueryAttention, 2 as RotaryEmbedding)"."""
    where = ", ".join(f"{n} {'as' if op == 'RotaryEmbedding' else 'inside'} {op}" for op, n in rotary["ops"].items())
    return (f"fused for {rotary['fused']} of {rotary['of']} rotation{'s' if rotary['of'] > 1 else ''}"
            + (f" ({where})" if where else ""))


def fusers_lines(result: dict) -> list[str]:
    """What each fuser made of the model, the kept one first, as plain sentences."""
    outcomes, kept = result.get("fusers", {}), result.get("fuser")
    lines = []
    for name in sorted(outcomes, key=lambda n: n != kept):
        outcome = outcomes[name]
        fused = ", ".join(f"{op} ×{n}" for op, n in outcome.get("fused_operators", {}).items()) or "nothing fused"
        if outcome.get("problem"):
            state = f"not used — {outcome['problem']}"
        elif name == kept:
            state = f"kept: {fused}"
        else:
            state = f"not kept: {fused}" + (" (outside the tolerance)" if outcome.get("passed") is False else "")
        lines.append(f"{name}: {state}")
    return lines
