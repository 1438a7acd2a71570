"""Gate results made from the judge's own criteria, for the tests of what reads them (reports,
the command line's exit codes, the History tab) without measuring anything."""

from app.core.gate import judge


def gate_result(speed: str = judge.PASS, new_label: str = "new.onnx", old_label: str = "old.onnx") -> dict:
    speedups = {judge.PASS: [1.0, 0.99, 1.01], judge.REGRESSION: [0.8, 0.78, 0.82], judge.UNDECIDED: [0.95, 0.9, 1.0]}
    value, low, high = speedups[speed]
    row = {"speedup": value, "speedup_ci": [low, high], "verdict": "no-difference"}
    criteria = [judge.speed_criterion(row, 0.05, 30, 6.0, 10.0, 1.0, 1.0 / value),
                judge.output_criterion({"outputs": [{"name": "y", "max_abs_diff": 0.0, "cosine": 1.0, "passed": True}],
                                        "max_abs_diff": 0.0, "min_cosine": 1.0, "passed": True,
                                        "tolerance": {"atol": 1e-4, "rtol": 1e-3, "min_cosine": 0.9999}}, None, None),
                judge.accuracy_criterion(None, None, 0.01), judge.memory_criterion(100, 101, 0.1)]
    latency = {"p50": 1.0, "p90": 1.1, "p99": 1.2}
    models = [{"label": label, "path": f"/models/{label}", "size_bytes": 10, "latency_ms": latency,
               "throughput_per_s": 900.0, "speedup": s, "speedup_ci": ci, "verdict": v, "rounds": 30,
               "providers": ["CPUExecutionProvider"], "fidelity": None}
              for label, s, ci, v in ((old_label, 1.0, [1.0, 1.0], "reference"), (new_label, value, [low, high], "slower"))]
    return {"verdict": judge.overall(criteria), "criteria": criteria,
            "new": {"label": new_label, "path": f"/models/{new_label}", "sha256": "ab" * 32, "session": {}},
            "old": {"label": old_label, "path": f"/models/{old_label}", "sha256": "cd" * 32, "session": {}},
            "slowdown_definition": judge.SLOWDOWN_DEFINITION, "baseline": old_label, "models": models, "inputs": [],
            "speedup_definition": "speedup", "alternation": {"rounds_run": 30, "block_runs": 5, "rounds": None, "budget_s": 2.0,
                            "verdict_rule": "faster or slower only when the whole 95 % interval lies beyond ±2 %"},
            "session": {}, "run": {}, "ort_version": "1.0", "machine": {}, "created": 0.0}
