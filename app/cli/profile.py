"""`ortune profile MODEL_OR_TRACE` and `ortune profile-diff BEFORE AFTER`."""

from __future__ import annotations

from pathlib import Path

from app.cli.printing import add_json_flag, check_output_file, distinct_outputs, format_table, output, render_inputs, write_csv_table

from app.cli.parser import positive_int

from app.cli.running import run_job_cli
from app.cli.session_args import (add_run_arguments, add_session_arguments, run_settings_from_args,
                                  session_config_from_args)
from app.core.jobs.errors import UserError
from app.core.session.load import busy_note
from app.core.profile.jobs import DIFF_TRACES, PROFILE, READ_TRACE, ProfileParams, TraceDiffParams, TraceParams
from app.core.profile.tables import node_table, operator_table

ORDER = 60
DEFAULT_TOP = 15


def _ms(us: float | None) -> str:
    return "–" if us is None else f"{us / 1000:,.3f}"


def _short_provider(name: str) -> str:
    return name.replace("ExecutionProvider", "")


def render_profile(info: dict, top: int = DEFAULT_TOP) -> str:
    phases = info["phases"]
    averaged = "steady runs (first run left out)" if info["warmup_excluded"] else "all runs"
    lines = [info.get("model") or info["trace"]]
    if info.get("model"):
        lines.append(f"  trace          {info['trace']}")
    lines += [f"  runs           {info['runs']}   node events {info['node_events']:,}   "
              f"node time {_ms(info['total_node_us'])} ms",
              f"  loading        {_ms(phases['model_loading_us'])} ms   "
              f"session initialisation {_ms(phases['session_initialization_us'])} ms"]
    if phases["steady_run_us"]:
        steady = phases["steady_run_us"]
        lines.append(f"  first run      {_ms(phases['first_run_us'])} ms   {averaged}: mean {_ms(steady['mean'])} ms, "
                     f"median {_ms(steady['median'])} ms, max {_ms(steady['max'])} ms")
    if phases["slow_runs"]:
        lines.append("  slow runs      " + ", ".join(f"#{i + 1} ({_ms(phases['run_us'][i])} ms)"
                                                  for i in phases["slow_runs"]))
    lines += [f"  warning: {w}" for w in info["warnings"]]
    lines += [f"  {line}" for line in render_inputs(info.get("inputs", []))]
    lines += ["", f"Per operator type (share of {info['percent_of']}; averages over {averaged})",
              format_table(["op type", "total ms", "calls", "avg µs", "share %", "provider"],
                           [[r["op_type"], _ms(r["total_us"]), r["count"], f"{r['avg_us']:,.1f}",
                             f"{r['percent']:.1f}", ", ".join(_short_provider(p) for p in r["providers"])]
                            for r in info["by_op_type"]])]
    lines += ["", f"Top {min(top, len(info['by_node']))} nodes",
              format_table(["node", "op type", "total ms", "calls", "avg µs", "share %", "inputs"],
                           [[r["name"], r["op_type"], _ms(r["total_us"]), r["count"], f"{r['avg_us']:,.1f}",
                             f"{r['percent']:.1f}", " ".join(r["input_shapes"])] for r in info["by_node"][:top]])]
    lines += ["", "Per provider",
              format_table(["provider", "total ms", "nodes", "share %"],
                           [[r["provider"], _ms(r["total_us"]), r["nodes"], f"{r['percent']:.1f}"]
                            for r in info["providers"]])]
    if busy := busy_note(info.get("load")):
        lines.append(f"note: {busy}")
    return "\n".join(lines)


def _ratio(ratio: float | None, interval: list | None = None, verdict: str | None = None) -> str:
    if ratio is None:
        return "–"
    text = f"{ratio:.2f}x"
    if interval:
        text += f" [{interval[0]:.2f}, {interval[1]:.2f}]"
    return text + (f" {verdict}" if verdict else "")


def render_diff(info: dict) -> str:
    total = info.get("total") or {"ratio": info["speedup"], "ci": None, "verdict": None}
    lines = [f"before  {info['before']}", f"after   {info['after']}",
             f"node time per run  {_ms(info['node_us_per_run']['before'])} ms -> "
             f"{_ms(info['node_us_per_run']['after'])} ms"
             + (f"  ({_ratio(total['ratio'], total['ci'], total['verdict'])})" if total["ratio"] else "")]
    if info["run_speedup"]:
        lines.append(f"run time (steady mean)  {_ms(info['run_us']['before'])} ms -> {_ms(info['run_us']['after'])} ms"
                     f"  ({info['run_speedup']:.2f}x)")
    measured = info.get("measured")
    if measured:
        lines.append(f"timed in alternation  {_ratio(measured['speedup'], measured['speedup_ci'], measured['verdict'])}"
                     f" over {measured['rounds']} rounds")
        lines.append("the profile DISAGREES with the alternating timing: trust the timing; the profiler's cost per "
                     "node distorts small operators" if info["disagrees"]
                     else "the profile agrees with the alternating timing")
    lines += [f"warning: {w}" for w in info["warnings"]]
    if info.get("interval_rule"):
        lines.append(f"intervals: {info['interval_rule']}")
    if info.get("note") and not measured:
        lines.append(f"note: {info['note']}")
    rows = []
    for r in info["by_op_type"]:
        note = {"before": "only before (removed or fused)", "after": "only after (added, e.g. fused)"}.get(r["only_in"], "")
        rows.append([r["op_type"], _ms(r["before_us"]), _ms(r["after_us"]), f"{r['delta_us'] / 1000:+,.3f}",
                     _ratio(r["speedup"], r.get("ratio_ci"), r.get("verdict")),
                     f"{r['before_count']:g}", f"{r['after_count']:g}", note])
    lines += ["", "Per operator type, per run (speedup: before / after, 95 % interval, verdict)",
              format_table(["op type", "before ms", "after ms", "delta ms", "speedup", "calls before", "calls after",
                            "note"], rows)]
    return "\n".join(lines)


def _measure(args, diff: dict) -> dict:
    """Time the two traces' models in alternation (compare) and hold the profile against it."""
    from app.core.bench.jobs import COMPARE, CompareParams
    from app.core.profile.diff import with_measurement

    models = diff["models"]
    missing = [side for side in ("before", "after") if not models[side] or not Path(models[side]).is_file()]
    if missing:
        raise UserError("bad-option", f"--measure needs the models the traces came from: ORTune did not record the "
                                      f"{' and '.join(missing)} trace's model, or it is gone; name it with "
                                      + " and ".join(f"--{side}-model" for side in missing))
    if Path(models["before"]).resolve() == Path(models["after"]).resolve():
        raise UserError("bad-option", "both traces come from one model: an alternating timing compares models, not "
                                      "the settings the two profiles may have used")
    params = CompareParams.from_dict({"models": [{"path": models["before"], "label": "before"},
                                                 {"path": models["after"], "label": "after"}],
                                      "session": session_config_from_args(args), "run": run_settings_from_args(args),
                                      "record": False, "max_seconds": args.max_seconds}, text=True)
    compare = run_job_cli(COMPARE, params, memory_limit=args.memory_limit, target=args.target)
    return with_measurement(diff, compare)


def _has_session_flags(args) -> bool:
    from app.core.session.config import SessionConfig
    return session_config_from_args(args).to_dict() != SessionConfig().to_dict()


def run_profile(args) -> int:
    source = Path(args.source)
    top = args.top if args.top is not None else DEFAULT_TOP
    table = check_output_file(args.csv, args.force, (source.absolute(),))     # the model or trace is never written
    distinct_outputs({"--csv": table, "--out": Path(args.out).absolute() if args.out else None})
    if args.csv_nodes and not args.csv:
        raise UserError("bad-option", "--csv-nodes says which table --csv writes: give --csv FILE too")
    if source.suffix.lower() == ".json":
        if args.out or args.runs is not None or _has_session_flags(args):
            raise UserError("bad-option", f"{source.name} is a trace: --runs, --out and session options only "
                                          "apply when profiling a model")
        # Reading a trace touches no model: it runs in this process, which has nothing else to do.
        result = run_job_cli(READ_TRACE, TraceParams(trace=str(source), include_first_run=args.include_first_run))
    else:
        params = ProfileParams.from_dict({
            "model": str(source), "session": session_config_from_args(args), "runs": args.runs,
            "out": args.out, "force": args.force, "include_first_run": args.include_first_run}, text=True)
        if args.target and args.out:     # the trace is made there and brought back; refuse a bad --out first
            from app.core.model.output import check_target
            check_target(source.resolve(), Path(args.out).resolve(), args.force)
        result = run_job_cli(PROFILE, params, memory_limit=args.memory_limit, target=args.target)
    if args.csv_nodes:
        write_csv_table(table, node_table(result["by_node"], args.include_first_run, top=args.top))
    else:
        write_csv_table(table, operator_table(result, args.include_first_run))
    if args.json and args.top is not None:
        result["by_node"] = result["by_node"][:top]
    return output(args, result, lambda info: render_profile(info, top))


def run_diff(args) -> int:
    result = run_job_cli(DIFF_TRACES, TraceDiffParams(before=args.before, after=args.after,
                                                      include_first_run=args.include_first_run,
                                                      before_model=args.before_model or "",
                                                      after_model=args.after_model or ""))
    if args.measure:
        result = _measure(args, result)
    return output(args, result, render_diff)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "profile", help="run a model with ORT's profiler (or read a trace) and add up the time per operator",
        description="Run MODEL with ONNX Runtime's profiler on and summarise the trace, or summarise an existing "
                    "trace (a .json file): time per operator type, per node and per provider, and the session's "
                    "phases. Shares are of the total node time; averages leave the first (warm-up) run out.")
    parser.add_argument("source", metavar="MODEL_OR_TRACE", help="a .onnx/.ort model, or a trace .json")
    parser.add_argument("--runs", type=positive_int, metavar="N", help="profiled runs, the first one included (default 10)")
    parser.add_argument("--out", metavar="TRACE.json", help="keep ORT's trace here (default: ORTune's traces folder)")
    parser.add_argument("--force", action="store_true", help="replace --out or --csv if it exists")
    parser.add_argument("--csv", metavar="FILE", help="also write the per-operator-type table as CSV, as the "
                                                      "Profile tab exports it")
    parser.add_argument("--csv-nodes", action="store_true", help="--csv writes the per-node table instead (all "
                                                                 "nodes, or --top N)")
    parser.add_argument("--top", type=positive_int, metavar="N",
                        help=f"nodes to list (text: default {DEFAULT_TOP}; JSON: all unless given)")
    parser.add_argument("--include-first-run", action="store_true", help="average over every run, warm-up included")
    add_json_flag(parser)
    add_session_arguments(parser)
    parser.set_defaults(handler=run_profile)

    diff = subparsers.add_parser(
        "profile-diff", help="compare two traces per operator type (before/after an optimisation)",
        description="Compare two profiling traces per operator type: time and calls per steady run, the change "
                    "with a 95 % interval over runs and a verdict, and operator types found on one side only (fused "
                    "nodes). With --measure, also time the two models in alternation and say where the profile "
                    "disagrees with that timing.")
    diff.add_argument("before", metavar="TRACE_A", help="the trace before (a .json file)")
    diff.add_argument("after", metavar="TRACE_B", help="the trace after")
    diff.add_argument("--include-first-run", action="store_true", help="count the warm-up run too")
    diff.add_argument("--measure", action="store_true",
                      help="time the two traces' models in alternation (as `ortune compare`) and hold the profile "
                           "against it")
    diff.add_argument("--before-model", metavar="MODEL", help="the model TRACE_A came from (default: as ORTune "
                                                               "noted when it recorded the trace)")
    diff.add_argument("--after-model", metavar="MODEL", help="the model TRACE_B came from")
    diff.add_argument("--max-seconds", metavar="S", default="60",
                      help="for --measure: while its interval cannot answer, more sets of processes while one fits "
                           "in this many seconds (default 60, as `ortune compare`)")
    add_run_arguments(diff)
    add_session_arguments(diff)      # for --measure: the session both models are timed with
    add_json_flag(diff)
    diff.set_defaults(handler=run_diff)
