"""The Optimize tab's leaderboard, plot and reasons, fed a result built in code (no job runs)."""

from tests.optimize_results import choice, result


def _panel(window):
    panel = window.panel("Optimize")
    window.tabs.setCurrentWidget(panel)
    panel.ensure_built()
    return panel


def test_the_plot_fills_in_as_candidates_arrive_and_marks_the_failed_check(window):
    panel = _panel(window)
    assert panel.chart.empty
    shipped = result(choice())
    for row in shipped["candidates"][:2]:
        panel.receive("candidate", row)
    assert [r[0] for r in panel.chart.rows] == ["optimize", "source"]          # sorted by speedup
    panel.show_result(shipped)
    assert not panel.chart.empty
    marks = {r[0]: r[3] for r in panel.chart.rows}
    assert marks == {"optimize": "passed", "source": "chosen", "ort": "passed", "int8-dynamic": "failed-check"}
    assert [label.toPlainText() for label in panel.chart.labels] == [r[0] for r in panel.chart.rows]


def test_names_of_points_at_the_same_place_do_not_sit_on_each_other(window):
    panel = _panel(window)
    panel.show_result(result(choice()))
    anchors = {label.toPlainText(): tuple(label.anchor) for label in panel.chart.labels}
    assert anchors["optimize"] != anchors["source"]          # ×0.99 and ×1.00, both at cosine 1


def test_three_names_at_one_place_each_get_a_row_of_their_own(window):
    # source ×1.00, ort ×1.01 and optimize ×1.01, all at cosine 1: with two rows, "optimize" sat on "source"
    panel = _panel(window)
    shipped = result(choice())
    for row in shipped["candidates"]:
        if row["kind"] in ("optimize", "ort"):
            row["speedup"] = 1.01
    panel.show_result(shipped)
    anchors = {label.toPlainText(): tuple(label.anchor) for label in panel.chart.labels}
    assert len({anchors["source"], anchors["ort"], anchors["optimize"]}) == 3


def test_the_selected_candidate_reason_is_shown_in_full(window):
    panel = _panel(window)
    panel.show_result(result(choice()))
    panel.table.selectRow(3)
    panel.table.setCurrentIndex(panel.table.model().index(3, 0))
    kind = panel.result["candidates"][panel.table.current_row()]["kind"]
    assert panel.why.text() == f"{kind}: why {kind}"


def test_the_answer_says_what_tuning_found(window):
    panel = _panel(window)
    panel.show_result(result(choice()))
    assert "Answer: keep the source and your settings" in panel.answer.text()
    assert "Tuning: skipped — tuning was turned off" in panel.answer.text()


def test_a_budget_too_small_to_measure_anything_says_so_in_the_tab(window):
    panel = _panel(window)
    why = "the 30 s budget was too small to measure any candidate (ort skipped for time): raise the budget to about 60 s"
    panel.show_result(result(dict(choice(), unmeasured=why)))
    assert why in panel.answer.text() and "nothing measured was faster" not in panel.answer.text()
