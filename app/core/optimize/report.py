"""report.html of the shipped folder: one self-contained page that opens in any browser with no
network — no scripts, no fonts, no links out; every text that came from the model or a
library is HTML-escaped."""

from __future__ import annotations

from html import escape
from pathlib import PurePath

from app.core.verdict import RULE, verdict_words
from app.core.optimize.rows import answer_text, judged_text, plot_point, tune_text
from app.core.formatting import cosine_text, human_bytes, ratio_text

_STYLE = """body{font:14px system-ui,sans-serif;margin:2em;max-width:72em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left}
th{background:#f2f2f2}.chosen{background:#e6f4e6;font-weight:bold}.answer{font-size:1.2em}
.muted{color:#666}.busy{color:#a15c00}svg{border:1px solid #ccc;background:#fff}.path{overflow-wrap:anywhere}
td.num{white-space:nowrap}.key span{margin-right:1.2em}"""
#: how each point of the plot is drawn, by what became of its candidate
_MARKS = {"chosen": ("#2a8a2a", 6, "chosen"), "passed": ("#3366aa", 4, "passed its check"),
          "failed-check": ("#c0392b", 4, "failed its check")}
_LABEL_GAP = 70         # labels of points closer than this (pixels) are put on rows of their own
W, H, PAD = 560, 320, 50


def _e(value) -> str:
    return escape("" if value is None else str(value), quote=True)


def _ratio(value, interval) -> str:
    if value is None:
        return "–"
    text = f"×{value:.3f}"
    if interval and None not in interval:
        text += f" [{interval[0]:.3f}–{interval[1]:.3f}]"
    return text


def _cosine(row: dict) -> str:
    fidelity = row.get("fidelity") or {}
    if fidelity.get("check") == "reference":
        return "reference"
    cosine = fidelity.get("cosine")
    return cosine_text(cosine)


def _labels(points: list[tuple], sx, sy) -> list[tuple[float, float]]:
    """Where each point's name goes: beside it, one row lower for each name nearby already."""
    placed: list[tuple[float, float]] = []
    for _, x, y, _ in points:
        px, py = sx(x) + 8, sy(y) - 6
        while any(abs(px - qx) < _LABEL_GAP and abs(py - qy) < 13 for qx, qy in placed):
            py += 14
        placed.append((px, py))
    return placed


def _plot(rows: list[dict]) -> str:
    """Speed against fidelity: x the speedup over the source, y the outputs' lowest cosine."""
    points = sorted(filter(None, map(plot_point, rows)), key=lambda p: p[1])
    if not points:
        return "<p class='muted'>No candidate was measured, so there is nothing to plot.</p>"
    xs, ys = [p[1] for p in points], [p[2] for p in points]
    x0, x1 = min(xs + [1.0]) * 0.95, max(xs + [1.0]) * 1.05
    y0, y1 = min(ys) - 0.01 * (1 + abs(min(ys))), 1.0 + 0.001
    def sx(x): return PAD + (x - x0) / (x1 - x0) * (W - 2 * PAD)
    def sy(y): return H - PAD - (y - y0) / (y1 - y0) * (H - 2 * PAD)
    parts = [f"<svg width='{W}' height='{H}' viewBox='0 0 {W} {H}' role='img' aria-label='speedup against fidelity'>",
             f"<line x1='{PAD}' y1='{H - PAD}' x2='{W - PAD}' y2='{H - PAD}' stroke='#444'/>",
             f"<line x1='{PAD}' y1='{PAD}' x2='{PAD}' y2='{H - PAD}' stroke='#444'/>",
             f"<line x1='{sx(1.0):.1f}' y1='{PAD}' x2='{sx(1.0):.1f}' y2='{H - PAD}' stroke='#bbb' "
             "stroke-dasharray='4 3'/>",
             f"<text x='{W / 2}' y='{H - 12}' text-anchor='middle'>speedup over the source (×)</text>",
             f"<text x='14' y='{H / 2}' transform='rotate(-90 14 {H / 2})' text-anchor='middle'>lowest output "
             "cosine</text>",
             f"<text x='{PAD}' y='{H - PAD + 16}' text-anchor='middle'>{x0:.2f}</text>",
             f"<text x='{W - PAD}' y='{H - PAD + 16}' text-anchor='middle'>{x1:.2f}</text>",
             f"<text x='{PAD - 4}' y='{PAD + 4}' text-anchor='end'>{y1:.3f}</text>",
             f"<text x='{PAD - 4}' y='{H - PAD}' text-anchor='end'>{y0:.3f}</text>"]
    if min(sx(1.0) - PAD, W - PAD - sx(1.0)) >= 36:        # else it would sit on an end's figure
        parts.append(f"<text x='{sx(1.0):.1f}' y='{H - PAD + 16}' text-anchor='middle' fill='#888'>×1</text>")
    for (kind, x, y, mark), (lx, ly) in zip(points, _labels(points, sx, sy)):
        colour, radius, _ = _MARKS[mark]
        parts.append(f"<circle cx='{sx(x):.1f}' cy='{sy(y):.1f}' r='{radius}' fill='{colour}'><title>{_e(kind)}: "
                     f"{ratio_text(x)}, cosine {cosine_text(y)}</title></circle>"
                     f"<text x='{lx:.1f}' y='{ly:.1f}' fill='{colour}'>{_e(kind)}</text>")
    key = "".join(f"<span style='color:{colour}'>● {text}</span>" for colour, _, text in _MARKS.values())
    return "".join(parts) + f"</svg><p class='key'>{key}</p>"


def _tuned_note(choice: dict) -> str:
    """The plot draws each candidate with your settings: where tuned settings ship, their gain is said below it."""
    if not choice.get("tuned"):
        return ""
    gain = choice.get("settings_speedup") or choice
    return (f"<p class='muted'>Each point runs your settings; the tuned settings that ship ran "
            f"{_e(_ratio(gain['speedup'], gain['speedup_ci']))} your settings' speed on {_e(choice['kind'])}, "
            "measured apart, and are not drawn.</p>")


def _table(headers: list[str], rows: list[list], classes: list[str] | None = None, numeric: int = 0) -> str:
    """A table; its columns from the second up to `numeric` hold figures, kept on one line."""
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join(f"<tr class='{(classes or [''] * len(rows))[i]}'>"
                   + "".join(f"<td{' class=num' if 0 < j < numeric else ''}>{_e(c)}</td>" for j, c in enumerate(row))
                   + "</tr>" for i, row in enumerate(rows))
    return f"<table><tr>{head}</tr>{body}</table>"


def _providers(machine: dict) -> str:
    """Which of the build's providers start there, and why each other one does not."""
    usable = machine["usable_providers"]
    items = "".join(f"<li>{_e(p['name'])}: {_e(p['reason'])}</li>" for p in machine["not_usable_providers"])
    return (f"<p>Providers that start there: {_e(', '.join(usable) or 'none could be tried')}.</p>"
            + (f"<p>In the build but not starting there:</p><ul class='muted'>{items}</ul>" if items else ""))


def _busy(rows: list[dict]) -> str:
    """What a busy machine did to the figures: which candidates' rounds other programs disturbed."""
    busy = [r for r in rows if r.get("contention")]
    if not busy:
        return "<p class='muted'>The machine was quiet while the candidates were measured.</p>"
    shares = ", ".join(f"{r['kind']} ({r['contention']:.0%} of its rounds)" for r in busy)
    return (f"<p class='busy'><b>The machine was busy:</b> other programs took a model's core in most runs of "
            f"some rounds for {_e(shares)}. Their intervals were widened for it, and a faster one is claimed at the "
            f"lower figure its reason gives.</p>")


def where_text(result: dict) -> str:
    """Where every candidate was made and measured: this machine, a target, or Ray workers."""
    where = result.get("target")
    if not where:
        return "This machine"
    if where.get("cluster"):
        return f"Ray workers of the cluster at {where['address']} ({where['measured_on']})"
    return f"The target {where['name']} ({where['address']})"


def _requirements(choice: dict) -> str:
    """What the shipped session.py needs installed: onnxruntime, the plugin packages of its
    providers, numpy."""
    from app.core.session.config import SessionConfig
    from app.core.session.create import plugin_requirements

    return " ".join(["pip install onnxruntime", *plugin_requirements(SessionConfig.from_dict(choice.get("settings") or {})),
                     "numpy"])


def report_html(result: dict) -> str:
    choice, target = result["choice"], result["machine"]
    rows = result["candidates"]
    name = PurePath(result["model"]).name
    board = _table(["candidate", "status", "speedup [95 %]", "verdict", "median ms", "lowest cosine", "size",
                    "why"],
                   [[r["kind"], r["status"], _ratio(r["speedup"], r["speedup_ci"]), verdict_words(r["verdict"]),
                     f"{r['latency_ms']:.4g}" if r.get("latency_ms") is not None else "–", _cosine(r),
                     human_bytes(r["size_bytes"]) if r.get("size_bytes") is not None else "–", r["reason"]]
                    for r in rows], ["chosen" if r.get("chosen") else "" for r in rows], numeric=7)
    inputs = _table(["input", "dtype", "shape", "from", "why"],
                    [[i.get("name"), i.get("dtype"), "×".join(map(str, i.get("shape", []))) or "scalar",
                      i.get("source"), i.get("reason")] for i in result["inputs"]])
    partial = "<p><b>Partial:</b> the search was cancelled; this is what was measured.</p>" if result["partial"] else ""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>ORTune optimize: {_e(name)}</title>
<style>{_STYLE}</style></head><body>
<h1>What to ship for {_e(name)}</h1><p class="path muted">{_e(result['model'])}</p>{partial}
<p class="answer">Answer: {_e(answer_text(choice))}.</p>
<p class="path">Model: {_e(choice['model'])}; settings: {_e(choice['preset'])}{' (tuned)' if choice['tuned'] else ''}.
Fidelity: {'passed' if (choice['fidelity'] or {}).get('passed') else 'not passed'}.</p>
<p class="path">session.py needs: {_e(_requirements(choice))}.</p>
<p>Tuning: {_e(tune_text(result['tune']))}</p>
<h2>Leaderboard</h2>{board}
<p class="muted">Each speedup is the source's median latency over the candidate's, both timed in alternation,
each in its own process, with the same settings and inputs. Verdict: {_e(RULE)}.</p>{_busy(rows)}
<p class="muted">Objective: {_e(result['objective'])}{'; ' + _e(result['objective_note']) if result['objective_note'] else ''}.</p>
<h2>Speed against fidelity</h2>{_plot(rows)}{_tuned_note(choice)}
<h2>Inputs</h2>{inputs}<p>{_e(judged_text(result['data']))}.</p>
<h2>Machine</h2><p>{_e(where_text(result))}: {_e(target['cpu'])}; ONNX Runtime {_e(target['onnxruntime'])};
session providers: {_e(', '.join(target['providers']))}.</p>{_providers(target)}
<p class="muted">Budget {result['budget_seconds']:g} s, used {result['elapsed_seconds']:.1f} s.</p>
</body></html>
"""
