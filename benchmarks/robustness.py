"""Does ORTune refuse bad input with one line, never destroy a file, never lose a result,
and leave nothing behind when it is killed? Every figure is measured by running `ortune`
as a user would, in subprocesses, on files made here:

- bad_input: broken models (tests/mutants.py: flipped bytes, cut files, protobuf fields
  set to wrong values) through `inspect`, `bench` and `convert`, and every bad preset
  field and flag of issue #14 through `bench` and `convert`: exit codes, internal errors
  (exit 1), tracebacks, hangs. A bad flag or preset must end with exit 2.
- files_destroyed: `convert -o ... --force` onto a FIFO, a device node (made with mknod
  in a temporary folder, only as root; never /dev/null itself), a socket, a folder, the
  source, the source's external data (directly, through a symlink and a hard link), and a
  dangling symlink without --force; `profile --out` and `tune --save-best` onto a FIFO. A file counts as
  destroyed when anything that was in the folder before changed its kind, inode, content or
  link target.
- measurements_lost: `bench` and `compare` with a damaged, truncated, zeroed, locked or
  read-only history database (as root: with the capabilities that override file
  permissions dropped), a data folder that is a file, and one that does not exist yet:
  exit 0 and the result in the JSON expected (with one warning line where the store is
  unusable).
- leftovers: `convert` (int8-static, a long calibration) and `bench` (a long duration) killed
  with SIGTERM and SIGKILL once their job runs: job processes still alive 5 s later (read
  from /proc), staging `.partial` folders right after, and after the next command.
- ort_log: ONNX Runtime's own log lines (a model with an unused initializer, logged at the
  warning level) through bench, profile and convert: raw on stderr, and shown as ORTune
  warnings.
- hostile: hostile files and peers (benchmarks/robustness_hostile.py): escape sequences in
  a model's names and metadata, a worker sent jobs and paths it must refuse, poisoned and
  abandoned uploads, bomb-like data folders, a FIFO and a planted link in the settings
  folder, string outputs, and what CI reads of gate, optimize and history with a model named
  to forge it (benchmarks/robustness_ci.py); figures: exit 1 on bad input, files written
  outside their place, raw control bytes printed, hangs, forged workflow-command lines,
  markup from names in rendered Markdown, CI cases held.

Prints one JSON object. Run it at low priority: nice -n 10 python benchmarks/robustness.py
[--mutants 40] [--seed 0] [--workers 2] [--only hostile]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.robustness_cases import Tool, files_destroyed, leftovers, measurements_lost, ort_log  # noqa: E402
from benchmarks import robustness_hostile  # noqa: E402
from tests.bad_settings import BAD_FLAGS, BAD_PRESETS, BENCH_ONLY  # noqa: E402

#: a convert kind per mutant, in turn
CONVERT_KINDS = ("optimize", "fp16", "int8-dynamic", "ort")
ACCEPTED = {"inspect": (0, 2), "bench": (0, 2), "convert": (0, 2, 4)}


def mutant_runs(tool: Tool, count: int, seed: int, workers: int) -> dict:
    from tests.mutants import mutant

    folder = tool.folder / "mutants"
    folder.mkdir()
    jobs = []
    for index in range(count):
        data, how = mutant(seed + index)
        path = folder / f"m{index}.onnx"
        path.write_bytes(data)
        kind = CONVERT_KINDS[index % len(CONVERT_KINDS)]
        out = folder / f"m{index}-{kind}.{'ort' if kind == 'ort' else 'onnx'}"
        jobs += [(how, "inspect", ["inspect", path.name, "--json"]),
                 (how, "bench", ["bench", path.name, "--iterations", "3", "--warmup", "1", "--json"]),
                 (how, "convert", ["convert", kind, path.name, "-o", out.name, "--no-speed", "--json"])]
    with ThreadPoolExecutor(workers) as pool:
        done = list(pool.map(lambda job: (job, tool.run(job[2], cwd=folder)), jobs))
    return _tally([(command, how, args, run) for (how, command, args), run in done])


def flag_runs(tool: Tool, workers: int) -> dict:
    folder = tool.folder / "flags"
    folder.mkdir()
    model = tool.model(folder)
    jobs = []
    cases = {**BAD_PRESETS, **BAD_FLAGS}
    for index, (name, (make, words)) in enumerate(cases.items()):
        extra = make(folder)
        jobs.append((name, "bench", ["bench", model.name, "--iterations", "3", "--warmup", "1", *extra, "--json"]))
        if name not in BENCH_ONLY:
            jobs.append((name, "convert", ["convert", "optimize", model.name, "-o", f"out{index}.onnx", "--no-speed",
                                           *extra, "--json"]))
    with ThreadPoolExecutor(workers) as pool:
        done = list(pool.map(lambda job: (job, tool.run(job[2], cwd=folder, timeout=60)), jobs))
    tally = _tally([(command, name, args, run) for (name, command, args), run in done], wanted=(2,))
    tally["cases"] = len(cases)
    tally["message_misses_the_field"] = sorted({name for (name, _, _), run in done
                                                if run["code"] == 2 and cases[name][1] not in run["stderr"]})
    return tally


def _tally(runs: list, wanted: tuple | None = None) -> dict:
    """Exit codes per command; every run that ended otherwise than `wanted` (or than the
    command's accepted codes), with a traceback, more than one line on stderr or a hang."""
    codes: dict[str, Counter] = {}
    bad = []
    for command, what, args, run in runs:
        codes.setdefault(command, Counter())[str(run["code"])] += 1
        accepted = wanted or ACCEPTED[command]
        problems = [p for p, hit in (("exit", run["code"] not in accepted), ("traceback", run["traceback"]),
                                     ("hang", run["timed_out"]), ("lines", run["error_lines"] > 1)) if hit]
        if problems:
            bad.append({"case": what, "command": " ".join(args[:2]), "problems": problems, "code": run["code"],
                        "stderr": run["stderr"][-300:]})
    return {"runs": len(runs), "exit_codes": {c: dict(n) for c, n in codes.items()},
            "exit_1": sum(1 for *_, run in runs if run["code"] == 1),
            "tracebacks": sum(1 for *_, run in runs if run["traceback"]),
            "hangs": sum(1 for *_, run in runs if run["timed_out"]),
            "crashes": sum(1 for *_, run in runs if isinstance(run["code"], int) and run["code"] < 0),
            "not_as_expected": bad}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mutants", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", choices=("hostile",), help="only the hostile-file and hostile-peer cases")
    args = parser.parse_args()
    started = time.monotonic()
    report: dict = {"machine": {"cpus": os.cpu_count(), "root": os.geteuid() == 0 if hasattr(os, "geteuid") else False}}
    if args.only == "hostile":
        with Tool() as tool:
            report["hostile"] = robustness_hostile.hostile(tool)
        report["figures"] = robustness_hostile.figures(report["hostile"])
        report["seconds"] = {"total": round(time.monotonic() - started, 1)}
        print(json.dumps(report, indent=2))
        return
    with Tool() as tool:
        timings = {}
        for name, measure in (("bad_input_models", lambda: mutant_runs(tool, args.mutants, args.seed, args.workers)),
                              ("bad_input_flags", lambda: flag_runs(tool, args.workers)),
                              ("files_destroyed", lambda: files_destroyed(tool)),
                              ("measurements_lost", lambda: measurements_lost(tool, args.workers)),
                              ("leftovers", lambda: leftovers(tool)),
                              ("ort_log", lambda: ort_log(tool)),
                              ("hostile", lambda: robustness_hostile.hostile(tool))):
            begun = time.monotonic()
            report[name] = measure()
            timings[name] = round(time.monotonic() - begun, 1)
    report["figures"] = {
        "exit_1_on_bad_input": report["bad_input_models"]["exit_1"] + report["bad_input_flags"]["exit_1"],
        "tracebacks": report["bad_input_models"]["tracebacks"] + report["bad_input_flags"]["tracebacks"],
        "hangs": report["bad_input_models"]["hangs"] + report["bad_input_flags"]["hangs"],
        "bad_flags_not_exit_2": len({c["case"] for c in report["bad_input_flags"]["not_as_expected"]}),
        "files_destroyed": report["files_destroyed"]["destroyed"],
        "measurements_lost": report["measurements_lost"]["lost"],
        "unusable_store_not_one_warning": len(report["measurements_lost"]["not_one_warning"]),
        "orphans": report["leftovers"]["orphans"],
        "staging_left_after_next_command": report["leftovers"]["staging_after_next_command"],
        "staging_left_right_after_sigterm": sum(case["staging_right_after"] for name, case in
                                                report["leftovers"]["cases"].items() if "SIGTERM" in name),
        "ort_lines_raw_on_stderr": report["ort_log"]["raw_lines"],
        "ort_warnings_shown": f"{report['ort_log']['shown']} of {len(report['ort_log']['cases'])}",
        **{f"hostile_{name}": value for name, value in robustness_hostile.figures(report["hostile"]).items()},
    }
    report["seconds"] = {**timings, "total": round(time.monotonic() - started, 1)}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
