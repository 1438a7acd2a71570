"""Does `gate` tell the truth while the machine is busy? With a second process burning a core
in spells (`--spell` seconds on, as many off) all the while:

(a) a model against a byte-identical copy, `--identical` gates: each should pass (target: all);
(b) against a variant doing 10 % more work, `--ten` gates with --max-slowdown 5: each should fail
    on speed (a regression);
(c) against a variant doing 2 % more work, `--two` gates with --max-slowdown 5: each should pass.
    A variant's extra work is a side chain of layers like the model's own, from the same input
    to an output of its own: the model's outputs stay the same, so only speed can fail it;
(d) against a copy with one weight perturbed: the output check fails and names the node that
    weight feeds.

Gates run through the gate job (app.core.gate.jobs.GATE) with `--duration` seconds per model
shared by the first `--pairs` pairs of fresh processes, and more pairs while undecided, as long
as one fits in `--max-seconds` (starts included). Each gate notes the 1-minute load average
when it ended. Prints one JSON object.

    python benchmarks/gate_truth.py [--identical 20] [--ten 10] [--two 10] [--duration 2] [--pairs 4]
        [--max-seconds 60] [--width 256] [--depth 50] [--batch 16] [--threads 1] [--spell 3]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.burner import burning  # noqa: E402

PERTURBED_LAYER = 1


def gate(new: Path, old: Path, args) -> dict:
    from app.core.gate.jobs import GATE
    from app.core.runner.process import run_job

    session = {"intra_op_num_threads": args.threads, "inputs": {"dims": {"batch": args.batch}}}
    return run_job(GATE, {"new": str(new), "old": str(old), "new_session": session, "old_session": session,
                          "run": {"warmup": 10, "duration_s": args.duration}, "max_slowdown": 0.05,
                          "max_seconds": args.max_seconds, "pairs": args.pairs, "record": False})


def speed(result: dict) -> dict:
    criterion = next(c for c in result["criteria"] if c["name"] == "speed")
    figures = criterion["figures"]
    return {"verdict": criterion["verdict"], "gate": result["verdict"], "slowdown": round(figures["slowdown"], 4),
            "interval": [round(v, 4) for v in figures["slowdown_ci"]], "rounds": figures["rounds"],
            "rounds_judged": figures.get("rounds_judged"), "too_busy": figures.get("too_busy"),
            "seconds": round(figures["seconds"], 1), "pairs": figures.get("pairs"),
            "pair_slowdowns": [round(1 / s - 1, 4) for s in figures.get("pair_speedups") or []],
            "load_1min": round(os.getloadavg()[0], 1)}


def with_side_work(model_path: Path, layers: int, width: int, target: Path) -> Path:
    """The model plus `layers` MatMul+Add+Relu layers from its input to an extra output."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(model_path))
    rng = np.random.default_rng(7)
    current = model.graph.input[0].name
    for index in range(layers):
        weight = numpy_helper.from_array(rng.normal(0, 0.1, (width, width)).astype(np.float32), f"side_w{index}")
        bias = numpy_helper.from_array(rng.normal(0, 0.1, (width,)).astype(np.float32), f"side_b{index}")
        model.graph.initializer.extend([weight, bias])
        model.graph.node.extend([
            helper.make_node("MatMul", [current, weight.name], [f"side_m{index}"], name=f"side_matmul{index}"),
            helper.make_node("Add", [f"side_m{index}", bias.name], [f"side_a{index}"], name=f"side_add{index}"),
            helper.make_node("Relu", [f"side_a{index}"], [f"side_r{index}"], name=f"side_relu{index}")])
        current = f"side_r{index}"
    model.graph.output.append(helper.make_tensor_value_info(current, TensorProto.FLOAT, ["batch", width]))
    onnx.save(model, str(target))
    return target


def perturbed(model_path: Path, target: Path) -> Path:
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(model_path))
    weight = next(t for t in model.graph.initializer if t.name == f"w{PERTURBED_LAYER}")
    values = numpy_helper.to_array(weight).copy()
    values[:, 0] += 1.0        # a whole column, so no Relu before it can hide the change
    weight.CopyFrom(numpy_helper.from_array(values, weight.name))
    onnx.save(model, str(target))
    return target


def series(label: str, count: int, new: Path, old: Path, args, wanted: str) -> dict:
    runs = []
    for index in range(count):
        runs.append(speed(gate(new, old, args)))
        print(f"{label} {index + 1}/{count}: {runs[-1]}", file=sys.stderr)
    return {"gates": count, "as_wanted": sum(r["gate"] == wanted for r in runs), "wanted": wanted,
            "false_verdicts": sum(r["gate"] not in (wanted, "undecided") for r in runs),
            "verdicts": dict(Counter(r["gate"] for r in runs)), "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--identical", type=int, default=20)
    parser.add_argument("--ten", type=int, default=10)
    parser.add_argument("--two", type=int, default=10)
    parser.add_argument("--duration", type=float, default=2.0,
                        help="seconds per model of the first pairs together (the gate's default)")
    parser.add_argument("--max-seconds", type=float, default=60.0, help="the gate's default")
    parser.add_argument("--pairs", type=int, default=4, help="pairs of fresh processes first (the gate's default)")
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--depth", type=int, default=50)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--spell", type=float, default=3.0, help="seconds the burner burns, then rests")
    args = parser.parse_args()

    from tests import models

    started = time.monotonic()
    folder = Path(tempfile.mkdtemp(prefix="gate-truth-"))
    model = models.save(models.mlp(width=args.width, depth=args.depth), folder / "model.onnx")
    copy = folder / "copy.onnx"
    copy.write_bytes(model.read_bytes())
    ten = with_side_work(model, round(args.depth * 0.10), args.width, folder / "ten.onnx")
    two = with_side_work(model, round(args.depth * 0.02), args.width, folder / "two.onnx")
    wrong = perturbed(model, folder / "perturbed.onnx")
    with burning(args.spell):
        identical = series("identical", args.identical, copy, model, args, "pass")
        slower_ten = series("10 % more work", args.ten, ten, model, args, "regression")
        slower_two = series("2 % more work", args.two, two, model, args, "pass")
        outputs = gate(wrong, model, args)
    check = next(c for c in outputs["criteria"] if c["name"] == "outputs")
    first = check["figures"].get("first_drift") or {}
    print(json.dumps({
        "model": {"width": args.width, "depth": args.depth, "batch": args.batch, "threads": args.threads,
                  "ten_extra_layers": round(args.depth * 0.10), "two_extra_layers": round(args.depth * 0.02)},
        "burner": {"spell_s": args.spell, "cores": 1},
        "first_stretch_s_per_model": args.duration, "max_seconds": args.max_seconds, "pairs": args.pairs,
        "max_slowdown": 0.05,
        "identical": identical, "ten_percent_more_work": slower_ten, "two_percent_more_work": slower_two,
        "perturbed_weight": {"weight": f"w{PERTURBED_LAYER}", "expected_node": f"matmul{PERTURBED_LAYER}",
                             "outputs_verdict": check["verdict"], "gate": outputs["verdict"],
                             "named_node": first.get("node"), "named_right": first.get("node") == f"matmul{PERTURBED_LAYER}"},
        "seconds": round(time.monotonic() - started, 1),
    }, indent=2))


if __name__ == "__main__":
    main()
