"""A stored result as a person reads it: its settings in words and its figures in tables,
each column in one unit and one number format (the raw JSON is one tab away)."""

from __future__ import annotations

from html import escape

from app.core.bench.jobs import BENCH, COMPARE, SWEEP
from app.core.convert.jobs import CONVERT
from app.core.drift.jobs import DRIFT
from app.core.gate.jobs import GATE
from app.core.launch.registry import recorded_entry
from app.core.optimize.jobs import OPTIMIZE
from app.core.profile.jobs import PROFILE
from app.core.tune.jobs import TUNE
from app.core.verdict import verdict_words
from app.core.session.settings_text import settings_text
from app.core.formatting import (diff_text, duration_column, duration_text, human_bytes, interval_text, ratio_text,
                            shared_decimals)

STAT_KEYS = (("p50", "p50"), ("p90", "p90"), ("p95", "p95"), ("p99", "p99"), ("p999", "p99.9"), ("mean", "mean"),
             ("min", "fastest"), ("max", "slowest"), ("std", "std"))


def numbers(values, digits: int = 3) -> list[str]:
    """Plain figures (runs per second …) with one number of decimals for the whole column."""
    decimals = shared_decimals(values, digits, most=2)
    return ["–" if v is None else f"{v:,.{decimals}f}" for v in values]


def table(headers: list[str], columns: list[list[str]]) -> str:
    """An HTML table from its columns (each already formatted), numbers to the right."""
    head = "".join(f"<th align='left'>{escape(h)}</th>" for h in headers)
    rows = "".join("<tr>" + "".join(f"<td align='right'>{escape(str(c))}</td>" if i else f"<td>{escape(str(c))}</td>"
                                    for i, c in enumerate(row)) + "</tr>" for row in zip(*columns))
    return f"<table cellspacing='0' cellpadding='3'><tr>{head}</tr>{rows}</table>"


def facts(pairs: list[tuple[str, str]]) -> str:
    return "<table cellpadding='2'>" + "".join(f"<tr><td><b>{escape(k)}</b></td><td>{escape(v)}</td></tr>"
                                               for k, v in pairs if v) + "</table>"


def run_text(run: dict | None) -> str:
    if not run:
        return ""
    measured = (f"{run['iterations']:,} runs" if run.get("iterations") else f"for {run.get('duration_s')} s")
    return f"{run.get('warmup', 0)} warm-up runs, then {measured}, concurrency {run.get('concurrency', 1)}"


def summary_html(entry: dict) -> str:
    """The summary of one stored entry (History.get's dict)."""
    report = entry["report"]
    head = facts([("Settings", settings_text(entry["session"]) if entry.get("session") else ""),
                  ("Run", run_text(entry.get("run") or report.get("run")))])
    figures = FIGURES.get(recorded_entry(entry["kind"]))
    if figures is None:         # a kind a store written by another version keeps: its raw JSON is one tab away
        return head
    return head + "<br>" + figures(report)


def _bench(report: dict) -> str:
    latency = report["latency_ms"]
    unit, texts = duration_column([latency.get(key) for key, _ in STAT_KEYS])
    figures = table(["latency", unit], [[name for _, name in STAT_KEYS], texts])
    return figures + "<br>" + facts([
        ("Throughput", f"{numbers([report['throughput_per_s']], 4)[0]} runs/s"),
        ("Measured", f"{report['iterations']:,} runs in {duration_text(1000 * report['measure_s'])}"
         if report.get("measure_s") else ""),
        ("Session created in", duration_text(report.get("session_create_ms"))),
        ("First run", duration_text(report.get("first_run_ms"))),
        ("Peak memory", human_bytes(report.get("peak_rss_bytes"))),
        ("GPU memory", human_bytes(report["gpu_memory_bytes"]) if report.get("gpu_memory_bytes") else ""),
        ("Providers", ", ".join(report.get("providers") or []))])


def _compare(report: dict) -> str:
    models = report["models"]
    columns = [[m["label"] for m in models], [human_bytes(m["size_bytes"]) for m in models]]
    headers = ["model", "size"]
    for key in ("p50", "p99"):
        unit, texts = duration_column([m["latency_ms"][key] for m in models])
        headers.append(f"{key} {unit}")
        columns.append(texts)
    headers += ["runs/s", "speedup", "95 % interval", "verdict", "max |Δ|"]
    columns.append(numbers([m["throughput_per_s"] for m in models]))
    columns.append([ratio_text(m.get("speedup")) for m in models])
    columns.append([interval_text(m.get("speedup_ci")) or "–"
                    for m in models])
    columns.append([verdict_words(m.get("verdict")) for m in models])
    columns.append([diff_text(m['fidelity']['max_abs_diff']) if m.get("fidelity") else "reference" for m in models])
    return facts([("Reference", report.get("baseline", ""))]) + table(headers, columns)


def _sweep(report: dict) -> str:
    cells, dim, best = report["cells"], report.get("dim"), report.get("best")
    headers = ([dim] if dim else []) + ["concurrency"]
    columns = ([[str(c["dim_value"]) for c in cells]] if dim else []) + [[str(c["concurrency"]) for c in cells]]
    for key in ("p50", "p99"):
        unit, texts = duration_column([c["latency_ms"][key] for c in cells])
        headers.append(f"{key} {unit}")
        columns.append(texts)
    headers += [f"{dim} items/s" if dim else "runs/s", "vs first", "verdict", "best"]
    columns.append(numbers([c["items_per_s"] for c in cells]))
    columns.append([ratio_text(c.get("ratio")) for c in cells])
    columns.append([verdict_words(c.get("verdict")) for c in cells])
    columns.append(["◀" if c == best else "" for c in cells])
    limit = report.get("latency_limit_ms")
    return facts([("Latency limit", f"{report.get('limit_percentile')} within {duration_text(limit)}" if limit
                   else "none")]) + table(headers, columns)


def _ratio(value, interval=None, verdict=None) -> str:
    if value is None:
        return ""
    text = ratio_text(value) + (f" (95 % interval {interval_text(interval)})" if interval else "")
    return text + (f", {verdict_words(verdict)}" if verdict else "")


def _profile(report: dict) -> str:
    ops = (report.get("by_op_type") or [])[:10]
    figures = table(["operator type", "total", "runs of it", "share"],
                    [[o["op_type"] for o in ops], [duration_text(o["total_us"] / 1000) for o in ops],
                     [f"{o['count']:,}" for o in ops], [f"{o['percent']:.1f} %" for o in ops]])
    return facts([("Runs", f"{report.get('runs', 0):,}"),
                  ("Node time", duration_text((report.get("total_node_us") or 0) / 1000)),
                  ("Providers", ", ".join(report.get("session_providers") or [])),
                  ("Trace", report.get("trace", ""))]) + figures


def _tune(report: dict) -> str:
    best, default = report.get("best") or {}, report.get("default") or {}
    return facts([("Offered", best.get("label", "")),
                  ("Speedup", _ratio(report.get("speedup"), report.get("speedup_ci"), report.get("verdict"))),
                  ("Its median", duration_text(best.get("latency_ms"))),
                  ("Your settings' median", duration_text(default.get("latency_ms"))),
                  ("Trials", f"{len(report.get('trials') or [])} of {report.get('space_size', '?')} settings"),
                  ("Why", report.get("note", ""))])


def _convert(report: dict) -> str:
    fidelity, speed = report.get("fidelity") or {}, report.get("speed") or {}
    worst = fidelity.get("max_abs_diff")
    return facts([("Kind", report.get("kind", "")), ("Source", report.get("input", "")),
                  ("Variant", report.get("output", "")),
                  ("Size", f"{human_bytes(report.get('input_bytes'))} → {human_bytes(report.get('output_bytes'))}"),
                  ("Check", report.get("check", "") + (f", max |Δ| {diff_text(worst)}" if worst is not None else "")),
                  ("Speed against the source", f"not measured: {speed.get('why', '')}" if speed.get("skipped")
                   else _ratio(speed.get("ratio"), speed.get("ratio_ci"), speed.get("verdict")))])


def _drift(report: dict) -> str:
    first = report.get("first_drift")
    nonfinite = report.get("first_nonfinite")
    return facts([("Source", report.get("source", "")), ("Variant", report.get("variant", "")),
                  ("Tensors compared", f"{report.get('compared', 0):,}"),
                  ("First drift", f"{first.get('tensor', '')} ({first.get('op_type', '')} {first.get('node', '')})"
                   if first else "none past the tolerance"),
                  ("First NaN/Inf", f"{nonfinite.get('tensor', '')}" if nonfinite else "")])


def _optimize(report: dict) -> str:
    choice, rows = report.get("choice") or {}, report.get("candidates") or []
    candidates = table(["candidate", "status", "speedup", "verdict", "why"],
                       [[r.get("kind", "") for r in rows], [r.get("status", "") for r in rows],
                        [ratio_text(r.get("speedup")) for r in rows],
                        [verdict_words(r.get("verdict")) for r in rows], [r.get("reason") or "" for r in rows]])
    return facts([("Answer", choice.get("kind", "")),
                  ("Speedup", _ratio(choice.get("speedup"), choice.get("speedup_ci"), choice.get("verdict"))),
                  ("Why", choice.get("note", "")), ("Shipped in", report.get("out_dir", ""))]) + candidates


#: each job's figures in a stored result, keyed by its entry (one for each entry the history records)
FIGURES = {BENCH: _bench, COMPARE: _compare, SWEEP: _sweep, PROFILE: _profile, TUNE: _tune, CONVERT: _convert,
           DRIFT: _drift, OPTIMIZE: _optimize, GATE: _compare}
