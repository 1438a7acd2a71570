from tests import models


def test_tune_panel_races_and_offers_the_best(qtbot, window, tmp_path):
    path = models.save(models.mlp(width=32, depth=2), tmp_path / "mlp.onnx")
    with qtbot.waitSignal(window.model_opened, timeout=60000):
        window.open_model(path)
    panel = window.panel("Tune")
    window.tabs.setCurrentWidget(panel)
    panel.ensure_built()
    panel.max_threads.setValue(1)
    panel.budget_seconds.setValue(0)
    panel.budget_trials.setValue(12)
    assert panel.start_button.isEnabled()
    panel.start()
    qtbot.waitUntil(lambda: panel.job is None, timeout=120000)
    assert window.last_error is None
    assert panel.result is not None
    assert panel.result["trials_used"] == 12
    assert panel.table.rows, "the leaderboard shows the contenders"
    assert "Best:" in panel.summary.text()
    assert panel.caption.current and "mlp.onnx</b> · x 1×32 · " in panel.caption.text()
    panel.apply_best()
    applied = window.session.config().to_dict()
    best = panel.result["best"]["session"]
    for key in ("graph_optimization_level", "execution_mode", "intra_op_num_threads", "dynamic_block_base"):
        assert applied[key] == best[key]
    saved = tmp_path / "best.json"
    panel.save_best(str(saved))
    from app.core.session.config import SessionConfig
    assert SessionConfig.load(saved).to_dict() == panel.result["best"]["session"]
