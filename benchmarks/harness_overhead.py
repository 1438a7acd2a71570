"""Per-run cost of `ortune bench` against a bare `sess.run` loop in a plain script.

Both are started as whole processes with a small and a large run count, back to back,
several rounds in alternating order; in each round the per-run cost of each is (time at
the large count − time at the small count) / the difference in runs, so start-up
(Python, ORT, session creation, the child process) cancels out, and "ratio" is the
median over rounds of the ratio measured within a round. The model has one node (Add of a 1×4 tensor),
so the harness's own cost is as visible as it can be. Prints one JSON object with
"ratio" = ortune per-run cost / bare per-run cost (goal: ≤ 1.02).

The bare loop calls `session.run(None, feeds)`, as most scripts do; ortune passes the
output names, which saves ORT's Python wrapper a little work per call. So the loop
is also run with the names given ("bare_named"), and "ratio_vs_named" isolates what
the harness itself adds (clock reads, keeping samples, streaming batches).

    python benchmarks/harness_overhead.py [--rounds 5] [--small 20000] [--large 520000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

BARE = """
import sys
import numpy as np
import onnxruntime as ort
session = ort.InferenceSession(sys.argv[1], providers=["CPUExecutionProvider"])
feeds = {"x": np.random.default_rng(0).standard_normal((1, 4)).astype(np.float32)}
names = [o.name for o in session.get_outputs()] if sys.argv[3] == "named" else None
for _ in range(int(sys.argv[2])):
    session.run(names, feeds)
"""


def timed(command: list[str], env: dict) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{command[:4]} failed: {done.stderr[-500:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--small", type=int, default=20_000)
    parser.add_argument("--large", type=int, default=520_000)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from tests import models

    with tempfile.TemporaryDirectory() as folder:
        model = models.save(models.tiny_add(), Path(folder) / "one_node.onnx")
        env = dict(os.environ, PYTHONPATH=str(ROOT), ORTUNE_DATA_DIR=os.path.join(folder, "data"),
                   ORTUNE_CONFIG_DIR=os.path.join(folder, "config"))

        def ortune(n: int) -> list[str]:
            return [sys.executable, "-m", "app", "bench", str(model), "--iterations", str(n), "--warmup", "0",
                    "--no-history", "--json"]

        commands = {
            "ortune": ortune,
            "bare": lambda n: [sys.executable, "-c", BARE, str(model), str(n), "none"],
            "bare_named": lambda n: [sys.executable, "-c", BARE, str(model), str(n), "named"],
        }
        per_run = {tool: [] for tool in commands}      # seconds per run, one value per round
        for command in commands.values():                # warm the file cache
            timed(command(1000), env)
        for round_index in range(args.rounds):
            # Each tool's two counts run back to back, and the order flips every round, so a
            # change in the machine's load hits every tool alike.
            order = list(commands) if round_index % 2 == 0 else list(reversed(commands))
            for tool in order:
                small = timed(commands[tool](args.small), env)
                large = timed(commands[tool](args.large), env)
                per_run[tool].append((large - small) / (args.large - args.small))

    def ratios(tool: str, against: str) -> list[float]:
        return [a / b for a, b in zip(per_run[tool], per_run[against])]

    result = {
        "benchmark": "harness_overhead",
        "model": "one Add node, input 1x4 float32, CPU",
        "rounds": args.rounds, "small_runs": args.small, "large_runs": args.large,
        **{f"{tool}_us_per_run": round(statistics.median(values) * 1e6, 3) for tool, values in per_run.items()},
        "ratio": round(statistics.median(ratios("ortune", "bare")), 4),
        "ratio_vs_named": round(statistics.median(ratios("ortune", "bare_named")), 4),
        "ratios_per_round": [round(r, 4) for r in ratios("ortune", "bare")],
        "ratios_vs_named_per_round": [round(r, 4) for r in ratios("ortune", "bare_named")],
        "goal": "ratio <= 1.02",
    }
    result["met"] = result["ratio"] <= 1.02
    print(json.dumps(result))


if __name__ == "__main__":
    main()
