"""Making a variant of a model — fp16, mixed precision, int8, int4, ORT format, offline
optimised, transformer-fused — with the real libraries, then proving it: the variant is
loaded and run in ONNX Runtime, repaired and retried when that fails, and compared with
the source on the same inputs. The job and its parameters are in app.core.convert.jobs."""

from __future__ import annotations

import importlib
import time
from dataclasses import replace
from pathlib import Path

from app.core.convert.options import KINDS, default_tolerance, kind_info, parse_options, unavailable_reason
from app.core.convert.weights import float16_share, small_share_warning
from app.core.convert.clean import drop_stale_value_info
from app.core.convert.work import Handler, Problem, Work, working_folder
from app.core.jobs.errors import JobCancelled, UserError
from app.core.convert.fidelity import (Reference, RunFailed, Tolerance, compare, failed_report, load_session, reference_run,
                               run_variant)
from app.core.convert.next_tokens import judge, next_token_check
from app.core.jobs.protocol import JobContext
from app.core.model.output import PROTOBUF_LIMIT, Staging, check_target, data_file_name, op_changes, op_counts
from app.core.ort_messages import first_line
from app.core.session.providers import GPU_PROVIDERS
from app.core.session.config import SessionConfig
from app.core.jobs.stdio import capture_output
from app.core.store import leftovers

MAX_ATTEMPTS = 12
#: refusals of the check's run that are about the user's settings, not the source: they end the
#: conversion (exit 2) rather than give a variant whose check "could not run" (exit 4)
NOT_THE_SOURCE = frozenset({"provider-unavailable", "bad-input-file", "not-found", "bad-option"})
_HANDLER_MODULES = ("app.core.convert.kinds", "app.core.convert.quantize", "app.core.convert.int4",
                    "app.core.convert.transformers", "app.core.convert.compiled")


def handler(kind: str) -> Handler:
    for module_name in _HANDLER_MODULES:
        handlers = importlib.import_module(module_name).HANDLERS
        if kind in handlers:
            return handlers[kind]
    raise UserError("bad-option", f"unknown conversion {kind!r}; choose one of {', '.join(KINDS)}")


def _session_config(params) -> SessionConfig:
    config = params.session.checked()
    # input files stay found while the libraries run in the staging folder
    config.inputs.files = {name: str(Path(path).expanduser().absolute()) for name, path in config.inputs.files.items()}
    return config


def _tolerance(kind: str, options: dict, given: dict | None) -> Tolerance:
    values = default_tolerance(kind, options)
    values.update({k: v for k, v in (given or {}).items() if v is not None})
    return Tolerance.from_dict(values)


#: the kinds whose library takes a ModelProto get the one the intake read (quantize_dynamic
#: takes one too, but then keeps a second copy: from a path it peaks lower)
_TAKES_PROTO = {"fp16", "mixed", "int4"}


def intake(source: Path, weights: bool) -> tuple[dict, object]:
    """The intake of inspect_model, and the parsed model to convert, read once.

    Without `weights` the model comes without its weights' data: the kinds whose library
    reads the file itself need only the structure for the checks and the summary, and on a
    200 MB model that takes a millisecond instead of a third of a second. ONNX's full graph
    checker is left for when a conversion fails (see source_is_invalid): on a large model it
    costs as much as parsing it again, and a valid source is the rule."""
    import onnx

    from app.core.model.inspect import summarise_onnx
    from app.core.model.intake import (check_declared_shapes, check_external_data, check_readable, check_versions,
                                    load_onnx, sniff)

    path = check_readable(source)
    if sniff(path) == "ort":
        raise UserError("bad-input", f"{path.name}: is an ORT-format model; conversions start from the .onnx "
                                     "model it was made from")
    model = load_onnx(path, weights=weights)
    files = check_external_data(path, model)
    check_versions(path, model)
    check_declared_shapes(path, model)
    summary = summarise_onnx(path, model, files)
    size = path.stat().st_size
    summary.update(path=str(path.resolve()), size_bytes=size,
                   total_bytes=size + sum((path.parent / f).stat().st_size for f in files))
    if files and weights:
        onnx.load_external_data_for_model(model, str(path.parent))
    return summary, (model if weights else None)


def source_is_invalid(source: Path, summary: dict) -> None:
    """Raise the intake's clear error if something failed because the source is broken."""
    import onnx

    from app.core.model.intake import check_graph

    check_graph(source, onnx.load(str(source), load_external_data=False), summary["external_data"])


def _check_source(kind: str, summary: dict, source: Path) -> None:
    if kind in ("fp16", "mixed") and not _has_float32(summary):
        raise UserError("nothing-to-convert", f"{source.name}: holds no float32 weights, inputs or outputs; "
                                              "there is nothing to turn into float16")


def _has_float32(summary: dict) -> bool:
    values = summary["inputs"] + summary["outputs"]
    return summary["parameters"] > 0 or any(v["dtype"] == "float" for v in values)


def _companions(kind: str, output: Path, options: dict) -> tuple[str, ...]:
    names = [data_file_name(output.name)]
    if kind == "ort":
        from app.core.convert.kinds import ort_config_name
        names.append(ort_config_name(output, options))
    return tuple(names)


def known_traps(kind: str, options: dict, config: SessionConfig) -> list[str]:
    """What ONNX Runtime's documentation warns about for this kind on this session."""
    providers = set(config.provider_names())
    gpu = providers & GPU_PROVIDERS
    warnings = []
    if kind in ("fp16", "mixed") and not gpu:
        warnings.append("The fidelity session runs on the CPU: a float16 model works there, but ONNX Runtime "
                        "casts back to float32 around most operators, so it is usually slower than the "
                        "original. Float16 pays off on GPUs.")
    if kind == "int8-dynamic" and providers & {"CUDAExecutionProvider", "TensorrtExecutionProvider"}:
        warnings.append("Dynamically quantized int8 models do not run on the CUDA or TensorRT providers (they "
                        "fall back to the CPU); for NVIDIA GPUs use int8-static in QDQ format with TensorRT.")
    if kind == "int8-static" and options.get("quant_format") == "QOperator" and gpu:
        warnings.append("QOperator int8 models (QLinearConv …) run on the CPU only; GPU providers need the QDQ "
                        "format, and on CUDA even QDQ models are mostly computed in float.")
    if kind == "optimize":
        warnings.append(f"The saved model is optimised for the {options['target_provider']} provider at level "
                        f"'{options['level']}' on this kind of machine: run it only there, and load it with graph "
                        "optimisation 'disable' or 'basic' so the work is not repeated.")
    return warnings


def _require_gpu(kind: str, ctx: JobContext) -> None:
    from app.core.session.providers import probe_providers

    reason = unavailable_reason(kind, probe_providers(JobContext()))
    if reason:
        raise UserError("needs-gpu", reason)
    ctx.check_cancel()


def _validate(work: Work) -> tuple[Problem | None, dict | None]:
    """Load (and, with a reference, run) the staged variant in ORT."""
    try:
        if work.reference is None:
            # Type errors and missing kernels surface while the graph is resolved and its kernels
            # made; the optimisers add nothing to that check, and as nothing runs, the weights
            # need not be repacked for the kernels (on a large model, half of the load time).
            entries = {**work.config.config_entries, "session.disable_prepacking": "1"}
            load_session(work.target, replace(work.config, graph_optimization_level="disable",
                                              config_entries=entries))
            return None, None
        return None, run_variant(work.target, work.reference, work.config, work.ctx)
    except RunFailed as exc:
        return Problem(exc.stage, exc.detail), None


def _attempt(work: Work, kind_handler: Handler) -> tuple[Problem | None, dict | None]:
    captured = None
    try:
        with capture_output() as captured, working_folder(work.target.parent):
            kind_handler.produce(work)
            drop_stale_value_info(work.target)
    except (UserError, JobCancelled, MemoryError):
        raise
    except Exception as exc:  # the libraries raise every kind of error: each becomes a problem to repair
        return Problem("convert", f"{type(exc).__name__}: {first_line(str(exc), 1000)}"), None
    finally:
        _log_library_output(work.ctx, captured.text if captured else "")
    work.ctx.check_cancel()
    return _validate(work)


def _log_library_output(ctx: JobContext, text: str, limit: int = 30) -> None:
    """What the libraries printed goes to the job's log, not to the user's terminal."""
    lines = [line for line in text.splitlines() if line.strip()]
    for line in lines[:limit]:
        ctx.log(line.strip(), "debug")
    if len(lines) > limit:
        ctx.log(f"… and {len(lines) - limit} more lines from the converter", "debug")


def produce_checked(work: Work) -> dict | None:
    """Produce the variant, repairing and retrying until ORT loads (and runs) it.

    Returns the variant's outputs on the reference feeds (None without a reference)."""
    kind_handler = handler(work.kind)
    for attempt in range(1, MAX_ATTEMPTS + 1):
        work.ctx.check_cancel()
        work.ctx.progress(0.15 + 0.6 * (attempt - 1) / MAX_ATTEMPTS,
                          "converting" if attempt == 1 else f"converting again (try {attempt})")
        work.ops_after = {}
        problem, outputs = _attempt(work, kind_handler)
        if problem is None:
            work.details["attempts"] = attempt
            return outputs
        work.ctx.log(problem.describe(), "info")
        work.preloaded = None
        if attempt == 1:
            source_is_invalid(work.source, work.summary)
        if kind_handler.repair(work, problem) is None:
            raise UserError("conversion-failed", failure_sentence(work, problem))
    raise UserError("conversion-failed", f"{work.source.name}: no loadable {work.kind} variant after "
                                         f"{MAX_ATTEMPTS} tries; the last problem: {problem.describe()}")


def failure_sentence(work: Work, problem: Problem) -> str:
    tried = f" (after: {'; '.join(r['what'] for r in work.repairs)})" if work.repairs else ""
    return f"{work.source.name}: no {work.kind} variant is possible — {problem.describe()}{tried}"


def convert_model(params, ctx: JobContext | None = None) -> dict:
    """params: MakeParams (app.core.convert.jobs)."""
    ctx = ctx or JobContext()
    started = time.perf_counter()
    kind = params.kind
    kind_info(kind)
    options = parse_options(kind, params.options)
    source = Path(params.input)
    output = Path(params.output).expanduser().absolute()
    force = params.force
    config = _session_config(params)
    tolerance = _tolerance(kind, options, params.tolerance)
    if kind == "ort" and output.suffix.lower() != ".ort":
        raise UserError("bad-output", f"{output.name}: an ORT-format model is saved with the ending .ort")
    if kind != "ort" and output.suffix.lower() == ".ort":
        raise UserError("bad-output", f"{output.name}: a {kind} variant is an ONNX model; give it the ending .onnx")
    ctx.progress(0.02, "reading the source model")
    summary, model = intake(source, weights=kind in _TAKES_PROTO)
    source = Path(summary["path"])
    _check_source(kind, summary, source)
    depends = tuple(source.parent / name for name in summary["external_data_files"])
    check_target(source, output, force, _companions(kind, output, options), depends)
    if kind_info(kind).needs_gpu:
        _require_gpu(kind, ctx)
    ctx.check_cancel()
    reference: Reference | None = None
    unchecked = ""          # why the fidelity check could not run
    if params.fidelity or kind == "mixed":
        ctx.progress(0.08, "running the source model on the fidelity inputs")
        try:
            reference = reference_run(source, config.inputs, config, ctx)
        except UserError as exc:
            source_is_invalid(source, summary)
            if kind == "mixed" or exc.kind in NOT_THE_SOURCE:   # the user's settings, not the source, are wrong
                raise
            unchecked = exc.message
    if reference is not None and params.feeds_file:      # the speed check runs on them too
        from app.core.session.inputs import save_arrays
        save_arrays(params.feeds_file, reference.feeds)
    with Staging(output, (source, *depends)) as stage, leftovers.noted(stage.folder):
        work = Work(kind=kind, source=source, target=stage.path, options=options, summary=summary, ctx=ctx,
                    config=config, large=summary["external_data"] or summary["total_bytes"] > PROTOBUF_LIMIT,
                    reference=reference, tolerance=tolerance, preloaded=model)
        del model
        work.warnings.extend(known_traps(kind, options, config))
        if unchecked:
            work.warnings.append(f"the variant's outputs were not checked: the source could not run on the "
                                 f"check's inputs ({unchecked})")
        convert_started = time.perf_counter()
        outputs = produce_checked(work)
        convert_seconds = time.perf_counter() - convert_started
        if kind in ("fp16", "mixed") or (kind == "transformers" and options["fp16"]):
            work.details["float16_weights"] = share = float16_share(stage.path)
            work.warnings.extend(filter(None, [small_share_warning(share)]))
        ctx.progress(0.85, "comparing the variant with the source")
        stage.companions = [stage.folder / name for name in work.companions]
        fidelity = _fidelity(reference, outputs, tolerance, unchecked)
        if outputs is not None:
            ctx.progress(0.9, "comparing the variant's next tokens with the source's")
            fidelity = judge(fidelity, next_token_check(source, stage.path, config, tolerance, ctx))
        work.warnings.extend(advice(kind, fidelity))
        changes = op_changes(summary["op_counts"], work.ops_after or op_counts(stage.path))
        output_bytes = sum(p.stat().st_size for p in stage.files())
        ctx.check_cancel()
        published = stage.commit(force)
    for message in work.warnings:
        ctx.log(message, "warning")
    ctx.progress(1.0, "done")
    return {
        "kind": kind,
        "input": str(source),
        "output": str(published[-1]),
        "files": [str(p) for p in published],
        "input_bytes": summary["total_bytes"],
        "output_bytes": output_bytes,
        "size_ratio": output_bytes / summary["total_bytes"] if summary["total_bytes"] else None,
        "seconds": time.perf_counter() - started,
        "convert_seconds": convert_seconds,
        "options": options,
        "op_changes": changes,
        "kept_in_fp32": work.kept,
        "repairs": work.repairs,
        "warnings": work.warnings,
        "fidelity": fidelity,
        "check": check_outcome(fidelity),
        "dims_used": fidelity.get("dims_used", {}),
        "external_data": any(p.name.endswith(".data") for p in published),
        **work.details,
    }


def advice(kind: str, fidelity: dict) -> list[str]:
    """What to try when the variant is outside the tolerance."""
    if fidelity.get("passed") is not False or fidelity.get("problem"):
        return []
    return [{
        "fp16": "Some outputs moved too far in float16: the mixed kind keeps the nodes that cause it in float32 "
                "(it needs a GPU machine), or add the sensitive operator types to the op block list.",
        "int8-dynamic": "Int8 moved the outputs beyond the tolerance: try per-channel, exclude the first and last "
                        "layers, or calibrate (int8-static); for convolution models static quantization is usually "
                        "more accurate.",
        "int8-static": "Int8 moved the outputs beyond the tolerance: calibrate on real inputs (a folder of .npy "
                       "files), try per-channel or the Entropy/Percentile methods, or exclude sensitive nodes.",
        "int4": "Int4 moved the outputs beyond the tolerance: try a smaller block size (16), or the k_quant "
                "method, which searches each block's scale.",
    }.get(kind, "The variant's outputs differ from the source's beyond the tolerance.")]


def _fidelity(reference: Reference | None, outputs: dict | None, tolerance: Tolerance, unchecked: str = "") -> dict:
    if reference is None:
        report = {"skipped": not unchecked, "outputs": [], "max_abs_diff": None, "passed": None,
                  "tolerance": tolerance.to_dict()}
        if unchecked:
            report["problem"] = f"the source could not run on the check's inputs: {unchecked}"
        return report
    if outputs is None:
        return failed_report(reference, tolerance, "the variant did not run")
    return compare(reference, outputs, tolerance)


def check_outcome(fidelity: dict) -> str:
    """passed, failed, not-run (the source could not run on the inputs) or skipped (asked)."""
    if fidelity.get("skipped"):
        return "skipped"
    if fidelity["passed"] is None:
        return "not-run"
    return "passed" if fidelity["passed"] else "failed"
