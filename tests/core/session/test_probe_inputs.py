"""The inputs probe: one run of the model on its planned inputs, and what it chose."""

from app.core.jobs.protocol import JobContext
from app.core.session.config import SessionConfig
from app.core.session.input_spec import FeedSpec
from app.core.session.jobs import PROBE_INPUTS
from tests import models


def test_a_model_that_runs_on_its_plan_says_so(tmp_path):
    path = models.save(models.transformer_block(), tmp_path / "block.onnx")
    result = PROBE_INPUTS({"path": str(path), "session": SessionConfig().to_dict()}, JobContext())
    assert result["worked"] is True
    assert result["dims"] == {"batch": 1, "sequence": 128}
    assert [row["shape"] for row in result["inputs"]] == [[1, 128, 32]]
    assert result["inputs"][0]["source"] == "default" and result["guessed"] == ["batch", "sequence"]
    assert result["tried"] == [{"dims": {"batch": 1, "sequence": 128}, "error": None}]


def test_a_plan_the_model_refuses_gives_the_reason(tmp_path):
    path = models.save(models.transformer_block(), tmp_path / "block.onnx")
    wrong = SessionConfig(inputs=FeedSpec(shapes={"x": [1, 4, 5]}))     # the model needs 32 features
    result = PROBE_INPUTS({"path": str(path), "session": wrong.to_dict()}, JobContext())
    assert result["worked"] is False
    error = result["tried"][-1]["error"]
    assert error and "\n" not in error
    assert result["inputs"][0]["source"] == "user"
