"""Does ORTune's intake let in every model that ONNX Runtime runs?

Takes ONNX's own backend test models: the node tests (regenerated with the installed onnx
wheel's generators when the wheel does not ship their folders) and the stored model folders
of onnx/backend/test/data (simple, pytorch-converted, pytorch-operator …). For each model
that plain ONNX Runtime (CPU, default options) loads and runs on the test's own inputs, runs
ORTune's three intakes on it:
- inspect: what `ortune inspect`, the window's Overview, bench, compare, diagnose and
  placement read through (the onnx checker on, its complaints as warnings);
- admit: what profile, iobinding, tune, drift, diff and cost read through;
- convert: a conversion's intake (read only, nothing is written).
Prints one JSON object: how many models ONNX Runtime runs, how many of those each intake
refuses (the figure that must be 0), the reasons, the warnings given instead, and any
internal error (an exception other than ORTune's UserError).

With `--also FOLDER`, every .onnx file there, and the copy ONNX Runtime writes of it
optimised at the extended level (what `optimized_model_filepath` saves: contrib operators,
fused nodes the onnx checker does not know), count too, as "models ONNX Runtime loads".

    nice -n 10 python benchmarks/backend_intake.py [--only OP_TYPE] [--also FOLDER]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.jobs.errors import UserError  # noqa: E402


def node_cases(only: str | None) -> list[tuple[str, bytes, list]]:
    """(name, model bytes, inputs) of the regenerated node tests."""
    import warnings

    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")            # the generators' own overflow warnings
        cases = collect_testcases(only)
    return [(f"node/{c.name}", c.model.SerializeToString(), list(c.data_sets[0][0]))
            for c in cases if c.model is not None and c.data_sets]


def stored_cases(only: str | None) -> list[tuple[str, bytes, list]]:
    """(name, model bytes, inputs) of every stored test folder with a model and inputs."""
    import onnx

    root = Path(onnx.__file__).parent / "backend" / "test" / "data"
    found = []
    for model_path in sorted(root.glob("*/*/model.onnx")):
        if only and only.lower() not in model_path.parent.name.lower():
            continue
        data = model_path.parent / "test_data_set_0"
        model = onnx.load(str(model_path))
        inputs = [_read_value(f.read_bytes(), value.type)
                  for f, value in zip(sorted(data.glob("input_*.pb")), _feed_values(model))]
        found.append((str(model_path.parent.relative_to(root)), model_path.read_bytes(), inputs))
    return found


def _feed_values(model) -> list:
    initializers = {t.name for t in model.graph.initializer}
    return [v for v in model.graph.input if v.name not in initializers]


def _read_value(data: bytes, type_proto):
    """A stored input as ONNX Runtime takes it: an array, a list of arrays, or None."""
    import onnx
    from onnx import numpy_helper

    kind = type_proto.WhichOneof("value")
    proto = {"sequence_type": onnx.SequenceProto, "optional_type": onnx.OptionalProto,
             "map_type": onnx.MapProto}.get(kind, onnx.TensorProto)()
    proto.ParseFromString(data)
    if kind == "sequence_type":
        return numpy_helper.to_list(proto)
    if kind == "optional_type":
        return numpy_helper.to_optional(proto)
    if kind == "map_type":
        return numpy_helper.to_dict(proto)
    return numpy_helper.to_array(proto)


def folder_cases(folder: Path, scratch: Path) -> list[tuple[str, bytes, None]]:
    """(name, model bytes, None) of each model in `folder` and of its extended-optimised copy."""
    import onnxruntime as ort

    found = []
    for path in sorted(folder.glob("*.onnx")):
        found.append((f"also/{path.name}", path.read_bytes(), None))
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        options.optimized_model_filepath = str(scratch / f"optimised-{path.name}")
        try:
            ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        except Exception:  # noqa: BLE001 - a model ORT cannot load has no optimised copy
            continue
        found.append((f"also/optimised-{path.name}", Path(options.optimized_model_filepath).read_bytes(), None))
    return found


def ort_runs(path: Path, inputs: list | None) -> bool:
    """Plain ONNX Runtime loads the model and runs it on the test's inputs (`inputs` None:
    loads it)."""
    import onnxruntime as ort

    try:
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        if inputs is not None:
            session.run(None, dict(zip([i.name for i in session.get_inputs()], inputs)))
    except Exception:  # noqa: BLE001 - a model ORT does not run is simply not counted
        return False
    return True


def intakes():
    from app.core.convert.convert import intake as convert_intake
    from app.core.model.inspect import inspect_model
    from app.core.model.intake import admit

    def convert(path: Path) -> list[str]:
        convert_intake(path, weights=False)
        return []

    return {"inspect": lambda path: inspect_model(path)["warnings"], "admit": lambda path: admit(path).warnings,
            "convert": convert}


def group(message: str) -> str:
    """A message with its names and numbers taken out, so alike ones count together."""
    line = message.split(": ", 1)[-1]
    return re.sub(r"\d+", "N", re.sub(r"'[^']*'", "'…'", line))


def opset_of(model_bytes: bytes) -> int | None:
    import onnx
    model = onnx.ModelProto()
    model.ParseFromString(model_bytes)
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)


def main() -> None:
    import onnx
    import onnxruntime as ort

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="only the tests whose name holds this (node tests: an op type)")
    parser.add_argument("--examples", type=int, default=3, help="model names shown per group")
    parser.add_argument("--also", type=Path, help="a folder of .onnx models that count too (loaded, not run)")
    args = parser.parse_args()
    ort.set_default_logger_severity(3)
    started = time.monotonic()
    shipped_nodes = (Path(onnx.__file__).parent / "backend" / "test" / "data" / "node").is_dir()
    scratch = tempfile.TemporaryDirectory(prefix="ortune-optimised-")
    collected = (([] if shipped_nodes else node_cases(args.only)) + stored_cases(args.only)
                 + (folder_cases(args.also, Path(scratch.name)) if args.also else []))
    scratch.cleanup()
    checks = intakes()
    counts: Counter = Counter()
    refused: dict[str, dict[str, list[str]]] = {name: defaultdict(list) for name in checks}
    warned: dict[str, list[str]] = defaultdict(list)
    internal: list[str] = []
    with tempfile.TemporaryDirectory(prefix="ortune-intake-") as folder:
        for name, model_bytes, inputs in collected:
            path = Path(folder) / (name.replace("/", "__") + ".onnx")
            path.write_bytes(model_bytes)
            low = (opset_of(model_bytes) or 99) < 7
            counts["low_opset_models"] += low
            if not ort_runs(path, inputs):
                counts["ort_does_not_run"] += 1
                path.unlink()
                continue
            counts["ort_runs"] += 1
            counts["also_ort_loads"] += inputs is None
            counts["low_opset_ort_runs"] += low
            for check, run in checks.items():
                try:
                    for warning in run(path) or []:
                        if check == "inspect":
                            warned[group(warning)].append(name)
                except UserError as exc:
                    refused[check][f"{exc.kind}: {group(exc.message)}"].append(name)
                except Exception as exc:  # noqa: BLE001 - the figure counts what escapes
                    internal.append(f"{check} {name}: {type(exc).__name__}: {exc}"[:300])
            path.unlink()

    def groups(found: dict[str, list[str]]) -> list[dict]:
        return [{"reason": reason, "count": len(names), "examples": names[:args.examples]}
                for reason, names in sorted(found.items(), key=lambda kv: -len(kv[1]))]

    print(json.dumps({
        "onnx": onnx.__version__, "onnxruntime": ort.__version__,
        "node_tests": "shipped" if shipped_nodes else "regenerated",
        "models": len(collected), "ort_runs": counts["ort_runs"], "ort_does_not_run": counts["ort_does_not_run"],
        "of_which_also_loaded_not_run": counts["also_ort_loads"],
        "low_opset_models": counts["low_opset_models"], "low_opset_ort_runs": counts["low_opset_ort_runs"],
        "refused_that_ort_runs": {check: sum(map(len, found.values())) for check, found in refused.items()},
        "target": 0,
        "refusals": {check: groups(found) for check, found in refused.items() if found},
        "accepted_with_warnings": sum(map(len, warned.values())),
        "warnings": groups(warned),
        "internal_errors": len(internal), "internal": internal[:20],
        "seconds": round(time.monotonic() - started, 1),
    }, indent=2))


if __name__ == "__main__":
    main()
