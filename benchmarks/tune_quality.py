"""How good is the tuner? For a CNN, a transformer block stack and an MLP (sized so
settings matter on a small machine), run the exhaustive grid and the race over the
same space, then re-measure both winners fairly in one alternating run.

Prints one JSON object with a "models" list of {name, ratio_to_grid_best, trial_share}:
ratio_to_grid_best = tuner's best latency / grid's best latency (goal ≤ 1.03),
trial_share = tuner trials / grid trials (goal ≤ 0.25).

    python benchmarks/tune_quality.py [--quick]
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
from tests import models  # noqa: E402
from app.core.tune.jobs import TUNE


def model_set(folder: Path, quick: bool) -> list[tuple[str, Path, dict]]:
    scale = 1 if quick else 2
    return [
        ("cnn", models.save(models.cnn(channels=16 * scale, size=48), folder / "cnn.onnx"), {"batch": 4}),
        ("transformer", models.save(models.transformer_block(hidden=64 * scale, heads=4), folder / "block.onnx"),
         {"batch": 2, "sequence": 64}),
        ("mlp", models.save(models.mlp(width=512 * scale, depth=6), folder / "mlp.onnx"), {"batch": 16}),
    ]


def tune(path: Path, dims: dict, **extra) -> dict:
    return run_job(TUNE, {"path": str(path), "session": {"inputs": {"dims": dims}}, **extra})


def candidate_of(entry: dict) -> dict:
    session = entry["session"]
    candidate = {key: session[key] for key in ("graph_optimization_level", "execution_mode", "intra_op_num_threads",
                                                "inter_op_num_threads", "intra_op_allow_spinning",
                                                "dynamic_block_base", "io_binding")}
    candidate["provider"] = session["providers"][0]["name"]
    return candidate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller models (for a smoke run)")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name, path, dims in model_set(Path(folder), args.quick):
            started = time.monotonic()
            grid = tune(path, dims, strategy="grid")
            grid_s = time.monotonic() - started
            started = time.monotonic()
            race = tune(path, dims, strategy="race")
            race_s = time.monotonic() - started
            # Fair re-measure: both winners, same process, alternating, many blocks.
            final = tune(path, dims, strategy="grid", grid_blocks=120,
                         candidates=[candidate_of(grid["best"]), candidate_of(race["best"])])
            by_label = {t["label"]: t["latency_ms"] for t in final["trials"]}
            grid_ms = by_label.get(grid["best"]["label"], final["default"]["latency_ms"])
            race_ms = by_label.get(race["best"]["label"], final["default"]["latency_ms"])
            rows.append({"name": name, "ratio_to_grid_best": round(race_ms / grid_ms, 4),
                         "trial_share": round(race["trials_used"] / grid["trials_used"], 4),
                         "grid_best": grid["best"]["label"], "tuner_best": race["best"]["label"],
                         "grid_best_ms": round(grid_ms, 4), "tuner_best_ms": round(race_ms, 4),
                         "default_ms": round(final["default"]["latency_ms"], 4),
                         "grid_trials": grid["trials_used"], "tuner_trials": race["trials_used"],
                         "space": grid["space_size"], "grid_s": round(grid_s, 1), "tuner_s": round(race_s, 1)})
    result = {"benchmark": "tune_quality", "models": rows,
              "goal": "ratio_to_grid_best <= 1.03 and trial_share <= 0.25",
              "met": all(r["ratio_to_grid_best"] <= 1.03 and r["trial_share"] <= 0.25 for r in rows)}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
