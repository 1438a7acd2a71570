"""`ortune optimize` against the search a user would do by hand: every conversion kind one by
one with `ortune convert` (its check, the repair loop when the check fails, its speed against
the source), the fastest faithful one picked, then `ortune tune` on it. Then the two answers
(each model with its settings) are measured against the source in one alternation, each in
its own fresh process, a few times.

Reports per model: the optimizer's pick and wall time, each kind's by-hand outcome and the
by-hand pick and total wall time, and the optimizer's answer as a share of the by-hand one
(goal: at least 95 %, in less time). Prints one JSON object.

    python benchmarks/optimize_by_hand.py FOLDER [--only ocr-cls] [--budget-seconds 150]
        [--tune-seconds 40] [--duration 3] [--repeats 2] [--settings "--threads 1"]
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from optimize_truth import MODELS, answers_again, ortune, run_optimize  # noqa: E402

from app.core.convert.options import KINDS, kind_info  # noqa: E402
from app.core.drift.repair import KEEP_OPTION  # noqa: E402
from app.core.session.config import SessionConfig  # noqa: E402

GOAL = 0.95


def by_hand(source: str, flags: list[str], folder: Path, tune_seconds: float) -> dict:
    """Every kind, the fastest faithful one, then tune on it."""
    started = time.monotonic()
    kinds = {}
    for kind in KINDS:
        output = folder / f"{kind}{kind_info(kind).suffix}"
        repair = ["--repair"] if kind in KEEP_OPTION else []      # as a user would, where the loop works
        report, wall, errors = ortune(["convert", kind, source, "-o", str(output), "--force", *repair, *flags])
        if report is None:
            kinds[kind] = {"made": False, "why": errors[-200:], "wall_seconds": round(wall, 1)}
            continue
        speed = report["speed"]
        kinds[kind] = {"made": True, "check": report["check"], "path": report["output"],
                       "speedup": speed.get("ratio"), "verdict": speed.get("verdict"), "wall_seconds": round(wall, 1)}
    faithful = {k: r for k, r in kinds.items() if r["made"] and r["check"] == "passed" and r["speedup"]}
    faster = {k: r for k, r in faithful.items() if r["verdict"] == "faster"}
    pick = max(faster, key=lambda k: faster[k]["speedup"]) if faster else "source"
    path = faster[pick]["path"] if faster else source
    preset = folder / "best.json"
    tuned, wall, _ = ortune(["tune", path, "--budget-seconds", str(tune_seconds), "--save-best", str(preset), *flags])
    return {"kinds": kinds, "pick": pick, "path": path, "tuned": bool(tuned and tuned["clearly_faster"]),
            "tune_wall_seconds": round(wall, 1),
            "settings": SessionConfig.load(preset).to_dict() if preset.exists() else None,
            "wall_seconds": round(time.monotonic() - started, 1)}


def side_by_side(name: str, folder: Path, args) -> dict:
    file, flags = MODELS[name]
    settings = shlex.split(args.settings)       # the user's own session flags, on both sides
    with tempfile.TemporaryDirectory(prefix="optimize-by-hand-") as scratch:
        scratch = Path(scratch)
        # --fresh: the candidates an earlier run kept in the history would make its time no match for the hand's
        source, result, wall, errors = run_optimize(name, folder, scratch, args.budget_seconds,
                                                    ("--fresh", *settings))
        if result is None:
            return {"name": name, "ran": False, "error": errors}
        (scratch / "hand").mkdir()
        hand = by_hand(source, [*flags, *settings], scratch / "hand", args.tune_seconds)
        choice = result["choice"]
        members = [(source, result["session"]), (choice["model"], choice["settings"]),
                   (hand["path"], hand["settings"] or result["session"])]
        later, (optimizer, manual) = answers_again(members, args.duration, args.repeats)
    share = optimizer / manual
    return {"name": name, "model": file, "ran": True, "settings": settings,
            "optimizer": {"kind": choice["kind"], "tuned": choice["tuned"], "claimed": choice["speedup"],
                          "wall_seconds": round(wall, 1), "budget_seconds": args.budget_seconds},
            "by_hand": {k: v for k, v in hand.items() if k not in ("settings", "path")},
            "later": later, "optimizer_speedup": round(optimizer, 4), "by_hand_speedup": round(manual, 4),
            "optimizer_share": round(share, 4), "within_goal": share >= GOAL,
            "less_time": wall < hand["wall_seconds"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="holds the real .onnx models")
    parser.add_argument("--only", default="ocr-cls", help=f"models to run, of: {', '.join(MODELS)}")
    parser.add_argument("--budget-seconds", type=float, default=150.0, help="the optimizer's budget per model")
    parser.add_argument("--tune-seconds", type=float, default=40.0, help="the by-hand tune race's budget")
    parser.add_argument("--duration", type=float, default=3.0, help="per member, in each later measurement")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--settings", default="", help="the user's own session flags, as one string (e.g. "
                                                       "\"--threads 1\"), given to both searches")
    args = parser.parse_args()
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    if any(n not in MODELS for n in names):
        parser.error(f"models are named: {', '.join(MODELS)}")
    started = time.monotonic()
    rows = [side_by_side(name, args.folder, args) for name in names]
    print(json.dumps({"benchmark": "optimize_by_hand", "models": rows,
                      "goal": f"the optimizer's answer at least {GOAL:.0%} of the by-hand one's speedup, in less "
                              "time",
                      "met": all(r["ran"] and r["within_goal"] and r["less_time"] for r in rows),
                      "seconds": round(time.monotonic() - started, 1)}, indent=1))


if __name__ == "__main__":
    main()
