"""The Profile tab and its timeline, driven as a user would."""

from PySide6.QtCore import QPointF

from tests import models
from tests.gui.conftest import wait_for_model
from tests.gui.test_main_window import drop_files
from tests.traces import Node, handmade_nodes, write_trace


def load(qtbot, window, path):
    panel = window.panel("Profile")
    count = len(panel.profiles)
    drop_files(window, [path])
    qtbot.waitUntil(lambda: len(panel.profiles) > count, timeout=60000)
    return panel


def test_dropping_a_trace_fills_the_tables_and_charts(qtbot, window, tmp_path):
    trace = write_trace(tmp_path / "hand.json", handmade_nodes(), runs=3)
    panel = load(qtbot, window, trace)
    assert window.tabs.currentWidget() is panel
    assert panel.operators.table.rows[0][:3] == ["Conv", 1.12, 6]
    assert panel.operators.table.headers[4] == "% of node time"
    assert panel.operators.time_chart.labels == ["Conv", "Gemm", "Relu"]
    assert panel.operators.count_chart.values == [6, 3, 3]
    assert "every % is a share of this total" in panel.heading.text()
    assert panel.providers.table.rows[1][0] == "CUDAExecutionProvider"
    assert "3 node(s) ran on the CPU" in panel.providers.note.text()
    assert panel.runs_view.chart.values == [0.858, 0.188, 0.208]


def test_averages_follow_the_first_run_switch(qtbot, window, tmp_path):
    panel = load(qtbot, window, write_trace(tmp_path / "hand.json", handmade_nodes(), runs=3))
    assert panel.operators.table.rows[0][3] == 80.0
    panel.include_first.setChecked(True)
    assert round(panel.operators.table.rows[0][3], 2) == round(1120 / 6, 2)


def test_node_search_and_top_n(qtbot, window, tmp_path):
    panel = load(qtbot, window, write_trace(tmp_path / "hand.json", handmade_nodes(), runs=3))
    assert [row[1] for row in panel.nodes.table.rows] == ["conv1", "conv2", "fc", "relu1"]
    assert panel.nodes.table.rows[0][8] == "float[1, 3, 32, 32]  float[8, 3, 3, 3]"
    panel.nodes.top.setValue(2)
    assert [row[1] for row in panel.nodes.table.rows] == ["conv1", "conv2"]
    panel.nodes.search.setText("RELU")
    assert [row[1] for row in panel.nodes.table.rows] == ["relu1"]


def test_timeline_shows_a_typical_run_and_names_the_bar_under_the_mouse(qtbot, window, tmp_path):
    nodes = [Node("a", "MatMul", [500, 100, 120, 110]), Node("b", "Add", [50, 10, 10, 10], tid=200)]
    panel = load(qtbot, window, write_trace(tmp_path / "t.json", nodes, runs=4))
    panel.views.setCurrentWidget(panel.timeline)
    tab = panel.timeline
    assert tab.run.value() == 4                 # the steady run closest to the median
    view = tab.view
    assert len(view.items) == 2 and len(view.lanes) == 2       # one item per thread
    texts = []
    view.hovered.connect(texts.append)
    box = view.plot.getViewBox()
    lane = view.lanes[0]
    view.plot.scene().sigMouseMoved.emit(box.mapViewToScene(QPointF((lane["start"][0] + lane["end"][0]) / 2, 0)))
    assert texts[-1].startswith("a  ·  MatMul  ·  110 µs")
    between = lane["end"][0] + 0.5 * (view.lanes[1]["start"][0] - lane["end"][0])
    view.plot.scene().sigMouseMoved.emit(box.mapViewToScene(QPointF(between, 0)))
    assert texts[-1] == ""
    tab.run.setValue(1)
    assert view.lanes[0]["end"][0] - view.lanes[0]["start"][0] == 0.5


def test_profile_the_current_model_and_compare_with_a_trace(qtbot, window, tmp_path):
    path = models.save(models.mlp(), tmp_path / "mlp.onnx")
    window.open_model(path)
    wait_for_model(qtbot, window)
    panel = window.panel("Profile")
    window.tabs.setCurrentWidget(panel)
    panel.runs.setValue(3)
    panel.control.start_button.click()
    qtbot.waitUntil(lambda: bool(panel.profiles or window.last_error), timeout=120000)
    assert window.last_error is None
    assert panel.profiles[-1][0].startswith("mlp.onnx")
    info = panel.current()
    assert info["runs"] == 3 and "mlp.onnx" in panel.heading.text()
    assert panel.caption.current and "mlp.onnx</b> · x 1×64 (generated) · " in panel.caption.text()
    assert "sizes chosen by default: check them" in panel.caption.text(), "batch 1 is a default"
    window.open_model(models.save(models.tiny_add(), tmp_path / "other.onnx"))
    wait_for_model(qtbot, window)
    assert panel.caption.state == "previous" and not panel.views.isEnabled()
    assert not panel.heading.isEnabled(), "the other model's total node time is greyed too"
    other = write_trace(tmp_path / "fused.json", [Node("fused", "FusedMatMul", [5])], runs=3)
    load(qtbot, window, other)
    rows = {row[0]: row for row in panel.compare.table.rows}
    note = panel.compare.table.headers.index("Note")
    assert rows["FusedMatMul"][note] == "only after (added, e.g. fused)"
    assert all(rows[r["op_type"]][note] == "only before (removed or fused)" for r in info["by_op_type"])
    assert "Node time per run" in panel.compare.summary.text()
    assert "does not record the model's inputs" in panel.caption.text()
    assert len(panel.compare.chart.labels) == len(rows)


def test_a_truncated_trace_warns_a_broken_one_is_an_error(qtbot, window, tmp_path):
    text = write_trace(tmp_path / "t.json", handmade_nodes(), runs=3).read_text()
    cut = tmp_path / "cut.json"
    cut.write_text(text[: len(text) // 2])
    panel = load(qtbot, window, cut)
    assert panel.warning.isVisibleTo(panel) and "ends early" in panel.warning.text()
    bad = tmp_path / "bad.json"
    bad.write_text("{ nope")
    with qtbot.waitSignal(window.error_shown, timeout=60000) as shown:
        drop_files(window, [bad])
    assert "bad.json" in shown.args[1] and "not valid JSON" in shown.args[1]
    assert len(panel.profiles) == 1


def test_export_copies_the_trace_as_ort_wrote_it(qtbot, window, tmp_path):
    trace = write_trace(tmp_path / "t.json", handmade_nodes(), runs=2)
    panel = load(qtbot, window, trace)
    target = tmp_path / "for-perfetto.json"
    job = panel.export_trace(str(target))
    qtbot.waitUntil(lambda: job.ended_at is not None, timeout=30000)   # its own end, not any job's
    assert job.state == "done", job.error
    assert target.read_bytes() == trace.read_bytes()


def test_a_trace_without_node_events_shows_empty_views(qtbot, window, tmp_path):
    trace = write_trace(tmp_path / "idle.json", [], runs=2)
    panel = load(qtbot, window, trace)
    assert "holds no node events" in panel.warning.text()
    assert panel.operators.table.rows == [] and panel.timeline.view.lanes == []
    assert window.last_error is None


def test_comparing_two_recorded_profiles_shows_intervals_and_times_the_models(qtbot, window, tmp_path):
    from app.core.jobs.protocol import JobContext
    from app.core.profile.jobs import PROFILE

    first = models.save(models.mlp(), tmp_path / "mlp.onnx")
    deep = models.save(models.mlp(depth=24), tmp_path / "deep.onnx")
    for name, path in (("b", first), ("a", deep)):   # recorded by ORTune, then opened as traces
        PROFILE({"model": str(path), "out": str(tmp_path / f"{name}.json"), "runs": 30}, JobContext())
    load(qtbot, window, tmp_path / "b.json")
    panel = load(qtbot, window, tmp_path / "a.json")
    view = panel.compare
    headers = view.table.headers
    fused = next(row for row in view.table.rows if row[0] == "FusedGemm")
    # the window shows the interval and the verdict; how often profiles of 30 runs get the
    # verdict right on a loaded machine is the core tests' and the CLI's business
    assert fused[headers.index("95 % interval")].startswith("[")
    assert fused[headers.index("Verdict")] in ("slower", "no difference", "could not tell")
    assert "two separate profiles" in view.summary.text() and view.measure_button.isEnabled()
    jobs = len(window.context.jobs.jobs)
    view.measure_button.click()
    job = window.context.jobs.jobs[jobs]
    from tests.gui.test_benchmark_panels import wait_for_job
    wait_for_job(qtbot, job)
    qtbot.waitUntil(lambda: "Timed in alternation" in view.summary.text(), timeout=30000)
    assert view.result["measured"]["verdict"] == "slower" and isinstance(view.result["disagrees"], bool)
    assert ("the profile disagrees" if view.result["disagrees"] else "the profile agrees") in view.summary.text()


def test_traces_of_unknown_models_offer_no_timing(qtbot, window, tmp_path):
    load(qtbot, window, write_trace(tmp_path / "one.json", handmade_nodes(), runs=3))
    panel = load(qtbot, window, write_trace(tmp_path / "two.json", handmade_nodes(), runs=3))
    assert panel.compare.result["models"] == {"before": None, "after": None}
    assert not panel.compare.measure_button.isEnabled()
