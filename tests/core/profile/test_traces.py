"""Reading and adding up traces: a hand-made one with known numbers, the same in other
layouts, broken ones, and the comparison of two (one with fused nodes)."""

import json

import pytest

from app.core.jobs.errors import UserError
from app.core.jobs.protocol import JobContext
from app.core.profile.trace_reader import read_trace
from app.core.profile.jobs import COPY_TRACE, READ_TRACE
from app.core.profile.diff import diff_profiles
from app.core.profile.traces import summarize
from tests.traces import Node, handmade_nodes, write_trace


@pytest.fixture
def handmade(tmp_path):
    return write_trace(tmp_path / "handmade.json", handmade_nodes(), runs=3)


def ops(profile):
    return {row["op_type"]: row for row in profile["by_op_type"]}


def test_handmade_trace_adds_up_to_the_known_numbers(handmade):
    profile = summarize(read_trace(handmade))
    assert profile["runs"] == 3 and profile["node_events"] == 12 and profile["events"] == 2 + 12 + 6
    assert profile["total_node_us"] == 700 + 420 + 50 + 60
    conv = ops(profile)["Conv"]
    assert (conv["total_us"], conv["count"], conv["nodes"]) == (1120, 6, 2)
    assert conv["avg_us"] == pytest.approx((100 + 100 + 50 + 70) / 4)       # warm-up run left out
    assert conv["avg_all_us"] == pytest.approx(1120 / 6)
    assert conv["percent"] == pytest.approx(100 * 1120 / 1230)
    assert conv["per_run_us"] == pytest.approx(160) and conv["per_run_count"] == 2
    assert ops(profile)["Gemm"]["provider"] == "CUDAExecutionProvider"
    assert [row["op_type"] for row in profile["by_op_type"]] == ["Conv", "Gemm", "Relu"]
    assert sum(row["percent"] for row in profile["by_op_type"]) == pytest.approx(100)
    assert profile["by_provider"] == {"CPUExecutionProvider": 1170, "CUDAExecutionProvider": 60}
    assert profile["warmup_excluded"] is True and profile["percent_of"] == "total node time"


def test_nodes_carry_shapes_and_rank_by_total(handmade):
    profile = summarize(read_trace(handmade))
    first = profile["by_node"][0]
    assert (first["name"], first["op_type"], first["total_us"], first["count"]) == ("conv1", "Conv", 700, 3)
    assert first["input_shapes"] == ["float[1, 3, 32, 32]", "float[8, 3, 3, 3]"]
    assert first["output_shapes"] == ["float[1, 8, 32, 32]"]
    assert [n["name"] for n in profile["by_node"]] == ["conv1", "conv2", "fc", "relu1"]


def test_phases_and_runs(handmade):
    phases = summarize(read_trace(handmade))["phases"]
    assert phases["model_loading_us"] == 300 and phases["session_initialization_us"] == 5000
    # each run: its node durations plus a 2 µs gap after each of the 4 nodes
    assert phases["run_us"] == [858, 188, 208]
    assert phases["first_run_us"] == 858
    assert phases["steady_run_us"]["median"] == pytest.approx(198)
    assert phases["slow_runs"] == []


def test_a_slow_run_stands_out(tmp_path):
    path = write_trace(tmp_path / "t.json", [Node("a", "Add", [900, 100, 100, 400, 100])], runs=5)
    assert summarize(read_trace(path))["phases"]["slow_runs"] == [3]


def test_including_the_first_run_changes_averages_not_totals(handmade):
    steady = ops(summarize(read_trace(handmade)))["Conv"]
    everything = ops(summarize(read_trace(handmade), include_first_run=True))["Conv"]
    assert everything["total_us"] == steady["total_us"]
    assert everything["avg_us"] == pytest.approx(1120 / 6) != steady["avg_us"]


def test_other_layouts_read_the_same(handmade, tmp_path):
    expected = summarize(read_trace(handmade))
    events = json.loads(handmade.read_text())
    pretty = tmp_path / "pretty.json"
    pretty.write_text(json.dumps(events, indent=2))
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text(json.dumps({"traceEvents": events}))
    for path in (pretty, wrapped):
        profile = summarize(read_trace(path))
        assert profile["by_op_type"] == expected["by_op_type"]
        assert profile["phases"] == expected["phases"]


def test_names_the_fast_path_cannot_take_are_still_read(tmp_path):
    nodes = [Node('odd "quoted" name', "Mul", [40]), Node("plain", "Mul", [60])]
    profile = summarize(read_trace(write_trace(tmp_path / "t.json", nodes, runs=2)))
    assert ops(profile)["Mul"]["total_us"] == 200 and ops(profile)["Mul"]["count"] == 4
    assert {n["name"] for n in profile["by_node"]} == {'odd "quoted" name', "plain"}


def test_truncated_trace_keeps_the_complete_events_and_says_so(handmade, tmp_path):
    text = handmade.read_text()
    cut = tmp_path / "cut.json"
    cut.write_text(text[: text.index('"name" :"conv2_kernel_time"', text.index("model_run")) + 5])
    profile = summarize(read_trace(cut))
    assert profile["truncated"] is True
    assert "cut.json" in profile["warnings"][0] and "truncated" in profile["warnings"][0]
    assert profile["runs"] == 1                        # the second run never finished
    assert profile["node_events"] == 4 + 2             # run 1, then conv1 and relu1 of run 2
    assert ops(profile)["Conv"]["total_us"] == 500 + 300 + 100
    assert ops(profile)["Conv"]["per_run_us"] == 500 + 300           # the finished run only


def test_truncated_document_in_another_layout_is_salvaged(handmade, tmp_path):
    pretty = json.dumps(json.loads(handmade.read_text()), indent=1)
    cut = tmp_path / "cut.json"
    cut.write_text(pretty[: len(pretty) // 2])
    profile = summarize(read_trace(cut))
    assert profile["truncated"] and 0 < profile["events"] < 20


def test_broken_numbers_are_skipped_and_counted(handmade):
    lines = handmade.read_text().splitlines()
    huge = lines[3].replace('"dur" :500', '"dur" :' + "9" * 30)
    nan = lines[4].replace('"dur" :30', '"dur" :NaN')
    negative = {"cat": "Node", "name": "x_kernel_time", "ts": 1, "dur": -5, "args": {"op_name": "Add"}}
    handmade.write_text("\n".join(lines[:3] + [huge, nan, json.dumps(negative) + ","] + lines[5:]) + "\n")
    profile = summarize(read_trace(handmade))
    assert profile["warnings"] == ["handmade.json has 3 unreadable part(s), skipped: read the other 18 events"]
    assert profile["total_node_us"] == 1230 - 500 - 30


@pytest.mark.parametrize("content, words", [
    (b"", "empty"),
    (b"\x89PNG\r\n\x1a\n", "not a profiling trace"),
    (b'{"schema": "ortune.session/1"}', "not a profiling trace"),
    (b"[\n{\"cat\" : \"Node\",\"pid\" :1,\"tid\" :1,\"du", "no profiling events"),
    (b"[1, 2, 3]", "no profiling events"),
])
def test_unusable_files_give_one_clear_message(tmp_path, content, words):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(UserError) as caught:
        read_trace(path)
    assert "bad.json" in caught.value.message and words in caught.value.message


def test_missing_file(tmp_path):
    with pytest.raises(UserError, match="no such trace file"):
        read_trace(tmp_path / "nowhere.json")


def test_diff_keeps_op_types_of_one_side_and_reports_speedup(tmp_path):
    before = write_trace(tmp_path / "before.json", [Node("mm", "MatMul", [90, 60]), Node("add", "Add", [30, 20]),
                                                    Node("relu", "Relu", [30, 20])], runs=2)
    after = write_trace(tmp_path / "after.json", [Node("mm_fused", "FusedMatMul", [100, 50])], runs=2)
    diff = diff_profiles(summarize(read_trace(before)), summarize(read_trace(after)))
    rows = {row["op_type"]: row for row in diff["by_op_type"]}
    assert set(rows) == {"MatMul", "Add", "Relu", "FusedMatMul"}
    assert rows["FusedMatMul"]["only_in"] == "after" and rows["FusedMatMul"]["before_us"] == 0
    assert rows["Add"]["only_in"] == "before" and rows["Add"]["delta_us"] == -20
    assert rows["MatMul"]["delta_count"] == -1
    assert diff["node_us_per_run"] == {"before": 100, "after": 50}
    assert diff["speedup"] == pytest.approx(2.0)
    assert diff["by_op_type"][0]["op_type"] == "MatMul"          # the biggest change first


def test_gpu_kernel_events_are_listed_apart(handmade):
    lines = handmade.read_text().splitlines()
    kernel = ('{"cat" : "Kernel","pid" :7,"tid" :9,"dur" :12,"ts" :6000,"ph" : "X","name" :"gemm_kernel",'
              '"args" : {"op_name" : "Gemm","parent_name" : "fc","stream" : 7}}')
    handmade.write_text("\n".join(lines[:1] + [kernel + ","] * 3 + lines[1:]) + "\n")
    profile = summarize(read_trace(handmade))
    assert profile["kernels"] == [{"name": "gemm_kernel", "op_type": "Gemm", "total_us": 36, "count": 3,
                                   "percent": 100.0}]
    assert profile["total_node_us"] == 1230


def test_jobs_report_progress_and_copy_traces_unchanged(handmade, tmp_path):
    events = []
    ctx = JobContext(lambda kind, payload: events.append((kind, payload)))
    result = READ_TRACE({"trace": str(handmade), "with_timeline": True}, ctx)
    assert any(kind == "progress" for kind, _ in events)
    timeline = result["timeline"]
    assert timeline["ts"].size == 12 and set(timeline["run"].tolist()) == {0, 1, 2}
    assert result["by_node"][timeline["node"][0]]["name"] == "conv1"
    target = tmp_path / "export" / "copy.json"
    target.parent.mkdir()
    COPY_TRACE({"source": str(handmade), "target": str(target)}, ctx)
    assert target.read_bytes() == handmade.read_bytes()
    assert [p.name for p in target.parent.iterdir()] == ["copy.json"]
