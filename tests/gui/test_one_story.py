"""One story on every screen: a conversion's whole summary readable at 1024×700 with its buttons in
view, the same figure written the same way on every tab, the same words for where inputs came
from, no repair offered where nothing drifted, and chart labels clear of their whiskers."""

from app.gui.shell.job_control import RunOf
from tests import models
from tests.gui.steps import open_and_wait, tab
from tests.gui.test_small_screen import small_window, wholly_in_view
from tests.gui.test_small_screen_look import whole_lines
from app.gui.shell.handover import DriftPair


def long_report() -> dict:
    """An fp16 conversion of a detector as it came back: many nodes kept in float32, warnings."""
    kept = [{"what": f"Resize node backbone.stage{i}.upsample", "why": "its scales input must stay float32 "
             "(ONNX Runtime has no float16 kernel for it)"} for i in range(9)]
    return {"kind": "fp16", "input": "det.onnx", "output": "/tmp/variants/ch_PP-OCRv4_det_infer.fp16.onnx",
            "input_bytes": 4_745_517, "output_bytes": 2_500_000, "size_ratio": 0.53, "seconds": 1.9,
            "op_changes": {"text": "+Cast ×24"}, "kept_in_fp32": kept, "repairs": [],
            "float16_weights": {"share": 0.97},
            "warnings": ["float16 on the CPU provider runs through casts: expect it slower than float32"] * 2,
            "check": "ran",
            "fidelity": {"skipped": False, "passed": True,
                         "inputs": [{"name": "x", "shape": [1, 3, 224, 224], "source": "default",
                                     "reason": "224 pixels, a usual image size", "values": "random normal, seed 0"}],
                         "tolerance": {"atol": 0.01, "rtol": 0.01, "min_cosine": 0.999},
                         "outputs": [{"name": "sigmoid_0.tmp_0", "max_abs_diff": 0.0043258667, "max_rel_diff": 0.02,
                                      "cosine": 0.99999, "nonfinite": 0, "passed": True, "problem": ""}]},
            "speed": {"ratio": 0.599, "ratio_ci": [0.55, 0.65], "verdict": "slower", "source_p50_ms": 7.0,
                      "variant_p50_ms": 11.7, "rounds": 30, "why": "float16 on the CPU provider"}}


def convert_tab_with(qtbot, window, tmp_path, report):
    small_window(qtbot, window)
    open_and_wait(qtbot, window, models.save(models.mlp(), tmp_path / "mlp.onnx"))
    panel = tab(window, "Convert")
    panel.show_conversion(report)
    return panel


def test_a_long_conversion_summary_is_readable_whole_with_convert_in_view_at_1024_by_700(qtbot, window, tmp_path):
    panel = convert_tab_with(qtbot, window, tmp_path, long_report())
    card = panel.card
    for label in (card.summary, card.verdict, card.speed):       # every line painted, none squeezed out
        qtbot.waitUntil(lambda label=label: whole_lines(label), timeout=5000)
    assert "Resize node backbone.stage8.upsample" in card.summary.text()
    for button in (panel.control.start_button, panel.drift_button):
        qtbot.waitUntil(lambda button=button: wholly_in_view(button), timeout=5000)
    last = card.summary_area.verticalScrollBar()
    last.setValue(last.maximum())                 # what is below the card's fold is one scroll away, inside it
    qtbot.waitUntil(lambda: wholly_in_view(panel.control.start_button), timeout=5000)


def cell(table, row: int, header: str) -> str:
    return table.model().index(row, table.headers.index(header)).data()


def test_a_max_abs_diff_reads_the_same_on_convert_and_drift(qtbot):
    # Convert wrote 0.004326 where Drift wrote 0.00433 for the same output
    from app.gui.panels.convert.result_card import ResultCard
    from app.gui.panels.drift.views import TENSOR_HEADERS, number_table

    card = ResultCard()
    qtbot.addWidget(card)
    card.show_report(long_report())
    drift = number_table(TENSOR_HEADERS)
    qtbot.addWidget(drift)
    row = {header: "" for header in TENSOR_HEADERS}
    row.update({"Max abs": 0.0043258667, "Cosine": 0.99999})
    drift.set_rows([[row[h] for h in TENSOR_HEADERS]])
    assert cell(card.table, 0, "Max abs diff") == cell(drift, 0, "Max abs") == "0.00433"
    assert cell(card.table, 0, "Cosine") == cell(drift, 0, "Cosine") == "0.99999"


def tune_result() -> dict:
    trial = {"label": "threads 2", "latency_ms": 23.5, "ci_ms": [22.0, 25.0], "blocks": 4, "alive": True,
             "remeasured": True, "speedup": 0.599, "speedup_ci": [0.55, 0.651], "remeasured_ms": 29.94,
             "verdict": "slower"}
    return {"cancelled": False, "inputs": [], "best": {**trial, "session": {}}, "clearly_faster": True,
            "default": {"latency_ms": 17.9, "race_latency_ms": 17.9}, "trials": [trial], "trials_used": 4,
            "space_size": 6, "seconds": 30.0, "stop_reason": "", "speedup": 0.599, "speedup_ci": [0.55, 0.651],
            "verdict": "slower", "note": ""}


def test_a_tuned_speedup_reads_the_same_in_the_summary_and_the_table(qtbot, window, tmp_path):
    # the table said 0.599 where the summary said ×0.60
    open_and_wait(qtbot, window, models.save(models.mlp(), tmp_path / "mlp.onnx"))
    panel = tab(window, "Tune")
    panel.show_result(tune_result(), RunOf(str(tmp_path / "mlp.onnx"), "mlp.onnx"))
    assert "×0.60 (95 % interval 0.55–0.65" in panel.summary.text()
    assert cell(panel.table, 0, "Alone ×") == "×0.60"
    assert (cell(panel.table, 0, "Alone 95% low"), cell(panel.table, 0, "Alone 95% high")) == ("0.55", "0.65")


def test_times_on_a_chart_keep_three_digits_in_the_unit_each_reads_best_in():
    # one chart wrote "56.900 ms" beside a value in µs with two decimals
    from app.gui.widgets.chart_base import value_texts

    assert value_texts([56.9, 0.6], durations=True) == ["56.9 ms", "600 µs"]      # main: "56.900 ms", "0.600 ms"
    assert value_texts([56.9, 1.34863], durations=True) == ["56.9 ms", "1.35 ms"]


def test_generated_inputs_carry_the_same_word_on_every_tab(qtbot, window, tmp_path):
    # History and Compare called them "guessed", Convert "(default)", Drift "(generated)"
    from app.gui.panels.history.panel import inputs_cell
    from app.gui.widgets.run_caption import inputs_text

    rows = long_report()["fidelity"]["inputs"]
    said = "x 1×3×224×224 (generated)"
    card = convert_tab_with(qtbot, window, tmp_path, long_report()).card
    compare = tab(window, "Compare")
    compare.caption.show_run(str(tmp_path / "mlp.onnx"), "mlp.onnx vs mlp.fp16.onnx", rows)
    drift = tab(window, "Drift")
    drift.show_pair(DriftPair(str(tmp_path / "mlp.onnx"), str(tmp_path / "v.onnx")))
    drift.show_result({**drift_result(tmp_path, drifted=False), "inputs": rows})
    texts = {"Convert": card.verdict.text(), "Compare": compare.caption.text(), "Drift": drift.inputs_label.text(),
             "History": inputs_cell(rows)}
    assert {tab_: said in text for tab_, text in texts.items()} == dict.fromkeys(texts, True), texts
    assert not any("guess" in text for text in texts.values()), texts
    assert inputs_text([{**rows[0], "source": "sample", "values": "sample"}]) == "x 1×3×224×224 (sample)"
    assert inputs_text([{**rows[0], "source": "file"}]) == "x 1×3×224×224 (your file)"


def drift_result(tmp_path, drifted: bool) -> dict:
    row = {"index": 0, "name": "y", "node": "n0", "op_type": "Relu", "max_abs_diff": 0.5 if drifted else 1e-4,
           "max_rel_diff": 0.1, "cosine": 0.9 if drifted else 0.999999, "sqnr_db": 40.0, "sqnr_loss_db": 0.1,
           "nonfinite": 0, "source_nonfinite": 0, "source_range": [0.0, 1.0], "variant_range": [0.0, 1.0],
           "fp16_fraction": 0.001, "passed": not drifted, "problem": "cosine below" if drifted else ""}
    first = {"index": 0, "tensor": "y", "node": "n0", "op_type": "Relu", "sqnr_db": 40.0, "problem": "cosine below"}
    return {"source": str(tmp_path / "mlp.onnx"), "variant": str(tmp_path / "v.onnx"), "variant_precision": "float16",
            "remade_as": {"kind": "fp16", "options": {}}, "tensors": [row], "inputs": [],
            "tolerance": {"atol": 0.01, "rtol": 0.01, "min_cosine": 0.999}, "compared": 1, "source_tensors": 1,
            "first_drift": first if drifted else None, "first_nonfinite": None}


def test_repair_automatically_is_off_with_its_reason_when_nothing_drifted(qtbot, window, tmp_path):
    drift = tab(window, "Drift")
    drift.show_pair(DriftPair(str(tmp_path / "mlp.onnx"), str(tmp_path / "v.onnx")))
    drift.show_result(drift_result(tmp_path, drifted=False))
    assert not drift.auto_button.isEnabled()
    assert "Nothing to repair" in drift.auto_button.toolTip() and "Nothing to repair" in drift.repair_note.text()
    drift.show_result(drift_result(tmp_path, drifted=True))
    assert drift.auto_button.isEnabled() and drift.repair_note.text() == ""


def test_comparisons_speedup_labels_sit_clear_of_their_whiskers(qtbot, window):
    # the bar's value was written where its interval line runs (0.299 across the int8 whisker)
    from tests.gui.test_table_exports import _row

    window.resize(1600, 1000)
    panel = tab(window, "Compare")
    result = {"baseline": "det.onnx", "models": [_row("det.onnx", 1.0, "reference", [1.0, 1.0]),
                                                 _row("det.int8.onnx", 0.299, "slower", [0.253, 0.354]),
                                                 _row("det.fp16.onnx", 0.949, "no-difference", [0.769, 1.17])],
              "inputs": [], "created": 0.0,
              "alternation": {"rounds_run": 30, "block_runs": 5, "verdict_rule": "the one rule"}}
    panel.show_result(result)
    chart = panel.speedup_chart
    chart.stack.setCurrentWidget(chart.canvas)
    qtbot.waitUntil(lambda: chart.plot.isVisible() and chart.plot.height() > 100, timeout=5000)
    assert [text.toPlainText() for text in chart.texts] == ["×1.00", "×0.30", "×0.95"]
    assert panel.speedup_whiskers is not None
    for text, row in zip(chart.texts[1:], result["models"][1:]):
        label = text.mapRectToView(text.boundingRect())         # the label's extent in the plot's figures
        assert min(label.top(), label.bottom()) >= row["speedup_ci"][1] - 1e-9, (label, row["speedup_ci"])
