"""Is each variant as fast as its source? Every model of a folder converted to the given kinds
(by default the ORT format and offline optimisation, which must never be slower), each
measured against its source by the conversion's own speed check: in alternation, each in a
process of its own, on the fidelity check's inputs.

Models are whatever .onnx files the folder holds (e.g. the ones PyPI packages ship in
their wheels); nothing here downloads or commits them. Prints one JSON object: per model
and kind the ratio (source p50 / variant p50, above 1: the variant is faster), its 95 %
interval and the verdict, or why there is none; then per kind the count of each verdict.

    python benchmarks/convert_speed.py FOLDER [--kinds ort,optimize] [--seconds 2] [--feeds feeds.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.convert.jobs import CONVERT  # noqa: E402
from app.core.convert.options import kind_info  # noqa: E402
from app.core.jobs.errors import JobCancelled, JobFailed, UserError  # noqa: E402
from app.core.runner.process import run_job  # noqa: E402


def measure_one(model: Path, kind: str, folder: Path, seconds: float, feeds: dict) -> dict:
    output = folder / f"{model.stem}.{kind}{kind_info(kind).suffix}"
    params = {"kind": kind, "input": str(model), "output": str(output), "force": True, "speed_s": seconds,
              "session": {"inputs": feeds} if feeds else None}
    try:
        result = run_job(CONVERT, params)
    except (UserError, JobFailed, JobCancelled) as exc:
        return {"made": False, "why": exc.message}
    speed = result["speed"]
    if speed.get("skipped"):
        return {"made": True, "check": result["check"], "verdict": None, "why": speed["why"]}
    return {"made": True, "check": result["check"], "ratio": round(speed["ratio"], 3),
            "ratio_ci": [round(v, 3) for v in speed["ratio_ci"]], "verdict": speed["verdict"],
            "source_p50_ms": round(speed["source_p50_ms"], 4), "variant_p50_ms": round(speed["variant_p50_ms"], 4),
            "rounds": speed["rounds"], **({"why": speed["why"]} if speed.get("why") else {})}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--kinds", default="ort,optimize")
    parser.add_argument("--seconds", type=float, default=2.0, help="the speed check's time per variant")
    parser.add_argument("--feeds", type=Path, help="JSON: model file name -> fidelity input settings")
    args = parser.parse_args()
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    feeds = json.loads(args.feeds.read_text()) if args.feeds else {}
    results: dict = {}
    with tempfile.TemporaryDirectory() as scratch:
        for model in sorted(args.folder.glob("*.onnx")):
            results[model.name] = {kind: measure_one(model, kind, Path(scratch), args.seconds,
                                                     feeds.get(model.name, {})) for kind in kinds}
            print(model.name, json.dumps(results[model.name]), file=sys.stderr, flush=True)
    counts = {kind: dict(Counter(str(r[kind].get("verdict")) for r in results.values())) for kind in kinds}
    print(json.dumps({"seconds_per_check": args.seconds, "models": results, "verdicts": counts,
                      "slower": {kind: counts[kind].get("slower", 0) for kind in kinds}}, indent=2))


if __name__ == "__main__":
    main()
