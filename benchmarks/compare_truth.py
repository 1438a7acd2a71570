"""Does `compare` tell the truth while the machine is busy? Two checks, with a second process
burning a core in spells (`--spell` seconds on, as many off) all the while:

(a) a model against a byte-identical copy, `--identical` comparisons: each should say
    "no-difference" (target: at least 19 of 20);
(b) the model against a variant doing twice the work (the same MLP with its layers
    doubled), `--double` comparisons: each should say "slower", with a speedup within 10 %
    of the quiet figure: an independent loop measured right after it with the burner
    paused (SIGSTOP): two InferenceSessions in this process, alternating blocks of the same
    size for the same rounds, the median over rounds of the ratio of the two block medians
    (on wall time, and on the thread's CPU time: `independent_quiet_cpu`, what other programs
    than the burner leave of it);
    or it says the machine was too busy to tell (`too_busy`). The same loop with the
    burner running is reported beside it (`independent_busy`). With `--quiet-compare`, the
    same comparison is also run with the burner paused (`quiet_compare`): the in-process
    loop times both models in one process, which shares caches the comparison's separate
    processes do not, so its figure can sit a few per cent off the comparison's method even
    on a quiet machine.

Comparisons run through the compare job (app.core.bench.jobs.COMPARE) with `--duration`
seconds per model, shared by its first pairs of fresh processes (more while an interval cannot
answer, up to compare's --max-seconds), so each spans several spells. Prints one JSON object.

    python benchmarks/compare_truth.py [--identical 20] [--double 10] [--duration 2]
        [--width 512] [--depth 3] [--batch 16] [--threads 1] [--spell 3] [--no-burner] [--quiet-compare]

The same pair measured again and again in a row (`--identical 5 --double 5`, with and without
`--no-burner`) is the check that an interval holds across runs: `intervals_apart` lists the
runs whose 95 % intervals do not overlap (target: none).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.burner import burning  # noqa: E402

def independent_ratio(model: Path, double: Path, threads: int, batch: int, width: int, block: int,
                      rounds: int) -> tuple[float, float]:
    """The speedup of `double` over `model` (reference median / double median), measured
    without any of ORTune's code: two sessions here, alternating blocks, order swapped
    every round; (on wall time, on this thread's CPU time). The CPU time leaves out the
    waits for a core that other programs on a shared machine cause even with the burner
    paused (with one intra-op thread the run's work is all on this thread)."""
    import numpy as np
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    sessions = [ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
                for path in (model, double)]
    feeds = {"x": np.random.default_rng(0).standard_normal((batch, width), dtype=np.float32)}
    for session in sessions:
        for _ in range(5):
            session.run(None, feeds)
    ratios, cpu_ratios = [], []
    for round_index in range(rounds):
        medians, cpu_medians = {}, {}
        for index in ((0, 1) if round_index % 2 == 0 else (1, 0)):
            run, times, cpu_times = sessions[index].run, [], []
            for _ in range(block):
                start, cpu_start = time.perf_counter_ns(), time.thread_time_ns()
                run(None, feeds)
                times.append(time.perf_counter_ns() - start)
                cpu_times.append(time.thread_time_ns() - cpu_start)
            medians[index], cpu_medians[index] = statistics.median(times), statistics.median(cpu_times)
        ratios.append(medians[0] / medians[1])
        cpu_ratios.append(cpu_medians[0] / cpu_medians[1])
    return statistics.median(ratios), statistics.median(cpu_ratios)


def compare(paths: list[Path], args) -> dict:
    from app.core.bench.jobs import COMPARE
    from app.core.runner.process import run_job

    session = {"intra_op_num_threads": args.threads, "inputs": {"dims": {"batch": args.batch}}}
    return run_job(COMPARE, {"models": [{"path": str(p)} for p in paths], "session": session,
                             "run": {"warmup": 10, "duration_s": args.duration}, "record": False})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--identical", type=int, default=20)
    parser.add_argument("--double", type=int, default=10)
    parser.add_argument("--duration", type=float, default=2.0, help="seconds per model per comparison")
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--threads", type=int, default=1, help="intra-op threads (0: ORT's default)")
    parser.add_argument("--spell", type=float, default=3.0, help="seconds the burner burns, then rests")
    parser.add_argument("--no-burner", action="store_true",
                        help="keep the burner paused all the while: the same checks on the machine as it is")
    parser.add_argument("--quiet-compare", action="store_true",
                        help="also run each 2x-work comparison again with the burner paused: the quiet machine's "
                             "answer by the same method (the in-process loop shares one process's caches)")
    args = parser.parse_args()

    from tests import models

    started = time.monotonic()
    folder = Path(tempfile.mkdtemp(prefix="compare-truth-"))
    model = models.save(models.mlp(width=args.width, depth=args.depth), folder / "model.onnx")
    copy = folder / "copy.onnx"
    copy.write_bytes(model.read_bytes())
    double = models.save(models.mlp(width=args.width, depth=2 * args.depth), folder / "double.onnx")
    with burning(args.spell) as burner:
        if args.no_burner:
            burner.send_signal(signal.SIGSTOP)
        loads = [os.getloadavg()[0]]
        identical_results = [compare([model, copy], args) for _ in range(args.identical)]
        identical = [result["models"][1] for result in identical_results]
        loads.append(os.getloadavg()[0])
        doubled = []
        for _ in range(args.double):
            result = compare([model, double], args)
            plan = result["alternation"]
            row = result["models"][1]
            loop = (model, double, args.threads, args.batch, args.width, plan["block_runs"], plan["rounds_run"])
            busy, _ = independent_ratio(*loop)
            burner.send_signal(signal.SIGSTOP)
            try:
                truth, truth_cpu = independent_ratio(*loop)
                quiet = compare([model, double], args)["models"][1] if args.quiet_compare else None
            finally:
                if not args.no_burner:
                    burner.send_signal(signal.SIGCONT)
            doubled.append({"pairs": plan.get("pairs_run"), "speedup": row["speedup"], "speedup_ci": row["speedup_ci"], "verdict": row["verdict"],
                            "widened_ci": row.get("widened_ci") or row["speedup_ci"], "rounds": row["rounds"], "rounds_judged": row.get("rounds_judged"),
                            "too_busy": bool(row.get("too_busy")), "block_runs": plan["block_runs"],
                            "independent": truth, "independent_cpu": truth_cpu, "independent_busy": busy,
                            "off_by": row["speedup"] / truth - 1, "off_by_cpu": row["speedup"] / truth_cpu - 1,
                            "quiet_compare": quiet and quiet["speedup"],
                            "off_by_quiet_compare": quiet and row["speedup"] / quiet["speedup"] - 1})

    def rounded(values):
        return [round(v, 4) for v in values]

    def apart(intervals):
        """The pairs of runs (by index) whose intervals do not overlap."""
        return [[i, j] for i in range(len(intervals)) for j in range(i + 1, len(intervals))
                if intervals[i][1] < intervals[j][0] or intervals[j][1] < intervals[i][0]]

    print(json.dumps({
        "model": {"width": args.width, "depth": args.depth, "batch": args.batch, "threads": args.threads,
                  "p50_ms": identical[0]["latency_ms"]["p50"] if identical else None},
        "burner": {"spell_s": args.spell, "cores": 0 if args.no_burner else 1},
        "duration_s_per_model": args.duration,
        "identical": {"comparisons": len(identical),
                      "no_difference": sum(r["verdict"] == "no-difference" for r in identical),
                      "too_busy": sum(bool(r.get("too_busy")) for r in identical),
                      "target": ">= 19 of 20",
                      "speedups": rounded(r["speedup"] for r in identical),
                      "intervals": [rounded(r["speedup_ci"]) for r in identical],
                      "rounds": [r["rounds"] for r in identical],
                      "pairs": [result["alternation"].get("pairs_run") for result in identical_results]},
        "double": {"comparisons": len(doubled),
                   "slower": sum(r["verdict"] == "slower" for r in doubled),
                   "within_10_percent_of_quiet": sum(abs(r["off_by"]) <= 0.10 for r in doubled),
                   "too_busy": sum(r["too_busy"] for r in doubled),
                   "within_10_percent_or_too_busy": sum(abs(r["off_by"]) <= 0.10 or r["too_busy"] for r in doubled),
                   "within_10_percent_of_quiet_cpu": sum(abs(r["off_by_cpu"]) <= 0.10 for r in doubled),
                   "speedups": rounded(r["speedup"] for r in doubled),
                   "independent_quiet": rounded(r["independent"] for r in doubled),
                   "independent_busy": rounded(r["independent_busy"] for r in doubled),
                   "off_by": rounded(r["off_by"] for r in doubled),
                   "independent_quiet_cpu": rounded(r["independent_cpu"] for r in doubled),
                   "off_by_cpu": rounded(r["off_by_cpu"] for r in doubled),
                   **({"quiet_compare": rounded(r["quiet_compare"] for r in doubled),
                       "off_by_quiet_compare": rounded(r["off_by_quiet_compare"] for r in doubled),
                       "within_10_percent_of_quiet_compare": sum(abs(r["off_by_quiet_compare"]) <= 0.10
                                                                 for r in doubled)}
                      if args.quiet_compare else {}),
                   "intervals": [rounded(r["speedup_ci"]) for r in doubled],
                   # one pair measured again and again: its 95 % intervals should overlap pairwise
                   "intervals_apart": apart([r["speedup_ci"] for r in doubled]),
                   "widened_intervals_apart": apart([r["widened_ci"] for r in doubled]),
                   "rounds": [r["rounds"] for r in doubled], "rounds_judged": [r["rounds_judged"] for r in doubled],
                   "block_runs": [r["block_runs"] for r in doubled], "pairs": [r["pairs"] for r in doubled]},
        "load_1min": {"start": round(loads[0], 1), "after_identical": round(loads[1], 1),
                      "end": round(os.getloadavg()[0], 1)},
        "seconds": round(time.monotonic() - started, 1),
    }, indent=2))


if __name__ == "__main__":
    main()
