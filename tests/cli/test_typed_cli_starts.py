"""The command line starts a job on its entry's parameters dataclass, as the window does: a
dict (whose misspelt key would be found only when the job runs) is refused before it starts."""

import pytest

from app.cli.running import run_job_cli
from app.core.graph.jobs import CostParams
from tests.sample_jobs import PAYLOAD, SampleParams


@pytest.mark.parametrize("params", [{"kib": 1}, CostParams(path="m.onnx")], ids=["dict", "another-entry's"])
def test_a_start_on_other_parameters_is_refused(params):
    with pytest.raises(TypeError, match="payload takes SampleParams"):
        run_job_cli(PAYLOAD, params)


def test_the_entrys_own_parameters_run():
    assert run_job_cli(PAYLOAD, SampleParams(kib=1)) is not None
