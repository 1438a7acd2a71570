"""What a decoder's transformer fusion leaves to say: where grouped-query attention (fewer key/value
heads than query heads) did not become GroupQueryAttention, and why; and the inputs the fused model
no longer reads.

onnxscript's GroupQueryAttention rule matches the layer PyTorch's dynamo exporter writes for
Hugging Face's Llama-family models; ONNX Runtime's optimizer has no grouped-query fusion of its
own for these graphs (its rotary fusions know the TorchScript export)."""

from __future__ import annotations

from pathlib import Path

from app.core.ort_messages import first_line

#: what onnxscript's grouped-query rule needs in each layer
GQA_NEEDS = ("the rotary embedding on query and key, the cache grown by Concat, the key/value heads repeated by "
             "Unsqueeze/Expand/Reshape and transformers' causal mask from attention_mask")


def canonical_rotary_angles(graph) -> int:
    """Rewrite each rotary embedding's angles written as a broadcast product — positions
    [batch, sequence, 1] (Unsqueeze, Cast) × inv_freq [size/2] — as the MatMul of inv_freq
    [1, size/2, 1] and positions [batch, 1, sequence], transposed: the same numbers, in the layout
    onnxscript's rotary (cos/sin cache) fusion reads. PyTorch 2.14's dynamo exporter writes
    transformers 5's Llama the first way, so no rotation fused and no GroupQueryAttention either;
    the count rewritten (the graph is changed in place)."""
    import numpy as np
    from onnx import helper, numpy_helper

    weights = {tensor.name: tensor for tensor in graph.initializer}
    producers = {out: node for node in graph.node for out in node.output}
    readers: dict[str, list] = {}
    for node in graph.node:
        for name in node.input:
            readers.setdefault(name, []).append(node)

    def constant(name: str):
        node = producers.get(name)
        if name in weights:
            return numpy_helper.to_array(weights[name])
        if node is not None and node.op_type == "Constant" and node.attribute and node.attribute[0].name == "value":
            return numpy_helper.to_array(node.attribute[0].t)
        return None

    rewritten = 0
    for mul in [node for node in graph.node if node.op_type == "Mul" and len(node.input) == 2]:
        first, second = mul.input
        freq_name, positions = (second, first) if constant(second) is not None else (first, second)
        inv_freq, cast = constant(freq_name), producers.get(positions)
        if inv_freq is None or inv_freq.ndim != 1 or cast is None or cast.op_type != "Cast":
            continue
        unsqueeze = producers.get(cast.input[0])
        axes = constant(unsqueeze.input[1]) if unsqueeze is not None and unsqueeze.op_type == "Unsqueeze" \
            and len(unsqueeze.input) == 2 else None
        if axes is None or np.ravel(axes).tolist() not in ([-1], [2]) or \
                not all(reader.op_type == "Concat" for reader in readers.get(mul.output[0], [None])):
            continue
        stem = f"{mul.name or mul.output[0]}_angles"
        column, axis = f"{freq_name}_column", f"{stem}_axis"
        if column not in weights:
            weights[column] = numpy_helper.from_array(inv_freq.reshape(1, -1, 1).astype(inv_freq.dtype), column)
            graph.initializer.append(weights[column])
        graph.initializer.append(numpy_helper.from_array(np.array([1], np.int64), axis))
        to = next(a.i for a in cast.attribute if a.name == "to")
        made = [helper.make_node("Unsqueeze", [unsqueeze.input[0], axis], [f"{stem}_rows"], name=f"{stem}_Unsqueeze"),
                helper.make_node("Cast", [f"{stem}_rows"], [f"{stem}_positions"], name=f"{stem}_Cast", to=to),
                helper.make_node("MatMul", [column, f"{stem}_positions"], [f"{stem}_product"], name=f"{stem}_MatMul"),
                helper.make_node("Transpose", [f"{stem}_product"], [mul.output[0]], name=f"{stem}_Transpose",
                                 perm=[0, 2, 1])]
        at = list(graph.node).index(mul)
        graph.node.remove(mul)
        for offset, node in enumerate(made):
            graph.node.insert(at + offset, node)
        rewritten += 1
    return rewritten


def rotary_source(work) -> Path:
    """The model onnxscript's fusions read: the source, or a copy of it in the work's scratch
    space with its rotary angles in the layout they know (canonical_rotary_angles), made once;
    `work.details["rotary_angles_rewritten"]` counts them."""
    if "rotary_source" in work.plan:
        return Path(work.plan["rotary_source"])
    import onnx
    from onnx.external_data_helper import load_external_data_for_model

    from app.core.model.output import save_model

    source = work.source
    model = onnx.load(str(source), load_external_data=False)      # the weights only where it pays
    count = canonical_rotary_angles(model.graph)
    if count:
        load_external_data_for_model(model, str(source.parent))
        work.details["rotary_angles_rewritten"] = count
        source = work.scratch("rotary.onnx")
        save_model(model, source, work.large)
    work.plan["rotary_source"] = str(source)
    return source


def rotary_angles_text(report: dict) -> str:
    """"rotary angles ×1 as MatMul + Transpose, …" (what was rewritten); '' where none was."""
    count = report.get("rotary_angles_rewritten")
    return (f"rotary angles ×{count} as MatMul + Transpose, the layout onnxscript's rotary fusion reads "
            "(the same numbers)") if count else ""


def kv_heads(path: Path) -> int:
    """The key/value heads of a decoder's cache: axis 1 of its rank-4 past inputs; 0 where unknown."""
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    heads = {dims[1].dim_value for value in model.graph.input if "past" in value.name.lower()
             for dims in [value.type.tensor_type.shape.dim] if len(dims) == 4 and dims[1].dim_value}
    return heads.pop() if len(heads) == 1 else 0


def grouped_query_notes(source: Path, num_heads: int, blocks: int, layers: dict | None, rotations: int) -> list[str]:
    """Warnings for grouped-query layers that did not become GroupQueryAttention, with the reason."""
    if not blocks or not layers:
        return []
    grouped = layers["ops"].get("GroupQueryAttention", 0)
    if 0 < grouped < blocks:
        return [f"GroupQueryAttention in {grouped} of {blocks} layers: onnxscript's grouped-query fusion did not "
                f"match the other {blocks - grouped}{_in_its_words(group_query_mismatch(source))}. It needs, in "
                f"each layer, {GQA_NEEDS}."]
    kv = kv_heads(source)
    if grouped or not kv or not num_heads or kv >= num_heads:
        return []
    found = ("no rotary embedding (rotate_half: Slice/Neg/Concat) was found in this graph" if not rotations else
             f"the layers do not have that layout{_in_its_words(group_query_mismatch(source))}")
    return [f"A grouped-query decoder ({kv} key/value heads for {num_heads} query heads) but no GroupQueryAttention: "
            f"onnxscript's fusion needs, in each layer, {GQA_NEEDS}; {found}."]


def _in_its_words(reason: str) -> str:
    return f" (onnxscript: {reason})" if reason else ""


def group_query_mismatch(source: Path) -> str:
    """onnxscript's own words for why its GroupQueryAttention rule did not match (e.g. "Mask does
    not match causal mask pattern"); '' where it cannot say. The fusions the rule builds on run
    first, in the order optimize_for_ort runs them, then the rule, then the rule again traced on
    the layers it left."""
    import contextlib
    import io

    try:
        import onnx_ir as ir
        import onnx_ir.passes.common as common_passes
        from onnxscript.rewriter.ort_fusions import _core
        from onnxscript.rewriter.ort_fusions.cos_sin_cache import fuse_cos_sin_cache
        from onnxscript.rewriter._basics import MatchingTracer
        from onnxscript.rewriter.ort_fusions.gqa import gqa_rules
        from onnxscript.rewriter.ort_fusions.rms_normalization import fuse_rms_normalization
        from onnxscript.rewriter.ort_fusions.rotary_embedding import (fuse_partial_rotary_embedding,
                                                                       fuse_rotary_embedding)
        from onnxscript.rewriter.ort_fusions.sdpa import fuse_sdpa
        from onnxscript.rewriter.ort_fusions.skip_normalization import (fuse_skip_layer_normalization,
                                                                         fuse_skip_rms_normalization)

        model = _core._pre_optimize(ir.load(str(source)))
        for fuse in (fuse_rms_normalization, fuse_skip_layer_normalization, fuse_skip_rms_normalization,
                     fuse_rotary_embedding, fuse_cos_sin_cache):
            fuse(model)
        common_passes.CommonSubexpressionEliminationPass()(model)
        fuse_partial_rotary_embedding(model)
        fuse_sdpa(model, apply_shape_inference=True)
        gqa_rules.apply_to_model(model)        # the layers it matches; the tracer then sees those it does not
        tracer, trace = MatchingTracer(), io.StringIO()
        gqa_rules.apply_to_model(model, tracer=tracer)
        with contextlib.redirect_stdout(trace):
            tracer.report()
    except Exception:  # onnxscript absent or changed: the reason is then the layout named above
        return ""
    failed = next((line for line in trace.getvalue().splitlines() if line.startswith("Graph matching failed")), "")
    return first_line(failed.split(":", 1)[-1].strip() if ":" in failed else failed.strip(), 200)


def unread_inputs_notes(source: Path, target: Path, layers: dict | None) -> list[str]:
    """A warning for each input the source reads and the fused model no longer does. onnxscript's
    GroupQueryAttention takes each sequence's length from position_ids (as onnxruntime-genai feeds
    a batch: right-padded), so attention_mask is left unread and a left-padded batch is not masked
    as the source masks it; the check runs unpadded and cannot see it."""
    unread = sorted(set(_read_inputs(source)) - set(_read_inputs(target)))
    grouped = bool((layers or {}).get("ops", {}).get("GroupQueryAttention"))
    return [f"The fused model no longer reads {name}: GroupQueryAttention takes each sequence's length from "
            f"position_ids, so a batch padded on the left (zeros in {name}) gets other answers than the source's; "
            "feed it unpadded or right-padded." if grouped and "mask" in name.lower() else
            f"The fused model no longer reads its input {name}; the source does." for name in unread]


def _read_inputs(path: Path) -> list[str]:
    """The graph inputs some node reads (in the main graph or a subgraph)."""
    import onnx

    from app.core.model.intake import iter_graphs

    model = onnx.load(str(path), load_external_data=False)
    read = {name for graph in iter_graphs(model.graph) for node in graph.node for name in node.input}
    return [value.name for value in model.graph.input if value.name in read]
