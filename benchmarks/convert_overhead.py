"""What `ortune convert` costs on top of the conversion library it calls.

For fp16 and int8-dynamic on a generated model of at least 100 MB, runs alternately
`ortune convert KIND MODEL -o OUT --force --no-fidelity --no-speed` (intake, conversion in
the job's child process, the check that ONNX Runtime loads the variant, atomic write: ORTune's
own cost) and a plain script that calls the library bare (load, convert, save). Each run is a
whole process tree; its wall time and peak resident memory (the sum over the tree, the job's
child process included, sampled every 10 ms) are recorded. The default conversion, with its
fidelity and speed checks, is timed separately and printed beside ("default_s"). ORTune's own modules are
compiled to bytecode first, as they are in an installed copy.

The machine is shared and noisy (one run of the same command can take twice as long as
the next), so the two sides run in back-to-back pairs, the order swapped every pair,
and the wall ratio is the median of the pairs' ratios; the fastest runs' ratio is
printed beside it, and so is the ratio of CPU seconds (user + system of the process
tree), which contention barely moves. Peak memory barely varies; its ratio uses the
medians.

Prints one JSON object: per kind, "wall_ratio" and "rss_ratio" (the worst over the
kinds; goals: ≤ 1.10 and ≤ 1.20), "default_s" (the fastest default conversion, checks on)
and "checks_seconds" (what the checks add to ORTune's own cost).

    python benchmarks/convert_overhead.py [--runs 12] [--mb 200] [--kinds fp16,int8-dynamic]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
import psutil
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parents[1]

BARE = {
    "fp16": """
import sys, onnx
from onnxconverter_common import float16
model = float16.convert_float_to_float16(onnx.load(sys.argv[1]), keep_io_types=True)
onnx.save(model, sys.argv[2])
""",
    "int8-dynamic": """
import sys
from onnxruntime.quantization import quantize_dynamic
quantize_dynamic(sys.argv[1], sys.argv[2])
""",
}


def make_model(path: Path, megabytes: int) -> int:
    """An MLP of square layers whose weights add up to `megabytes` (float32)."""
    width = 1792
    layers = max(1, round(megabytes * 2**20 / (width * width * 4)))
    rng = np.random.default_rng(0)
    nodes, weights, current = [], [], "x"
    for i in range(layers):
        weights.append(numpy_helper.from_array(rng.normal(0, 0.02, (width, width)).astype(np.float32), f"w{i}"))
        weights.append(numpy_helper.from_array(np.zeros(width, np.float32), f"b{i}"))
        nodes += [helper.make_node("MatMul", [current, f"w{i}"], [f"m{i}"], name=f"matmul{i}"),
                  helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"], name=f"add{i}"),
                  helper.make_node("Relu", [f"a{i}"], [f"r{i}"], name=f"relu{i}")]
        current = f"r{i}"
    graph = helper.make_graph(nodes, "wide_mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", width])],
                              [helper.make_tensor_value_info(current, TensorProto.FLOAT, ["batch", width])],
                              initializer=weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path.stat().st_size


def measure(command: list[str], env: dict, accept=(0,)) -> tuple[float, int, float]:
    """Wall seconds, peak resident bytes and CPU seconds of the whole process tree."""
    cpu_before = _children_cpu()
    started = time.perf_counter()
    process = psutil.Popen(command, env=env, cwd=env["ORTUNE_DATA_DIR"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peak = 0
    while process.poll() is None:
        peak = max(peak, _tree_rss(process))
        time.sleep(0.01)
    wall = time.perf_counter() - started
    out, err = process.communicate()
    if process.returncode not in accept:   # 4: made, but a check failed (int8 may drift)
        raise RuntimeError(f"{' '.join(command[:4])} failed: {err.decode()[-800:]}")
    return wall, peak, _children_cpu() - cpu_before


def _tree_rss(process: psutil.Popen) -> int:
    """Resident bytes of a process and its descendants. On Linux read straight from /proc
    (30 µs); psutil's walk of every process costs a millisecond a sample, a tenth of a core
    taken from the runs being measured. A process's children are listed per thread that
    started them (/proc/PID/task/TID/children): the job's process is started from a thread
    other than the main one, so every thread's list is read."""
    if not os.path.exists(f"/proc/{process.pid}/task/{process.pid}/children"):
        try:
            return sum(m.memory_info().rss for m in [process, *process.children(recursive=True)])
        except psutil.Error:
            return 0
    total, pending = 0, [process.pid]
    while pending:
        pid = pending.pop()
        try:
            with open(f"/proc/{pid}/statm") as statm:
                total += int(statm.read().split()[1]) * _PAGE
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as children:
                    pending += [int(child) for child in children.read().split()]
        except (OSError, ValueError, IndexError):
            continue
    return total


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _children_cpu() -> float:
    """User + system seconds of every finished descendant (contention barely moves it)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=12, help="pairs per kind (even: each order as often)")
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--kinds", default=",".join(BARE), help="comma-separated, from: " + ", ".join(BARE))
    args = parser.parse_args()
    kinds = [k for k in args.kinds.split(",") if k]
    if not kinds or set(kinds) - set(BARE):
        parser.error(f"--kinds takes {', '.join(BARE)}")
    # An installed ORTune runs from compiled bytecode, as the libraries do: write it first
    # (the environment may ask Python not to).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT)
    compileall.compile_dir(str(ROOT / "app"), quiet=1)
    result: dict = {"benchmark": "convert_overhead", "runs": args.runs, "kinds": {}}
    with tempfile.TemporaryDirectory() as folder:
        env["ORTUNE_CONFIG_DIR"] = os.path.join(folder, "config")
        env["ORTUNE_DATA_DIR"] = os.path.join(folder, "data")
        os.makedirs(env["ORTUNE_DATA_DIR"])     # also the working folder of every run
        model = Path(folder) / "wide.onnx"
        result["model_bytes"] = make_model(model, args.mb)
        for kind in kinds:
            script = BARE[kind]
            out = str(Path(folder) / f"out.{kind}.onnx")
            default = [sys.executable, "-m", "app", "convert", kind, str(model), "-o", out, "--force", "--json"]
            ortune = [*default, "--no-fidelity", "--no-speed"]
            bare = [sys.executable, "-c", script, str(model), out]
            measure(bare, env)                      # warm the file cache and the imports
            walls = {"ortune": [], "bare": []}
            peaks = {"ortune": [], "bare": []}
            cpus = {"ortune": [], "bare": []}
            for index in range(args.runs):
                pair = [("ortune", ortune), ("bare", bare)]
                for name, command in (pair if index % 2 == 0 else pair[::-1]):
                    wall, peak, cpu = measure(command, env)
                    walls[name].append(wall)
                    peaks[name].append(peak)
                    cpus[name].append(cpu)
            with_checks = [measure(default, env, accept=(0, 4))[0] for _ in range(2)]
            entry = {}
            for name in ("ortune", "bare"):
                entry[f"{name}_min_s"] = round(min(walls[name]), 3)
                entry[f"{name}_median_s"] = round(statistics.median(walls[name]), 3)
                entry[f"{name}_rss_bytes"] = int(statistics.median(peaks[name]))
                entry[f"{name}_cpu_s"] = round(statistics.median(cpus[name]), 3)
            entry["wall_ratio"] = round(statistics.median(o / b for o, b in zip(walls["ortune"], walls["bare"])), 3)
            entry["wall_ratio_fastest"] = round(entry["ortune_min_s"] / entry["bare_min_s"], 3)
            entry["cpu_ratio"] = round(entry["ortune_cpu_s"] / entry["bare_cpu_s"], 3)
            entry["rss_ratio"] = round(entry["ortune_rss_bytes"] / entry["bare_rss_bytes"], 3)
            entry["default_s"] = round(min(with_checks), 3)
            entry["checks_seconds"] = round(min(with_checks) - min(walls["ortune"]), 2)
            entry["all_s"] = {k: [round(v, 2) for v in vs] for k, vs in walls.items()}
            result["kinds"][kind] = entry
    result["wall_ratio"] = max(e["wall_ratio"] for e in result["kinds"].values())
    result["rss_ratio"] = max(e["rss_ratio"] for e in result["kinds"].values())
    result["goal"] = "wall_ratio <= 1.10, rss_ratio <= 1.20"
    result["met"] = result["wall_ratio"] <= 1.10 and result["rss_ratio"] <= 1.20
    print(json.dumps(result))


if __name__ == "__main__":
    main()
