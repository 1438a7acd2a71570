"""The Convert tab's result card: what a conversion did and how faithful the variant is."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QFrame, QGroupBox, QLabel, QScrollArea, QVBoxLayout, QWidget

from app.core.convert.compiled import compiled_lines
from app.core.convert.fusers import attention_text, fusers_lines, rotary_text
from app.core.convert.speed import speed_sentence
from app.core.convert.weights import share_text
from app.core.convert.decoder_fusion import rotary_angles_text
from app.core.convert.int4 import gemm_text
from app.core.convert.next_tokens import agreement_text, output_word
from app.core.session.fidelity_policy import policy_text
from app.core.session.outputs import REL_FLOOR
from app.core.formatting import cosine_text, diff_text, human_bytes, ratio_text
from app.gui.widgets.run_caption import inputs_text
from app.gui.widgets.theme import verdict_color

#: under the fidelity table: what "Max rel diff" leaves out, and why it can exceed rel and still pass
REL_NOTE = (f"Max rel diff leaves out values smaller than {REL_FLOOR * 100:g} % of the output's largest "
            "magnitude: near zero, a relative difference is large without meaning anything. A value passes when "
            "its difference is within abs + rel × |source|, so a small value can pass with a large relative "
            "difference.")


def failed_check_text(fidelity: dict) -> str:
    """Why the fidelity check failed, output by output ("" when it passed or was not run)."""
    if fidelity.get("skipped") or fidelity.get("passed") is not False:
        return ""
    check = fidelity.get("next_tokens") or {}
    if "rate" in check and check["rate"] < check["required"]:
        return agreement_text(check)
    failed = [f"{o['name']}: {o['problem'] or 'outside the tolerance'}" for o in fidelity.get("outputs", [])
              if o.get("passed") is False and not check.get("decides")]
    return "; ".join(failed) or fidelity.get("problem", "") or "outside the tolerance"


def _next_tokens_line(check: dict | None) -> str:
    """A decoder's next-token agreement under the verdict ('' for a model without a cache)."""
    if not check:
        return ""
    text = f"next tokens not measured: {check['problem']}" if "problem" in check else agreement_text(check)
    return f"<br>{escape(text[:1].upper() + text[1:])}"


#: the result next to the output's name: at 1024×700 the card's table shows two columns and a
#: half, and "Result" sixth was out of sight behind its scroll bar
FIDELITY_HEADERS = ["Output", "Result", "Max abs diff", "Max rel diff", "Cosine", "NaN/Inf", "Why"]


def fidelity_table():
    """A DataTable that writes differences and cosines as the Drift tab does (app.core.formatting):
    tiny differences as 1.2e-07 rather than 0.000000."""
    from app.gui.widgets.table import DataTable

    class FidelityTable(DataTable):
        def set_rows(self, rows, headers=None) -> None:
            super().set_rows(rows, headers)
            self.set_header_tip(FIDELITY_HEADERS.index("Max rel diff"), REL_NOTE)
            result, why = FIDELITY_HEADERS.index("Result"), FIDELITY_HEADERS.index("Why")
            for row in range(self.source.rowCount()):      # a failed output in the failure colour
                if self.cell(row, result) == output_word(False):
                    for column in (result, why):
                        self.set_cell(row, column, Qt.ItemDataRole.ForegroundRole,
                                      QBrush(QColor(verdict_color(False))))

    table = FidelityTable(FIDELITY_HEADERS)
    table.column_formats = {"Max abs diff": diff_text, "Max rel diff": diff_text, "Cosine": cosine_text}
    table.set_rows([])
    return table


#: the least height of the card's text (its summary, verdict and speed) and of its table, in lines
TEXT_LINES, TABLE_LINES = 4, 3


class ResultCard(QGroupBox):
    """What a conversion made: sizes, time, operator changes, what stayed float32 and why,
    the fidelity table with its verdict, and the variant's speed against its source.

    The text scrolls inside the card: a detector's fp16 keeps a dozen nodes in float32, and
    every line of it, at its whole height, would push the tab (and its Convert button) past
    a 1024×700 screen."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__("Result", parent)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.verdict = QLabel()
        self.verdict.setWordWrap(True)
        self.speed = QLabel()
        self.speed.setWordWrap(True)
        self.speed.setTextFormat(Qt.TextFormat.RichText)
        self.table = fidelity_table()
        self.rel_note = QLabel(REL_NOTE)
        self.rel_note.setWordWrap(True)
        self.rel_note.setEnabled(False)        # read as a note: the disabled (muted) text colour
        text = QWidget()
        column = QVBoxLayout(text)
        column.setContentsMargins(0, 0, 0, 0)
        for label in (self.summary, self.verdict, self.speed, self.rel_note):
            column.addWidget(label)
        column.addStretch(1)
        self.summary_area = QScrollArea()
        self.summary_area.setFrameShape(QFrame.Shape.NoFrame)
        self.summary_area.setWidgetResizable(True)
        self.summary_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.summary_area.setWidget(text)
        lines = self.fontMetrics().lineSpacing()
        self.summary_area.setMinimumHeight(TEXT_LINES * lines)
        self.table.setMinimumHeight((TABLE_LINES + 2) * lines)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary_area, 3)
        layout.addWidget(self.table, 2)
        self.report: dict | None = None
        self.show_report(None)

    def show_report(self, report: dict | None) -> None:
        self.report = report
        self.rel_note.hide()
        if report is None:
            self.summary.setText("Pick a kind, set its options and press Convert. The result appears here.")
            self.verdict.setText("")
            self.speed.setText("")
            self.table.set_rows([])
            return
        self.show_speed(report["speed"])
        ratio = report.get("size_ratio")
        lines = [f"<b>{escape(report['kind'])}</b> → <code>{escape(report['output'])}</code>",
                 f"Size: {human_bytes(report['input_bytes'])} → {human_bytes(report['output_bytes'])}"
                 + (f" ({ratio_text(ratio)})" if ratio else ""),
                 f"Time: {report['seconds']:.2f} s",
                 f"Operators: {escape(report['op_changes']['text'])}"]
        if "fused_operators" in report:
            fused = ", ".join(f"{op} ×{n}" for op, n in report["fused_operators"].items()) or "none"
            lines.append(f"Fused: {escape(fused)} (as {escape(report['model_type'])}, "
                         f"{report['num_heads'] or 'unknown'} heads)")
            if report.get("attention_layers"):
                lines.append(f"Attention: {escape(attention_text(report['attention_layers']))}")
            if report.get("rotary"):
                lines.append(f"Rotary embedding: {escape(rotary_text(report['rotary']))}")
            lines += [f"Fuser {escape(line)}" for line in fusers_lines(report)]
        half = report.get("float16_weights")
        if half and half["share"] is not None:
            lines.append(f"Float16: {share_text(half['share'])} of the weights (by bytes)")
        lines += [escape(line[0].upper() + line[1:]) for line in compiled_lines(report)]
        lines += [escape(gemm_text(report))] if gemm_text(report) else []
        lines += [f"Rewritten: {escape(rotary_angles_text(report))}"] if rotary_angles_text(report) else []
        lines += [f"Kept in float32: {escape(k['what'])} — <i>{escape(k['why'])}</i>" for k in report["kept_in_fp32"]]
        lines += [f"Repaired: {escape(r['what'])} — <i>{escape(r['why'])}</i>" for r in report["repairs"]]
        lines += [f"⚠ {escape(w)}" for w in report["warnings"]]
        self.summary.setText("<br>".join(lines))
        fidelity = report["fidelity"]
        if fidelity.get("skipped"):
            self.verdict.setText("Fidelity not checked.")
            self.table.set_rows([])
            return
        if report.get("check") == "not-run":
            self.verdict.setText(f"<b style='color:{verdict_color(False)}'>Fidelity NOT CHECKED</b> — "
                                 f"{escape(fidelity['problem'])}. "
                                 "Set the inputs in the Session tab to check it.")
            self.table.set_rows([])
            return
        dims = inputs_text(fidelity.get("inputs")) or "none needed"
        tolerance = fidelity["tolerance"]
        colour = verdict_color(bool(fidelity["passed"]))
        why = failed_check_text(fidelity)
        self.verdict.setText(f"<b style='color:{colour}'>Fidelity {'passed' if fidelity['passed'] else 'FAILED'}"
                             "</b>" + (f"<span style='color:{colour}'> — {escape(why)}</span>" if why else "")
                             + f"<br>Held to {escape(policy_text(tolerance))}; inputs: {escape(dims)}"
                             + _next_tokens_line(fidelity.get("next_tokens")))
        decides = bool((fidelity.get("next_tokens") or {}).get("decides"))
        self.table.set_rows([[o["name"], output_word(o["passed"], decides), o["max_abs_diff"], o["max_rel_diff"],
                              o["cosine"], o["nonfinite"], o["problem"] or o.get("note", "")]
                             for o in fidelity["outputs"]])
        self.rel_note.setVisible(bool(fidelity["outputs"]))

    def show_speed(self, speed: dict) -> None:
        colour = {"faster": verdict_color(True), "slower": verdict_color(False)}.get(speed.get("verdict"), "")
        text = escape(speed_sentence(speed), quote=False)
        self.speed.setText(f"<b style='color:{colour}'>{text}</b>" if colour else text)
