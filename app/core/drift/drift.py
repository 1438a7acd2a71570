"""The drift job: source and variant on the same input plan, every intermediate tensor
exposed, compared in the source's topological order.

Tensors are matched by name: conversions to float16, offline optimisation and dynamic
quantization keep the names of the tensors they do not remove, and where a variant fused
nodes away only the tensors both still have are compared. In a QDQ variant a tensor's name
holds its value before quantization (the quantizer may have dropped a Relu into the
quantization's range); ONNX Runtime's `qdq_loss_debug` pairs it with its dequantized value,
what its consumers see, and that is compared (`quantized`; `before_qdq_sqnr_db` the other).

The tolerance is the variant's conversion kind's (float16, int8 or float32: guessed from
its tensors and operators) unless given. The model's outputs are judged by all of it, as a
conversion's check judges them; a tensor inside the model by its cosine, its SQNR against
the floor that cosine implies, and NaN/Inf: an element-wise bound means nothing across
tensors whose values run from 1e-3 to 1e4, and on a float16 variant it flags every large
tensor's rounding as drift. Unnamed nodes are
named as the float16 converter names them, so a node drift reports is one `--keep-fp32` takes."""

from __future__ import annotations

import math
from pathlib import Path

from app.core.convert.fidelity import Reference, RunFailed, Tolerance, reference_run, run_variant
from app.core.convert.fp16_blocks import name_unnamed_nodes
from app.core.drift.expose import expose_all, exposed_copy, producers
from app.core.drift.metrics import judge_inside, tensor_row
from app.core.jobs.errors import UserError
from app.core.model.intake import admit
from app.core.session.fidelity_policy import POLICIES, model_precision

FIRST_FIELDS = ("tensor", "node", "op_type", "index", "max_abs_diff", "max_rel_diff", "cosine", "sqnr_db",
                "nonfinite", "problem")


DYNAMIC_OPS = {"DynamicQuantizeLinear", "MatMulInteger", "ConvInteger"}
QOPERATOR_OPS = {"QLinearConv", "QLinearMatMul"}


def remade_as(model, precision: str) -> dict | None:
    """{kind, options}: the conversion that makes a variant like `model` (what the repair
    loop remakes), or None for a float32 variant."""
    ops = {node.op_type for node in model.graph.node}
    if precision == "float16":
        return {"kind": "fp16", "options": {}}
    if precision != "int8":
        return None
    if ops & DYNAMIC_OPS:
        return {"kind": "int8-dynamic", "options": {}}
    return {"kind": "int8-static", "options": {"quant_format": "QOperator"} if ops & QOPERATOR_OPS else {}}


def _all_tensors(path: Path, model, reference: Reference, config, ctx) -> dict:
    expose_all(model)
    with exposed_copy(path, model) as copy:
        try:
            return run_variant(copy, reference, config, ctx)
        except RunFailed as exc:
            raise UserError("variant-run-failed", f"{path.name} with its tensors exposed could not {exc.stage} on "
                                                  f"the source's inputs: {exc.message}") from None


def _after_qdq(variant_values: dict) -> dict:
    """tensor -> its dequantized value, where the variant quantizes it (QDQ format)."""
    from onnxruntime.quantization.qdq_loss_debug import create_activation_matching

    matched = create_activation_matching({name: [value] for name, value in variant_values.items()})
    return {name: pair["post_qdq"][0] for name, pair in matched.items()}


def _first(rows: list[dict], test) -> dict | None:
    row = next((r for r in rows if test(r)), None)
    return None if row is None else {"tensor": row["name"], **{k: row[k] for k in FIRST_FIELDS if k in row}}


def compare_tensors(source_model, source_values: dict, variant_values: dict, tolerance: Tolerance,
                    outputs: set[str]) -> list[dict]:
    """One row per tensor both runs returned, in the source's node order (a quantized
    tensor's dequantized value); `outputs`: the model's own outputs (judged by the whole
    tolerance, the others by its cosine); `sqnr_loss_db` is
    how much SQNR it lost against the worst-kept of its inputs (the error its node added)."""
    after = _after_qdq(variant_values)
    inside = Tolerance(atol=math.inf, rtol=0.0, min_cosine=tolerance.min_cosine)
    rows, reach = [], {}            # reach: tensor -> the SQNR it carries (through tensors not compared)
    for name, node in producers(source_model).items():
        upstream = [reach[i] for i in node.input if reach.get(i) is not None]
        reach[name] = min(upstream) if upstream else None
        if name not in source_values or name not in variant_values:
            continue
        got = after.get(name, variant_values[name])
        judged = tolerance if name in outputs else inside
        row = tensor_row(name, source_values[name], got, judged)
        if judged is inside:
            judge_inside(row, tolerance.min_cosine)
        row.update(index=len(rows), node=node.name, op_type=node.op_type, sqnr_loss_db=None, quantized=name in after,
                   output=name in outputs)
        if name in after:           # what its consumers see; the value before quantization too
            row["before_qdq_sqnr_db"] = tensor_row(name, source_values[name], variant_values[name], judged)["sqnr_db"]
        if row["sqnr_db"] is not None:
            reach[name] = row["sqnr_db"]
            if upstream:
                row["sqnr_loss_db"] = min(upstream) - row["sqnr_db"]
        rows.append(row)
    return rows


def drift(params, ctx) -> dict:
    source_in, variant_in = (admit(path, weights=True, onnx_only="drift compares the tensors of .onnx models")
                             for path in (params.source, params.variant))
    source, variant = source_in.path, variant_in.path
    source_model, variant_model = source_in.model, variant_in.model
    name_unnamed_nodes(source_model)
    precision = model_precision(variant_model)
    outputs = {output.name for output in source_model.graph.output}     # before every tensor is made one
    tolerance = Tolerance.from_dict({**POLICIES[precision].tolerance(), **params.tolerance})
    config = params.session
    ctx.progress(0.0, "running the source on the input plan")
    reference = reference_run(source, config.inputs, config, ctx)
    ctx.progress(0.3, "running the source with every tensor exposed")
    source_values = _all_tensors(source, source_model, reference, config, ctx)
    ctx.progress(0.6, "running the variant with every tensor exposed")
    variant_values = _all_tensors(variant, variant_model, reference, config, ctx)
    ctx.progress(0.9, "comparing tensors")
    rows = compare_tensors(source_model, source_values, variant_values, tolerance, outputs)
    if not rows:
        raise UserError("nothing-to-compare", f"{variant.name} shares no float tensor name with {source.name}; "
                                              "drift compares the tensors both models have")
    return {
        "source": str(source), "variant": str(variant), "variant_precision": precision,
        "remade_as": remade_as(variant_model, precision),
        "tolerance": tolerance.to_dict(), "tensors": rows,
        "first_drift": _first(rows, lambda r: r["passed"] is False),
        "first_nonfinite": _first(rows, lambda r: r["nonfinite"] > r["source_nonfinite"]),
        "compared": len(rows), "source_tensors": len(producers(source_model)),
        "inputs": list(reference.info.get("inputs", [])),
    }
