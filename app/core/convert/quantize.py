"""Quantization with onnxruntime.quantization: int8 dynamic and int8 static (calibrated on
random or the user's inputs); int4 weight packing (app.core.convert.int4) shares its steps
and repairs.

Repairs: a model the quantizer cannot read (weights made by Constant nodes, shapes it
cannot infer) is pre-processed with `quant_pre_process` first, and quantized without it
when the pre-processing itself keeps failing; declared shapes that contradict ONNX's shape
inference, the standard domain declared twice, or subgraphs whose weights live in the
outer graph (the quantizer looks for a Conv's weight in its own graph), are amended in a
copy; a node ORT cannot load or run once quantized is excluded from quantization by name."""

from __future__ import annotations

import re
from pathlib import Path

from app.core.convert.work import Handler, Problem, Work, find_node, node_index
from app.core.jobs.errors import UserError
from app.core.convert.calibration import FeedReader
from app.core.model.output import data_file_name, load_model, op_counts

#: operators whose presence shows the quantizer really did something
QUANTIZED_OPS = {"DynamicQuantizeLinear", "QuantizeLinear", "DequantizeLinear", "MatMulInteger", "ConvInteger",
                 "QLinearConv", "QLinearMatMul", "com.microsoft.MatMulNBits", "com.microsoft.GatherBlockQuantized",
                 "com.microsoft.DynamicQuantizeMatMul", "com.microsoft.DynamicQuantizeLSTM",
                 "com.microsoft.QAttention", "com.microsoft.MatMulIntegerToFloat", "com.microsoft.QGemm",
                 "com.microsoft.QuantizeLinear", "com.microsoft.DequantizeLinear"}
_NEEDS_PREPROCESS = re.compile(r"to be an initializer|ShapeInference|shape inference|Inferred shape|"
                               r"not in graph input|undefined", re.I)
#: the quantizer's shape inference tripping over the shapes the model declares (value_info)
_DECLARED_SHAPES_WRONG = re.compile(r"and existing shape differ|differs from existing|Unable to find data type", re.I)
_OUTER_WEIGHT = re.compile(r"Expected (\S+) to be an initializer")
_QUANT_SUFFIXES = re.compile(r"(_quant|_QuantizeLinear|_DequantizeLinear|_MatMulNBits|_Q4|_output_quantized)$")


def amended(work: Work) -> Path:
    """The source, or a copy with the amendments the repairs asked for: its declared
    intermediate shapes dropped (the quantizer infers them again), the standard domain
    declared once."""
    if not (work.plan.get("drop_value_info") or work.plan.get("single_onnx_domain")
            or work.plan.get("weights_into_subgraphs")):
        return work.source
    from app.core.model.intake import iter_graphs
    from app.core.model.output import save_model

    model = load_model(work.source)
    if work.plan.get("drop_value_info"):
        for graph in iter_graphs(model.graph):
            del graph.value_info[:]
    if work.plan.get("weights_into_subgraphs"):
        _weights_into_subgraphs(model)
    if work.plan.get("single_onnx_domain"):
        standard = [opset for opset in model.opset_import if opset.domain in ("", "ai.onnx")]
        for duplicate in standard[1:]:
            model.opset_import.remove(duplicate)
        standard[0].domain = ""
    target = work.scratch("amended.onnx")
    save_model(model, target, work.large)
    return target


def _weights_into_subgraphs(model) -> None:
    """Give each subgraph its own copy of the outer weights its nodes read (the quantizer
    looks for a subgraph's weights in that subgraph only); an outer weight no outer node
    reads any more is dropped."""
    outer = {tensor.name: tensor for tensor in model.graph.initializer}

    def visit(graph, seen: set) -> None:
        own = seen | {tensor.name for tensor in graph.initializer}
        for node in graph.node:
            if graph is not model.graph:
                for name in node.input:
                    if name in outer and name not in own:
                        graph.initializer.add().CopyFrom(outer[name])
                        own.add(name)
            for attr in node.attribute:
                for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                    visit(sub, own if graph is not model.graph else set())

    visit(model.graph, set())
    read = {name for node in model.graph.node for name in node.input} | {o.name for o in model.graph.output}
    kept = [tensor for tensor in model.graph.initializer if tensor.name in read]
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept)


def _preprocessed(work: Work) -> Path:
    """The model the quantizer reads: the (amended) source, or its pre-processed copy."""
    source = amended(work)
    if not work.plan.get("preprocess"):
        return source
    from onnxruntime.quantization import quant_pre_process

    target = work.scratch("preprocessed.onnx")
    flags = work.plan.get("preprocess_flags", {})
    try:
        quant_pre_process(str(source), str(target), save_as_external_data=work.large,
                          all_tensors_to_one_file=True, external_data_location=data_file_name(target.name), **flags)
    except Exception as exc:  # the pre-processor raises plain Exceptions too; the repair reads the text
        raise RuntimeError(f"pre-processing: {type(exc).__name__}: {exc}") from None
    return target


def exclusions(work: Work, read: Path | None = None) -> list[str]:
    """The nodes to leave unquantized, by name: the user's and the repairs'. When the quantizer
    reads a pre-processed copy (`read`), a node its graph optimisation folded into another (a
    BatchNormalization or a bias Add into the Conv before it) is no longer there, and its name
    would leave nothing unquantized: the node that now makes its outputs is left in its place,
    and `details["kept_instead"]` says which."""
    names = list(dict.fromkeys(work.options.get("nodes_to_exclude", []) + work.plan.get("exclude", [])))
    if not names or read is None or read == work.source:
        return names
    import onnx

    from app.core.model.intake import iter_graphs

    after = [node for graph in iter_graphs(onnx.load(str(read), load_external_data=False).graph)
             for node in graph.node]
    present = {node.name for node in after}
    missing = [name for name in names if name not in present]
    if not missing:
        return names
    makers = {tensor: node.name for node in after for tensor in node.output}
    before = {node.name: node for graph in iter_graphs(onnx.load(str(work.source), load_external_data=False).graph)
              for node in graph.node}
    instead = {}
    for name in missing:
        outputs = before[name].output if name in before else []
        instead[name] = list(dict.fromkeys(makers[tensor] for tensor in outputs if tensor in makers))
    work.details["kept_instead"] = {name: nodes for name, nodes in instead.items() if nodes}
    return list(dict.fromkeys(node for name in names for node in instead.get(name, [name])))


def quantizer_takes(kind: str) -> set[str]:
    """Every operator type ONNX Runtime's quantizer rewrites for an int8 `kind` (its registry)."""
    from onnxruntime.quantization.registry import IntegerOpsRegistry, QDQRegistry, QLinearOpsRegistry

    return set(IntegerOpsRegistry) if kind == "int8-dynamic" else set(QLinearOpsRegistry) | set(QDQRegistry)


def quantized_types(kind: str, options: dict) -> set[str]:
    """The operator types an int8 `kind` with `options` quantizes: the types the user named
    (else every type the quantizer takes), less the types left out."""
    chosen = set(options.get("op_types") or []) or quantizer_takes(kind)
    return chosen - set(options.get("exclude_op_types") or [])


def _op_types(work: Work) -> list[str] | None:
    """The operator types to quantize: the user's (None: every type the quantizer takes),
    less the types to leave out."""
    chosen, left_out = work.options["op_types"], set(work.options.get("exclude_op_types", []))
    if not left_out:
        return chosen or None
    kept = sorted(quantized_types(work.kind, work.options))
    if not kept:
        raise UserError("bad-option", f"leaving out {', '.join(sorted(left_out))} leaves no operator type to "
                                      "quantize")
    return kept


class NothingQuantized(Exception):
    """The quantizer ran but changed nothing (a repair may find what it missed)."""


def _quantized_ops(counts: dict) -> int:
    return sum(n for op, n in counts.items() if op in QUANTIZED_OPS)


def require_quantized(work: Work) -> None:
    after = work.ops_after = op_counts(work.target)
    before = work.summary["op_counts"]
    if _quantized_ops(after) > _quantized_ops(before):
        return
    if work.summary["subgraph_count"] and work.kind == "int8-dynamic" and not work.plan.get("subgraphs"):
        raise NothingQuantized("the main graph holds nothing to quantize")
    name = work.source.name
    if work.kind == "int4":
        types = list(work.options["op_types"]) + (["Gemm"] if "MatMul" in work.options["op_types"] else [])
        count = sum(before.get(op, 0) for op in types)
        raise UserError("nothing-to-quantize", f"{name}: nothing was quantized — int4 packs the constant 2-D "
                                               f"weights of {'/'.join(types)} nodes, and "
                                               + (f"none of its {count} such nodes has one" if count else
                                                  "it has no such nodes"))
    raise UserError("nothing-to-quantize", f"{name}: nothing was quantized — none of its operators has constant "
                                           f"weights the {work.kind} quantizer takes (MatMul, Conv, Gemm, "
                                           "Attention, LSTM …)")


def _refuse_quantized_source(work: Work) -> None:
    found = sorted(op for op in work.summary["op_counts"] if op in QUANTIZED_OPS)
    if found:
        raise UserError("nothing-to-quantize", f"{work.source.name}: is already quantized ({', '.join(found)}); "
                                               "quantize the float model it was made from")


def begin(work: Work) -> None:
    """Every quantizing try starts here: refuse a quantized source, note the user's exclusions."""
    _refuse_quantized_source(work)
    work.kept = [k for k in work.kept if k.get("source") == "repair"]
    asked = work.options.get("nodes_to_exclude", []) + [f"every {op}" for op in work.options.get("exclude_op_types", [])]
    if asked:
        work.kept.insert(0, {"what": ", ".join(asked), "why": "you asked for it", "source": "user"})


def produce_int8_dynamic(work: Work) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    options = work.options
    begin(work)
    read = _preprocessed(work)
    quantize_dynamic(str(read), str(work.target), op_types_to_quantize=_op_types(work),
                     per_channel=options["per_channel"], reduce_range=options["reduce_range"],
                     weight_type=QuantType[options["weight_type"]], nodes_to_exclude=exclusions(work, read),
                     use_external_data_format=work.large,
                     extra_options={"EnableSubgraph": True} if work.plan.get("subgraphs") else None)
    require_quantized(work)


def produce_int8_static(work: Work) -> None:
    options = work.options
    if options["preprocess"] and "preprocess" not in work.plan:
        work.plan["preprocess"] = True
    begin(work)
    reader = FeedReader(work, work.summary["inputs"])
    work.details["calibration_samples"] = reader.count
    work.details["calibration_source"] = options["calibration"] or (
        f"your data folder {work.config.inputs.data}" if work.config.inputs.data else
        "your fidelity inputs" if work.config.inputs.mode == "files" else "random")
    try:
        _quantize_static(work, reader)
    except Exception as exc:  # calibration runs the model: a failure there is about the samples
        if "Non-zero status code returned while running" not in str(exc):
            raise
        raise UserError("calibration-failed", f"{work.source.name}: the model fails on the calibration samples "
                                              f"({work.details['calibration_source']}): "
                                              f"{Problem('run', str(exc)).short()[:300]} — calibrate on real "
                                              "inputs (a folder of .npy/.npz files) or set the dimensions they "
                                              "need") from None
    require_quantized(work)


def _quantize_static(work: Work, reader: FeedReader) -> None:
    from onnxruntime.quantization import CalibrationMethod, QuantFormat, QuantType, quantize_static

    options = work.options
    read = _preprocessed(work)
    quantize_static(str(read), str(work.target), calibration_data_reader=reader,
                    quant_format=QuantFormat[options["quant_format"]], op_types_to_quantize=_op_types(work),
                    per_channel=options["per_channel"], reduce_range=options["reduce_range"],
                    activation_type=QuantType[options["activation_type"]],
                    weight_type=QuantType[options["weight_type"]], nodes_to_exclude=exclusions(work, read),
                    use_external_data_format=work.large,
                    calibrate_method=CalibrationMethod[options["calibrate_method"]],
                    extra_options={"ActivationSymmetric": options["activation_symmetric"],
                                   "WeightSymmetric": options["weight_symmetric"]})


def _opset(work: Work) -> int:
    return int(work.summary["opsets"].get("ai.onnx", 0))


def repair_quantized(work: Work, problem: Problem) -> dict | None:
    import onnx

    plan, message = work.plan, problem.message
    if problem.stage == "convert":
        if message.startswith("NothingQuantized"):
            plan["subgraphs"] = True
            return work.repair("quantized inside the If/Loop subgraphs too (EnableSubgraph)",
                               "the main graph alone holds nothing the quantizer can take")
        if "Failed to find proper ai.onnx domain" in message:
            return _one_standard_domain(work)
        if message.startswith("RuntimeError: pre-processing") and "ConvertError" in message:
            raise UserError("unsupported-model", f"{work.source.name}: opset {_opset(work)} is below the 10 "
                                                 "quantization needs, and ONNX's version converter could not "
                                                 f"upgrade it ({message})")
        outer = _OUTER_WEIGHT.search(message)
        if outer and plan.get("subgraphs") and not plan.get("weights_into_subgraphs") and \
                outer.group(1) in {t.name for t in onnx.load(str(work.source), load_external_data=False).graph.initializer}:
            plan["weights_into_subgraphs"] = True
            return work.repair("gave each If/Loop subgraph its own copy of the outer weights it reads",
                               f"the quantizer looks for a subgraph's weights in that subgraph: {message}")
        if _DECLARED_SHAPES_WRONG.search(message) and not plan.get("drop_value_info") and _declares_shapes(work):
            plan["drop_value_info"] = True
            return work.repair("dropped the intermediate shapes the model declares (value_info), to be inferred "
                               "again", f"ONNX's shape inference disagrees with them: {message}")
        if not plan.get("preprocess") and not plan.get("preprocess_dropped") and _NEEDS_PREPROCESS.search(message):
            plan["preprocess"] = plan["preprocess_by_repair"] = True
            return work.repair("pre-processed the model with quant_pre_process (constants folded into "
                               "initializers, shapes inferred)", f"the quantizer could not read it: {message}")
        if plan.get("preprocess"):
            return _lighter_preprocessing(work, message)
        if "ConvertError" in message and _opset(work) < 10:
            raise UserError("unsupported-model", f"{work.source.name}: opset {_opset(work)} is below the 10 "
                                                 "quantization needs, and ONNX's version converter could not "
                                                 f"upgrade it ({message})")
        return None
    return _exclude_reported_node(work, problem)


def _lighter_preprocessing(work: Work, message: str) -> dict | None:
    """Pre-processing (or the quantizer after it) failed: leave out the step most likely at fault."""
    flags = work.plan.setdefault("preprocess_flags", {})
    steps = [("skip_symbolic_shape", "symbolic shape inference"), ("skip_onnx_shape", "ONNX shape inference"),
             ("skip_optimization", "the graph optimisation step")]
    hinted = [step for step in steps if step[1].split()[0].lower() in message.lower()]
    for flag, what in hinted + steps:
        if flag not in flags:
            flags[flag] = True
            return work.repair(f"pre-processed without {what}", f"it failed, or left shapes the quantizer "
                                                                 f"rejects: {message}")
    if work.plan.get("preprocess_by_repair"):     # the source as it is failed before
        return None
    work.plan["preprocess"], work.plan["preprocess_dropped"] = False, True
    return work.repair("quantized without pre-processing", f"the pre-processing failed even with each of its "
                                                           f"steps left out: {message}")


def _declares_shapes(work: Work) -> bool:
    import onnx

    from app.core.model.intake import iter_graphs

    skeleton = onnx.load(str(work.source), load_external_data=False)
    return any(len(graph.value_info) for graph in iter_graphs(skeleton.graph))


def _one_standard_domain(work: Work) -> dict:
    """The quantizer wants the standard operator set declared exactly once ('' or 'ai.onnx')."""
    import onnx

    name = work.source.name
    declared = [(o.domain, o.version) for o in onnx.load(str(work.source), load_external_data=False).opset_import
                if o.domain in ("", "ai.onnx")]
    if not declared:
        domains = ", ".join(work.summary["opsets"]) or "none"
        raise UserError("nothing-to-quantize", f"{name}: uses no standard ONNX operators (its operator sets: "
                                               f"{domains}); the quantizer works on those, so there is nothing "
                                               "to quantize")
    versions = sorted({version for _, version in declared})
    if len(versions) > 1 or work.plan.get("single_onnx_domain"):
        raise UserError("unsupported-model", f"{name}: declares the standard ONNX operator set {len(declared)} "
                                             f"times (as {', '.join(repr(d) for d, _ in declared)}, versions "
                                             f"{', '.join(map(str, versions))}); the quantizer needs it once")
    work.plan["single_onnx_domain"] = True
    return work.repair("declared the standard ONNX operator set once", f"the model declares it {len(declared)} "
                                                                       "times (as '' and 'ai.onnx'), and the "
                                                                       "quantizer needs exactly one")


def _exclude_reported_node(work: Work, problem: Problem) -> dict | None:
    import onnx

    reported = problem.node_name()
    if not reported:
        return None
    quantized_from = _QUANT_SUFFIXES.sub("", reported)
    index = node_index(onnx.load(str(work.source), load_external_data=False))
    found = find_node(index, quantized_from) or find_node(index, reported)
    if found is None:
        return None
    node = found[0]
    if node.name in exclusions(work):
        return None
    work.plan.setdefault("exclude", []).append(node.name)
    why = f"ONNX Runtime could not {problem.stage} it once quantized: {problem.short()}"
    work.kept.append({"what": f"node '{node.name}' ({node.op_type})", "why": why, "source": "repair"})
    return work.repair(f"left node '{node.name}' ({node.op_type}) unquantized", why)


HANDLERS = {
    "int8-dynamic": Handler(produce_int8_dynamic, repair_quantized),
    "int8-static": Handler(produce_int8_static, repair_quantized),
}
