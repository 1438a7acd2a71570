"""Does a benchmark through an SSH target measure what a local one does? On 127.0.0.1 (a
throwaway sshd, as the tests use: tests/targets/sshd.py) the target is this machine, so the
two must agree: the channel's cost must stay out of the run timing.

Runs `ortune bench MODEL` locally and `--target loop`, alternating, `--pairs` times each,
and reports the median p50 of each, their ratio with its spread over pairs (goal: within
10 %), and the history row of a remote run, which must name the target. Prints one JSON object.

    python benchmarks/remote_bench.py MODEL [--pairs 5] [--duration 3] [-- extra bench flags]
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
sys.path.insert(0, str(ROOT))

from tests.targets.sshd import start_server  # noqa: E402


def ortune(*args: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "app", *args, "--json"], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"ortune {' '.join(args[:2])} failed: {done.stderr.strip()}")
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--duration", default="3")
    parser.add_argument("extra", nargs="*", help="more bench flags, after --")
    args = parser.parse_args()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="remote-bench-") as scratch:
        os.environ["ORTUNE_CONFIG_DIR"] = str(Path(scratch) / "config")
        os.environ["ORTUNE_DATA_DIR"] = str(Path(scratch) / "data")
        server = start_server(Path(scratch) / "sshd")
        try:
            subprocess.run([sys.executable, "-m", "app", "targets", "add", "loop", f"{server.user}@127.0.0.1",
                            "--port", str(server.port), "--identity", str(server.client_key), "--command",
                            server.command(), "--trust", server.fingerprint()], check=True, capture_output=True,
                           env=dict(os.environ, PYTHONPATH=str(ROOT)))
            flags = [str(args.model), "--duration", args.duration, *args.extra]
            local, remote, rows = [], [], []
            for _ in range(args.pairs):
                local.append(ortune("bench", *flags)["latency_ms"]["p50"])
                report = ortune("bench", *flags, "--target", "loop")
                remote.append(report["latency_ms"]["p50"])
                rows.append(report["history_id"])
            history = ortune("history")["results"]
        finally:
            server.stop()
    ratios = [r / l for r, l in zip(remote, local)]
    ratio = statistics.median(remote) / statistics.median(local)
    row = next(r for r in history if r["id"] == rows[-1])
    print(json.dumps({
        "benchmark": "remote_bench", "model": args.model.name, "pairs": args.pairs, "duration_s": float(args.duration),
        "local_p50_ms": [round(v, 4) for v in local], "remote_p50_ms": [round(v, 4) for v in remote],
        "remote_over_local": round(ratio, 4), "pair_ratios": [round(v, 4) for v in ratios],
        "pair_ratio_range": [round(min(ratios), 4), round(max(ratios), 4)],
        "within_10_percent": abs(ratio - 1) <= 0.10,
        "history_row": {"id": row["id"], "target": row["target"], "model_path": row["model_path"]},
        "seconds": round(time.monotonic() - started, 1)}, indent=1))


if __name__ == "__main__":
    main()
