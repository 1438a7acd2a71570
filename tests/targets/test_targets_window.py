"""The window's targets: the Targets menu sends measuring jobs to the chosen target (and
says so in the status bar), the dialog adds one after the user confirms its host key,
tests it (its providers), and removing the chosen one falls back to this machine."""

import pytest
from PySide6.QtWidgets import QDialog, QMessageBox

from app.core.measure.runs import RunSettings
from app.core.bench.jobs import BENCH, BenchParams
from app.core.model.jobs import INSPECT, ModelPath
from app.core.targets.store import load_targets
from tests import models
from tests.gui.conftest import (no_dangling_qthreads, no_unexpected_questions, own_output_folder,  # noqa: F401
                                widgets_die_in_the_gui_thread, window)   # the window tests' fixtures: no question left hanging at the end


def _finish(qtbot, job, timeout=120000):
    qtbot.waitUntil(lambda: job.state in ("done", "failed", "cancelled"), timeout=timeout)
    assert job.state == "done", job.error
    return job.result


def _quick_search(panel, kinds, budget_s, folder):
    """Start the Optimize tab's search on `kinds` only, short and untuned, shipping into `folder`."""
    from PySide6.QtCore import Qt
    for index in range(panel.kinds.count()):
        item = panel.kinds.item(index)
        if item.data(Qt.ItemDataRole.UserRole) not in kinds:
            item.setCheckState(Qt.CheckState.Unchecked)
    panel.budget.setValue(budget_s)
    panel.screen_seconds.setValue(0.3)
    panel.tune.setChecked(False)
    panel.folder.setText(str(folder))
    panel.start()


def test_the_chosen_target_runs_measuring_jobs_only(qtbot, window, loop_target, tmp_path):
    model = models.save(models.mlp(), tmp_path / "mlp.onnx")
    menu = window.target_menu
    menu.fill()
    action = next(a for a in menu.menu.actions() if a.text() == loop_target)
    action.trigger()
    assert window.jobs.target == loop_target and loop_target in menu.label.text()
    bench = _finish(qtbot, window.jobs.start("bench", BENCH, BenchParams(path=str(model), run=RunSettings(iterations=20))))
    assert bench["target"]["name"] == loop_target
    inspected = _finish(qtbot, window.jobs.start("inspect", INSPECT, ModelPath(path=str(model))))
    assert "target" not in inspected                   # reading a model stays on this machine
    next(a for a in menu.menu.actions() if a.text() == "This machine").trigger()
    assert window.jobs.target is None and "this machine" in menu.label.text()


def test_adding_testing_and_removing_in_the_dialog(qtbot, window, sshd, loop_target, monkeypatch):
    from app.gui.shell.targets_dialog import AddTargetDialog
    dialog = window.target_menu.manage()
    qtbot.addWidget(dialog)
    form = AddTargetDialog(dialog)
    form.name.setText("box")
    form.address.setText(f"{sshd.user}@127.0.0.1")
    form.port.setValue(sshd.port)
    form.identity.setText(str(sshd.client_key))
    form.command.setText(sshd.command())
    monkeypatch.setattr(form, "exec", lambda: QDialog.DialogCode.Accepted)
    asked = []
    monkeypatch.setattr(QMessageBox, "question", lambda *args: asked.append(args[2]) or QMessageBox.StandardButton.Yes)
    dialog.add(dialog=form)
    qtbot.waitUntil(lambda: "box" in load_targets(), timeout=30000)
    assert sshd.fingerprint() in asked[0]
    row = list(dialog.targets).index("box")
    dialog.table.selectRow(row)
    dialog.test()
    qtbot.waitUntil(lambda: bool(dialog.providers.visible_rows()), timeout=120000)
    cells = [row[0] for row in dialog.providers.visible_rows()]
    assert "CPUExecutionProvider" in cells and "ORTune" in dialog.status.text()
    window.target_menu.choose("box")
    dialog.table.selectRow(list(dialog.targets).index("box"))
    dialog.remove()
    assert "box" not in load_targets() and window.jobs.target is None


def test_a_refused_host_key_adds_nothing(qtbot, window, sshd, monkeypatch):
    from app.gui.shell.targets_dialog import AddTargetDialog, TargetsDialog
    dialog = TargetsDialog(window.jobs, window)
    qtbot.addWidget(dialog)
    form = AddTargetDialog(dialog)
    form.name.setText("declined")
    form.address.setText(f"{sshd.user}@127.0.0.1:{sshd.port}")
    monkeypatch.setattr(form, "exec", lambda: QDialog.DialogCode.Accepted)
    monkeypatch.setattr(QMessageBox, "question", lambda *args: QMessageBox.StandardButton.No)
    dialog.add(dialog=form)
    qtbot.waitUntil(lambda: "not confirmed" in dialog.status.text(), timeout=30000)
    assert "declined" not in load_targets()


@pytest.mark.parametrize("address", ["-oProxyCommand=x", "user@"])
def test_a_bad_address_is_one_line_in_the_dialog(qtbot, window, monkeypatch, address):
    from app.gui.shell.targets_dialog import AddTargetDialog, TargetsDialog
    dialog = TargetsDialog(window.jobs, window)
    qtbot.addWidget(dialog)
    form = AddTargetDialog(dialog)
    form.name.setText("bad")
    form.address.setText(address)
    monkeypatch.setattr(form, "exec", lambda: QDialog.DialogCode.Accepted)
    dialog.add(dialog=form)
    assert "not a host name" in dialog.status.text()


def test_a_conversion_on_the_chosen_target_lands_here(qtbot, window, loop_target, tmp_path):
    from app.core.convert.jobs import CONVERT, ConvertParams
    model = models.save(models.mlp(), tmp_path / "mlp.onnx")
    out = tmp_path / "mlp.fp16.onnx"
    window.target_menu.choose(loop_target)
    report = _finish(qtbot, window.jobs.start("convert", CONVERT, ConvertParams(kind="fp16", input=str(model),
                                                                              output=str(out), speed_s=0)))
    window.target_menu.choose(None)
    assert report["target"]["name"] == loop_target and report["output"] == str(out) and out.is_file()


def test_the_optimize_tab_searches_on_the_chosen_target(qtbot, window, loop_target, tmp_path):
    from app.core.session.config import SessionConfig
    path = models.save(models.mlp(width=16, depth=1), tmp_path / "searched.onnx")
    with qtbot.waitSignal(window.model_opened, timeout=60000):
        window.open_model(path)
    window.session.update(SessionConfig(intra_op_num_threads=1))
    window.target_menu.choose(loop_target)
    panel = window.panel("Optimize")
    window.tabs.setCurrentWidget(panel)
    panel.ensure_built()
    _quick_search(panel, ("optimize",), 40, tmp_path / "ship")
    qtbot.waitUntil(lambda: panel.job is None, timeout=180000)
    assert window.last_error is None and panel.result["target"]["name"] == loop_target
    assert f"The target {loop_target}" in panel.answer.text()
    assert (tmp_path / "ship" / "model.onnx").is_file() and (tmp_path / "ship" / "candidates" / "optimize.onnx").is_file()
    window.target_menu.choose(None)


def test_a_ray_cluster_chosen_in_the_menu_takes_the_optimize_search_and_bench_stays_here(
        qtbot, window, ray_cluster, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QInputDialog

    from app.core.session.config import SessionConfig
    from tests.gui.steps import open_and_wait, tab
    model = models.save(models.mlp(width=20, depth=1), tmp_path / "spread.onnx")   # a width of its own
    menu = window.target_menu
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: (f" {ray_cluster.address} ", True))
    menu.fill()
    next(a for a in menu.menu.actions() if a.text() == "Ray cluster…").trigger()
    assert window.jobs.cluster == ray_cluster.address and window.jobs.target is None
    assert f"Ray cluster {ray_cluster.address}" in menu.label.text()
    menu.fill()
    assert [a.text() for a in menu.menu.actions() if a.isChecked()] == ["Ray cluster…"]
    open_and_wait(qtbot, window, model)
    window.session.update(SessionConfig(intra_op_num_threads=1))
    panel = tab(window, "Optimize")
    _quick_search(panel, ("optimize", "ort"), 90, tmp_path / "ship")
    qtbot.waitUntil(lambda: panel.job is None, timeout=240000)
    assert window.last_error is None and panel.result is not None
    assert panel.result["target"]["cluster"] and panel.result["target"]["address"] == ray_cluster.address
    rows = {r["kind"]: r for r in panel.result["candidates"]}
    assert {rows[kind]["measured_on"]["node"] for kind in ("optimize", "ort")} \
        == {w["node"] for w in panel.result["target"]["workers"]}, "the two candidates went to the two workers"
    assert "Ray workers of the cluster" in panel.answer.text() and (tmp_path / "ship" / "preset.json").is_file()
    bench = _finish(qtbot, window.jobs.start("bench", BENCH, BenchParams(path=str(model), run=RunSettings(iterations=20))))
    assert "cluster" not in bench and not bench.get("target"), "a job that does not spread runs on this machine"
    # cancelling the dialog keeps the cluster; choosing this machine ends it
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("", False))
    menu.ask_cluster()
    assert window.jobs.cluster == ray_cluster.address
    next(a for a in menu.menu.actions() if a.text() == "This machine").trigger()
    assert window.jobs.cluster is None and "this machine" in menu.label.text()
