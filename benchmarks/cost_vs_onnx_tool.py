"""ORTune's cost count side by side with onnx-tool's on a folder of models.

Both count on the same inputs: the shapes of ORTune's input plan (what `ortune inspect` and
bench use), fed to onnx-tool as arrays (onnx-tool runs the graph's shape arithmetic on
values, so it is given the bench feeds' values, not zeros). onnx-tool is not a dependency:
`pip install onnx-tool==1.0.1` in a virtual environment of your own. Each model is counted
in a process of its own, under a time limit (onnx-tool exits the process on a model it
cannot read).

    python benchmarks/cost_vs_onnx_tool.py FOLDER [--timeout 300]

Prints one JSON object: per model, ORTune's MACs (and whether they are a lower bound, and
the nodes it did not count), onnx-tool's MACs or its error, their ratio, and per operator
type both counts where they differ, with the kind of difference:
- `flops-as-macs`: onnx-tool counts elementwise, normalisation and pooling work as MACs;
  ORTune counts them as FLOPs (formulas.py's conventions) and no MACs;
- `not-counted-by-ortune` / `not-counted-by-onnx-tool`: one side has the operator as 0
  or leaves it out (ORTune says why in not_counted);
- `formula`: both count MACs for it and disagree: see the report for which is right."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: per operator type, counts within this share of each other are the same
TOLERANCE = 0.005


def ortune_side(path: Path) -> tuple[dict, dict]:
    """ORTune's totals and per operator type MACs, and the bench feeds on the plan's shapes."""
    from app.core.graph.cost import model_cost
    from app.core.model.intake import load_onnx
    from app.core.session.inputs import make_feeds
    from app.core.session.graph_hints import read_hints
    from app.core.model.inspect import describe_value

    cost = model_cost(path)
    per_op: dict[str, int] = defaultdict(int)
    for row in cost["nodes"]:
        if row["in_total"]:
            per_op[row["op_type"]] += row["macs"] * row["times"]
    model = load_onnx(path, weights=False)
    initializers = {t.name for t in model.graph.initializer}
    inputs = [describe_value(v) for v in model.graph.input if v.name not in initializers]
    shapes = {i["name"]: i["shape"] for i in cost["inputs"]}
    for item in inputs:
        item["shape"] = shapes.get(item["name"], item.get("shape"))
    feeds, _ = make_feeds(inputs, None, read_hints(path), budget=1 << 30)
    return {"macs": cost["macs"], "at_least": cost["macs_is_lower_bound"], "not_counted": cost["not_counted"],
            "inference_note": cost["inference_note"], "inputs": {n: list(a.shape) for n, a in feeds.items()},
            "per_op": dict(per_op)}, feeds


def onnx_tool_side(path: Path, feeds: dict) -> dict:
    import contextlib
    import io

    import onnx_tool

    with contextlib.redirect_stdout(io.StringIO()):
        model = onnx_tool.Model(str(path), {"verbose": False})
        graph = model.graph
        graph.graph_reorder_nodes()
        graph.shape_infer(feeds)
        graph.profile()
    per_op: dict[str, int] = defaultdict(int)
    for node in graph.nodemap.values():
        per_op[node.op_type] += int(round(node.macs[0]))
    return {"macs": int(round(graph.macs[0])), "per_op": dict(per_op)}


def _kind(op: str, ours: int, theirs: int, not_counted: dict) -> str:
    left_out = any(key.startswith(f"{op} (") for key in not_counted)
    if ours == 0 and not left_out:
        return "flops-as-macs"
    if ours == 0:
        return "not-counted-by-ortune"
    if theirs == 0:
        return "not-counted-by-onnx-tool"
    return "formula"


def count_one(path: Path) -> dict:
    ours, feeds = ortune_side(path)
    row = {"ortune_macs": ours["macs"], "at_least": ours["at_least"], "not_counted": ours["not_counted"],
           "inputs": ours["inputs"]}
    if ours["inference_note"]:
        row["inference_note"] = ours["inference_note"]
    try:
        theirs = onnx_tool_side(path, feeds)
    except BaseException as exc:  # onnx-tool raises whatever its numpy operators raise, and SystemExit
        row["onnx_tool_error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
        return row
    row["onnx_tool_macs"] = theirs["macs"]
    row["ratio"] = round(ours["macs"] / theirs["macs"], 4) if theirs["macs"] else None
    mac_ops = {op for op, n in ours["per_op"].items() if n}
    row["ratio_on_ortunes_mac_operators"] = (
        round(ours["macs"] / sum(theirs["per_op"].get(op, 0) for op in mac_ops), 4)
        if sum(theirs["per_op"].get(op, 0) for op in mac_ops) else None)
    differ = {}
    for op in sorted(set(ours["per_op"]) | set(theirs["per_op"])):
        a, b = ours["per_op"].get(op, 0), theirs["per_op"].get(op, 0)
        if abs(a - b) > TOLERANCE * max(a, b, 1):
            differ[op] = {"ortune": a, "onnx_tool": b, "kind": _kind(op, a, b, ours["not_counted"])}
    row["differences"] = differ
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path, help="a folder of .onnx files")
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(count_one(args.one)))
        return
    if args.folder is None:
        parser.error("give a FOLDER of .onnx models")
    report = {}
    for path in sorted(args.folder.glob("*.onnx")):
        try:
            done = subprocess.run([sys.executable, __file__, "--one", str(path)], capture_output=True, text=True,
                                  timeout=args.timeout)
            lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
            report[path.name] = json.loads(lines[-1]) if lines else {
                "error": f"exit {done.returncode}: {(done.stderr.strip().splitlines() or [''])[-1][:200]}"}
        except subprocess.TimeoutExpired:
            report[path.name] = {"error": f"over {args.timeout:.0f} s"}
        print(f"{path.name}: done", file=sys.stderr, flush=True)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
