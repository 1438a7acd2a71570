"""`ortune optimize` side by side with Olive on one model: Olive's dynamic quantization and
session-parameter tuning passes, searched jointly with its latency evaluator (as its own
examples do), against ORTune's whole search. Each answer (model with its settings) is then
measured against the source in one alternation, each in its own fresh process, and checked
against the source's outputs on held-out inputs with the int8 kinds' default tolerance.

Reports each tool's answer, its speedup as re-measured, its fidelity and its wall time.
Prints one JSON object; skips with a message when olive-ai is not installed
(pip install olive-ai==0.13.0).

    python benchmarks/optimize_olive.py FOLDER [--only ocr-cls] [--budget-seconds 120]
        [--duration 3] [--repeats 2]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from optimize_truth import MODELS, answers_again, held_out, run_optimize  # noqa: E402

from app.core.convert.options import default_tolerance  # noqa: E402

#: Olive's session tuning reads its ints as ORT's enums: 0 sequential, 1 parallel; 1 basic, 99 all
_MODES = {0: "sequential", 1: "parallel"}
_LEVELS = {0: "disable", 1: "basic", 2: "extended", 99: "all"}


def _olive_bug_guard() -> None:
    """Olive 0.13 walks the evaluator config for file paths and fails on any dict without a
    "type" (AttributeError where it expects ValueError): let such a dict be no path."""
    import olive.resource_path as paths

    create = paths.create_resource_path

    def guarded(config):
        if isinstance(config, dict) and config.get("type") is None:
            raise ValueError("not a resource path")
        return create(config)

    paths.create_resource_path = guarded


def run_olive(source: str, inputs: list[dict], folder: Path) -> dict:
    from olive.workflows import run

    _olive_bug_guard()
    data = {"name": "dummy", "type": "DummyDataContainer",
            "load_dataset_config": {"params": {"input_names": [i["name"] for i in inputs],
                                               "input_shapes": [i["shape"] for i in inputs],
                                               "input_types": [i["dtype"] for i in inputs]}}}
    choices = lambda values: {"olive_parameter_type": "SearchParameter", "type": "Categorical", "support": values}  # noqa: E731
    latency = {"name": "latency", "type": "latency", "data_config": data,
               "sub_types": [{"name": "avg", "priority": 1,
                              "goal": {"type": "percent-min-improvement", "value": 0.01}}]}
    config = {
        "input_model": {"type": "ONNXModel", "model_path": source},
        "systems": {"local": {"type": "LocalSystem",
                              "accelerators": [{"device": "cpu", "execution_providers": ["CPUExecutionProvider"]}]}},
        "data_configs": [data], "evaluators": {"latency": {"metrics": [latency]}}, "evaluator": "latency",
        "passes": {"quantization": {"type": "OnnxDynamicQuantization"},
                   "tuning": {"type": "OrtSessionParamsTuning", "data_config": "dummy",
                              "intra_thread_num_list": choices([1, 2]), "execution_mode_list": choices([0, 1]),
                              "opt_level_list": choices([1, 99])}},
        "search_strategy": {"execution_order": "joint", "sampler": "sequential"},
        "host": "local", "target": "local", "cache_dir": str(folder / "cache"), "output_dir": str(folder / "out"),
        "log_severity_level": 3}
    started = time.monotonic()
    for handler in logging.getLogger("olive").handlers:      # Olive logs to stdout: the JSON object stays alone
        if isinstance(handler, logging.StreamHandler):
            handler.setStream(sys.stderr)
    with contextlib.redirect_stdout(sys.stderr):
        run(config)
    wall = time.monotonic() - started
    written = folder / "out" / "model_config.json"
    if not written.exists():       # Olive writes no model when none met its goal: its answer is the input
        return {"model": source, "wall_seconds": round(wall, 1), "olive_settings": {}, "settings": {},
                "note": "Olive wrote no output model (none met its latency goal): its answer is the input"}
    chosen = json.loads(written.read_text())["config"]
    options = chosen["inference_settings"]["session_options"]
    return {"model": chosen["model_path"], "wall_seconds": round(wall, 1), "olive_settings": options,
            "settings": {"intra_op_num_threads": options.get("intra_op_num_threads") or 0,
                         "inter_op_num_threads": options.get("inter_op_num_threads") or 0,
                         "execution_mode": _MODES.get(options.get("execution_mode"), "sequential"),
                         "graph_optimization_level": _LEVELS.get(options.get("graph_optimization_level"), "all")}}


def side_by_side(name: str, folder: Path, args) -> dict:
    file = MODELS[name][0]
    with tempfile.TemporaryDirectory(prefix="optimize-olive-") as scratch:
        scratch = Path(scratch)
        # --fresh: candidates an earlier run kept in the history would make ORTune's wall time no match for Olive's
        source, result, wall, errors = run_optimize(name, folder, scratch, args.budget_seconds, ("--fresh",))
        if result is None:
            return {"name": name, "ran": False, "error": errors}
        user, choice = result["session"], result["choice"]
        olive = run_olive(source, result["inputs"], scratch / "olive")
        olive_session = {**user, **olive["settings"]}
        members = [(source, user), (choice["model"], choice["settings"]), (olive["model"], olive_session)]
        later, medians = answers_again(members, args.duration, args.repeats)
        tolerance = default_tolerance("int8-dynamic", {})
        fidelity = {"ortune": held_out(source, choice["model"], choice["settings"],
                                       (choice.get("fidelity") or {}).get("tolerance")),
                    "olive": held_out(source, olive["model"], olive_session, tolerance)}
    speed = {tool: round(median, 4) for tool, median in zip(("ortune", "olive"), medians)}
    return {"name": name, "model": file, "ran": True,
            "ortune": {"kind": choice["kind"], "tuned": choice["tuned"], "claimed": choice["speedup"],
                       "claimed_ci": choice["speedup_ci"], "wall_seconds": round(wall, 1),
                       "budget_seconds": args.budget_seconds, "speedup": speed["ortune"],
                       "held_out_passed": fidelity["ortune"]["passed"], "held_out": fidelity["ortune"]["seeds"]},
            "olive": {"passes": "OnnxDynamicQuantization + OrtSessionParamsTuning, joint sequential search",
                      "note": olive.get("note", ""),
                      "settings": olive["olive_settings"], "wall_seconds": olive["wall_seconds"],
                      "speedup": speed["olive"], "held_out_passed": fidelity["olive"]["passed"],
                      "held_out": fidelity["olive"]["seeds"], "tolerance": tolerance},
            "later": later}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="holds the real .onnx models")
    parser.add_argument("--only", default="ocr-cls", help=f"models to run, of: {', '.join(MODELS)}")
    parser.add_argument("--budget-seconds", type=float, default=120.0, help="ORTune's budget per model")
    parser.add_argument("--duration", type=float, default=3.0, help="per member, in each later measurement")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    try:
        import olive  # noqa: F401
    except ImportError:
        print(json.dumps({"benchmark": "optimize_olive", "skipped": "olive-ai is not installed: "
                                                                  "pip install olive-ai==0.13.0"}))
        return
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    if any(n not in MODELS for n in names):
        parser.error(f"models are named: {', '.join(MODELS)}")
    started = time.monotonic()
    rows = [side_by_side(name, args.folder, args) for name in names]
    print(json.dumps({"benchmark": "optimize_olive", "models": rows, "seconds": round(time.monotonic() - started, 1)},
                     indent=1))


if __name__ == "__main__":
    main()
