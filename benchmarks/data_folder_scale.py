"""Scoring a big data folder against only reading it: `compare --data`'s accuracy pass
(feeds made and kept, the model run, answers kept and scored) for the reference and for a
later member, beside reading the same samples with numpy, at 2,000 and 100,000 samples.

A folder of small `.npy` samples with labels and expected outputs is written for a small
MLP; every side runs here, one after the other, on the same folder. Prints one JSON object:
per size, seconds for each side and "ratio" (scoring / reading; the goal is the same order
of magnitude, well under 10, at any size).

    python benchmarks/data_folder_scale.py [--sizes 2000 100000]
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

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402

from app.core.bench.accuracy import score_samples  # noqa: E402
from app.core.jobs.protocol import JobContext  # noqa: E402
from app.core.session.inputs import FeedSpec  # noqa: E402
from tests import models  # noqa: E402


def _folder(data: Path, samples: int) -> None:
    (data / "expected").mkdir(parents=True)
    for index in range(samples):
        np.save(data / f"s{index:06}.npy", np.full((1, 16), index % 7, np.float32))
        if index % 10 == 0:              # a tenth of the samples say what the model should return
            np.save(data / "expected" / f"s{index:06}.npy", np.zeros((1, 16), np.float32))
    (data / "labels.csv").write_text("sample,label\n" + "".join(f"s{i:06},{i % 16}\n" for i in range(samples)))


def measure(scratch: Path, samples: int) -> dict:
    model = models.save(models.mlp(width=16), scratch / "m.onnx")
    data = scratch / "data"
    _folder(data, samples)
    started = time.perf_counter()
    for path in sorted(data.glob("*.npy")):
        np.load(path, allow_pickle=False)
    reading = time.perf_counter() - started
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    work = scratch / "work"
    work.mkdir()
    seconds = {}
    for side, is_reference in (("reference", True), ("member", False)):
        started = time.perf_counter()
        result = score_samples(model, session, FeedSpec(data=str(data)), work, is_reference, JobContext())
        seconds[side] = time.perf_counter() - started
        assert result["samples"] == samples and result["labelled"] == samples
    return {"samples": samples, "reading_s": round(reading, 3),
            **{f"scoring_{side}_s": round(value, 3) for side, value in seconds.items()},
            "per_sample_ms": round(max(seconds.values()) / samples * 1000, 3),
            "ratio_reference": round(seconds["reference"] / reading, 1),
            "ratio_member": round(seconds["member"] / reading, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2_000, 100_000])
    args = parser.parse_args()
    runs = []
    for samples in args.sizes:
        with tempfile.TemporaryDirectory(prefix="ortune-data-scale-") as scratch:
            runs.append(measure(Path(scratch), samples))
    print(json.dumps({"runs": runs, "worst_ratio": max(max(r["ratio_reference"], r["ratio_member"]) for r in runs)}))


if __name__ == "__main__":
    main()
