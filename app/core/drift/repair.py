"""The repair loop: convert, check, and where the outputs drift, find the node that starts
it, keep it in float32 (float16 variants: the converter's node block list) or out of
quantization (int8: nodes_to_exclude), and convert again — until the outputs pass or a
bound is reached. Every step reports what it kept, where the drift started, the outputs'
cosine and largest difference, and the variant's speed against its source (the
conversion's own check: the two timed in alternation), so the accuracy each step wins is
shown against the speed it costs."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Callable

from app.core.convert.fp16_blocks import name_unnamed_nodes
from app.core.convert.jobs import ConvertParams, convert_job
from app.core.drift.blame import next_to_keep
from app.core.jobs.errors import UserError
from app.core.jobs.protocol import JobContext, scaled_context
from app.core.model.intake import admit

#: the conversion option that keeps a node out of the lower precision, by kind
KEEP_OPTION = {"fp16": "node_block_list", "int8-dynamic": "nodes_to_exclude", "int8-static": "nodes_to_exclude"}
SPEED_FIELDS = ("ratio", "ratio_ci", "verdict", "conclusive", "too_busy", "source_p50_ms", "variant_p50_ms")


def changed_ops(kind: str, options: dict) -> frozenset[str] | None:
    """The operator types a conversion of `kind` with `options` changes (None: every one, as
    float16 does): ONNX Runtime's quantizer rewrites only the types it quantizes."""
    if kind not in ("int8-dynamic", "int8-static"):
        return None
    from app.core.convert.quantize import quantized_types
    return frozenset(quantized_types(kind, options))


def keep_option(kind: str) -> str:
    if kind not in KEEP_OPTION:
        raise UserError("bad-option", f"the repair loop works on {', '.join(KEEP_OPTION)} conversions, not {kind}")
    return KEEP_OPTION[kind]


def _outputs_summary(fidelity: dict) -> dict:
    rows = [r for r in fidelity.get("outputs", []) if r.get("max_abs_diff") is not None]
    cosines = [r["cosine"] for r in rows if r["cosine"] is not None]
    return {"cosine": min(cosines) if cosines else None,
            "max_abs_diff": max((r["max_abs_diff"] for r in rows), default=None),
            "nonfinite": sum(r["nonfinite"] for r in rows),
            # why the outputs fail (a cosine of 0 is an output the variant lost: all zeros)
            "problem": "; ".join(f"{r['name']}: {r['problem']}" for r in fidelity.get("outputs", [])
                                 if r.get("passed") is False and r.get("problem"))}


def _speed(report: dict) -> dict:
    """A step's speed: the fields of its conversion's speed check the steps table shows."""
    speed = report["speed"]
    if speed.get("skipped"):
        return {"skipped": True, "why": speed["why"]}
    return {key: speed[key] for key in SPEED_FIELDS}


def _first(drift: dict, key: str) -> dict | None:
    first = drift[key]
    return None if first is None else {k: first.get(k) for k in ("tensor", "node", "op_type", "index", "cosine",
                                                                   "sqnr_db", "nonfinite", "problem")}


def _same_outputs(step: dict, earlier: list[dict]) -> int | None:
    """The first earlier step whose outputs came out exactly as this one's, or None: a step
    that moved nothing is said, not passed over. (Its variant may still differ: an int8 model's
    last layers put the outputs on a coarse grid, and PP-OCR's classifier, with Mul@4 kept as
    well, came back to step 1's cosine to the last digit with more of its graph in float32.)"""
    if step["cosine"] is None:
        return None
    return next((e["step"] for e in earlier if (e["cosine"], e["max_abs_diff"]) == (step["cosine"],
                                                                                      step["max_abs_diff"])), None)


def repair(params, ctx: JobContext, find_drift: Callable[[str, JobContext], dict]) -> dict:
    """params: RepairParams (app.core.drift.jobs); `find_drift(variant, ctx)`: the drift job's
    result for a variant of the source. The last conversion's report, with the loop's steps
    under `repair`."""
    base: ConvertParams = params.convert
    option = keep_option(base.kind)
    if not base.fidelity:
        raise UserError("bad-option", "the repair loop needs the fidelity check: it repairs what the check finds")
    model = admit(base.input, onnx_only="the repair loop converts .onnx models").model
    name_unnamed_nodes(model)
    known = {node.name for node in model.graph.node}
    unknown = [name for name in params.keep if name not in known]
    if unknown:
        raise UserError("bad-option", f"{', '.join(unknown)}: no node of that name in {base.input}")
    kept = list(dict.fromkeys([*base.options.get(option, []), *params.keep]))
    added, steps, report, stopped = list(params.keep), [], None, ""
    started = time.monotonic()
    share = 1.0 / params.max_steps
    changes = changed_ops(base.kind, base.options)      # what the drift may blame: the same every step
    for index in range(params.max_steps):
        ctx.check_cancel()
        at = index * share
        step_params = replace(base, force=base.force or index > 0, options={**base.options, option: list(kept)})
        try:
            with scaled_context(ctx, at, share * 0.5, f"step {index + 1}, converting") as step_ctx:
                report = convert_job(step_params, step_ctx)
        except UserError as exc:
            if index == 0 or exc.kind != "nothing-to-quantize":
                raise
            # keeping what the drift pointed at left nothing to quantize: the last variant stands
            stopped = f"keeping {', '.join(added)} as well would leave nothing to quantize"
            kept = kept[:len(kept) - len(added)]
            break
        step = {"step": index + 1, "kept": list(kept), "added": added, **_outputs_summary(report["fidelity"]),
                "check": report["check"], "passed": report["check"] == "passed", "speed": _speed(report),
                "first_drift": None, "first_nonfinite": None, "next": None,
                "kept_instead": {name: nodes for name, nodes in report.get("kept_instead", {}).items()
                                 if name in added}}
        step["same_as"] = _same_outputs(step, steps)
        steps.append(step)
        ctx.data("repair-step", step)
        if step["passed"]:
            stopped = "the outputs pass"
            break
        if report["check"] != "failed":
            stopped = f"the check could not run: {report['fidelity'].get('problem', report['check'])}"
            break
        with scaled_context(ctx, at + share * 0.5, share * 0.5, f"step {index + 1}, finding the drift") as step_ctx:
            drift = find_drift(report["output"], step_ctx)
        step.update(first_drift=_first(drift, "first_drift"), first_nonfinite=_first(drift, "first_nonfinite"))
        if index + 1 == params.max_steps:
            stopped = f"{params.max_steps} step{'s' if params.max_steps > 1 else ''} done"
            break
        if time.monotonic() - started >= params.max_seconds:
            stopped = f"{params.max_seconds:g} s spent"
            break
        choice = next_to_keep(drift, model, kept, changes)
        step["next"] = choice
        if choice is None:
            stopped = "every node the drift points at is kept already"
            break
        ctx.log(f"repair: keeping {', '.join(choice['nodes'])} — {choice['why']}")
        added = choice["nodes"]
        kept.extend(added)
    ctx.progress(1.0, "done")
    if not base.options.get(option) and not params.keep:
        for item in report["kept_in_fp32"]:
            if item.get("source") == "user":
                item.update(why="the repair loop kept it: the drift started there (see its steps)", source="repair")
    report["repair"] = {"steps": steps, "passed": steps[-1]["passed"], "kept": list(kept), "option": option,
                        "stopped": stopped, "seconds": time.monotonic() - started}
    return report
