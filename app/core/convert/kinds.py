"""The float conversions: fp16 and auto mixed precision (onnxconverter-common), the ORT
format (onnxruntime.tools) and offline optimisation (SessionOptions.optimized_model_filepath).
Quantization is in quantize.py, transformer fusions in transformers.py.

Each producer calls the library as it is; the fp16 repairer turns ORT's complaint about
the result into a block list entry, which is how the library itself is meant to be
steered."""

from __future__ import annotations

import ast
import os
import warnings
from dataclasses import replace
from pathlib import Path

from app.core.convert.fp16_blocks import join_kept_neighbours, name_unnamed_nodes
from app.core.convert.work import Handler, Problem, Work, find_node, node_index
from app.core.jobs.errors import UserError
from app.core.model.output import data_file_name, load_model, no_space, op_counts_of, save_model
from app.core.session.providers import provider_name
from app.core.session.config import ProviderSpec
from app.core.jobs.stdio import capture_output

FLOAT = 1


# fp16 ------------------------------------------------------------------------
def _model_for_fp16(work: Work):
    """The source with its shapes inferred; a large model is inferred without its weights
    (shape inference only needs their types and dims, and protobuf stops at 2 GB)."""
    import onnx

    if not work.large or work.plan.get("no_shape_infer") or work.options["disable_shape_infer"]:
        return work.take_model(), work.plan.get("no_shape_infer", False) or work.options["disable_shape_infer"]
    work.preloaded = None
    skeleton = onnx.load(str(work.source), load_external_data=False)
    inferred = onnx.shape_inference.infer_shapes(skeleton)
    onnx.load_external_data_for_model(inferred, str(work.source.parent))
    return inferred, True


def _cast_to_float_nodes(model) -> list[str]:
    from app.core.model.intake import iter_graphs
    return [n.name for g in iter_graphs(model.graph) for n in g.node
            if n.op_type == "Cast" and any(a.name == "to" and a.i == FLOAT for a in n.attribute)]


def produce_fp16(work: Work) -> None:
    from onnxconverter_common import float16

    options, plan = work.options, work.plan
    model, shapes_done = _model_for_fp16(work)
    name_unnamed_nodes(model)
    blocked_ops = set(float16.DEFAULT_OP_BLOCK_LIST) | set(options["op_block_list"]) | set(plan.get("ops", []))
    blocked_nodes = set(options["node_block_list"]) | set(plan.get("nodes", []))
    if plan.get("casts"):
        blocked_nodes |= set(_cast_to_float_nodes(model))
    present = {n.op_type for n in model.graph.node}
    defaults = sorted((set(float16.DEFAULT_OP_BLOCK_LIST) - set(options["op_block_list"])) & present)
    work.kept = [k for k in work.kept if k.get("source") == "repair"]
    if defaults:
        work.kept.insert(0, {"what": ", ".join(defaults), "why": "the converter keeps these operator types in "
                                                                 "float32 by default", "source": "library"})
    if options["op_block_list"] or options["node_block_list"]:
        work.kept.insert(0, {"what": ", ".join(options["op_block_list"] + options["node_block_list"]),
                             "why": "you asked for it", "source": "user"})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            converted = float16.convert_float_to_float16(
                model, min_positive_val=options["min_positive_val"], max_finite_val=options["max_finite_val"],
                keep_io_types=options["keep_io_types"] or plan.get("keep_io", False),
                disable_shape_infer=shapes_done, op_block_list=sorted(blocked_ops),
                node_block_list=sorted(blocked_nodes))
        except ValueError as exc:
            if "already converted to float16" in str(exc):
                raise UserError("nothing-to-convert", f"{work.source.name}: already holds float16 tensors; "
                                                      "converting it again would damage it") from None
            raise
    if plan.get("flow_nodes"):
        _restore_outer_weights(converted, work.source, set(plan["flow_nodes"]))
    join_kept_neighbours(converted.graph)
    clipped = [w for w in caught if "truncated" in str(w.message) or "out of range" in str(w.message)]
    work.details["clipped_weight_warnings"] = len(clipped)
    if clipped and not plan.get("clip_noted"):
        plan["clip_noted"] = True
        work.warnings.append(f"{len(clipped)} weight tensor(s) held values outside float16's range; they were "
                             f"clipped to ±{options['max_finite_val']:g} or raised to ±{options['min_positive_val']:g}.")
    save_model(converted, work.target, work.large)
    work.ops_after = op_counts_of(converted)


def _restore_outer_weights(converted, source: Path, flow_nodes: set) -> None:
    """Give the If/Loop/Scan nodes kept in float32 their weights back in float32.

    Their subgraphs read some weights from the outer graph, which the converter turned
    to float16 since no node it was told to keep takes them as a declared input."""
    import onnx

    from app.core.model.intake import iter_graphs

    weights = {t.name: t for t in converted.graph.initializer}
    needed = set()
    for node in converted.graph.node:
        if node.name in flow_nodes:
            for attr in node.attribute:
                for graph in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                    for sub in iter_graphs(graph):
                        needed.update(name for n in sub.node for name in n.input if name in weights)
    needed = {name for name in needed if weights[name].data_type == onnx.TensorProto.FLOAT16}
    if not needed:
        return
    for tensor in load_model(source).graph.initializer:
        if tensor.name in needed and tensor.data_type == onnx.TensorProto.FLOAT:
            weights[tensor.name].CopyFrom(tensor)


def _block(work: Work, key: str, value: str, what: str, why: str) -> dict:
    work.plan.setdefault(key, []).append(value)
    work.kept.append({"what": what, "why": why, "source": "repair"})
    return work.repair(f"kept {what} in float32", why)


def repair_fp16(work: Work, problem: Problem) -> dict | None:
    import onnx

    plan = work.plan
    if problem.stage == "convert":
        if not plan.get("no_shape_infer") and not work.options["disable_shape_infer"]:
            plan["no_shape_infer"] = True
            return work.repair("converted without ONNX shape inference", f"the converter failed: {problem.message}")
        return None
    skeleton = onnx.load(str(work.source), load_external_data=False)
    name_unnamed_nodes(skeleton)
    index = node_index(skeleton)
    reported = problem.node_name()
    found = find_node(index, reported) if reported else None
    if found is None:
        if not (work.options["keep_io_types"] or plan.get("keep_io")):
            plan["keep_io"] = True
            return work.repair("kept the model's inputs and outputs float32", problem.message)
        return None
    node, top = found
    detail = f"ONNX Runtime: {problem.short()}"
    if top is not node and top.name not in plan.get("nodes", []):
        plan.setdefault("flow_nodes", []).append(top.name)
        return _block(work, "nodes", top.name, f"the {top.op_type} node '{top.name}' with its subgraphs",
                      f"the converted subgraph broke node '{reported}'; {detail}")
    if node.op_type == "Cast" and not plan.get("casts"):
        plan["casts"] = True
        count = len(_cast_to_float_nodes(skeleton))
        work.kept.append({"what": f"{count} Cast-to-float32 node(s)", "source": "repair",
                          "why": "the converter marks their outputs float16 while they still produce float32"})
        return work.repair(f"kept {count} Cast-to-float32 node(s) in float32",
                           f"the converter relabels their outputs as float16; {detail}")
    if node.op_type != "Cast" and node.op_type not in plan.get("ops", []):
        return _block(work, "ops", node.op_type, f"every {node.op_type} operator",
                      f"ONNX Runtime rejects {node.op_type} on float16 data here; {detail}")
    if node.name not in plan.get("nodes", []):
        return _block(work, "nodes", node.name, f"node '{node.name}' ({node.op_type})", detail)
    return None


# mixed -----------------------------------------------------------------------
def produce_mixed(work: Work) -> None:
    from onnxconverter_common import auto_mixed_precision

    if work.reference is None:
        raise UserError("bad-option", "auto mixed precision needs the fidelity inputs to decide what stays float32")
    options = work.options
    model = work.take_model()
    feeds = dict(work.reference.feeds)
    with capture_output() as captured:
        converted = auto_mixed_precision.auto_convert_mixed_precision(
            model, feeds, rtol=options["rtol"], atol=options["atol"], keep_io_types=options["keep_io_types"])
    kept = kept_by_mixed(captured.text)
    work.details["mixed_kept_nodes"] = kept
    work.kept = [{"what": f"{len(kept)} node(s): {', '.join(kept[:20])}{' …' if len(kept) > 20 else ''}",
                  "why": f"in float16 they move the outputs beyond rtol {options['rtol']:g} / "
                         f"atol {options['atol']:g}", "source": "library"}] if kept else []
    save_model(converted, work.target, work.large)


def kept_by_mixed(printed: str) -> list[str]:
    """The nodes auto_convert_mixed_precision left in float32 (it prints them last, as 'Done: [...]')."""
    for line in reversed(printed.splitlines()):
        if line.startswith("Done:"):
            try:
                return [str(n) for n in ast.literal_eval(line[5:].strip())]
            except (ValueError, SyntaxError):
                return []
    return []


def _no_repair(work: Work, problem: Problem) -> None:
    return None


# ORT format -------------------------------------------------------------------
def ort_config_name(output: Path, options: dict) -> str:
    """The required-operators config beside the .ort file, named as ORT's tool names it."""
    kind = "required_operators_and_types" if options.get("type_reduction") else "required_operators"
    runtime = ".with_runtime_opt" if options.get("optimization_style") == "Runtime" else ""
    return f"{output.stem}.{kind}{runtime}.config"


def produce_ort(work: Work) -> None:
    from onnxruntime.tools.convert_onnx_models_to_ort import OptimizationStyle, convert_onnx_models_to_ort

    folder = work.scratch("ort")
    folder.mkdir(exist_ok=True)
    source = work.source
    if work.options["optimization_style"] == "Runtime":
        # For this style the tool makes a temporary folder beside the model it is given
        source = _linked_source(work)
    # The tool leaves ORT's NCHWc layout transformation out unless told the platform is amd64,
    # while a session of the source applies it on x86-64: without it, convolution models ran
    # at 0.5-0.8× their source's speed (benchmarks/convert_speed.py).
    platform = work.options["target_platform"]
    with capture_output() as captured:
        try:
            convert_onnx_models_to_ort(source, output_dir=folder,
                                       optimization_styles=[OptimizationStyle[work.options["optimization_style"]]],
                                       enable_type_reduction=work.options["type_reduction"],
                                       target_platform=None if platform == "any" else platform)
        except Exception as exc:  # the tool prints its reason before re-raising
            reason = [line for line in captured.text.splitlines() if line.startswith("Error converting")]
            raise RuntimeError(reason[-1] if reason else str(exc)) from None
    models = sorted(folder.glob("*.ort"))
    configs = sorted(folder.glob("*.config"))
    if not models or not configs:
        raise RuntimeError("the ORT-format tool wrote no model")
    os.replace(models[0], work.target)
    config_name = ort_config_name(work.target, work.options)
    os.replace(configs[0], work.target.parent / config_name)
    work.companions = [config_name]
    work.details["required_operators_config"] = config_name


def _linked_source(work: Work) -> Path:
    """The source and its data files seen from a folder in the staging folder: hard links
    where the file system allows them, copies where it does not."""
    import shutil

    folder = work.scratch("ort-source")
    for name in [work.source.name, *work.summary["external_data_files"]]:
        original, seen = work.source.parent / name, folder / name
        seen.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(original, seen)
        except OSError:
            shutil.copyfile(original, seen)
    return folder / work.source.name


# offline optimisation ------------------------------------------------------------
def produce_optimize(work: Work) -> None:
    from app.core.session.create import create_session

    target = provider_name(work.options["target_provider"])
    config = replace(work.config, providers=[ProviderSpec(target)],
                     graph_optimization_level=work.options["level"])
    work.config = replace(work.config, providers=[ProviderSpec(target)])

    def customize(options) -> None:
        options.optimized_model_filepath = str(work.target)
        if work.large:
            options.add_session_config_entry("session.optimized_model_external_initializers_file_name",
                                             data_file_name(work.target.name))
            options.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes",
                                             "1024")

    try:
        create_session(work.source, config, customize)
    except UserError as exc:
        # ORT says only "Protobuf serialization failed" when the disk is full as it writes
        import shutil

        needed = max(work.source.stat().st_size, int(work.summary.get("initializer_bytes") or 0))
        if "serializ" in str(exc) and shutil.disk_usage(work.target.parent).free < needed:
            raise no_space(work.target.parent, needed) from None
        raise
    work.details["optimized_for"] = {"provider": target, "level": work.options["level"]}


HANDLERS = {
    "fp16": Handler(produce_fp16, repair_fp16),
    "mixed": Handler(produce_mixed, _no_repair),
    "ort": Handler(produce_ort, _no_repair),
    "optimize": Handler(produce_optimize, _no_repair),
}
