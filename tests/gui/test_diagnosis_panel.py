from tests import models
from tests.gui.steps import open_and_wait, tab


def faster_when_fixed(path, config, overrides, ctx, start, share, seconds):
    """The alternating measurement of fixed dimensions, as it comes out when fixing them helps."""
    return {"speedup": 1.25, "speedup_ci": [1.2, 1.3], "verdict": "faster", "rounds": 10,
            "latency_symbolic_ms": 1.25, "latency_fixed_ms": 1.0, "alternation": {}}


def test_diagnose_panel_lists_findings_with_details(qtbot, window, tmp_path, monkeypatch):
    monkeypatch.setattr("app.core.diagnose.diagnose.measure_overrides", faster_when_fixed)
    path = models.save(models.shape_dependent(), tmp_path / "shape.onnx")
    open_and_wait(qtbot, window, path)
    panel = tab(window, "Diagnose")
    assert panel.control.start_button.isEnabled()
    panel.start()
    qtbot.waitUntil(lambda: panel.job is None, timeout=120000)
    assert window.last_error is None
    found = {f["id"] for f in panel.result["findings"]}
    assert "symbolic-dims" in found
    assert len(panel.table.rows) == len(panel.result["findings"])
    row = next(i for i, f in enumerate(panel.result["findings"]) if f["id"] == "symbolic-dims")
    panel.table.selectRow(row)
    assert "Evidence" in panel.details.toHtml()
    assert "×1.25 as fast (95 % interval 1.20–1.30" in panel.details.toHtml()
    assert panel.apply_button.isEnabled()
    panel.apply_selected()
    assert window.session.config().free_dimension_overrides == {"batch": 1}
    panel.start()                                         # once set, it is neither measured nor suggested again
    qtbot.waitUntil(lambda: panel.job is None, timeout=120000)
    assert "symbolic-dims" not in {f["id"] for f in panel.result["findings"]}
    assert "symbolic" not in panel.result["evidence"]["probes"]
    panel.table.selectRow(0)
    assert panel.caption.current and "shape.onnx</b> · x 1×16 (generated) · " in panel.caption.text()
    open_and_wait(qtbot, window, models.save(models.tiny_add(), tmp_path / "other.onnx"))
    assert panel.caption.state == "previous" and "previous model: <b>shape.onnx" in panel.caption.text()
    assert not panel.table.isEnabled(), "another model's findings are greyed"
    assert "Latency p50" in panel.figures.text() and not panel.figures.isEnabled(), "and so is its latency"


def test_diagnose_reads_the_profile_tabs_profile_of_the_same_session(qtbot, window, tmp_path):
    path = models.save(models.cnn(), tmp_path / "cnn.onnx")
    open_and_wait(qtbot, window, path)
    profile = tab(window, "Profile")
    profile.runs.setValue(3)
    profile.profile_model()
    qtbot.waitUntil(lambda: len(profile.profiles) == 1, timeout=120000)
    trace = profile.profiles[0][1]["trace"]
    panel = tab(window, "Diagnose")
    panel.start()
    qtbot.waitUntil(lambda: panel.job is None, timeout=120000)
    assert window.last_error is None
    assert panel.result["evidence"]["profile"]["trace"] == trace, "one profile for both tabs"
    assert panel.result["evidence"]["profile"]["read_from_trace"] is True
    assert "Operator shares from the Profile tab's profile" in panel.figures.text()
    shares = {row["op_type"]: f"{row['percent']:.1f}%" for row in profile.profiles[0][1]["by_op_type"]}
    for finding in (f for f in panel.result["findings"] if f["id"] == "hot-op-types"):
        assert shares[finding["title"].split()[0]] in finding["title"]


def test_diagnose_says_why_a_finding_has_nothing_to_apply_and_that_the_machine_was_busy(qtbot, window, tmp_path):
    from app.gui.shell.job_control import RunOf

    path = models.save(models.tiny_add(), tmp_path / "add.onnx")
    open_and_wait(qtbot, window, path)
    panel = tab(window, "Diagnose")
    finding = {"id": "busy-machine", "severity": "high", "title": "the machine was busy", "evidence": "e",
               "cost": "", "fix": "f", "setting": None, "nodes": []}
    stats = {"p50": 1.0, "p99": 2.0, "runs": 10}
    panel.show_result({"findings": [finding], "inputs": [],
                       "evidence": {"latency_ms": stats, "cpu": "a CPU",
                                    "load": {"busy": True, "other_cores": 1.7, "cores": 2}}},
                      RunOf(str(path), "add.onnx"))
    assert not panel.apply_button.isEnabled()
    assert panel.apply_reason.text().startswith("Nothing to apply: this finding's fix is not a session setting")
    assert "The machine was busy" in panel.figures.text() and "disturbed" in panel.figures.text()
