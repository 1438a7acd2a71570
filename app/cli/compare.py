"""`ortune compare MODEL MODEL...`: the same session and inputs for each model, side by side."""

from __future__ import annotations

from pathlib import Path

from app.cli.bench import latency_columns
from app.cli.parser import add_cluster_argument
from app.cli.printing import add_json_flag, check_output_file, cluster_lines, format_table, output, render_inputs, write_csv_table
from app.core.formatting import human_bytes
from app.cli.running import run_job_cli
from app.cli.param_args import add_param_arguments, params_from_args
from app.cli.session_args import add_run_arguments, add_session_arguments, run_settings_from_args, session_config_from_args
from app.core.bench.accuracy import accuracy_text
from app.core.bench.compare import compare_table
from app.core.bench.generation import generation_table
from app.core.bench.jobs import COMPARE, CompareParams
from app.core.verdict import REFERENCE, verdict_words
from app.core.text import printable
from app.core.formatting import cosine_text, diff_text

ORDER = 31


def labels_for(paths: list[str]) -> list[str]:
    """File names, or parent/name where two names would be the same."""
    names = [Path(p).name for p in paths]
    return [f"{Path(p).parent.name}/{n}" if names.count(n) > 1 else n for p, n in zip(paths, names)]


def fidelity_text(fidelity: dict | None) -> str:
    if fidelity is None:
        return "reference"
    if fidelity["max_abs_diff"] is None:
        return "not comparable"
    text = f"max |Δ| {diff_text(fidelity['max_abs_diff'])}"
    if fidelity["min_cosine"] is not None:      # outputs that are not numbers (strings) have no cosine
        text += f", cos {cosine_text(fidelity['min_cosine'])}"
    if fidelity["nonfinite"]:
        text += f", {fidelity['nonfinite']} NaN/inf"
    if fidelity.get("notes"):           # an output near zero everywhere: its cosine is not used
        text += f", {len(fidelity['notes'])} output(s) near zero judged by |Δ|"
    if fidelity.get("tolerance"):
        text += f"; {'within' if fidelity['passed'] else 'outside'} the {fidelity['tolerance'].get('policy', 'float32')} policy"
    return text


def speedup_text(row: dict) -> str:
    """"1.230× [1.180–1.290]": the speedup and its 95 % interval, where it has one (a model
    timed one after the other has none: its verdict says so)."""
    if row["verdict"] == REFERENCE:
        return "1×"
    if row["speedup"] is None:
        return "–"
    if row["speedup_ci"] is None:
        return f"{row['speedup']:.3f}×"
    low, high = row["speedup_ci"]
    return f"{row['speedup']:.3f}× [{low:.3f}–{high:.3f}]"


def generation_text(generation: dict | None) -> list[str]:
    """Two decoders as they generate: TTFT and tokens/s with their verdicts ([] for other models)."""
    if not generation:
        return []
    headers, rows = generation_table(generation)
    shown = [[printable(row[0], 60), _ms(row[1]), *(_judged(row[2:5])), _number(row[5]), _ms(row[6]),
              *(_judged(row[7:10]))] for row in rows]
    return ["", "generation: " + "; ".join(f"{phase}: {means}" for phase, means in generation["phases"].items()),
            format_table([h.lower() for h in headers], shown), generation["how"]]


def _ms(value) -> str:
    return "–" if value is None else f"{value:.3g}"


def _number(value) -> str:
    return "–" if value is None else f"{value:,.1f}"


def _judged(cells: list) -> list[str]:
    speedup, interval, verdict = cells
    return ["–" if speedup is None else f"×{speedup:.2f}", interval or "–", verdict]


def render(result: dict) -> str:
    keys = ("p50", "p90", "p99")
    latency = latency_columns([row["latency_ms"] for row in result["models"]], keys)
    rows = [[row["label"], human_bytes(row["size_bytes"]), *[latency[key][1][index] for key in keys],
             f"{row['throughput_per_s']:,.1f}", speedup_text(row),
             verdict_words(row["verdict"]), fidelity_text(row["fidelity"])]
            for index, row in enumerate(result["models"])]
    headers = ["model", "size", *[f"{key} {latency[key][0]}" for key in keys], "runs/s", "speedup [95 % interval]",
               "verdict", "fidelity"]
    scored = [row.get("accuracy") for row in result["models"]]
    if any(scored):
        headers.append("accuracy")
        rows = [r + [accuracy_text(a)] for r, a in zip(rows, scored)]
    lines = [format_table(headers, rows), ""]
    if any(scored):
        first = next(a for a in scored if a)
        lines.append(f"accuracy over the {first['samples']} samples of {first['folder']}, on each model's "
                     "first output for argmax and labels")
    plan = result["alternation"]
    if plan:
        lines += [f"measured in alternation: {plan['rounds_run']} rounds of {plan['block_runs']} runs per model; "
                  f"{result['speedup_definition'].replace('reference', result['baseline'], 1)}",
                  f"verdict: {plan['verdict_rule']}"]
    lines.append(f"fidelity compares each model's outputs with {result['baseline']}'s on the same inputs")
    lines += generation_text(result.get("generation"))
    lines += render_inputs(result.get("inputs", []))
    lines += cluster_lines(result, lambda row: row["label"])
    if result.get("history_id"):
        lines.append(f"stored as result {result['history_id']} (see `ortune history`)")
    return "\n".join(lines)


def run(args) -> int:
    config = session_config_from_args(args)
    inputs = tuple(Path(p).absolute() for p in [*args.models, args.config] if p)     # never written, --force or not
    table = check_output_file(args.csv, args.force, inputs)          # before the work, not after it
    params = params_from_args(args, CompareParams, {
        "models": [{"path": p, "label": label} for p, label in zip(args.models, labels_for(args.models))],
        "session": config, "run": run_settings_from_args(args), "record": not args.no_history})
    result = run_job_cli(COMPARE, params, memory_limit=args.memory_limit, target=args.target, cluster=args.cluster,
                         tasks=args.cluster_tasks)
    write_csv_table(table, compare_table(result))
    return output(args, result, render)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "compare", help="benchmark several models or variants with the same session and inputs",
        description="Benchmark the models in alternation, each in a process of its own kept alive, with the same "
                    "session settings and the same inputs: in every round each model runs one block of runs, one "
                    "model at a time. Report size, latency, throughput, speedup with its 95 % interval and a verdict "
                    "(faster, slower, no-difference), and fidelity against the first. --iterations is per model; "
                    "--duration is per model, shared among --pairs sets of fresh processes (one process per model each, "
                    "so an offset between two processes shows as spread between sets); while an interval cannot "
                    "answer, more sets run as long as one more fits in --max-seconds.")
    parser.add_argument("models", nargs="+", metavar="MODEL", help="two or more .onnx or .ort files; the first is "
                                                                     "the reference")
    add_session_arguments(parser)
    add_run_arguments(parser)
    add_param_arguments(parser, CompareParams)
    parser.add_argument("--no-history", action="store_true", help="do not store the result in the history")
    parser.add_argument("--csv", metavar="FILE", help="also write the table as CSV, as the Compare tab exports it")
    parser.add_argument("--force", action="store_true", help="replace the --csv file if it exists")
    add_cluster_argument(parser)
    add_json_flag(parser)
    parser.set_defaults(handler=run)
