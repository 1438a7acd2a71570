"""Where does a real model's accuracy go, and what does the repair loop win back, at what
speed? The model (by default an OCR text detector, e.g. ch_PP-OCRv4_det_infer.onnx from the
rapidocr-onnxruntime wheel) is converted to float16 and to int8 (static, calibrated) and fed
rendered document pages — black text lines on white, as a detector meets them (random noise
tells it nothing is there, so its output is near zero everywhere) — through a data folder with
the ImageNet preset. For each kind the repair loop runs: the first step is the plain
conversion and names the first drifting node; each later step keeps the node drift blames.
Every step's outputs are scored (cosine, largest difference) and its variant timed against
the source in alternation.

Nothing is downloaded or committed; the pages are drawn here. Prints one JSON object.

    nice -n 10 python benchmarks/drift_repair.py MODEL [--size 640] [--seconds 6] [--steps 8] [--int8-steps 3]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.drift.jobs import REPAIR  # noqa: E402
from app.core.runner.process import run_job  # noqa: E402

WORDS = "invoice total amount date paid order number the quick brown fox jumps over a lazy dog".split()
#: the outputs pass at cosine 0.99; a detector's probability map flips pixels at its edges, so no element bound
TOLERANCE = {"atol": 1.0, "rtol": 0.0, "min_cosine": 0.99}


def draw_pages(folder: Path, count: int, size: int) -> None:
    from PIL import Image, ImageDraw, ImageFont

    for index in range(count):
        rng = np.random.default_rng(index)
        page = Image.new("RGB", (size, size), "white")
        pen = ImageDraw.Draw(page)
        font = ImageFont.load_default(int(rng.integers(size // 30, size // 19)))
        y = size // 32
        while y < size - size // 16:
            pen.text((int(rng.integers(10, size // 5)), y), " ".join(rng.choice(WORDS, size=4)), fill="black",
                     font=font)
            y += int(rng.integers(size // 16, size // 9))
        page.save(folder / f"page{index}.png")


def _step(step: dict) -> dict:
    first = step["first_drift"] or step["first_nonfinite"]
    return {"step": step["step"], "kept": step["kept"], "added": step["added"],
            "cosine": None if step["cosine"] is None else round(step["cosine"], 6),
            "max_abs_diff": step["max_abs_diff"], "passed": step["passed"],
            "first_drift": None if first is None else {k: first[k] for k in ("tensor", "node", "op_type", "cosine")},
            "speed": step["speed"]}


def repair(model: Path, kind: str, folder: Path, data: Path, size: int, seconds: float, steps: int) -> dict:
    started = time.monotonic()
    session = {"inputs": {"data": str(data), "shapes": {"x": [1, 3, size, size]}}}
    params = {"convert": {"kind": kind, "input": str(model), "output": str(folder / f"{model.stem}.{kind}.onnx"),
                          "force": True, "tolerance": TOLERANCE, "session": session, "speed_s": seconds},
              "max_steps": steps, "max_seconds": 3600}
    report = run_job(REPAIR, params)
    loop = report["repair"]
    first = loop["steps"][0]["first_drift"] or loop["steps"][0]["first_nonfinite"]
    return {"first_drifting_node": first, "passed": loop["passed"], "kept": loop["kept"], "stopped": loop["stopped"],
            "final_cosine": loop["steps"][-1]["cosine"], "final_speed": loop["steps"][-1]["speed"],
            "steps": [_step(s) for s in loop["steps"]], "inputs": report["fidelity"]["inputs"],
            "calibration": report.get("calibration_source"), "seconds": round(time.monotonic() - started, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("--size", type=int, default=640, help="the pages' (and the input's) height and width")
    parser.add_argument("--pages", type=int, default=4, help="pages drawn (int8 calibrates on all of them)")
    parser.add_argument("--seconds", type=float, default=6.0, help="each step's speed check, in all")
    parser.add_argument("--steps", type=int, default=8, help="the float16 loop's bound")
    parser.add_argument("--int8-steps", type=int, default=3, help="the int8 loop's bound")
    args = parser.parse_args()
    results = {"model": args.model.name, "input": f"1x3x{args.size}x{args.size}", "tolerance": TOLERANCE}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        data = folder / "pages"
        data.mkdir()
        draw_pages(data, args.pages, args.size)
        for kind, steps in (("fp16", args.steps), ("int8-static", args.int8_steps)):
            results[kind] = repair(args.model, kind, folder, data, args.size, args.seconds, steps)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
