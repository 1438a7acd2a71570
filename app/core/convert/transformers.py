"""Transformer fusions with ONNX Runtime's transformer optimizer (onnxruntime.transformers).

The optimizer needs the architecture, the head count and the hidden size. Where the user
gives none they are read from the graph: the architecture is a decoder (gpt2) when the
attention has a causal mask, else an encoder (bert); the hidden size is the commonest
input width of the weight matrices; the head count comes from the target shapes that
split the attention into heads ([batch, sequence, heads, head_size], constant or put
together at run time from a Concat, as PyTorch exports it), or else from the
1/√head_size that scales the attention scores."""

from __future__ import annotations

import os
from pathlib import Path
from collections import Counter

from app.core.convert.work import Handler, Problem, Work, working_folder
from app.core.jobs.errors import UserError
from app.core.jobs.stdio import capture_output
from app.core.ort_messages import first_line

#: model types whose optimizer reads the head count and hidden size from the graph itself
#: when both are 0 (it refuses a hidden size without a head count)
SELF_DETECTING = {"bert", "mmdit", "sam2", "unet", "vae"}
#: the largest causal-mask constant read to see if it is lower-triangular (elements), and the
#: smallest side one has (the longest sequence the model takes)
MASK_ELEMENTS_READ = 1 << 24
MASK_SIDE_MIN = 8


def produce_transformers(work: Work) -> None:
    """Fuse with each fuser asked for (both by default) and keep the better result."""
    import shutil

    from app.core.convert.fusers import (FUSERS, assess, fused_counts, fuse_with_onnxscript, move_into_place,
                                         onnxscript_available, pick)
    from app.core.jobs.protocol import JobCancelled

    if "shape" not in work.plan:
        work.plan["shape"] = _settled_shape(work)
    tried = FUSERS if work.options["fuser"] == "best" else (work.options["fuser"],)
    outcomes, errors, folders = {}, {}, {}
    for name in tried:
        folders[name] = folder = work.scratch(f"fuser-{name}")
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        path = folder / work.target.name
        unusable = onnxscript_available() if name == "onnxscript" else ""
        if unusable:
            outcomes[name] = {"problem": unusable}
            continue
        try:
            with working_folder(folder):
                (_fuse_with_onnxruntime if name == "onnxruntime" else fuse_with_onnxscript)(work, path)
        except (UserError, JobCancelled, MemoryError):
            raise
        except Exception as exc:  # a fuser that fails leaves the other; both failing is a problem to repair
            errors[name] = exc
            outcomes[name] = {"problem": f"{type(exc).__name__}: {first_line(str(exc), 300)}"}
            continue
        outcomes[name] = {"fused_operators": fused_counts(work.summary["op_counts"], path),
                          **(assess(work, path) if len(tried) > 1 else {})}
    # none within the tolerance: the best that runs, and the fidelity report says how far it is
    best = pick(outcomes) or pick({n: {**o, "passed": None} for n, o in outcomes.items() if "problem" not in o})
    if best is None:         # nothing runs: a problem for the repairs
        if errors:
            raise next(iter(errors.values()))
        raise RuntimeError("; ".join(f"{name}: {o['problem']}" for name, o in outcomes.items() if o.get("problem")))
    move_into_place(folders[best], work.target)
    for folder in folders.values():
        shutil.rmtree(folder, ignore_errors=True)
    shape = work.plan["shape"]
    work.details.update(fused_operators=outcomes[best]["fused_operators"], fuser=best, fusers=outcomes,
                        model_type=shape["model_type"], num_heads=shape["num_heads"],
                        hidden_size=shape["hidden_size"], shape_source=shape["source"])
    _note_unfused(work, outcomes, best)


def _fuse_with_onnxruntime(work: Work, target) -> None:
    from onnxruntime.transformers.fusion_options import FusionOptions
    from onnxruntime.transformers.optimizer import optimize_model

    options, plan, shape = work.options, work.plan, work.plan["shape"]
    fusion = FusionOptions(shape["model_type"])
    for name in options["disable_fusions"]:
        setattr(fusion, f"enable_{name}", False)
    if not shape["num_heads"]:
        fusion.enable_attention = shape["model_type"] in SELF_DETECTING and fusion.enable_attention
    try:
        with capture_output():
            optimized = optimize_model(str(work.source), model_type=shape["model_type"], num_heads=shape["num_heads"],
                                       hidden_size=shape["hidden_size"], optimization_options=fusion,
                                       opt_level=plan.get("opt_level"))
    except Exception as exc:
        if "torch" not in str(exc) or "opt_level" in plan:
            raise
        plan["opt_level"] = 0
        work.repair("fused without ONNX Runtime's optimisation pre-pass (opt_level 0)",
                    "the optimizer's pre-pass imports PyTorch, which is not installed here")
        return _fuse_with_onnxruntime(work, target)
    if options["fp16"]:
        with capture_output():
            optimized.convert_float_to_float16(keep_io_types=True)
    optimized.save_model_to_file(str(target), use_external_data_format=work.large)


def _note_unfused(work: Work, outcomes: dict, best: str) -> None:
    """A warning where nothing was fused, where the graph has attention (grouped-query attention, rotary
    embeddings) that stayed unfused, and for the inputs the fused model no longer reads."""
    from app.core.convert.decoder_fusion import grouped_query_notes, rotary_source, unread_inputs_notes
    from app.core.convert.fusers import (EXPORT_ADVICE, attention_blocks, attention_layers, attention_text,
                                         fused_rotations, rotary_layers, rotary_text, rotations, torchscript_export)

    shape, plan = work.plan["shape"], work.plan
    fused = outcomes[best]["fused_operators"]
    blocks = plan.setdefault("attention_blocks", attention_blocks(work.source))
    if blocks:
        work.details["attention_layers"] = attention_layers(blocks, fused)
    rotated = plan.setdefault("rotations", rotations(work.source))
    if rotated:
        work.details["rotary"] = rotary_layers(rotated, fused_rotations(work.target))
    if "no_fusion_noted" in plan:
        return
    plan["no_fusion_noted"] = True
    work.warnings.extend(unread_inputs_notes(work.source, work.target, work.details.get("attention_layers")))
    why = "; ".join(f"{name}: {o['problem']}" for name, o in outcomes.items() if o.get("problem"))
    why = f" ({why})" if why else ""
    if not fused:
        work.warnings.append(f"No fusion matched this graph as a {shape['model_type']} model; check the model "
                             f"type (and the head count and hidden size){why}.")
        return
    layers = work.details.get("attention_layers")
    if blocks and not layers["fused"]:
        reason = ("the head count was not found" if not shape["num_heads"] else
                  f"neither fuser knows this attention's layout as a {shape['model_type']} model")
        advice = f" {EXPORT_ADVICE}" if shape["num_heads"] and torchscript_export(work.source) else ""
        work.warnings.append(f"The graph has {blocks} attention block{'s' if blocks > 1 else ''} but none was "
                             f"fused: {reason}{why}. The other fusions were kept.{advice}")
    elif blocks and layers["fused"] < blocks:
        work.warnings.append(f"{_sentence(attention_text(layers))}: the other {blocks - layers['fused']} kept "
                             f"their unfused attention, which neither fuser matched as a {shape['model_type']} "
                             f"layer{why}.")
    work.warnings.extend(grouped_query_notes(rotary_source(work), shape["num_heads"], blocks, layers, rotated))
    rotary = work.details.get("rotary")
    if rotary and rotary["fused"] < rotary["of"]:
        work.warnings.append(f"Rotary embedding {rotary_text(rotary)}: the other {rotary['of'] - rotary['fused']} stay "
                             "as Mul/Slice/Neg/Concat, which the fusers did not match as rotate_half.")


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _settled_shape(work: Work) -> dict:
    """The model type, head count and hidden size the optimizer gets, each the user's or
    read from the graph (with where it came from), and a warning where none was found."""
    options = work.options
    found = detect_transformer_shape(work.source)
    model_type = options["model_type"]
    source = {"model_type": "yours", "num_heads": "yours", "hidden_size": "yours"}
    if model_type == "auto":
        model_type, source["model_type"] = found["model_type"], found["model_type_reason"]
    heads, hidden = options["num_heads"], options["hidden_size"]
    if not heads:
        heads, source["num_heads"] = found["num_heads"], "read from the graph"
    if not hidden:
        hidden, source["hidden_size"] = found["hidden_size"], "read from the graph"
    if not heads:
        # a hidden size without a head count is refused by the optimizer: give it neither
        hidden, source["num_heads"], source["hidden_size"] = 0, "not found", "not used without the head count"
        work.warnings.append(
            "The attention head count could not be read from the graph; "
            + ("ONNX Runtime's optimizer looks for it itself" if model_type in SELF_DETECTING else
               "attention was not fused") + ". Give --num-heads and --hidden-size to be sure.")
    return {"model_type": model_type, "num_heads": int(heads), "hidden_size": int(hidden), "source": source}


def repair_transformers(work: Work, problem: Problem) -> dict | None:
    shape = work.plan.get("shape", {})
    if shape.get("source", {}).get("model_type") not in (None, "yours") and shape.get("model_type") != "bert":
        # a decoder read from the graph whose fusions fail: the encoder's fusions still fuse the
        # layer norms and Gelu, which most decoders share
        why = f"the {shape['model_type']} fusions failed ({first_line(problem.short(), 200)})"
        shape.update(model_type="bert")
        shape["source"] = {**shape["source"], "model_type": f"bert, after {why}"}
        return work.repair("fused as an encoder (bert)", why)
    if problem.stage == "convert":
        raise UserError("conversion-failed", f"{work.source.name}: the transformer fusers failed on "
                                             f"this graph ({problem.message.rstrip(': ')}); they only know the "
                                             f"layouts of transformer models, here read as "
                                             f"{shape.get('model_type', work.options['model_type'])} with "
                                             f"{shape.get('num_heads', 0)} heads — check the model type")
    return None


def detect_transformer_shape(path: str | os.PathLike) -> dict:
    """model_type (and why), num_heads and hidden_size read from the graph (0 where no
    reading is safe)."""
    import onnx

    from app.core.model.intake import iter_graphs
    from app.core.session.decoder import model_has_cache

    model = onnx.load(str(path), load_external_data=False)
    graphs = list(iter_graphs(model.graph))
    constants = {}
    for graph in graphs:
        constants.update((t.name, t) for t in graph.initializer)
        for node in graph.node:
            if node.op_type == "Constant":
                constants.update((node.output[0], a.t) for a in node.attribute if a.HasField("t"))
    nodes = [node for graph in graphs for node in graph.node]
    model_type, reason = _model_type(model, nodes, constants, str(Path(path).parent))
    shape = {"model_type": model_type, "model_type_reason": reason, "num_heads": 0, "hidden_size": 0,
             "kv_cache": model_has_cache(path)}
    widths = Counter(constants[n.input[1]].dims[0] for n in nodes
                     if n.op_type in ("MatMul", "Gemm") and len(n.input) > 1 and n.input[1] in constants
                     and len(constants[n.input[1]].dims) == 2)
    if not widths:
        return shape
    hidden = shape["hidden_size"] = int(widths.most_common(1)[0][0])
    shape["num_heads"] = _heads_from_reshapes(nodes, constants, hidden) or _heads_from_scale(nodes, constants, hidden)
    return shape


def _values(name: str, constants: dict, producers: dict):
    """The integers a small constant tensor holds, through Unsqueeze/Cast/Identity; None
    where the value is only known at run time."""
    import onnx
    from onnx import numpy_helper

    for _ in range(8):
        if name in constants:
            tensor = constants[name]
            if tensor.data_location == onnx.TensorProto.EXTERNAL or len(tensor.dims) > 1 or \
                    (tensor.dims and tensor.dims[0] > 8):
                return None
            array = numpy_helper.to_array(tensor).ravel()
            return [int(v) for v in array] if array.dtype.kind in "iu" else None
        node = producers.get(name)
        if node is None or node.op_type not in ("Unsqueeze", "Cast", "Identity", "Squeeze"):
            return None
        name = node.input[0]
    return None


def _heads_from_reshapes(nodes: list, constants: dict, hidden: int) -> int:
    """The commonest head count among the reshapes to [batch, sequence, heads, head_size]."""
    producers = {out: node for node in nodes for out in node.output}
    votes: Counter = Counter()
    for node in nodes:
        if node.op_type != "Reshape" or len(node.input) < 2:
            continue
        tail = _values(node.input[1], constants, producers)
        if tail is None:
            concat = producers.get(node.input[1])
            if concat is None or concat.op_type != "Concat" or len(concat.input) != 4:
                continue
            parts = [_values(name, constants, producers) for name in concat.input]
            tail = [p[0] if p is not None and len(p) == 1 else None for p in parts]
        if len(tail) != 4:
            continue
        heads, size = tail[2], tail[3]
        if heads is not None and size is not None and heads > 1 and size > 0 and heads * size == hidden:
            votes[heads] += 1
        elif heads == -1 and size and size > 0 and hidden % size == 0 and hidden // size > 1:
            votes[hidden // size] += 1
        elif heads is not None and size is None and 1 < heads < hidden and hidden % heads == 0:
            votes[heads] += 1
    return int(votes.most_common(1)[0][0]) if votes else 0


def _heads_from_scale(nodes: list, constants: dict, hidden: int) -> int:
    """hidden / head_size, from the scalar that divides (or multiplies) the product of two
    computed tensors (the attention scores) by √head_size (or 1/√head_size)."""
    from onnx import numpy_helper

    products = {n.output[0] for n in nodes if n.op_type == "MatMul" and not any(i in constants for i in n.input)}
    for node in nodes:
        if node.op_type not in ("Div", "Mul") or len(node.input) != 2:
            continue
        scores, scale = node.input
        if scores not in products or scale not in constants:
            scores, scale = scale, scores
        if scores not in products or scale not in constants or any(constants[scale].dims):
            continue
        value = float(numpy_helper.to_array(constants[scale]))
        squared = value ** 2 if node.op_type == "Div" else (1 / value ** 2 if value else 0)
        head = round(squared)
        if head > 1 and abs(squared - head) < 1e-2 and hidden % head == 0 and hidden // head > 1:
            return hidden // head
    return 0


def _model_type(model, nodes: list, constants: dict, base_dir: str) -> tuple[str, str]:
    """gpt2 where the attention is causal, else bert; with the reason."""
    if any(n.op_type == "Trilu" for n in nodes):
        return "gpt2", "a causal attention mask (Trilu) makes it a decoder"
    for tensor in constants.values():
        if _lower_triangular(tensor, base_dir):
            return "gpt2", "a causal attention mask (a lower-triangular constant) makes it a decoder"
    if any("past" in value.name.lower() for value in model.graph.input):
        return "gpt2", "past key/value inputs make it a decoder"
    if _compares_positions(nodes):
        return "gpt2", "a causal mask computed from positions (two position ranges compared) makes it a decoder"
    return "bert", "no causal attention mask: an encoder"


def _compares_positions(nodes: list) -> bool:
    """Whether a comparison has a Range behind each side: the causal mask PyTorch's dynamo
    exporter writes (key position <= query position), where older exports hold a constant."""
    producers = {out: node for node in nodes for out in node.output}

    def from_range(name: str) -> bool:
        frontier, seen = [name], set()
        while frontier and len(seen) < 256:
            node = producers.get(frontier.pop())
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            if node.op_type == "Range":
                return True
            frontier.extend(node.input)
        return False

    return any(n.op_type in ("Less", "LessOrEqual", "Greater", "GreaterOrEqual") and len(n.input) == 2
               and all(from_range(i) for i in n.input) for n in nodes)


def _lower_triangular(tensor, base_dir: str) -> bool:
    """Whether a square constant is a causal mask: lower-triangular, as booleans or 0/1, or
    additive (0 on and below the diagonal, very negative above). A mask in an external data
    file (as the dynamo exporter writes them) is read when its leading dims are all 1."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    dims = list(tensor.dims)
    if len(dims) < 2 or dims[-1] != dims[-2] or dims[-1] < MASK_SIDE_MIN:
        return False
    if int(np.prod(dims)) > MASK_ELEMENTS_READ or int(np.prod(dims[:-2])) != 1:
        return False
    if tensor.data_location == onnx.TensorProto.EXTERNAL and len(dims) < 3:
        return False        # a square weight matrix, not worth reading from its file
    try:
        square = numpy_helper.to_array(tensor, base_dir).reshape(dims[-1], dims[-1])
    except (OSError, ValueError):
        return False
    lower = np.tril(np.ones(square.shape, bool))
    if square.dtype.kind in "biuf" and np.array_equal(square != 0, lower):
        return True
    if square.dtype.kind == "f":
        return bool(np.all(square[lower] == 0) and np.all(square[~lower] <= -1e4))
    return False


HANDLERS = {"transformers": Handler(produce_transformers, repair_transformers)}
