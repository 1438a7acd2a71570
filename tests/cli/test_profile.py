"""`ortune profile` and `ortune profile-diff` as a user runs them."""

import json

from tests import models
from tests.traces import Node, handmade_nodes, write_trace


def test_profile_of_a_trace_as_json(ortune, tmp_path):
    trace = write_trace(tmp_path / "t.json", handmade_nodes(), runs=3)
    done = ortune("profile", trace, "--json")
    assert done.code == 0, done.stderr
    info = done.json()
    for key in ("trace", "runs", "by_op_type", "by_node", "by_provider"):
        assert key in info
    assert info["runs"] == 3
    conv = info["by_op_type"][0]
    assert set(conv) >= {"op_type", "total_us", "count", "avg_us", "percent"}
    assert (conv["op_type"], conv["total_us"], conv["count"]) == ("Conv", 1120, 6)
    assert info["by_provider"] == {"CPUExecutionProvider": 1170, "CUDAExecutionProvider": 60}


def test_profile_of_a_trace_as_text(ortune, tmp_path):
    trace = write_trace(tmp_path / "t.json", handmade_nodes(), runs=3)
    done = ortune("profile", trace, "--top", "2")
    assert done.code == 0, done.stderr
    assert "share of total node time" in done.stdout and "first run left out" in done.stdout
    assert "Top 2 nodes" in done.stdout and "conv1" in done.stdout and "relu1" not in done.stdout


def test_profile_of_a_model_keeps_the_trace(ortune, tmp_path):
    model = models.save(models.mlp(), tmp_path / "mlp.onnx")
    out = tmp_path / "mlp-trace.json"
    done = ortune("profile", model, "--runs", "3", "--out", out, "--opt-level", "disable", "--json")
    assert done.code == 0, done.stderr
    info = done.json()
    assert info["trace"] == str(out) and info["runs"] == 3
    assert {r["op_type"]: r["count"] for r in info["by_op_type"]} == {"MatMul": 9, "Add": 9, "Relu": 6,
                                                                      "Identity": 3}
    events = [e for e in json.loads(out.read_text()) if e.get("cat") == "Node"]
    assert info["total_node_us"] == sum(e["dur"] for e in events)
    again = ortune("profile", model, "--runs", "1", "--out", out)
    assert again.code == 2 and "already exists" in again.stderr and "--force" in again.stderr


def test_a_truncated_trace_warns_and_still_reports(ortune, tmp_path):
    text = write_trace(tmp_path / "t.json", handmade_nodes(), runs=3).read_text()
    cut = tmp_path / "cut.json"
    cut.write_text(text[: len(text) * 2 // 3])
    done = ortune("profile", cut)
    assert done.code == 0, done.stderr
    assert "warning: cut.json ends early (truncated)" in done.stdout
    assert "Traceback" not in done.stderr


def test_a_malformed_trace_is_one_line_exit_2(ortune, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("this is not json")
    done = ortune("profile", bad)
    assert done.code == 2
    assert done.stderr.strip() == "ortune: bad.json is not a profiling trace: it does not start like a JSON document"
    as_json = ortune("profile", bad, "--json")
    assert as_json.json()["error"]["kind"] == "bad-trace"


def test_session_options_do_not_apply_to_a_trace(ortune, tmp_path):
    trace = write_trace(tmp_path / "t.json", handmade_nodes(), runs=1)
    done = ortune("profile", trace, "--threads", "2")
    assert done.code == 2 and "only apply when profiling a model" in done.stderr


def test_profile_diff(ortune, tmp_path):
    before = write_trace(tmp_path / "a.json", [Node("mm", "MatMul", [80]), Node("add", "Add", [40])], runs=2)
    after = write_trace(tmp_path / "b.json", [Node("fused", "FusedMatMul", [60])], runs=2)
    done = ortune("profile-diff", before, after, "--json")
    assert done.code == 0, done.stderr
    info = done.json()
    assert info["speedup"] == 2.0
    assert info["note"].startswith("these ratios come from two separate profiles")
    assert {r["op_type"]: r["only_in"] for r in info["by_op_type"]} == {"MatMul": "before", "Add": "before",
                                                                         "FusedMatMul": "after"}
    text = ortune("profile-diff", before, after)
    assert "(2.00x)" in text.stdout and "only after" in text.stdout
    assert "note: these ratios come from two separate profiles" in text.stdout


def test_profile_diff_with_intervals_and_an_alternating_timing(ortune, tmp_path):
    # wide layers: each run's time is the layers' work, not ONNX Runtime's per-run overhead, so the
    # eight times deeper model is slower beyond doubt even in traces a loaded machine recorded
    model = models.save(models.mlp(width=512), tmp_path / "mlp.onnx")
    bigger = models.save(models.mlp(width=512, depth=24), tmp_path / "deep.onnx")
    for name, path in (("b", model), ("a", bigger)):
        assert ortune("profile", path, "--runs", "30", "--out", tmp_path / f"{name}.json").code == 0
    done = ortune("profile-diff", tmp_path / "b.json", tmp_path / "a.json", "--measure", "--iterations", "100",
                  "--max-seconds", "5", "--json")
    assert done.code == 0, done.stderr
    info = done.json()
    total, measured = info["total"], info["measured"]
    assert total["ci"][0] <= total["ratio"] <= total["ci"][1] and total["verdict"] == "slower"
    assert measured["speedup_ci"][0] <= measured["speedup"] <= measured["speedup_ci"][1]
    assert measured["verdict"] == "slower" and isinstance(info["disagrees"], bool)
    assert all(row["ratio_ci"] for row in info["by_op_type"] if row["only_in"] is None)
    from app.cli.profile import render_diff     # what the command prints without --json
    shown = render_diff(info)
    assert "timed in alternation" in shown and "note:" not in shown    # a timing of its own
    low, high = measured["speedup_ci"]
    assert f"timed in alternation  {measured['speedup']:.2f}x [{low:.2f}, {high:.2f}] slower" in shown
    assert ("DISAGREES" if info["disagrees"] else "agrees with the alternating timing") in shown
    shown = render_diff(info | {"disagrees": not info["disagrees"]})
    assert ("agrees with the alternating timing" if info["disagrees"] else "DISAGREES") in shown


def test_profile_diff_cannot_measure_traces_of_unknown_models(ortune, tmp_path):
    before = write_trace(tmp_path / "a.json", [Node("mm", "MatMul", [80])], runs=2)
    after = write_trace(tmp_path / "b.json", [Node("mm", "MatMul", [60])], runs=2)
    done = ortune("profile-diff", before, after, "--measure")
    assert done.code == 2 and "--before-model and --after-model" in done.stderr
