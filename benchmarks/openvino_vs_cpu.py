"""OpenVINO through its plugin package (onnxruntime-ep-openvino) against ONNX Runtime's CPU
provider, on the models given: each session in a process of its own, timed in alternation
(app.core.tune.confirm.remeasure, the comparison's member job: the CPU provider is the
reference that writes the feeds), at FP32 and at OpenVINO's default precision (bf16 on a CPU
with AMX). Per model: the speedup of each with its 95 % interval and verdict, the fidelity of
its outputs against the CPU provider's (cosine, largest difference, passed or not under its
fidelity policy: float32's for FP32, float16's for the default precision, as tune holds them;
outputs near zero everywhere judged by the absolute bound and named), and each session's
creation time. Prints one JSON object.

    python benchmarks/openvino_vs_cpu.py MODEL.onnx [MODEL.onnx ...] [--seconds 4] [--extend 8] [--shape X=1,3,48,320]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.measure.alternate import summarize  # noqa: E402
from app.core.jobs.errors import UserError  # noqa: E402
from app.core.jobs.protocol import JobContext  # noqa: E402
from app.core.session.config import SessionConfig  # noqa: E402
from app.core.tune.confirm import remeasure  # noqa: E402

CANDIDATES = (("openvino fp32", {"precision": "FP32"}), ("openvino default precision", {}))


def measure(path: str, seconds: float, extend: float, shapes: dict) -> dict:
    inputs = {"shapes": shapes}
    cpu = SessionConfig.from_dict({"inputs": inputs})
    chosen = [{"label": label, "session": SessionConfig.from_dict({"providers": [{"name": "openvino", "options": options}],
                                                                   "inputs": inputs}).to_dict()}
              for label, options in CANDIDATES]
    alternation = remeasure(path, cpu, chosen, seconds, JobContext(), extend_s=extend)
    rows = summarize(alternation)
    reports = alternation.reports
    result = {"model": Path(path).name, "inputs": [{k: i[k] for k in ("name", "dtype", "shape")}
                                                    for i in reports[0]["inputs"]],
              "cpu": {"p50_ms": reports[0]["latency_ms"]["p50"], "session_create_ms": reports[0]["session_create_ms"]}}
    for (label, _), row, report in zip(CANDIDATES, rows[1:], reports[1:]):
        fidelity = report.get("fidelity") or {}
        result[label] = {"providers": report["providers"], "p50_ms": report["latency_ms"]["p50"],
                         "speedup": row["speedup"], "speedup_ci": row["speedup_ci"], "verdict": row["verdict"],
                         "conclusive": row["conclusive"], "session_create_ms": report["session_create_ms"],
                         "min_cosine": fidelity.get("min_cosine"), "max_abs_diff": fidelity.get("max_abs_diff"),
                         "fidelity_passed": fidelity.get("passed"),
                         "policy": (fidelity.get("tolerance") or {}).get("policy"),
                         "near_zero_outputs": fidelity.get("notes", [])}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+")
    parser.add_argument("--seconds", type=float, default=4.0, help="measuring time of each session")
    parser.add_argument("--extend", type=float, default=8.0, help="more time while an interval is wide")
    parser.add_argument("--shape", action="append", default=[], metavar="INPUT=D1,D2,...",
                        help="one input's whole shape, for every model given")
    args = parser.parse_args()
    shapes = {name: [int(d) for d in dims.split(",")] for name, _, dims in (s.partition("=") for s in args.shape)}
    results = []
    for path in args.models:
        try:
            results.append(measure(path, args.seconds, args.extend, shapes))
        except UserError as exc:        # OpenVINO cannot take every model: say which and why, go on
            results.append({"model": Path(path).name, "error": exc.message})
    print(json.dumps({"models": results}, indent=1))


if __name__ == "__main__":
    main()
