"""`ortune iobinding MODEL --provider P`: plain runs against IO binding with device tensors."""

from __future__ import annotations

import textwrap

from app.cli.printing import add_json_flag, format_table, output

from app.core.formatting import human_bytes

from app.cli.running import run_job_cli
from app.cli.compare import speedup_text
from app.cli.param_args import add_param_arguments, params_from_args
from app.cli.session_args import add_session_arguments, session_config_from_args
from app.core.session.load import busy_note
from app.core.iobinding.jobs import IOBINDING, IOBindingParams

ORDER = 70


def _ms(value) -> str:
    return "–" if value is None else f"{value:.3f}"


def _rate(value) -> str:
    return "–" if not value else f"{human_bytes(value)}/s"


def render(info: dict) -> str:
    inputs = ", ".join(f"{i['name']} {i['dtype']}{i['shape']}" for i in info["inputs"])
    lines = [info["model"],
             f"  provider   {info['provider']} (device \"{info['device']}\", ONNX Runtime {info['ort_version']})",
             f"  inputs     {inputs} — {human_bytes(info['input_bytes'])} in, "
             f"{human_bytes(info['output_bytes'])} out per run",
             f"  runs       {info['iterations']} per mode after {info['warmup']} warm-up, in alternating rounds"]
    transfer = info.get("transfer")
    if transfer:
        lines.append(f"  copies     host→device {_rate(transfer['to_device_bytes_per_s'])}, "
                     f"device→host {_rate(transfer['to_host_bytes_per_s'])} (measured with these arrays)")
    lines.append("")
    rows = []
    for index, mode in enumerate(info["modes"], 1):
        stats = mode["latency_ms"] or {}
        ratio = {"speedup": mode["speedup_vs_plain"], "speedup_ci": mode.get("speedup_ci"),
                 "verdict": "reference" if index == 1 else mode.get("verdict")}
        rows.append([f"{index}. {mode['title']}", mode["status"], _ms(stats.get("mean")), _ms(stats.get("p50")),
                     _ms(stats.get("p99")), human_bytes(mode["bytes_to_device_per_run"]),
                     human_bytes(mode["bytes_to_host_per_run"]), _ms(mode["copy_ms_per_run"]),
                     speedup_text(ratio) if ratio["speedup_ci"] or index == 1 else "–", ratio["verdict"] or "–",
                     "–" if mode["max_abs_diff"] is None else f"{mode['max_abs_diff']:.2g}"])
    lines.append(format_table(["mode", "status", "mean ms", "p50 ms", "p99 ms", "to device", "to host",
                               "copy ms", "vs plain p50 [95 % interval]", "verdict", "max diff"], rows))
    plan = info.get("alternation")
    if plan:
        lines += [f"measured in alternation: {plan['rounds_run']} rounds of {plan['block_runs']} runs per mode; "
                  f"{info['speedup_definition']}", f"verdict: {plan['verdict_rule']}"]
    lines.append("")
    for index, mode in enumerate(info["modes"], 1):
        text = mode["explanation"]
        if mode["status"] != "measured":
            text += f" Not measured: {mode['skipped_reason']}"
        lines.append(textwrap.fill(text, 100, initial_indent=f"{index}. ", subsequent_indent="   "))
    lines += ["", textwrap.fill(info["note"], 100)]
    if busy := busy_note(info.get("load")):
        lines.append(textwrap.fill(f"note: {busy}", 100))
    return "\n".join(lines)


def run(args) -> int:
    config = session_config_from_args(args)
    params = params_from_args(args, IOBindingParams, {"path": args.model, "session": config,
                                                      "provider": config.providers[0].name})
    return output(args, run_job_cli(IOBINDING, params, memory_limit=args.memory_limit, target=args.target), render)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "iobinding", help="plain runs against IO binding with device tensors: where the copies go",
        description="Run the model five ways on one provider (cpu, cuda or dml): a plain run with numpy "
                    "arrays, IO binding with inputs bound every run, inputs placed on the device once, "
                    "preallocated outputs, and on CUDA a captured CUDA graph. Reports latency, the bytes "
                    "each way moves between host and device per run, and what that costs.")
    parser.add_argument("model", metavar="MODEL", help="a .onnx or .ort file")
    add_session_arguments(parser)
    add_param_arguments(parser.add_argument_group("measurement"), IOBindingParams)
    add_json_flag(parser)
    parser.set_defaults(handler=run)
