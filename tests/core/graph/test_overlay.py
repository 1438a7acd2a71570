"""Results that name nodes (or tensors) placed on the drawn nodes."""

from __future__ import annotations

from app.core.graph import overlay
from app.core.graph.structure import read_structure
from tests import models


def _nodes():
    return read_structure(models.cnn())["nodes"]


def test_profile_times_follow_the_names_ort_gives_rewritten_and_fused_nodes():
    profile = {"runs": 3, "by_node": [
        {"name": "conv1", "avg_us": 100, "count": 3},
        {"name": "c2_nchwc", "avg_us": 50, "count": 6},     # the layout transformer's conv2: named after c2
        {"name": "relu2/ReluFusion/", "avg_us": 20, "count": 3},  # a fusion named after the node it kept
        {"name": "ReorderOutput_token_7", "avg_us": 2, "count": 3},   # inserted by ORT: not in the model
    ]}
    found = overlay.profile_times(_nodes(), profile)
    assert found["values"] == {"0": 100.0, "2": 100.0, "3": 20.0}      # per call x calls per run
    assert found["unmatched"] == 1 and found["total"] == 4


def test_a_cpu_node_is_a_fallback_only_when_another_provider_came_first():
    placement = {"providers": ["CUDAExecutionProvider", "CPUExecutionProvider"],
                 "nodes": [{"name": "conv1", "provider": "CUDAExecutionProvider"},
                           {"name": "fc", "provider": "CPUExecutionProvider"}]}
    assert overlay.providers(_nodes(), placement)["values"] == {"0": "CUDAExecutionProvider",
                                                                "6": "CPUExecutionProvider"}
    assert overlay.fallbacks(placement) == {"CPUExecutionProvider"}
    assert overlay.fallbacks({"providers": ["CPUExecutionProvider"]}) == set()


def test_drift_marks_the_node_writing_each_tensor_and_diff_the_added_and_changed():
    drift = {"tensors": [{"name": "c1", "sqnr_db": 60.0, "passed": True},
                         {"name": "r2", "sqnr_db": 12.0, "passed": False},
                         {"name": "gone", "sqnr_db": 5.0, "passed": False}]}
    found = overlay.drift(_nodes(), drift)
    assert found["values"]["0"]["sqnr_db"] == 60.0 and found["values"]["3"]["passed"] is False
    assert found["unmatched"] == 1
    diff = {"added": [{"name": "fc"}], "changed": [{"name": "conv2"}], "removed": [{"name": "old"}]}
    assert overlay.diff_states(_nodes(), diff)["values"] == {"6": "added", "2": "changed"}


def test_achieved_flops_per_second_is_flops_over_time_per_run():
    profile = {"runs": 2, "by_node": [{"name": "conv1", "avg_us": 50, "count": 2}, {"name": "flatten", "avg_us": 5,
                                                                                   "count": 2}]}
    details = {"flops": {"0": 1_000_000, "5": 0}, "nodes": {}}
    assert overlay.achieved(_nodes(), profile, details)["values"] == {"0": 1_000_000 / 50e-6}


def test_achieved_flops_per_second_per_operator_type_sums_its_nodes():
    profile = {"runs": 1, "by_node": [{"name": "conv1", "avg_us": 50, "count": 1},
                                      {"name": "conv2", "avg_us": 150, "count": 1},
                                      {"name": "relu1", "avg_us": 10, "count": 1}]}
    details = {"flops": {"0": 1_000_000, "2": 3_000_000}, "nodes": {}}
    assert overlay.achieved_by_type(_nodes(), profile, details) == {"Conv": 4_000_000 / 200e-6}
