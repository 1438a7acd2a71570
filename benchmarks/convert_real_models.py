"""Every conversion kind on a folder of real models, each in its own job process.

Models are whatever .onnx files the folder holds (e.g. the ones PyPI packages ship in
their wheels); nothing here downloads or commits them. Prints one JSON object: per
model and kind, whether a variant was made, the repairs it needed, the fidelity, or the
one sentence saying why none is possible; plus the counts per kind.

    python benchmarks/convert_real_models.py FOLDER [--kinds fp16,int8-dynamic] [--feeds feeds.json]

feeds.json maps a model's file name to the fidelity inputs' settings (a FeedSpec), e.g.
{"silero_vad.onnx": {"dims": {"input[1]": 512}}, "vad.onnx": {"files": {"*": "vad_inputs.npz"}}}.
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

from app.core.convert.options import KINDS, kind_info  # noqa: E402
from app.core.jobs.errors import JobCancelled, JobFailed, UserError  # noqa: E402
from app.core.runner.process import run_job  # noqa: E402
from app.core.convert.jobs import CONVERT

LOCAL_KINDS = [k for k in KINDS if not KINDS[k].needs_gpu]


def convert_one(model: Path, kind: str, folder: Path, feeds: dict) -> dict:
    output = folder / f"{model.stem}.{kind}{kind_info(kind).suffix}"
    params = {"kind": kind, "input": str(model), "output": str(output), "force": True,
              "session": {"inputs": feeds} if feeds else None}
    try:
        result = run_job(CONVERT, params)
    except (UserError, JobFailed, JobCancelled) as exc:
        return {"made": False, "why": exc.message}
    fidelity = result["fidelity"]
    return {"made": True, "passed": fidelity["passed"], "max_abs_diff": fidelity["max_abs_diff"],
            "min_cosine": min((o["cosine"] for o in fidelity["outputs"] if o["cosine"] is not None), default=None),
            "ratio": round(result["size_ratio"], 3), "repairs": [r["what"] for r in result["repairs"]],
            "seconds": round(result["seconds"], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--kinds", default=",".join(LOCAL_KINDS))
    parser.add_argument("--feeds", type=Path, help="JSON: model file name -> fidelity input settings")
    args = parser.parse_args()
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    feeds = json.loads(args.feeds.read_text()) if args.feeds else {}
    models = sorted(args.folder.glob("*.onnx"))
    results: dict = {}
    with tempfile.TemporaryDirectory() as scratch:
        for model in models:
            for kind in kinds:
                outcome = convert_one(model, kind, Path(scratch), feeds.get(model.name, {}))
                results.setdefault(model.name, {})[kind] = outcome
                print(f"{model.name} {kind}: {'made' if outcome['made'] else 'none'}", file=sys.stderr, flush=True)
    counts = {kind: dict(Counter("made, fidelity passed" if r[kind]["made"] and r[kind]["passed"] else
                                 "made, fidelity failed" if r[kind]["made"] else "none possible"
                                 for r in results.values())) for kind in kinds}
    print(json.dumps({"benchmark": "convert_real_models", "models": len(models), "counts": counts,
                      "results": results}, indent=1))


if __name__ == "__main__":
    main()
