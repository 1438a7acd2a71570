"""Compare: the same session settings and the same inputs for several models or
variants, each benchmarked in a fresh process, side by side.

The first model is the reference: its process saves the inputs it generated and the
outputs it computed; every later model is fed exactly those inputs (cast to its own
input types) and its outputs are measured against the reference's."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from app.core.bench.bench import RunSettings, benchmark, run_child
from app.core.jobs.errors import UserError
from app.core.jobs.protocol import JobContext

FEEDS_FILE = "feeds.npz"
OUTPUTS_FILE = "outputs.npz"


def output_fidelity(reference: dict, outputs: dict) -> dict:
    """How far `outputs` drift from `reference`: the conversion fidelity check's numbers
    and verdict per output (default tolerance), plus the compare table's summary."""
    from app.core.convert.fidelity import Tolerance, compare_values

    tolerance = Tolerance()
    rows = []
    for name, expected in reference.items():
        if name not in outputs:
            rows.append({"name": name, "max_abs_diff": None, "cosine": None, "nonfinite": 0, "passed": False,
                         "problem": "missing"})
            continue
        rows.append(compare_values(name, expected, outputs[name], tolerance))
    compared = [r for r in rows if r["max_abs_diff"] is not None]
    verdicts = [r["passed"] for r in rows if r["passed"] is not None]
    return {"outputs": rows,
            "max_abs_diff": max((r["max_abs_diff"] for r in compared), default=None),
            "min_cosine": min((r["cosine"] for r in compared if r["cosine"] is not None), default=None),
            "nonfinite": sum(r["nonfinite"] for r in compared),
            "compared": len(compared) == len(rows),
            "passed": bool(verdicts) and all(verdicts), "tolerance": tolerance.to_dict()}


def member_job(params: dict, ctx: JobContext) -> dict:
    """One model of a comparison, in its own process.

    params: path, session, run, variant, reference_dir, is_reference."""
    import numpy as np

    from app.core.session.input_spec import FeedSpec
    from app.core.session.config import SessionConfig

    folder = Path(params["reference_dir"])
    config = SessionConfig.from_dict(params.get("session") or {})
    settings = RunSettings.from_dict(params.get("run"))
    if params["is_reference"]:
        def on_first_outputs(feeds: dict, outputs: dict) -> dict:
            np.savez(folder / FEEDS_FILE, **feeds)
            np.savez(folder / OUTPUTS_FILE, **{k: v for k, v in outputs.items() if isinstance(v, np.ndarray)})
            return {}
    else:
        spec = config.inputs
        config.inputs = FeedSpec(mode="files", files={"*": str(folder / FEEDS_FILE)}, seed=spec.seed,
                                 vocab_size=spec.vocab_size)

        def on_first_outputs(feeds: dict, outputs: dict) -> dict:
            with np.load(folder / OUTPUTS_FILE, allow_pickle=False) as saved:
                reference = {name: saved[name] for name in saved.files}
            return {"fidelity": output_fidelity(reference, outputs)}

    report, _ = benchmark(params["path"], config, settings, ctx, on_first_outputs=on_first_outputs)
    report["variant"] = params.get("variant", "")
    return report


def _row(report: dict, baseline: dict) -> dict:
    p50, base_p50 = report["latency_ms"]["p50"], baseline["latency_ms"]["p50"]
    return {"label": report["variant"], "path": report["model"]["path"], "size_bytes": report["model"]["size_bytes"],
            "latency_ms": report["latency_ms"], "throughput_per_s": report["throughput_per_s"],
            "speedup": base_p50 / p50 if p50 > 0 else None, "iterations": report["iterations"],
            "session_create_ms": report["session_create_ms"], "first_run_ms": report["first_run_ms"],
            "peak_rss_bytes": report["peak_rss_bytes"], "gpu_memory_bytes": report["gpu_memory_bytes"],
            "providers": report["providers"], "fidelity": report.get("fidelity")}


def compare_job(params: dict, ctx: JobContext) -> dict:
    """params: models [{path, label}], session, run, record (default True).

    Runs in the calling process (it only starts children); each model is measured
    in a fresh child, one after another, so no two share a CPU or a GPU arena."""
    from app.core.store.history import History
    from app.core.session.config import SessionConfig

    models = params.get("models") or []
    if len(models) < 2:
        raise UserError("bad-option", "a comparison needs at least two models")
    config = SessionConfig.from_dict(params.get("session") or {})
    settings = RunSettings.from_dict(params.get("run"))
    reports = []
    with tempfile.TemporaryDirectory(prefix="ortune-compare-") as folder:
        for index, model in enumerate(models):
            ctx.check_cancel()
            label = model.get("label") or Path(model["path"]).name

            def forward(kind: str, payload: dict, index=index, label=label) -> None:
                if kind == "progress":
                    fraction = payload.get("fraction")
                    overall = (index + (fraction or 0.0)) / len(models)
                    ctx.progress(overall, f"{label}: {payload.get('message', '')}")
                elif kind == "log":
                    ctx.log(f"{label}: {payload['message']}", payload.get("level", "info"))

            member = {"path": model["path"], "session": config.to_dict(), "run": settings.to_dict(),
                      "variant": label, "reference_dir": folder, "is_reference": index == 0}
            reports.append(run_child("app.core.bench.compare:member_job", member, ctx, forward))
    baseline = reports[0]
    result = {
        "baseline": baseline["variant"],
        "models": [_row(report, baseline) for report in reports],
        "session": config.to_dict(),
        "run": settings.to_dict(),
        "ort_version": baseline["ort_version"],
        "machine": baseline["machine"],
        "created": time.time(),
    }
    if params.get("record", True):
        history = History()
        result["model"] = history.model_identity(baseline["model"]["path"])
        result["variant"] = " vs ".join(r["variant"] for r in reports)
        result["providers"] = baseline["providers"]
        result["history_id"] = history.record("compare", result)
    return result
