"""How good is the tuner? For a CNN, a transformer block stack and an MLP (sized so
settings matter on a small machine), run the exhaustive grid and the race over the
same space, then re-measure both winners fairly: each in a fresh process of its own, in
alternation with the default settings (app.core.measure.alternate), as they would be deployed.
When the grid and the race pick the same setting (the default included), there is nothing to
tell apart and the ratio is 1.

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

from app.core.measure.alternate import alternate, summarize  # noqa: E402
from app.core.measure.runs import RunSettings  # noqa: E402
from app.core.bench.jobs import MEMBER, MemberParams  # noqa: E402
from app.core.jobs.protocol import JobContext  # noqa: E402
from app.core.runner.process import run_job  # noqa: E402
from app.core.session.config import SessionConfig  # noqa: E402
from app.core.tune.jobs import TUNE  # noqa: E402
from tests import models  # noqa: E402

#: seconds each member of the fair re-measurement is timed for
FAIR_S = 4.0


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


def fair(path: Path, dims: dict, grid_best: dict, race_best: dict) -> dict:
    """{default, grid, race: {ms, speedup, measured_as}}: each distinct setting alone in its own
    process, timed in alternation with the others; a setting picked twice is measured once."""
    configs = {"default": SessionConfig.from_dict({"inputs": {"dims": dims}})}
    for name, best in (("grid", grid_best), ("race", race_best)):
        config = SessionConfig.from_dict(best["session"])
        if all(config.to_dict() != other.to_dict() for other in configs.values()):
            configs[name] = config
    names = list(configs)
    settings = RunSettings(duration_s=FAIR_S)
    with tempfile.TemporaryDirectory(prefix="tune-quality-") as folder:
        members = [MemberParams(path=str(path), session=configs[n], run=settings, variant=n, reference_dir=folder,
                                is_reference=i == 0) for i, n in enumerate(names)]
        alternation = alternate(MEMBER, members, settings, JobContext())
    measured = {n: {"ms": alternation.reports[i]["latency_ms"]["p50"], "speedup": row["speedup"]}
                for i, (n, row) in enumerate(zip(names, summarize(alternation)))}

    def measured_as(best: dict) -> str:
        session = SessionConfig.from_dict(best["session"]).to_dict()
        return next(n for n in names if configs[n].to_dict() == session)

    return {"default": measured["default"] | {"measured_as": "default"},
            **{name: measured[measured_as(best)] | {"measured_as": measured_as(best)}
               for name, best in (("grid", grid_best), ("race", race_best))}}


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
            final = fair(path, dims, grid["best"], race["best"])
            grid_ms, race_ms = final["grid"]["ms"], final["race"]["ms"]
            ratio = race_ms / grid_ms        # 1 exactly when both picked the same setting
            rows.append({"name": name, "ratio_to_grid_best": round(ratio, 4),
                         "trial_share": round(race["trials_used"] / grid["trials_used"], 4),
                         "grid_best": grid["best"]["label"], "tuner_best": race["best"]["label"],
                         "grid_best_ms": round(grid_ms, 4), "tuner_best_ms": round(race_ms, 4),
                         "default_ms": round(final["default"]["ms"], 4),
                         "grid_speedup_alone": round(final["grid"]["speedup"], 4),
                         "tuner_speedup_alone": round(final["race"]["speedup"], 4),
                         "tuner_claim": round(race["speedup"], 4),
                         "grid_trials": grid["trials_used"], "tuner_trials": race["trials_used"],
                         "space": grid["space_size"], "grid_s": round(grid_s, 1), "tuner_s": round(race_s, 1)})
    result = {"benchmark": "tune_quality", "models": rows,
              "goal": "ratio_to_grid_best <= 1.03 and trial_share <= 0.25",
              "met": all(r["ratio_to_grid_best"] <= 1.03 and r["trial_share"] <= 0.25 for r in rows)}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
