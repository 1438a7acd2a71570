"""Profile time on the right node: ORT's names for the nodes it fused and rewrote traced
back to the model's own nodes, with real profiles of a Conv → BatchNormalization → Relu model."""

from __future__ import annotations

import pytest

from app.core.graph import overlay
from app.core.graph.structure import read_structure
from app.core.profile.jobs import PROFILE
from app.core.runner.process import run_job
from app.core.session.config import SessionConfig
from tests import models

# ids in conv_bn_relu: conv0 0, bn0 1, relu0 2, conv1 3, bn1 4, Relu_5 5, same (Identity) 6, gap 7


def _profile(tmp_path, level: str) -> dict:
    path = models.save(models.conv_bn_relu(), tmp_path / "cbr.onnx")
    session = SessionConfig(graph_optimization_level=level).to_dict()
    return run_job(PROFILE, {"model": str(path), "session": session, "runs": 3,
                             "out": str(tmp_path / f"{level}.json")})


@pytest.mark.parametrize("level", ["extended", "all"])
def test_a_fused_conv_times_the_conv_and_its_batch_norm_and_relu_say_where_their_time_went(tmp_path, level):
    profile = _profile(tmp_path, level)
    nodes = read_structure(models.conv_bn_relu())["nodes"]
    found = overlay.profile_times(nodes, profile)
    ran = {row["name"]: row["op_type"] for row in profile["by_node"]}
    assert "bn0" not in ran and "relu0" not in ran, f"ORT ran {ran}: the test model no longer fuses"
    assert {"0", "3", "7"} <= set(found["values"]), "each Conv and the pool carry their own time"
    assert not {"1", "2", "4", "5"} & set(found["values"]), "the fused nodes carry none"
    assert found["absorbed"] == {"1": "0", "2": "0", "4": "3", "5": "3", "6": ""}
    per_run = {row["name"]: row["per_run_us"] for row in profile["by_node"]}
    conv_names = [name for name, op in ran.items() if op in ("Conv", "FusedConv")]
    assert sum(found["values"][i] for i in ("0", "3")) == pytest.approx(sum(per_run[n] for n in conv_names))


def test_an_unoptimised_session_times_every_node_as_itself(tmp_path):
    profile = _profile(tmp_path, "disable")
    found = overlay.profile_times(read_structure(models.conv_bn_relu())["nodes"], profile)
    assert set(found["values"]) == {str(i) for i in range(8)} and found["absorbed"] == {}
    assert found["unmatched"] == 0


def test_a_rewritten_name_never_claims_a_node_that_ran_under_its_own():
    nodes = read_structure(models.conv_bn_relu())["nodes"]
    rows = [{"name": "conv0", "op_type": "Conv"}, {"name": "r0_nchwc", "op_type": "Conv"},
            {"name": "ReorderOutput_token_4", "op_type": "ReorderOutput"}]
    from app.core.graph.ort_names import NodeNames

    assert NodeNames(nodes).match(rows) == ["0", "2", None]    # conv0 is taken: r0's writer (relu0) stays
