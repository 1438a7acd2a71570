"""The line under a result that says where it was measured, for a target and a Ray cluster
(a search spread over a cluster and cancelled early has no workers and no version yet)."""

from app.cli.printing import _target_line


def test_a_cluster_result_names_the_cluster_and_its_workers():
    line = _target_line({"target": {"cluster": True, "name": "Ray cluster 10.0.0.2:6379", "address": "10.0.0.2:6379",
                                    "note": "each ratio on one worker", "workers": [{"node": "a"}, {"node": "b"}]}})
    assert line == "spread over the Ray cluster at 10.0.0.2:6379 (2 workers)\n"
    assert _target_line({"target": {"cluster": True, "address": "h:1", "name": "Ray cluster h:1"}}) == \
        "spread over the Ray cluster at h:1\n", "cancelled before any worker answered"


def test_a_target_result_names_the_target_with_or_without_its_version():
    target = {"name": "gpu", "address": "me@gpu", "ort_version": "1.31.0", "machine": {}}
    assert _target_line({"target": target}).startswith("measured on target gpu (me@gpu, ONNX Runtime 1.31.0): ")
    assert _target_line({"target": dict(target, ort_version=None)}).startswith("measured on target gpu (me@gpu): ")
    assert _target_line({"target": None}) == "" and _target_line([1]) == ""
