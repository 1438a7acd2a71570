"""Does a tune keep its time budget? Tunes a test CNN (in its own process, as the window and
the command line do) with `--budget-seconds S` and prints one JSON object: the budget, the
wall time it took, how that splits between the race and the re-measurement, and whether it
stayed under the budget plus 20 % (a race that decides early ends early).

    python benchmarks/tune_budget.py [--budget 30]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.runner.process import run_job  # noqa: E402
from app.core.tune.jobs import TUNE  # noqa: E402
from tests import models  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--budget", type=float, default=30.0)
    parser.add_argument("--channels", type=int, default=64)
    parser.add_argument("--size", type=int, default=128)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = models.save(models.conv_bn_relu(channels=args.channels, size=args.size), Path(folder) / "cbr.onnx")
        started = time.monotonic()
        result = run_job(TUNE, {"path": str(path), "budget_seconds": args.budget})
        took = time.monotonic() - started
    print(json.dumps({"budget_s": args.budget, "took_s": round(took, 2), "race_s": round(result["race_seconds"], 2),
                      "ratio": round(took / args.budget, 3), "within_budget_plus_20_percent": took <= 1.2 * args.budget,
                      "finalists_remeasured": sum(t["remeasured"] for t in result["trials"]),
                      "stop_reason": result["stop_reason"]}))


if __name__ == "__main__":
    main()
