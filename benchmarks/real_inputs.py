"""Whether ORTune's inputs run real models with no flags: the bench job (plan, first run,
probe, a few timed runs), each model in its own job process within the default memory budget.

Models are whatever .onnx files the folder holds (e.g. the ones PyPI packages ship in their
wheels: silero-vad, rapidocr-onnxruntime, ddddocr, magika, nudenet, faster-whisper); nothing
here downloads or commits them. Prints one JSON object: per model the inputs chosen (name,
dtype, shape, source, reason), the sizes the probe tried, and whether it ran; then the count.

    python benchmarks/real_inputs.py FOLDER [--iterations 5]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.bench.jobs import BENCH  # noqa: E402
from app.core.jobs.errors import JobCancelled, JobFailed, UserError  # noqa: E402
from app.core.runner.process import run_job  # noqa: E402


def bench_one(model: Path, iterations: int) -> dict:
    params = {"path": str(model), "run": {"warmup": 1, "iterations": iterations}, "record": False}
    started = time.monotonic()
    try:
        report = run_job(BENCH, params)
    except (UserError, JobFailed, JobCancelled) as exc:
        return {"ran": False, "why": exc.message, "seconds": round(time.monotonic() - started, 2)}
    return {"ran": True, "p50_ms": round(report["latency_ms"]["p50"], 3),
            "inputs": [{k: row[k] for k in ("name", "dtype", "shape", "source", "reason")} for row in report["inputs"]],
            "tried": report["inputs_tried"], "seconds": round(time.monotonic() - started, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--iterations", type=int, default=5)
    args = parser.parse_args()
    models = sorted(args.folder.glob("*.onnx"))
    results = {model.name: bench_one(model, args.iterations) for model in models}
    ran = sum(r["ran"] for r in results.values())
    probed = sum(bool(r.get("tried")) for r in results.values())
    print(json.dumps({"models": len(models), "ran": ran, "probed": probed, "results": results}, indent=2))


if __name__ == "__main__":
    main()
