"""report.html and the answer's sentence, from a result built here (no model is run)."""

from __future__ import annotations

import re
from pathlib import Path

from app.core.optimize.report import report_html
from app.core.optimize.rows import answer_text, tune_text
from tests.optimize_results import MODEL
from tests.optimize_results import choice as _choice
from tests.optimize_results import result as _result

def _labels(page: str) -> dict[str, tuple[float, float]]:
    return {m[3]: (float(m[1]), float(m[2]))
            for m in re.finditer(r"<text x='([\d.]+)' y='([\d.]+)' fill='#[0-9a-f]+'>([^<]+)</text>", page)}


def test_names_of_points_close_together_do_not_overlap():
    labels = _labels(report_html(_result(_choice())))
    assert {"source", "optimize", "ort"} <= set(labels)
    (sx, sy), (ox, oy) = labels["source"], labels["optimize"]
    assert abs(sx - ox) >= 70 or abs(sy - oy) >= 13


def test_a_candidate_that_failed_its_check_is_drawn_apart_and_the_key_says_so():
    page = report_html(_result(_choice()))
    plot = page[page.index("<svg"):]
    assert "fill='#c0392b'>int8-dynamic</text>" in plot
    assert "failed its check" in plot[plot.index("</svg>"):]


def test_the_title_names_the_file_and_the_whole_path_wraps_below_it():
    page = report_html(_result(_choice()))
    assert "<h1>What to ship for rapidocr_onnxruntime_ch_ppocr_mobile_v2.0_cls_infer.onnx</h1>" in page
    assert f"<p class=\"path muted\">{MODEL}</p>" in page and "overflow-wrap:anywhere" in page


def test_keeping_the_source_claims_no_speedup_over_itself():
    text = answer_text(_choice())
    assert text.startswith("keep the source and your settings") and "×" not in text
    assert "Answer: keep the source and your settings" in report_html(_result(_choice()))


def test_the_tuned_source_is_measured_against_your_settings_not_the_source():
    text = answer_text(_choice(tuned=True, speedup=1.16, interval=(1.02, 1.29), verdict="faster"))
    assert "×1.16 [1.02–1.29] your settings' speed (faster)" in text and "source's speed" not in text


def test_a_tuned_variant_gives_both_figures_each_against_its_own_baseline():
    choice = _choice("int8-dynamic", tuned=True, speedup=1.5, interval=(1.4, 1.6), verdict="faster",
                     settings={"speedup": 1.1, "speedup_ci": [1.05, 1.15], "verdict": "faster"})
    text = answer_text(choice)
    assert text.startswith("int8-dynamic: ×1.50 [1.40–1.60] the source's speed (faster)")
    assert "×1.10 [1.05–1.15] your settings' speed on it" in text


def test_tuning_that_found_nothing_faster_does_not_print_a_ratio_of_one():
    tune = {"kind": "source", "clearly_faster": False, "speedup": 1.0, "speedup_ci": [1.0, 1.0],
            "verdict": "reference", "note": "Nothing measured was clearly faster than your settings."}
    text = tune_text(tune)
    assert "nothing measured was clearly faster" in text and "×1.00" not in text and "reference" not in text
    assert f"Tuning: {text}" in report_html(_result(_choice(), tune)).replace("&#x27;", "'")


def test_the_one_mark_is_left_out_where_it_would_sit_on_an_end_figure():
    near = _result(_choice())
    near["candidates"] = near["candidates"][:1] + [{**near["candidates"][1], "speedup": 2.7}]
    assert ">×1</text>" not in report_html(near)
    assert ">×1</text>" in report_html(_result(_choice()))


def test_tuned_settings_are_shipped_only_when_the_verdict_rule_calls_them_faster():
    from app.core.optimize.rows import answer, source_row

    tune = {"kind": "source", "clearly_faster": True, "speedup": 7.44, "speedup_ci": [1.64, 11.61],
            "verdict": "faster", "note": "ran 7.44× as fast", "session": {"intra_op_num_threads": 2}}
    model = Path(__file__)
    choice = answer(source_row(model), tune, model, model, {"intra_op_num_threads": 0})
    assert choice["tuned"] and choice["settings"] == {"intra_op_num_threads": 2}
    unclear = {**tune, "clearly_faster": False, "verdict": "could-not-tell", "note": "Could not tell."}
    choice = answer(source_row(model), unclear, model, model, {"intra_op_num_threads": 0})
    assert not choice["tuned"] and choice["settings"] == {"intra_op_num_threads": 0}


def test_a_budget_too_small_to_measure_anything_says_so_in_the_report():
    why = "the 30 s budget was too small to measure any candidate (ort skipped for time): raise the budget to about 60 s"
    page = report_html(_result(dict(_choice(), unmeasured=why)))
    assert "raise the budget to about 60 s" in page and "nothing measured was faster" not in page


def test_tuned_settings_that_need_more_cores_than_yours_say_so_in_the_answer():
    rests_on = {"threads": 2, "your_threads": 1, "cores": 2, "free_cores": 1.9,
                "text": "the gain rests on 2 intra-op threads where yours run 1: 1.9 of the 2 cores were free"}
    choice = _choice("ort", tuned=True, speedup=1.06, interval=(1.02, 1.10), verdict="faster",
                     settings={"speedup": 1.2, "speedup_ci": [1.13, 1.28], "verdict": "faster"})
    assert "mind" not in answer_text(choice)
    choice["rests_on"] = rests_on
    text = answer_text(choice)
    assert text.endswith("; mind: " + rests_on["text"]) and text.startswith("ort: ×1.06")
    assert "1.9 of the 2 cores were free" in report_html(_result(choice))
    assert "mind" not in answer_text({**choice, "tuned": False, "settings_speedup": None})


def test_the_cores_a_taken_tuning_rests_on_are_said_once_on_the_page():
    rests_on = {"threads": 2, "your_threads": 1, "cores": 2, "free_cores": 1.9,
                "text": "the gain rests on 2 intra-op threads where yours run 1: 1.9 of the 2 cores were free"}
    tune = {"kind": "ort", "clearly_faster": True, "speedup": 1.2, "speedup_ci": [1.13, 1.28], "verdict": "faster",
            "note": f"2 threads ran 1.20× as fast as your settings. Mind: {rests_on['text']}.", "rests_on": rests_on}
    choice = _choice("ort", tuned=True, speedup=1.06, interval=(1.02, 1.10), verdict="faster",
                     settings={"speedup": 1.2, "speedup_ci": [1.13, 1.28], "verdict": "faster"})
    choice["rests_on"] = rests_on
    assert report_html(_result(choice, tune)).count("1.9 of the 2 cores were free") == 1
    assert "Mind:" not in tune_text(tune) and tune_text(tune).endswith("as fast as your settings.")
    # not taken (too busy to tell): the answer does not carry it, so the tuning line keeps it
    assert rests_on["text"] in tune_text(dict(tune, not_taken="the tuned settings are not taken: too busy"))


def test_a_provider_in_the_build_that_cannot_start_is_not_called_available():
    # an onnxruntime-gpu wheel lists CUDA where no driver is: the page said "available: ...
    # CUDAExecutionProvider" on a machine where `ortune devices` says it cannot start
    result = _result(_choice())
    result["machine"].update(in_build_providers=["CUDAExecutionProvider", "CPUExecutionProvider"],
                             usable_providers=["CPUExecutionProvider"],
                             not_usable_providers=[{"name": "CUDAExecutionProvider",
                                                    "reason": "no NVIDIA driver was found <libcuda>"}])
    page = report_html(result)
    machine = page[page.index("<h2>Machine</h2>"):]
    assert "Providers that start there: CPUExecutionProvider." in machine
    assert "<li>CUDAExecutionProvider: no NVIDIA driver was found &lt;libcuda&gt;</li>" in machine
    assert "available" not in machine


def test_the_plot_says_the_tuned_gain_it_does_not_draw():
    # the answer said ×1.66 while the plot showed the chosen source at ×1: the plot draws your settings
    page = report_html(_result(_choice(tuned=True, speedup=1.66, interval=(1.65, 1.67), verdict="faster")))
    assert "the tuned settings that ship ran ×1.660 [1.650–1.670] your settings' speed on source" in page
    assert "tuned settings that ship" not in report_html(_result(_choice()))


def test_the_report_says_what_session_py_needs_installed():
    assert "session.py needs: pip install onnxruntime numpy." in report_html(_result(_choice()))
    plugin = {"name": "OpenVINOExecutionProvider", "plugin": {"package": "onnxruntime-ep-openvino", "version": "1.8.1"}}
    page = report_html(_result(dict(_choice(), settings={"providers": [plugin]})))
    assert "session.py needs: pip install onnxruntime onnxruntime-ep-openvino numpy." in page
