from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from app.core.store.paths import output_dir
from tests import models
from tests.gui.steps import open_and_wait, tab


def open_source(qtbot, window, path):
    open_and_wait(qtbot, window, path)
    panel = tab(window, "Convert")
    return panel


def test_the_convert_tab_follows_overview(window):
    titles = [window.tabs.tabText(i) for i in range(window.tabs.count())]
    assert titles[:2] == ["Overview", "Convert"]


def test_converting_adds_a_checked_variant_under_its_source(qtbot, window, tmp_path):
    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    panel = open_source(qtbot, window, source)
    panel.select_kind("int8-dynamic")
    assert panel.output.text() == str(output_dir() / "mlp.int8-dynamic.onnx")
    assert "per_channel" in panel.options.editors
    assert panel.options.editors["per_channel"][1].toolTip()
    with qtbot.waitSignal(window.model_opened, timeout=120000) as opened:
        panel.start()
    variant = opened.args[0]
    assert variant.kind == "int8-dynamic"
    assert variant.parent.path == str(source.resolve())
    report = variant.extra["conversion"]
    assert report["fidelity"]["passed"] is True
    assert "MatMulInteger" in report["op_changes"]["added"]
    assert window.current_model().path == str(source.resolve())     # the source stays selected
    assert panel.card.table.rows[0][0] == "y"
    assert "Fidelity passed" in panel.card.verdict.text()
    assert set(report["speed"]) >= {"ratio", "ratio_ci", "verdict", "source_p50_ms", "variant_p50_ms", "rounds"}
    assert "the source's speed" in panel.card.speed.text()
    qtbot.waitUntil(lambda: panel.job is None, timeout=30000)
    assert panel.control.start_button.isEnabled()


def test_an_existing_output_needs_consent(qtbot, window, tmp_path, monkeypatch):
    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    panel = open_source(qtbot, window, source)
    target = Path(panel.output.text())
    assert target.parent == output_dir()
    target.write_bytes(b"keep me")
    asked = []
    monkeypatch.setattr(QMessageBox, "question",
                        lambda _parent, title, text, *_: asked.append((title, text)) or QMessageBox.StandardButton.No)
    panel.start()
    assert asked == [("Replace the file?", f"{target} already exists. Replace it?")]
    assert panel.job is None
    assert target.read_bytes() == b"keep me"


def test_mixed_precision_is_disabled_with_the_reason_without_a_gpu(qtbot, window, tmp_path):
    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    panel = open_source(qtbot, window, source)
    window.providers_checked({"ort_version": "1", "package": "onnxruntime 1", "providers": [
        {"name": "CPUExecutionProvider", "short": "cpu", "available": True, "reason": "", "gpu": False,
         "in_build": True},
        {"name": "CUDAExecutionProvider", "short": "cuda", "available": False, "in_build": True, "gpu": True,
         "reason": "no NVIDIA driver was found"}]})
    row = panel.kind_box.findData("mixed")
    item = panel.kind_box.model().item(row)
    assert not item.isEnabled()
    assert "no NVIDIA driver" in item.toolTip()
    panel.select_kind("mixed")
    assert not panel.control.start_button.isEnabled()
    assert "GPU" in panel.control.status.text()


def test_a_conversion_can_be_cancelled(qtbot, window, tmp_path):
    source = models.save(models.transformer_block(hidden=64), tmp_path / "block.onnx")
    panel = open_source(qtbot, window, source)
    panel.select_kind("int8-static")
    panel.options.set_value("calibration_count", 100000)
    with qtbot.waitSignal(window.jobs.job_finished, timeout=60000,
                          check_params_cb=lambda job: job.title.startswith("Convert")):
        panel.start()
        qtbot.waitUntil(lambda: "calibrating" in panel.control.status.text(), timeout=60000)
        panel.control.cancel_button.click()
    assert panel.control.status.text() == "Cancelled."
    assert not Path(panel.output.text()).exists()
    assert [p.name for p in tmp_path.iterdir()] == ["block.onnx"]


def test_a_variant_that_could_not_be_checked_says_so(qtbot):
    from app.gui.panels.convert.result_card import ResultCard

    card = ResultCard()
    qtbot.addWidget(card)
    report = {"kind": "fp16", "output": "m.fp16.onnx", "input_bytes": 100, "output_bytes": 50, "size_ratio": 0.5,
              "seconds": 0.1, "op_changes": {"text": "no change"}, "kept_in_fp32": [], "repairs": [],
              "warnings": [], "check": "not-run",
              "fidelity": {"skipped": False, "passed": None, "outputs": [],
                           "problem": "the source could not run on the check's inputs: Reshape refused"},
              "speed": {"skipped": True, "why": "the source does not run on the check's inputs"}}
    card.show_report(report)
    assert "NOT CHECKED" in card.verdict.text() and "Reshape refused" in card.verdict.text()
    assert "passed" not in card.verdict.text()
    assert "speed: not measured — the source does not run" in card.speed.text()


def test_the_card_says_when_a_variant_is_slower_than_its_source(qtbot, window, tmp_path):
    from app.gui.panels.convert.result_card import ResultCard

    card = ResultCard()
    qtbot.addWidget(card)
    report = {"kind": "fp16", "output": "m.fp16.onnx", "input_bytes": 100, "output_bytes": 50, "size_ratio": 0.5,
              "seconds": 0.1, "op_changes": {"text": "no change"}, "kept_in_fp32": [], "repairs": [],
              "warnings": [], "check": "skipped", "fidelity": {"skipped": True},
              "speed": {"ratio": 0.5, "ratio_ci": [0.45, 0.55], "verdict": "slower", "source_p50_ms": 1.0,
                        "variant_p50_ms": 2.0, "rounds": 12, "why": "float16 on the CPU provider"}}
    card.show_report(report)
    assert "×0.50 [0.45–0.55] the source's speed — slower than the source" in card.speed.text()
    assert "#c0392b" in card.speed.text() and "float16 on the CPU provider" in card.speed.text()
    panel = open_source(qtbot, window, models.save(models.mlp(), tmp_path / "mlp.onnx"))
    assert panel.params().speed_s > 0
    panel.speed.setChecked(False)
    assert panel.params().speed_s == 0


def test_the_card_gives_the_share_of_weights_made_float16(qtbot, tmp_path):
    from app.core.convert.jobs import MAKE
    from app.gui.panels.convert.result_card import ResultCard
    from tests import convert_models

    source = models.save(convert_models.weights_in_a_branch(), tmp_path / "branch.onnx")
    report = MAKE({"kind": "fp16", "input": str(source), "output": str(tmp_path / "half.onnx"),
                   "options": {"node_block_list": "branch"}}, None)
    card = ResultCard()
    qtbot.addWidget(card)
    card.show_report({**report, "speed": {"skipped": True, "why": "not asked"}})
    assert "Float16: under 1% of the weights (by bytes)" in card.summary.text()
    assert "⚠ Only under 1% of the weights" in card.summary.text()


def test_the_file_ending_follows_the_kind(qtbot, window, tmp_path):
    panel = open_source(qtbot, window, models.save(models.mlp(), tmp_path / "mlp.onnx"))
    panel.select_kind("ort")
    assert panel.output.text() == str(output_dir() / "mlp.ort")
    panel.select_kind("fp16")
    assert panel.output.text() == str(output_dir() / "mlp.fp16.onnx")
    typed = tmp_path / "mine" / "small.onnx"
    panel.output.edit.setText(str(typed))
    panel.output.edit.textEdited.emit(str(typed))       # as typing does
    panel.select_kind("ort")
    assert panel.output.text() == str(typed.with_suffix(".ort"))     # the user's folder and name stay
    panel.select_kind("int8-dynamic")
    assert panel.output.text() == str(typed)


def test_the_output_folder_is_remembered_and_the_source_stays_selected(qtbot, window, tmp_path):
    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    panel = open_source(qtbot, window, source)
    assert Path(panel.output.text()).parent == output_dir()             # never the source's folder
    chosen = tmp_path / "variants"
    chosen.mkdir()
    panel.output.setText(str(chosen / "mlp.fp16.onnx"))
    panel.output_edited = True
    panel.speed.setChecked(False)
    with qtbot.waitSignal(window.model_opened, timeout=120000):
        panel.start()
    qtbot.waitUntil(lambda: panel.job is None, timeout=30000)
    assert window.current_model().path == str(source.resolve())
    assert window.settings.convert_output_dir == str(chosen)
    assert "mlp.fp16.onnx is under its source" in panel.control.status.text()
    panel.select_kind("int8-dynamic")                                  # converts the source again
    assert panel.output.text() == str(chosen / "mlp.int8-dynamic.onnx")
    assert panel.params().input == str(source.resolve())


def failing_report():
    return {"kind": "int8-dynamic", "output": "m.int8.onnx", "input_bytes": 100, "output_bytes": 30,
            "size_ratio": 0.3, "seconds": 0.1, "op_changes": {"text": "no change"}, "kept_in_fp32": [],
            "repairs": [], "warnings": [], "check": "ran", "speed": {"skipped": True, "why": "not asked"},
            "fidelity": {"skipped": False, "passed": False, "inputs": [],
                         "tolerance": {"atol": 0.01, "rtol": 0.01, "min_cosine": 0.999},
                         "outputs": [{"name": "logits", "max_abs_diff": 0.4, "max_rel_diff": 3.27, "cosine": 0.97,
                                      "nonfinite": 0, "passed": False, "problem": "cosine 0.970000 below 0.999"},
                                     {"name": "pooled", "max_abs_diff": 0.001, "max_rel_diff": 0.002,
                                      "cosine": 1.0, "nonfinite": 0, "passed": True, "problem": ""}]}}


def test_a_failed_check_is_in_the_failure_colour_with_its_reason(qtbot):
    from app.gui.panels.convert.result_card import REL_NOTE, ResultCard
    from app.gui.widgets.theme import verdict_color

    card = ResultCard()
    qtbot.addWidget(card)
    card.show()
    card.show_report(failing_report())
    text = card.verdict.text()
    assert "FAILED" in text and verdict_color(False) in text and "logits: cosine 0.970000 below 0.999" in text
    assert "pooled" not in text.split("<br>")[0]
    table, result = card.table, card.table.headers.index("Result")
    assert table.cell(0, result) == "FAIL"
    assert table.cell(0, result, Qt.ItemDataRole.ForegroundRole).color().name() == verdict_color(False)
    assert table.cell(1, result, Qt.ItemDataRole.ForegroundRole) is None      # the default colour
    assert card.rel_note.isVisible() and "near zero" in REL_NOTE and "0.1 %" in REL_NOTE
    assert table.source.headerData(table.headers.index("Max rel diff"), Qt.Orientation.Horizontal,
                                   Qt.ItemDataRole.ToolTipRole) == REL_NOTE


def test_the_transformers_kind_says_which_model_type_auto_reads(qtbot, window, tmp_path):
    panel = open_source(qtbot, window, models.save(models.transformer_block(), tmp_path / "block.onnx"))
    with qtbot.waitSignal(window.jobs.job_finished, timeout=60000,
                          check_params_cb=lambda job: job.title.startswith("Detect")):
        panel.select_kind("transformers")
    assert panel.options.values()["model_type"] == "auto"
    assert "auto reads this graph as bert: no causal attention mask" in panel.kind_note.text()
    assert panel.options.values()["num_heads"] == 4


def test_the_check_runs_on_the_session_tabs_input_plan_not_sizes_of_its_own(qtbot, window, tmp_path):
    """The Dimensions field was filled with batch=1 for every dynamic dim, and the check
    called those sizes the user's. Empty, it leaves the Session tab's plan as it is."""
    source = models.save(models.mlp(), tmp_path / "mlp.onnx")         # x: [batch, 64]
    window.context.session.set(**{"inputs.dims": {}, "inputs.probed": {"batch": 4}})
    panel = open_source(qtbot, window, source)
    assert panel.dims.text() == "" and "Session tab" in panel.dims.placeholderText()
    inputs = panel.params().session.inputs
    assert inputs.dims == {} and inputs.probed == {"batch": 4}, "the probed size stays probed, not yours"
    panel.dims.setText("batch=2")                                     # typed here: then it is the user's
    assert panel.params().session.inputs.dims == {"batch": 2}


def test_the_card_says_what_a_compiled_model_is_for_and_how_soon_it_starts(qtbot):
    from app.gui.panels.convert.result_card import ResultCard

    card = ResultCard()
    qtbot.addWidget(card)
    report = {"kind": "compiled", "output": "m.compiled.onnx", "input_bytes": 100, "output_bytes": 150,
              "size_ratio": 1.5, "seconds": 2.0, "op_changes": {"text": "com.microsoft.EPContext ×1 added"},
              "kept_in_fp32": [], "repairs": [], "warnings": [], "check": "skipped", "fidelity": {"skipped": True},
              "speed": {"skipped": True, "why": "not asked for"},
              "compiled_for": {"provider": "OpenVINOExecutionProvider", "ort_version": "1.31.1",
                               "plugin": {"package": "onnxruntime-ep-openvino", "version": "1.8.1"},
                               "devices": [{"type": "CPU", "vendor": "Intel", "name": "<b>Xeon</b>"}]},
              "session_create": {"source_median_ms": 800.0, "compiled_median_ms": 200.0, "speedup": 4.0,
                                 "speedup_range": [3.5, 4.5], "rounds": 3}}
    card.show_report(report)
    text = card.summary.text()
    assert ("Compiled for OpenVINOExecutionProvider (onnxruntime-ep-openvino 1.8.1) on CPU &lt;b&gt;Xeon&lt;/b&gt;, "
            "ONNX Runtime 1.31.1") in text
    assert "Session start 800 ms → 200 ms (×4.00, 3.50–4.50 over 3 rounds, the two made in turns)" in text


def test_a_decoders_card_gives_its_next_tokens_and_fails_on_them_where_they_decide(qtbot):
    from app.gui.panels.convert.result_card import ResultCard

    card = ResultCard()
    qtbot.addWidget(card)
    card.show()
    report = failing_report()
    report["fidelity"]["tolerance"] = {"atol": 0.1, "rtol": 0.1, "min_cosine": 0.99, "min_top1": 0.9,
                                       "policy": "int4"}
    report["fidelity"]["next_tokens"] = {"rate": 0.5, "agree": 8, "steps": 16, "first_disagreement": 0,
                                         "required": 0.9, "decides": True, "prompt_length": 8}
    card.show_report(report)
    text = card.verdict.text()
    why = text.split("<br>")[0]
    assert "FAILED" in why and "next tokens agree on 8 of 16 greedy steps (first differs at step 1)" in why
    assert "logits" not in why, "where the tokens decide, the logits' cosine is a figure beside them"
    assert "<br>Next tokens agree on 8 of 16 greedy steps" in text


def test_the_card_names_a_llama_decoders_group_query_attention_and_rotations(qtbot, tmp_path):
    from app.core.convert.jobs import MAKE
    from app.gui.panels.convert.result_card import ResultCard
    from tests.rope_models import llama_rope

    source = models.save(llama_rope(layers=2), tmp_path / "llama.onnx")
    report = MAKE({"kind": "transformers", "input": str(source), "output": str(tmp_path / "fused.onnx")}, None)
    card = ResultCard()
    qtbot.addWidget(card)
    card.show_report({**report, "speed": {"skipped": True, "why": "not asked"}})
    assert "Attention: GroupQueryAttention in 2 of 2 layers" in card.summary.text()
    assert "Rotary embedding: fused for 4 of 4 rotations (4 inside GroupQueryAttention)" in card.summary.text()


def test_the_card_says_what_was_rewritten_and_that_the_next_tokens_decide(qtbot, tmp_path):
    from app.core.convert.jobs import MAKE
    from app.gui.panels.convert.result_card import ResultCard
    from tests.convert_models import gemm_layers
    from tests.decoder_models import gpt2

    card = ResultCard()
    qtbot.addWidget(card)
    source = models.save(gemm_layers(), tmp_path / "gemms.onnx")
    report = MAKE({"kind": "int4", "input": str(source), "output": str(tmp_path / "int4.onnx")}, None)
    card.show_report({**report, "speed": {"skipped": True, "why": "not asked"}})
    assert "Gemm ×2 rewritten as MatMul + Add, whose weights int4 packs" in card.summary.text()
    # a decoder's output outside the int4 tolerance, where the next tokens decide: not a FAIL beside "passed"
    decoder = MAKE({"kind": "int4", "input": str(models.save(gpt2(layers=2, hidden=64, vocab=128), tmp_path / "d.onnx")),
                    "output": str(tmp_path / "d4.onnx"), "tolerance": {"atol": 1e-9, "rtol": 0, "min_cosine": 1.0}},
                   None)
    card.show_report({**decoder, "speed": {"skipped": True, "why": "not asked"}})
    assert decoder["fidelity"]["next_tokens"]["decides"]
    assert any(o["passed"] is False for o in decoder["fidelity"]["outputs"]), "the bounds given are past any int4"
    assert "outside (the next tokens decide)" in [row[1] for row in card.table.rows]
    assert "FAIL" not in [row[1] for row in card.table.rows]
