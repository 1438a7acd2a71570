"""Compare: the same session settings and the same inputs for several models or
variants, each benchmarked in a fresh process, side by side.

The first model is the reference: its process saves the inputs it generated and the
outputs it computed; every later model is fed exactly those inputs (cast to its own
input types) and its outputs are measured against the reference's."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from app.core.benchmarking import RunSettings, benchmark, run_child
from app.core.errors import UserError
from app.core.jobs import JobContext

FEEDS_FILE = "feeds.npz"
OUTPUTS_FILE = "outputs.npz"


def output_fidelity(reference: dict, outputs: dict) -> dict:
    """How far `outputs` drift from `reference`, per output and overall.

    Per output: max_abs_diff, max_rel_diff, cosine, nonfinite (values that are NaN or
    infinite in `outputs` but not in the reference)."""
    import numpy as np

    rows = []
    for name, ref in reference.items():
        row = {"name": name}
        got = outputs.get(name)
        ref_array, got_array = np.asarray(ref), None if got is None else np.asarray(got)
        if got_array is None or ref_array.dtype.kind not in "biuf" or got_array.dtype.kind not in "biuf":
            row["note"] = "missing" if got_array is None else "not numeric: not compared"
            rows.append(row)
            continue
        if ref_array.shape != got_array.shape:
            row["note"] = f"shape {list(got_array.shape)} instead of {list(ref_array.shape)}"
            rows.append(row)
            continue
        a, b = ref_array.astype(np.float64).ravel(), got_array.astype(np.float64).ravel()
        finite = np.isfinite(a) & np.isfinite(b)
        diff = np.abs(a[finite] - b[finite])
        norms = float(np.linalg.norm(a[finite])) * float(np.linalg.norm(b[finite]))
        row.update(
            max_abs_diff=float(diff.max()) if diff.size else 0.0,
            max_rel_diff=float((diff / np.maximum(np.abs(a[finite]), 1e-12)).max()) if diff.size else 0.0,
            cosine=float(np.dot(a[finite], b[finite]) / norms) if norms > 0 else float(np.array_equal(a, b)),
            nonfinite=int(np.count_nonzero(~np.isfinite(b) & np.isfinite(a))))
        rows.append(row)
    compared = [r for r in rows if "max_abs_diff" in r]
    return {"outputs": rows,
            "max_abs_diff": max((r["max_abs_diff"] for r in compared), default=None),
            "min_cosine": min((r["cosine"] for r in compared), default=None),
            "nonfinite": sum(r["nonfinite"] for r in compared),
            "compared": len(compared) == len(rows)}


def member_job(params: dict, ctx: JobContext) -> dict:
    """One model of a comparison, in its own process.

    params: path, session, run, variant, reference_dir, is_reference."""
    import numpy as np

    from app.core.feed_spec import FeedSpec
    from app.core.session_config import SessionConfig

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
    from app.core.history import History
    from app.core.session_config import SessionConfig

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
            reports.append(run_child("app.core.comparing:member_job", member, ctx, forward))
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
