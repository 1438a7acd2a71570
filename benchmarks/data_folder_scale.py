"""Scoring a big data folder: the reference side of `compare --data` (feeds made and kept,
the model run, answers kept, per sample) against only reading the same samples with numpy.

A folder of small `.npy` samples is written for a small MLP; both sides run here, one after
the other, on the same folder. Prints one JSON object: seconds for each, "per_sample_ms" and
"ratio" (scoring / reading; goal: the same order, well under 100 at any size).

    python benchmarks/data_folder_scale.py [--samples 100000]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ortune-data-scale-") as scratch:
        scratch = Path(scratch)
        model = models.save(models.mlp(width=16), scratch / "m.onnx")
        data = scratch / "data"
        data.mkdir()
        for index in range(args.samples):
            np.save(data / f"s{index:06}.npy", np.full((1, 16), index % 7, np.float32))
        started = time.perf_counter()
        for path in sorted(data.iterdir()):
            np.load(path, allow_pickle=False)
        reading = time.perf_counter() - started
        session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
        work = scratch / "work"
        work.mkdir()
        started = time.perf_counter()
        result = score_samples(model, session, FeedSpec(data=str(data)), work, True, JobContext())
        scoring = time.perf_counter() - started
    print(json.dumps({"samples": result["samples"], "reading_s": round(reading, 3), "scoring_s": round(scoring, 3),
                      "per_sample_ms": round(scoring / args.samples * 1000, 3), "ratio": round(scoring / reading, 1)}))


if __name__ == "__main__":
    main()
