"""Does fixing a model's symbolic dimensions (free-dimension overrides at the input plan's
sizes) make it faster here? Diagnose's experiment (app.core.diagnose.symbolic), on models
given, or on a small model whose Shape chain ORT folds only once the batch is fixed and on
the real models in --models-dir that have named symbolic dims. Each pair of sessions is timed
in alternation, each in its own process. Prints one JSON object: per model the overrides,
the optimised graph's node counts with and without them, the speedup with its 95 % interval,
the verdict and whether Diagnose would report it (only when faster).

    python benchmarks/symbolic_dims.py [MODEL ...] [--models-dir FOLDER] [--seconds 1.0]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

REAL = ("bert_torchscript.onnx", "gpt2_classic_torchscript.onnx")


def measure(path: str, seconds: float) -> dict:
    from app.core.diagnose.rules import symbolic_findings
    from app.core.diagnose.symbolic import candidate_overrides, measure_overrides, node_counts
    from app.core.jobs.protocol import JobContext
    from app.core.session.config import SessionConfig
    from app.core.session.create import create_session
    from app.core.session.probe import prepare_feeds

    config = SessionConfig()
    dims = prepare_feeds(path, create_session(path, config), config.inputs).info["dims"]
    overrides = candidate_overrides(dims, config)
    if not overrides:
        return {"overrides": {}, "note": "no named symbolic dimension"}
    result = node_counts(path, config, overrides)
    result.update(measure_overrides(path, config, overrides, JobContext(), seconds=seconds))
    result.pop("alternation")
    result["reported"] = bool(symbolic_findings(result))
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("models", nargs="*")
    parser.add_argument("--models-dir", type=Path, help="a folder holding the real models REAL names, if any")
    parser.add_argument("--seconds", type=float, default=1.0)
    args = parser.parse_args()
    paths = list(args.models)
    with tempfile.TemporaryDirectory() as folder:
        if not paths:
            from tests import models
            paths = [str(models.save(models.shape_dependent(), Path(folder) / "shape_dependent.onnx"))]
            if args.models_dir:
                paths += [str(args.models_dir / name) for name in REAL if (args.models_dir / name).exists()]
        print(json.dumps({Path(p).name: measure(p, args.seconds) for p in paths}, indent=1))


if __name__ == "__main__":
    main()
