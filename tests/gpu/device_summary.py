"""Reads what run_device_check.sh left in $OUT and prints its one JSON summary.

Standard library only, and careful with every file: a step that failed leaves its
file missing or half-written, and the summary must still come out, saying why."""

import json
import os
import xml.etree.ElementTree as ElementTree

OUT = os.environ["OUT"]


def read_text(name, default=""):
    try:
        with open(os.path.join(OUT, name), encoding="utf-8", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return default


def read_json(name):
    text = read_text(name)
    if not text:
        return None
    for candidate in (text, text.splitlines()[-1]):
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    return {"unreadable": text[-500:]}


def steps():
    rows = []
    for line in read_text("steps.tsv").splitlines():
        parts = line.split("\t")
        if len(parts) == 3:
            rc = int(parts[1]) if parts[1].lstrip("-").isdigit() else parts[1]
            rows.append({"name": parts[0], "rc": rc, "seconds": int(parts[2])})
    return rows


def log_tail(step_name, lines=8):
    """The last lines the log holds for one step."""
    text = read_text("device_check.log")
    marker = f"=== {step_name} "
    start = text.rfind(marker)
    if start < 0:
        return []
    section = text[start:].split("\n=== ", 1)[0].splitlines()[1:]
    return [line[:300] for line in section if line.strip()][-lines:]


def tests(name="junit.xml"):
    path = os.path.join(OUT, name)
    if not os.path.exists(path):
        return None
    try:
        root = ElementTree.parse(path).getroot()
    except ElementTree.ParseError as exc:
        return {"unreadable": str(exc)}
    summary = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0, "gpu_passed": 0, "gpu_skipped": 0,
               "failures": [], "skipped_reasons": []}
    for case in root.iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        gpu = ".gpu." in f".{case.get('classname', '')}."
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed" if child.tag == "failure" else "errors"
                message = (child.get("message") or child.text or "").strip().splitlines()
                summary["failures"].append({"test": name, "message": (message[0] if message else "")[:400]})
            elif child.tag == "skipped":
                outcome = "skipped"
                reason = (child.get("message") or "").strip()
                if reason and reason not in summary["skipped_reasons"]:
                    summary["skipped_reasons"].append(reason[:400])
        summary[outcome] += 1
        if gpu and outcome in ("passed", "skipped"):
            summary[f"gpu_{outcome}"] += 1
    return summary


def gpu_plugin(step_rows):
    """The GPU plugin EP part: what was installed, or why it was skipped, and its tests."""
    plugin = os.environ.get("PLUGIN", "")
    skipped = read_text("plugin_skipped.txt")
    report = tests("plugin_junit.xml")
    install = next((s for s in step_rows if s["name"].startswith("install onnxruntime-ep-")), None)
    if skipped and install is not None:
        skipped += ": " + " | ".join(log_tail(install["name"], 3))
    return {"requirement": os.environ.get("PLUGIN_SPEC") or None, "installed": bool(plugin),
            "skipped": skipped or None, "tests": report}


def main():
    step_rows = steps()
    devices = read_json("devices.json")
    providers = [{k: p.get(k) for k in ("name", "available", "reason")}
                 for p in (devices or {}).get("providers", [])] if isinstance(devices, dict) else []
    cuda = next((p for p in providers if p["name"] == "CUDAExecutionProvider"), None)
    test_summary = tests()
    benchmark = read_json("benchmark.json")
    problems = []
    installed = os.environ.get("INSTALLED", "")
    if not installed:
        problems.append("onnxruntime-gpu could not be installed: " + " | ".join(
            log_tail(next((s["name"] for s in reversed(step_rows) if s["name"].startswith("install")), "install"), 4)))
    plugin = gpu_plugin(step_rows)
    for row in step_rows:
        if row["rc"] != 0 and not row["name"].startswith("install") and row["name"] != "plugin-tests":
            problems.append(f"step '{row['name']}' ended with {row['rc']}: " + " | ".join(log_tail(row["name"], 4)))
    if cuda is None:
        problems.append("the provider probe did not report CUDA")
    elif not cuda["available"]:
        problems.append(f"CUDA does not start here: {cuda['reason']}")
    if not test_summary or "passed" not in test_summary:
        problems.append("no test report")
    elif test_summary["failed"] or test_summary["errors"]:
        problems.append(f"{test_summary['failed']} test(s) failed, {test_summary['errors']} error(s)")
    elif not test_summary["gpu_passed"]:
        problems.append("every GPU test was skipped")
    plugin_tests = plugin["tests"] or {}
    if plugin["installed"] and "passed" not in plugin_tests:
        problems.append("the GPU plugin was installed but its tests left no report")
    elif plugin_tests.get("failed") or plugin_tests.get("errors"):
        problems.append(f"GPU plugin: {plugin_tests['failed']} test(s) failed, {plugin_tests['errors']} error(s)")
    graph = ((benchmark or {}).get("modes") or {}).get("cuda-graph") if isinstance(benchmark, dict) else None
    if not graph or graph.get("status") != "measured":
        problems.append("the benchmark did not measure the CUDA graph mode")
    summary = {
        "check": "ortune-device-check",
        "ok": not problems,
        "seconds": int(os.environ.get("ELAPSED", "0")),
        "machine": {"gpu": read_text("gpu.txt"), "python": read_text("python.txt"), "kernel": read_text("kernel.txt")},
        "install": {"requirement": installed or None, "onnxruntime": read_json("ort.json"),
                    "cuda_library_dirs": [d for d in read_text("cuda_libs.txt").splitlines() if d]},
        "providers": providers,
        "tests": test_summary,
        "benchmark": benchmark,
        "gpu_plugin": plugin,
        "steps": step_rows,
        "problems": problems,
        "artifacts": OUT,
    }
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
