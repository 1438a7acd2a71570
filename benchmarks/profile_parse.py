"""Reading a big profiling trace: `ortune profile TRACE --json` against the usual hand-made
script (json.load, then a table of node rows grouped by operator type, as one would with pandas).

A trace of at least a million node events is written in ONNX Runtime's own layout (a
transformer-like graph of 500 nodes run 2,000 times, arguments as ORT 1.2x writes them).
Both sides run as whole processes, alternately, on the same file; the launcher times each.
Prints one JSON object: medians in seconds, "ratio" (goal: <= 0.5) and "totals_match"
(every operator type's total µs and count equal on both sides).

    python benchmarks/profile_parse.py [--events 1000000] [--repeats 2]
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

from tests.traces import Node, write_trace  # noqa: E402

NODES_PER_RUN = 500
OP_TYPES = ["MatMul", "Add", "LayerNormalization", "Softmax", "Transpose", "Reshape", "Gelu", "Mul", "Gather",
            "Concat"]

PLAIN = """
import json, sys
from collections import defaultdict
with open(sys.argv[1]) as handle:
    events = json.load(handle)
rows = [{"name": e["name"], "op_type": e["args"].get("op_name"), "provider": e["args"].get("provider"),
         "dur": e["dur"]} for e in events if e.get("cat") == "Node"]
groups = defaultdict(list)
for row in rows:
    groups[row["op_type"]].append(row["dur"])
table = {op: {"total_us": sum(d), "count": len(d), "avg_us": sum(d) / len(d)} for op, d in groups.items()}
grand = sum(t["total_us"] for t in table.values())
for t in table.values():
    t["percent"] = 100.0 * t["total_us"] / grand
print(json.dumps(table))
"""


def graph() -> list[Node]:
    nodes = []
    for i in range(NODES_PER_RUN):
        op = OP_TYPES[i % len(OP_TYPES)]
        base = 5 + (i * 37) % 400
        nodes.append(Node(f"/encoder/layer.{i // 40}/{op}_{i}", op, [base + (i + k * 7) % 23 for k in range(11)],
                          inputs=[{"float": [1, 128, 768]}, {"float": [768, 768]}],
                          outputs=[{"float": [1, 128, 768]}]))
    return nodes


def timed(command: list[str], env: dict, out_path: Path) -> tuple[float, float | None]:
    """(wall seconds, peak memory in MB or None) of one whole process; stdout goes to out_path."""
    with open(out_path, "wb") as out:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.PIPE, env=env, cwd=ROOT)
        if hasattr(os, "wait4"):
            _, status, usage = os.wait4(process.pid, 0)
            seconds = time.perf_counter() - started
            process.returncode = os.waitstatus_to_exitcode(status)
            peak = usage.ru_maxrss / 1024
        else:
            process.wait()
            seconds, peak = time.perf_counter() - started, None
    if process.returncode != 0:
        raise RuntimeError(f"{command[:3]} failed: {process.stderr.read().decode()[-500:]}")
    return seconds, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000, help="node events in the trace (at least)")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    runs = -(-args.events // NODES_PER_RUN)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with tempfile.TemporaryDirectory() as folder:
        env["ORTUNE_CONFIG_DIR"] = os.path.join(folder, "config")
        env["ORTUNE_DATA_DIR"] = os.path.join(folder, "data")
        trace = write_trace(Path(folder) / "big.json", graph(), runs)
        with open(trace, "rb") as handle:          # both sides start with the file in the page cache
            while handle.read(64 << 20):
                pass
        ortune_cmd = [sys.executable, "-m", "app", "profile", str(trace), "--json"]
        plain_cmd = [sys.executable, "-c", PLAIN, str(trace)]
        ortune_out, plain_out = Path(folder) / "ortune.json", Path(folder) / "plain.json"
        timings = {"ortune": [], "plain": []}
        peaks = {"ortune": [], "plain": []}
        for _ in range(args.repeats):
            for name, command, out in (("plain", plain_cmd, plain_out), ("ortune", ortune_cmd, ortune_out)):
                seconds, peak = timed(command, env, out)
                timings[name].append(seconds)
                peaks[name].append(peak)
        ours = json.loads(ortune_out.read_text())
        theirs = json.loads(plain_out.read_text())
        trace_bytes = trace.stat().st_size
    ours_by_op = {r["op_type"]: (r["total_us"], r["count"]) for r in ours["by_op_type"]}
    theirs_by_op = {op: (t["total_us"], t["count"]) for op, t in theirs.items()}
    result = {
        "benchmark": "profile_parse",
        "node_events": ours["node_events"],
        "trace_mb": round(trace_bytes / 2**20, 1),
        "repeats": args.repeats,
        "ortune_s": round(statistics.median(timings["ortune"]), 2),
        "plain_s": round(statistics.median(timings["plain"]), 2),
        "ortune_all_s": [round(v, 2) for v in timings["ortune"]],
        "plain_all_s": [round(v, 2) for v in timings["plain"]],
        "ortune_peak_mb": round(max(peaks["ortune"])) if None not in peaks["ortune"] else None,
        "plain_peak_mb": round(max(peaks["plain"])) if None not in peaks["plain"] else None,
        "totals_match": ours_by_op == theirs_by_op and ours["total_node_us"] == sum(t[0] for t in theirs_by_op.values()),
    }
    result["ratio"] = round(result["ortune_s"] / result["plain_s"], 3)
    result["goal"] = "ratio <= 0.5 and totals_match"
    result["met"] = result["ratio"] <= 0.5 and result["totals_match"]
    try:
        import orjson  # noqa: F401
        result["orjson"] = True
    except ImportError:
        result["orjson"] = False
    print(json.dumps(result))


if __name__ == "__main__":
    main()
