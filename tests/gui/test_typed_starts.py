"""The window starts a job on its entry's parameters dataclass: a dict, or another entry's
parameters, is refused before any thread starts, and a misspelt field fails where the
parameters are built."""

import pytest

from app.core.bench.jobs import BENCH, BenchParams
from app.core.graph.jobs import CostParams
from app.gui.shell.jobs import JobManager, typed_params
from tests.sample_jobs import PAYLOAD, SampleParams


@pytest.mark.parametrize("params", [{"kib": 1}, CostParams(path="m.onnx")], ids=["dict", "another-entry's"])
def test_a_start_on_other_parameters_is_refused(qtbot, params):
    manager = JobManager()
    with pytest.raises(TypeError, match="payload takes SampleParams"):
        manager.start("refused", PAYLOAD, params)
    assert manager.jobs == []


def test_no_parameters_are_the_entrys_defaults():
    assert typed_params(PAYLOAD, None) == SampleParams()


def test_a_misspelt_field_fails_where_the_parameters_are_built():
    with pytest.raises(TypeError, match="pth"):
        BenchParams(pth="m.onnx")
    assert typed_params(BENCH, BenchParams(path="m.onnx")).path == "m.onnx"
