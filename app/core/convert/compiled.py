"""Compiled EP context models: the parts of the graph a compiling execution provider
(OpenVINO, TensorRT, QNN …) takes, compiled once by ONNX Runtime's ModelCompiler and saved in
EPContext nodes, so that a session starts without compiling them again.

The variant is made for the session's first provider other than the CPU (--provider) and the
device it runs on; it records that in its metadata (app.core.session.ep_context) and a session
elsewhere is refused in one line. Its gain is the session's start, so that is timed here: the
source's and the variant's sessions made in turns, on the same provider."""

from __future__ import annotations

import json
import statistics
import time

from app.core.convert.work import Handler, Work
from app.core.jobs.errors import UserError
from app.core.session.config import SessionConfig

#: sessions of each made in turns to time the start
CREATE_ROUNDS = 3


def compile_target(config: SessionConfig) -> str:
    target = next((name for name in config.provider_names() if name != "CPUExecutionProvider"), "")
    if not target:
        raise UserError("bad-option", "a compiled EP context model is made for a compiling execution provider: name "
                                      "it with --provider (e.g. --provider openvino)")
    return target


def compiled_for(config: SessionConfig, target: str) -> dict:
    """What the variant is compiled for: provider, its options, plugin and version, devices, ORT."""
    import onnxruntime as ort

    from app.core.session import openvino
    from app.core.session.plugins import describe_device, ep_devices, registered_for

    library = registered_for(target)
    spec = next(spec for spec in config.providers if spec.name == target)
    devices = [d for d in ep_devices() if d.ep_name == target]
    if target == openvino.NAME and library is not None:
        devices = openvino.pick_devices(ep_devices(), spec.options)
    record = {"provider": target, "options": dict(spec.options), "ort_version": ort.__version__,
              "devices": [{"type": d["type"], "vendor": d["vendor"],
                           "name": d["metadata"].get("FULL_DEVICE_NAME", "")} for d in map(describe_device, devices)]}
    if library is not None:
        record["plugin"] = library.source()
    return record


def _session_options(config: SessionConfig):
    """SessionOptions holding the providers, as ModelCompiler takes them."""
    from app.core.session.create import build_session_options

    options, providers, provider_options = build_session_options(config)
    for name, values in zip(providers, provider_options):
        if name != "CPUExecutionProvider":
            options.add_provider(name, values)
    return options


def creation_times(work: Work) -> dict:
    """The source's and the variant's session start on the provider, made in turns."""
    from app.core.session.create import create_session

    times: dict[str, list[float]] = {"source": [], "compiled": []}
    for _ in range(CREATE_ROUNDS):
        for name, path in (("source", work.source), ("compiled", work.target)):
            work.ctx.check_cancel()
            started = time.perf_counter()
            session = create_session(path, work.config)
            times[name].append((time.perf_counter() - started) * 1000)
            del session
    ratios = [s / c for s, c in zip(times["source"], times["compiled"])]
    return {"source_ms": times["source"], "compiled_ms": times["compiled"],
            "source_median_ms": statistics.median(times["source"]),
            "compiled_median_ms": statistics.median(times["compiled"]),
            "speedup": statistics.median(ratios), "speedup_range": [min(ratios), max(ratios)], "rounds": CREATE_ROUNDS}


def produce_compiled(work: Work) -> None:
    import onnx
    import onnxruntime as ort

    from app.core.session.ep_context import METADATA_KEY

    target = compile_target(work.config)
    if not hasattr(ort, "ModelCompiler"):
        raise UserError("unsupported", f"ONNX Runtime {ort.__version__} cannot compile EP context models (1.22+)")
    work.ctx.progress(None, f"compiling for {target}")
    ort.ModelCompiler(_session_options(work.config), str(work.source),
                      embed_compiled_data_into_model=True).compile_to_file(str(work.target))
    model = onnx.load(str(work.target))
    if not any(node.op_type == "EPContext" for node in model.graph.node):
        raise UserError("nothing-to-convert", f"{target} compiled no part of {work.source.name}")
    record = compiled_for(work.config, target)
    entry = model.metadata_props.add()
    entry.key, entry.value = METADATA_KEY, json.dumps(record)
    onnx.save(model, str(work.target))
    work.details["compiled_for"] = record
    work.ctx.progress(None, "timing the session's start, the source's and the variant's in turns")
    work.details["session_create"] = creation_times(work)


def _no_repair(work: Work, problem) -> None:
    return None


HANDLERS = {"compiled": Handler(produce_compiled, _no_repair)}


def compiled_lines(report: dict) -> list[str]:
    """What a compiled variant is for and how much sooner it starts, as the CLI and the
    Convert tab say it (plain text; names escaped for a terminal)."""
    from app.core.session.ep_context import describe
    from app.core.formatting import duration_text

    if "compiled_for" not in report:
        return []
    lines = [f"compiled for {describe(report['compiled_for'])}"]
    start = report.get("session_create")
    if start:
        low, high = start["speedup_range"]
        lines.append(f"session start {duration_text(start['source_median_ms'])} → "
                     f"{duration_text(start['compiled_median_ms'])} (×{start['speedup']:.2f}, {low:.2f}–{high:.2f} "
                     f"over {start['rounds']} rounds, the two made in turns)")
    return lines
