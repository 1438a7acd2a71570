"""An optimize result built in code (no model is run), for the report's and the tab's tests."""

from __future__ import annotations

MODEL = "/a/very/long/folder/name/that/goes/on/and/on/rapidocr_onnxruntime_ch_ppocr_mobile_v2.0_cls_infer.onnx"


def row(kind, status, speedup, cosine, chosen=False):
    fidelity = {"passed": status == "passed", "check": "passed" if status == "passed" else "failed",
                "cosine": cosine, "tolerance": {}}
    return {"kind": kind, "status": status, "reason": f"why {kind}", "speedup": speedup,
            "speedup_ci": [speedup - 0.01, speedup + 0.01], "verdict": "no-difference", "latency_ms": 1.0,
            "fidelity": fidelity, "size_bytes": 1000, "chosen": chosen}


def result(choice: dict, tune: dict | None = None) -> dict:
    source = {**row("source", "passed", 1.0, None, chosen=choice["kind"] == "source"), "verdict": "reference",
              "fidelity": {"passed": True, "check": "reference"}}
    rows = [source, row("optimize", "passed", 0.99, 1.0), row("ort", "passed", 1.03, 1.0),
            row("int8-dynamic", "failed-check", 1.6, 0.4, chosen=choice["kind"] == "int8-dynamic")]
    return {"model": MODEL, "out_dir": "/out", "choice": choice, "candidates": rows, "inputs": [], "partial": False,
            "tune": tune or {"skipped": True, "why": "tuning was turned off"}, "objective": "latency",
            "objective_note": "", "data": {"judged_on": "generated inputs"}, "budget_seconds": 60,
            "elapsed_seconds": 40.0,
            "machine": {"cpu": "a CPU", "onnxruntime": "1.0", "providers": ["CPUExecutionProvider"],
                        "in_build_providers": ["CPUExecutionProvider"], "usable_providers": ["CPUExecutionProvider"],
                        "not_usable_providers": []}}


def choice(kind="source", tuned=False, speedup=1.0, interval=(1.0, 1.0), verdict="reference", settings=None):
    choice = {"kind": kind, "model": "/out/model.onnx", "preset": "/out/preset.json", "speedup": speedup,
              "speedup_ci": list(interval), "verdict": verdict, "fidelity": {"passed": True}, "tuned": tuned,
              "note": "a note"}
    if settings:
        choice["settings_speedup"] = settings
    return choice
