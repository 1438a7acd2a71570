"""One story on every screen: a conversion's whole summary readable at 1024×700 with its buttons in
view, the same figure written the same way on every tab, the same words for where inputs came
from, no repair offered where nothing drifted, and chart labels clear of their whiskers."""

from tests import models
from tests.gui.steps import open_and_wait, tab
from tests.gui.test_small_screen import small_window, wholly_in_view
from tests.gui.test_small_screen_look import whole_lines


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
    panel.card.show_report(report)
    panel._drift_ready()
    return panel


def test_a_long_conversion_summary_is_readable_whole_with_convert_in_view_at_1024_by_700(qtbot, window, tmp_path):
    panel = convert_tab_with(qtbot, window, tmp_path, long_report())
    card = panel.card
    for label in (card.summary, card.verdict, card.speed):       # every line painted, none squeezed out
        qtbot.waitUntil(lambda label=label: whole_lines(label), timeout=5000)
    assert "Resize node backbone.stage8.upsample" in card.summary.text()
    for button in (panel.run_button, panel.drift_button):
        qtbot.waitUntil(lambda button=button: wholly_in_view(button), timeout=5000)
    last = card.summary_area.verticalScrollBar()
    last.setValue(last.maximum())                 # what is below the card's fold is one scroll away, inside it
    qtbot.waitUntil(lambda: wholly_in_view(panel.run_button), timeout=5000)
