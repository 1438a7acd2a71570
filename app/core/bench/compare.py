"""What a comparison computes from its members' reports (the job itself is in
app.core.bench.jobs): each model runs in a process of its own with the same session and
inputs, and they are timed in alternation (app.core.measure.alternate). The first model is
the reference: its process saves the inputs it generated and the
outputs it computed; every later model is fed exactly those inputs (cast to its own
input types) and its outputs are measured against the reference's."""

from __future__ import annotations

from pathlib import Path

from app.core.bench.accuracy import accuracy_text
from app.core.verdict import verdict_words
from app.core.jobs.errors import UserError
from app.core import formatting
from app.core.formatting import human_bytes

FEEDS_FILE = "feeds.npz"
OUTPUTS_FILE = "outputs.npz"
PLAN_FILE = "inputs.json"          # the reference's input plan: where each of the shared feeds came from


def shared_inputs(reference: list[dict], own: list[dict]) -> list[dict]:
    """A later member's input rows: it reads the reference's feeds from a file, but they are
    not the user's file; each row says where the reference's came from (its source and
    reason), with the member's own dtype and shape (cast to its input types)."""
    planned = {row["name"]: row for row in reference}
    rows = []
    for row in own:
        origin = planned.get(row["name"])
        rows.append(row if origin is None else
                    {**row, "source": origin["source"], "values": origin["values"],
                     "reason": f"the reference's inputs: {origin['reason']}"})
    return rows


def output_fidelity(reference: dict, outputs: dict, tolerance: dict | None = None,
                    per_output: dict[str, dict] | None = None) -> dict:
    """How far `outputs` drift from `reference`: the conversion fidelity check's numbers
    and verdict per output (with `tolerance`, else the default; an output named in
    `per_output` with its own settings over those, and its row says them), plus the compare
    table's summary. A name in `per_output` the reference has not is the user's mistake."""
    from app.core.session.outputs import Tolerance, compare_values
    from app.core.text import printable

    per_output = per_output or {}
    unknown = sorted(set(per_output) - set(reference))
    if unknown:
        raise UserError("bad-option", f"a tolerance names output(s) the model does not have: "
                                      f"{', '.join(printable(name, 80) for name in unknown)} (its outputs: "
                                      f"{', '.join(printable(name, 80) for name in reference)})")
    base = dict(tolerance or {})
    tolerance = Tolerance.from_dict(base)
    rows = []
    for name, expected in reference.items():
        own = Tolerance.from_dict({**base, **per_output[name]}) if name in per_output else tolerance
        if name not in outputs:
            rows.append({"name": name, "max_abs_diff": None, "cosine": None, "nonfinite": 0, "passed": False,
                         "problem": "missing"})
        else:
            rows.append(compare_values(name, expected, outputs[name], own))
        if name in per_output:
            rows[-1]["tolerance"] = own.to_dict()
    compared = [r for r in rows if r["max_abs_diff"] is not None]
    verdicts = [r["passed"] for r in rows if r["passed"] is not None]
    return {"outputs": rows,
            "max_abs_diff": max((r["max_abs_diff"] for r in compared), default=None),
            # a near-zero output's cosine is not used (app.core.session.outputs): nor is it the summary's
            "min_cosine": min((r["cosine"] for r in compared if r["cosine"] is not None and not r.get("note")),
                              default=None),
            "notes": [f"{r['name']}: {r['note']}" for r in compared if r.get("note")],
            "nonfinite": sum(r["nonfinite"] for r in compared),
            "compared": len(compared) == len(rows),
            "passed": bool(verdicts) and all(verdicts), "tolerance": tolerance.to_dict()}


def compare_row(report: dict, alternation: dict) -> dict:
    """One model's row: its report's numbers (latency and throughput of its alternating
    blocks) and, from `alternation` (one entry of alternate.summarize), its speedup over the
    reference with interval and verdict."""
    return {"label": report["variant"], "path": report["model"]["path"], "size_bytes": report["model"]["size_bytes"],
            "latency_ms": report["latency_ms"], "throughput_per_s": report["throughput_per_s"],
            "speedup": alternation["speedup"], "speedup_ci": alternation["speedup_ci"],
            "verdict": alternation["verdict"], "why": alternation.get("why"), "claim": alternation.get("claim"),
            "widened_ci": alternation.get("widened_ci"), "contention": alternation.get("contention"),
            "rounds": alternation["rounds"], "iterations": report["iterations"],
            "too_busy": alternation.get("too_busy", False), "measure": alternation.get("measure", "wall"),
            **({"note": alternation["note"]} if alternation.get("note") else {}),
            **({"pair_speedups": alternation["pair_speedups"]} if alternation.get("pair_speedups") else {}),
            "session_create_ms": report["session_create_ms"], "first_run_ms": report["first_run_ms"],
            "peak_rss_bytes": report["peak_rss_bytes"], "gpu_memory_bytes": report["gpu_memory_bytes"],
            "providers": report["providers"], "inputs": report["inputs"], "fidelity": report.get("fidelity"),
            "accuracy": report.get("accuracy")}


def partial_row(label: str, path: str, figures: dict, alternation: dict) -> dict:
    """One model's row of a comparison stopped before its end: the figures of the blocks it ran
    (alternate.Alternation.figures) and its speedup so far; no fidelity or providers, which
    come with a member's report at the end."""
    return {"label": label, "path": path, "size_bytes": Path(path).stat().st_size, **figures,
            "speedup": alternation["speedup"], "speedup_ci": alternation["speedup_ci"],
            "verdict": alternation["verdict"], "rounds": alternation["rounds"], "providers": [], "fidelity": None}


#: the comparison table's columns, the answer first (speedup, its interval and verdict), so a
#: narrow window keeps it in view
COMPARE_HEADERS = ["Model", "Speedup", "95 % interval", "Verdict", "p50 ms", "p90 ms", "p99 ms", "runs/s", "Size",
                   "max |Δ|", "Cosine", "Providers", "Accuracy (data folder)"]


def interval_text(interval: list | None) -> str:
    """A speed-up's 95 % interval as the tables show it, to its speedup's decimals: "1.18–1.29"."""
    return formatting.interval_text(interval) or "not measured"


def compare_table(result: dict) -> tuple[list[str], list[list]]:
    """A comparison's table as the Compare tab shows it and `ortune compare --csv` writes it:
    one row per model, figures as numbers."""
    rows = []
    for index, row in enumerate(result["models"]):
        fidelity = row["fidelity"] or {}
        unchecked = "reference" if index == 0 else "not checked"    # a partial comparison checks none
        rows.append([row["label"], row["speedup"], interval_text(row["speedup_ci"]), verdict_words(row["verdict"]),
                     row["latency_ms"]["p50"],
                     row["latency_ms"]["p90"], row["latency_ms"]["p99"], row["throughput_per_s"],
                     human_bytes(row["size_bytes"]),
                     fidelity.get("max_abs_diff", unchecked if row["fidelity"] is None else None),
                     fidelity.get("min_cosine"), ", ".join(row["providers"]), accuracy_text(row.get("accuracy"))])
    return list(COMPARE_HEADERS), rows
