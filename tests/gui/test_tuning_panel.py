from PySide6.QtCore import Qt

from app.core.session.config import SessionConfig
from tests import models


def _tune(qtbot, window, path, trials, session):
    with qtbot.waitSignal(window.model_opened, timeout=60000):
        window.open_model(path)
    window.session.update(session)
    panel = window.panel("Tune")
    window.tabs.setCurrentWidget(panel)
    panel.ensure_built()
    panel.max_threads.setValue(1)
    panel.budget_seconds.setValue(0)
    panel.budget_trials.setValue(trials)
    panel.confirm_seconds.setValue(0.1)
    assert panel.control.start_button.isEnabled()
    panel.start()
    qtbot.waitUntil(lambda: panel.job is None, timeout=120000)
    assert window.last_error is None
    assert panel.result is not None
    return panel


def test_tune_panel_races_and_offers_the_remeasured_winner(qtbot, window, tmp_path):
    path = models.save(models.foldable(), tmp_path / "foldable.onnx")
    panel = _tune(qtbot, window, path, 8, SessionConfig(graph_optimization_level="disable", intra_op_num_threads=1))
    result = panel.result
    assert result["trials_used"] == 8
    alone = [row for row in panel.table.rows if row[2] is not None]
    assert len(alone) == 2 and all(row[1] in ("faster", "slower", "no difference", "could not tell") for row in alone)
    assert all(row[5] > 0 for row in alone)                   # the re-measured median, beside the race's
    assert all(row[8] for row in panel.table.rows), "every row fills the race's interval or says why not"
    assert result["clearly_faster"], result["note"]      # optimising folds A @ B: faster beyond doubt
    text = panel.summary.text()
    assert f"Best: {result['best']['label']}" in text and "95 % interval" in text and "faster" in text
    assert "The budget of 8 trials was spent" in text          # why it stopped
    assert "optimisation" in result["best"]["label"] and " 1t" not in result["best"]["label"]   # in words
    assert not panel.control.progress.isVisible()
    winner = next(i for i, row in enumerate(panel.table.rows) if row[0] == result["best"]["label"])
    assert panel.table.rows[winner][6] == "best"
    low, high = result["speedup_ci"]
    assert panel.table.rows[winner][2:6] == [result["speedup"], low, high, result["best"]["latency_ms"]], \
        "the winner's row shows the summary's measurement"
    assert f"×{result['speedup']:.2f} (95 % interval {low:.2f}–{high:.2f}" in text
    assert panel.table.cell(winner, 0, Qt.ItemDataRole.FontRole).bold()
    assert panel.table.cell(winner, 0, Qt.ItemDataRole.BackgroundRole).color().alpha() > 0
    assert panel.chart.bars.opts["brushes"][panel.chart.labels.index(result["best"]["label"])] == \
        panel.chart.colors["good"]
    assert panel.table.cell(1 - min(winner, 1), 0, Qt.ItemDataRole.FontRole) is None      # not bold
    assert panel.caption.current and "foldable.onnx</b> · x 1×64 (generated) · " in panel.caption.text()
    panel.apply_best()
    applied = window.session.config().to_dict()
    best = result["best"]["session"]
    for key in ("graph_optimization_level", "execution_mode", "intra_op_num_threads", "dynamic_block_base"):
        assert applied[key] == best[key]
    saved = tmp_path / "best.json"
    panel.save_best(str(saved))
    assert SessionConfig.load(saved).to_dict() == best


def test_tune_panel_says_when_nothing_beat_your_settings(qtbot, window, tmp_path):
    from app.gui.shell.job_control import RunOf
    from tests.core.tune.test_confirm import _alternation, _race, _trial
    from app.core.tune.confirm import judge

    path = models.save(models.mlp(width=8, depth=1), tmp_path / "mlp.onnx")
    with qtbot.waitSignal(window.model_opened, timeout=60000):
        window.open_model(path)
    panel = window.panel("Tune")
    panel.ensure_built()
    result = judge(_race([_trial("a", 0.93), _trial("bb", 0.95)]), SessionConfig(), [0, 1],
                   _alternation(10.0, 10.7, 10.6))
    result["seconds"] = 3.0
    panel.show_result(result, RunOf(str(path), "mlp.onnx"))
    text = panel.summary.text()
    assert "Nothing beat your settings." in text and "Nothing measured was faster" in text
    assert "best" not in [row[6] for row in panel.table.rows]
    assert [row[1] for row in panel.table.rows] == ["slower", "slower"]
    assert not any(panel.table.cell(i, 0, Qt.ItemDataRole.FontRole) for i in range(2))      # none bold
    accent = panel.chart.colors["accent"]      # no bar may stand out as if it were the answer
    assert all(brush != accent for brush in panel.chart.bars.opts["brushes"])
    assert panel.caption.current and panel.summary.isEnabled()
    with qtbot.waitSignal(window.model_opened, timeout=60000):
        window.open_model(models.save(models.tiny_add(), tmp_path / "other.onnx"))
    assert panel.caption.state == "previous" and not panel.table.isEnabled()
    assert not panel.summary.isEnabled(), "the other model's verdict is greyed with its leaderboard"
    assert not panel.apply_button.isEnabled(), "another model's settings are not applied to this one"


def test_tune_panel_explains_dropped_rows(qtbot, window):
    from app.gui.panels.tune.panel import status_text

    panel = window.panel("Tune")
    panel.ensure_built()
    assert panel.chart.empty and "start tuning" in panel.chart.placeholder.text()
    winner = {"label": "2 threads", "latency_ms": 4.4, "alive": True, "remeasured": True}
    dropped = {"label": "1 thread", "latency_ms": 3.9, "alive": False, "eliminated_in_round": 1, "blocks": 2,
               "dropped_because": "not among the best 1/4 of those left", "error": None}
    text = status_text(dropped, winner)
    assert text.startswith("dropped in round 2: not among the best 1/4") and "rests on 2 block(s)" in text
    assert status_text(winner, winner) == "best"


def test_the_leaderboard_chart_keeps_its_labels_and_its_bars_when_narrow(qtbot):
    from app.gui.panels.tune.panel import LeaderboardChart

    chart = LeaderboardChart()
    qtbot.addWidget(chart)
    rows = [{"label": f"intra-op threads {i}, optimisation 'extended', parallel execution", "latency_ms": 1 + i / 10,
             "ci_ms": [0.9 + i / 10, 1.1 + i / 10], "alive": True} for i in range(12)]
    chart.show_rows(rows, 1.0)
    chart.resize(320, chart.minimumHeight())
    chart.show()
    qtbot.waitUntil(lambda: chart.category_axis._tickLevels is not None and chart.category_axis.width() > 40)
    chart.grab()                       # a paint: the axis takes the width its labels need
    qtbot.waitUntil(lambda: chart.plot.getViewBox().width() >= 0.4 * chart.width())
    labels = [text for _, text in chart.category_axis._tickLevels[0]]
    assert len(labels) == 12 and all(len(text.strip("…")) >= 6 for text in labels), labels


def test_the_race_chart_labels_leave_out_what_every_setting_shares():
    from app.gui.panels.tune.panel import distinct_labels

    labels = ["2 threads, spinning off, 1 inter-op thread", "2 threads, parallel, 1 inter-op thread",
              "2 threads, 1 inter-op thread"]
    assert distinct_labels(labels) == ["spinning off", "parallel", "2 threads, 1 inter-op thread"]
    assert distinct_labels(["1 thread"]) == ["1 thread"]
