"""The Drift tab's rows: a tensor's numbers, a repair step's, and the first-drift lines."""

from __future__ import annotations

from html import escape

from app.core.verdict import verdict_words
from app.core.drift.step_text import added_text, outputs_text
from app.core.formatting import cosine_text, diff_text, interval_text, ratio_text

# whether a tensor is within tolerance, and whether a step's outputs passed, come right after
# what they are about: last, at 1024 px they were out of view behind eleven and six columns
TENSOR_HEADERS = ["#", "Tensor", "Node", "Op", "Within", "Max abs", "Max rel", "Cosine", "SQNR dB", "Lost dB",
                  "NaN/Inf", "Source range", "Variant range", "Of fp16 max"]
STEP_HEADERS = ["Step", "Kept (new)", "Outputs", "Cosine", "Max abs", "Speed", "95 % interval", "Verdict",
                "First drift"]
#: the columns each table keeps in view, long names giving up width first (DataTable.key_columns)
TENSOR_KEYS, STEP_KEYS = ("Within", "Cosine"), ("Outputs", "Verdict")


def number_format(header: str):
    """A drift column's format (app.core.formatting, as the Convert tab's table): a cosine keeps six
    digits (0.999987 is not 1), decibels one decimal, every other figure (a difference, a
    fraction) three significant digits."""
    if header == "Cosine":
        return cosine_text
    return (lambda value: f"{value:.1f}") if header.endswith("dB") else diff_text


def number_table(headers: list[str]):
    """A DataTable that shows small and large numbers with the digits that matter."""
    from app.gui.widgets.table import DataTable

    table = DataTable(headers)
    table.column_formats = {header: number_format(header) for header in headers if header not in ("#", "Step")}
    return table


def _range(values) -> str:
    return "–" if values is None else f"{values[0]:.4g} … {values[1]:.4g}"


def _verdict(passed) -> str:
    return {True: "yes", False: "NO", None: "–"}[passed]


def tensor_row(row: dict) -> list:
    nonfinite = row["nonfinite"] if not row["source_nonfinite"] else f"{row['nonfinite']} ({row['source_nonfinite']} in source)"
    return [row["index"], row["name"], row["node"], row["op_type"], _verdict(row["passed"]), row["max_abs_diff"],
            row["max_rel_diff"], row["cosine"], row["sqnr_db"], row["sqnr_loss_db"], nonfinite,
            _range(row["source_range"]), _range(row["variant_range"]), row["fp16_fraction"]]


def speed_cells(speed: dict) -> list[str]:
    """A step's speed, its interval and its verdict, written as every tab writes a ratio."""
    if speed.get("skipped"):
        return ["–", "not measured", speed["why"]]
    return [ratio_text(speed["ratio"]), interval_text(speed["ratio_ci"]) or "unknown", verdict_words(speed["verdict"])]


def step_row(step: dict) -> list:
    first = step["first_drift"] or step["first_nonfinite"]
    return [step["step"], added_text(step), outputs_text(step), step["cosine"], step["max_abs_diff"],
            *speed_cells(step["speed"]), "–" if first is None else f"{first['tensor']} ({first['node']})"]


def first_text(label: str, first: dict | None, colour) -> str:
    if first is None:
        return f"{label}: none"
    swatch = f"rgba({colour.red()},{colour.green()},{colour.blue()},{colour.alpha() / 255:.2f})"
    sqnr = "" if first.get("sqnr_db") is None else f", SQNR {first['sqnr_db']:.1f} dB"
    return (f"<span style='background:{swatch}'>&nbsp;{label}&nbsp;</span> tensor <b>{escape(first['tensor'])}</b> "
            f"made by node <b>{escape(first['node'] or '(unnamed)')}</b> ({escape(first['op_type'])}){sqnr}"
            f" — {escape(first.get('problem') or '')}")


def repaired_story(result: dict, repair: dict | None) -> tuple[str, str]:
    """(the first-drift line's label, a sentence for the repair's outcome) once the repaired
    variant's own drift is in, so the two lines tell one story: a repair that passed its check
    beside a tensor that still drifts says where it drifts and why that is no contradiction."""
    if repair is None or result["variant"] != repair.get("output"):
        return "First drift", ""
    first = result["first_drift"]
    if first is None:
        return "First drift after the repair", " Its drift: every tensor within tolerance."
    if first.get("output") is False and repair["repair"]["passed"]:
        return ("First drift after the repair (inside the model; its outputs are within tolerance)",
                " Its outputs are within tolerance; a tensor inside still drifts (below).")
    if repair["repair"]["passed"]:
        return ("First drift after the repair", f" The check passed on the conversion's inputs, but on this tab's "
                                                f"inputs output {escape(first['tensor'])} is still past tolerance.")
    return "First drift after the repair", ""
