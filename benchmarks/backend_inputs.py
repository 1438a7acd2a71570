"""How often ORTune's own inputs run a model that ONNX Runtime runs on the model's own.

Regenerates ONNX's backend node tests with the installed onnx wheel's generators
(onnx.backend.test.case.node) into a temporary folder. For every test model that plain
ONNX Runtime (CPU) runs on its own test inputs, runs it once more on ORTune's input plan
and probe with no flags (app.core.session.probe.first_run, a default FeedSpec), in this
process, a session per model. Prints one JSON object: the counts, the share, the failures
grouped by their first line, and any internal error (an exception the plan or probe let out).

    python benchmarks/backend_inputs.py [--only OP_TYPE] [--examples 3]
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

from app.core.jobs.protocol import JobContext  # noqa: E402
from app.core.session.probe import first_run  # noqa: E402

#: each model's probe runs within this memory (the job child's default is a share of what is free)
BUDGET = 2 << 30


def cases(only: str | None) -> list:
    from onnx.backend.test.case.node import collect_testcases
    return [c for c in collect_testcases(only) if c.model is not None and c.data_sets]


def ort_runs(path: Path, inputs: list, names: list[str]):
    """A session when plain ONNX Runtime runs the model on its own test inputs, else None."""
    import numpy as np
    import onnxruntime as ort

    if not all(isinstance(v, np.ndarray) for v in inputs):
        return None
    try:
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        session.run(None, dict(zip(names, inputs)))
    except Exception:  # noqa: BLE001 - ORT refusing its own test is simply not counted
        return None
    return session


def group(message: str) -> str:
    """A failure's first line with its numbers and names taken out, so alike ones count together."""
    line = message.split("refused to run it: ", 1)[-1].split("; set the inputs", 1)[0].split("; give that", 1)[0]
    line = re.sub(r"\(and \d+ other sizes.*?\)", "", line)
    return re.sub(r"\d+", "N", re.sub(r"'[^']*'", "'…'", line))[:120]


def main() -> None:
    import onnxruntime as ort

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="one op type's tests")
    parser.add_argument("--examples", type=int, default=3, help="model names shown per failure group")
    args = parser.parse_args()
    ort.set_default_logger_severity(3)
    started = time.monotonic()
    collected = cases(args.only)
    counts = Counter()
    failures: dict[str, list[str]] = defaultdict(list)
    internal, slowest = [], (0.0, "")
    with tempfile.TemporaryDirectory(prefix="ortune-backend-") as folder:
        for case in collected:
            path = Path(folder) / f"{case.name}.onnx"
            path.write_bytes(case.model.SerializeToString())
            names = [i.name for i in case.model.graph.input]
            session = ort_runs(path, list(case.data_sets[0][0]), names)
            if session is None:
                counts["ort_refuses_its_own_test"] += 1
                continue
            counts["ort_runs"] += 1
            began = time.monotonic()
            try:
                run = first_run(path, session, ctx=JobContext(memory_budget=BUDGET))
            except Exception as exc:  # noqa: BLE001 - the figure counts what escapes
                kind = getattr(exc, "kind", "internal")
                if kind == "internal":
                    internal.append(f"{case.name}: {type(exc).__name__}: {exc}"[:300])
                failures[f"{kind}: {group(getattr(exc, 'message', str(exc)))}"].append(case.name)
                continue
            finally:
                path.unlink()
                slowest = max(slowest, (time.monotonic() - began, case.name))
            if run.worked:
                counts["ortune_runs"] += 1
                counts["probed"] += len(run.tried) > 1
            else:
                failures[group(run.message)].append(case.name)
    ran, ours = counts["ort_runs"], counts["ortune_runs"]
    print(json.dumps({
        "onnx_node_tests": len(collected), "ort_runs": ran, "ortune_runs": ours,
        "share": round(ours / ran, 4) if ran else None, "target": 0.95,
        "probed": counts["probed"], "ort_refuses_its_own_test": counts["ort_refuses_its_own_test"],
        "internal_errors": len(internal), "internal": internal[:20],
        "failure_groups": [{"reason": reason, "count": len(names), "examples": names[:args.examples]}
                           for reason, names in sorted(failures.items(), key=lambda kv: -len(kv[1]))],
        "slowest_model_s": [round(slowest[0], 2), slowest[1]],
        "seconds": round(time.monotonic() - started, 1),
    }, indent=2))


if __name__ == "__main__":
    main()
