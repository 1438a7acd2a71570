"""`ortune diff A B`: the nodes added, removed and changed between two models."""

from __future__ import annotations

from app.cli.printing import add_json_flag, format_table, output

from app.cli.running import run_job_cli
from app.core.graph.jobs import DIFF, DiffParams

ORDER = 15


def _change_text(change: dict) -> str:
    what = change["what"]
    if what == "attribute":
        return f"attribute {change['name']}: {change['a']} -> {change['b']}"
    if what == "initializer":
        a, b = change["a"] or {}, change["b"] or {}
        parts = [f"{k} {a.get(k)} -> {b.get(k)}" for k in ("dtype", "shape", "hash") if a.get(k) != b.get(k)]
        return f"initializer {change['name']}: " + (", ".join(parts) or "added or removed")
    return f"{what}: {change['a']} -> {change['b']}"


def render(result: dict) -> str:
    lines = [f"A {result['a']}", f"B {result['b']}",
             f"  {result['matched']} nodes matched, {len(result['added'])} added, {len(result['removed'])} removed, "
             f"{len(result['changed'])} changed" + ("" if result["values_compared"] else " (weights' values not compared)")]
    for title, key in (("added (in B only)", "added"), ("removed (in A only)", "removed")):
        if result[key]:
            lines += ["", title, format_table(["node", "operator"], [[n["name"], n["op_type"]] for n in result[key]])]
    if result["changed"]:
        rows = [[n["name"], n["op_type"], _change_text(c)] for n in result["changed"] for c in n["changes"]]
        lines += ["", "changed", format_table(["node", "operator", "change"], rows)]
    if result["graph_io"]:
        rows = [[c["kind"], c["name"], f"{c['a']} -> {c['b']}"] for c in result["graph_io"]]
        lines += ["", "graph inputs and outputs", format_table(["", "name", "change"], rows)]
    return "\n".join(lines)


def run(args) -> int:
    result = run_job_cli(DIFF, DiffParams(a=args.a, b=args.b, values=not args.no_values))
    return output(args, result, render)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "diff", help="nodes added, removed and changed between two models",
        description="Match the nodes of two models (by name, then by structure) and list what differs: "
                    "operators, attributes, wiring, initializers' dtypes, shapes and values.")
    parser.add_argument("a", metavar="A", help="the first model (say, the source)")
    parser.add_argument("b", metavar="B", help="the second model (say, its variant)")
    parser.add_argument("--no-values", action="store_true",
                        help="do not read the weights (faster on large models): compare dtypes and shapes only")
    add_json_flag(parser)
    parser.set_defaults(handler=run)
