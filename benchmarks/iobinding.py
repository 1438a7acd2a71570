"""Plain runs against IO binding with device tensors, on one provider, in one process.

Builds a convolutional model whose input is large next to its compute (so on a GPU the
copies show), runs the IO binding job on it (the five modes measured in alternating
rounds) and prints one JSON object: each mode's mean and p50 latency, the bytes it
moves per run and their cost, and its ratio to the plain run measured in the same job.

    python benchmarks/iobinding.py [--provider cpu|cuda|dml] [--batch 8] [--size 64] [--iterations 200]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from app.core.iobinding.jobs import IOBINDING

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    from app.core.jobs.errors import JobFailed, UserError
    from app.core.runner.process import run_job
    from app.core.session.config import SessionConfig
    from tests import models

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--provider", default="cpu")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--size", type=int, default=64, help="image height and width")
    parser.add_argument("--channels", type=int, default=16)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = models.save(models.cnn(channels=args.channels, size=args.size), Path(folder) / "cnn.onnx")
        config = SessionConfig()
        config.inputs.dims["batch"] = args.batch
        try:
            info = run_job(IOBINDING,
                           {"path": str(path), "session": config.to_dict(), "provider": args.provider,
                            "iterations": args.iterations, "warmup": args.warmup})
        except (UserError, JobFailed) as exc:
            print(json.dumps({"benchmark": "iobinding", "provider": args.provider, "error": exc.to_dict()}))
            sys.exit(2)
    modes = {}
    for mode in info["modes"]:
        stats = mode["latency_ms"] or {}
        modes[mode["name"]] = {
            "status": mode["status"], "mean_ms": stats.get("mean"), "p50_ms": stats.get("p50"),
            "p99_ms": stats.get("p99"), "bytes_copied_per_run": mode["bytes_copied_per_run"],
            "copy_ms_per_run": mode["copy_ms_per_run"], "speedup_vs_plain": mode["speedup_vs_plain"],
            "max_abs_diff": mode["max_abs_diff"], "skipped_reason": mode["skipped_reason"]}
    result = {
        "benchmark": "iobinding", "provider": info["provider"], "ort_version": info["ort_version"],
        "model": f"cnn channels={args.channels} input=[{args.batch},3,{args.size},{args.size}]",
        "iterations": args.iterations, "input_bytes": info["input_bytes"], "output_bytes": info["output_bytes"],
        "transfer": info["transfer"], "device_memory": info["device_memory"], "modes": modes,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
