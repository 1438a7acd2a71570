"""`ortune inspect MODEL`: what is inside a model."""

from __future__ import annotations

from app.cli.printing import add_json_flag, format_table, output

from app.cli.running import run_job_cli
from app.cli.session_args import add_session_arguments, session_config_from_args
from app.core.formatting import human_bytes
from app.core.model.value_type import io_rows
from app.core.graph.cost import totals_text
from app.core.graph.jobs import SUMMARY, CostParams

ORDER = 10
#: the nodes left out of the cost that the text names (the JSON holds every one)
SHOWN = 10


def render(info: dict) -> str:
    lines = [
        f"{info['path']}",
        f"  format        {info['format']}   size {human_bytes(info['size_bytes'])}"
        + (f" (+ external data, {human_bytes(info['total_bytes'])} in all)" if info["external_data"] else ""),
        f"  IR version    {info['ir_version']}",
        "  opsets        " + ", ".join(f"{d} {v}" for d, v in info["opsets"].items()),
        f"  producer      {info['producer']} {info['producer_version']}".rstrip(),
        f"  nodes         {info['node_count']:,}"
        + (f" ({info['subgraph_count']} subgraphs)" if info["subgraph_count"] else ""),
        f"  parameters    {info['parameters']:,} ({human_bytes(info['initializer_bytes'])} of weights)",
    ]
    lines.append(f"  cost          {totals_text(info)}")
    cost = info.get("cost", {})
    missing = cost.get("not_counted_nodes", [])
    lines += [f"    not counted: {row['name']} ({row['op_type']}): {row['why']}" for row in missing[:SHOWN]]
    if len(missing) > SHOWN:
        lines.append(f"    … and {len(missing) - SHOWN:,} more (--json lists them all)")
    lines += [f"    {row['name']} ({row['op_type']}): {row['note']}" for row in cost.get("control_flow", [])[:SHOWN]]
    for key, value in info.get("metadata", {}).items():
        lines.append(f"  meta {key}: {value}")
    lines += [f"  warning: {warning}" for warning in info.get("warnings", [])]
    lines.append("")
    lines.append(format_table(["", "name", "type", "shape"], io_rows(info)))
    lines.append("")
    lines.append(format_table(["operator", "count"], [[op, n] for op, n in info["op_counts"].items()]))
    return "\n".join(lines)


def run(args) -> int:
    # the measuring commands' flags, so the cost is on the shapes bench would run; only the
    # inputs and the free dimensions matter here (nothing is run)
    config = session_config_from_args(args)
    inputs = config.inputs
    if inputs.mode == "random":                 # values are never read: zeros are as good and cheaper
        inputs.mode = "zeros"
    result = run_job_cli(SUMMARY, CostParams(path=args.model, inputs=inputs,
                                             free_dims=dict(config.free_dimension_overrides)))
    return output(args, result, render)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "inspect", help="summarise a model: inputs, outputs, opsets, operators, size",
        description="Describe a .onnx or .ort model without running it. Its cost is counted on the inputs "
                    "the measuring commands would use: --dim, --shape, --input, --free-dim and --config "
                    "set them as for bench (the other session flags change nothing here).")
    parser.add_argument("model", metavar="MODEL", help="a .onnx or .ort file")
    add_session_arguments(parser)
    add_json_flag(parser)
    parser.set_defaults(handler=run)
