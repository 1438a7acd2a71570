"""--keep-candidates: every candidate made is kept in DIR/candidates and named on its row; a
kept folder is replaced only with --force. (Without the flag nothing but the answer is written:
tests/core/optimize/test_optimize.py reads the folder of a search without it.)"""

import pytest

from app.core.jobs.errors import UserError
from app.core.jobs.protocol import JobContext
from app.core.optimize.jobs import OPTIMIZE
from app.core.session.config import SessionConfig
from tests import models


def _run(model, out, **given):
    params = {"model": str(model), "out_dir": str(out), "screen_seconds": 0.3, "tune": False,
              "kinds": ["optimize", "fp16"], "budget_seconds": 20,
              "session": SessionConfig(intra_op_num_threads=1).to_dict(), **given}
    return OPTIMIZE(params, JobContext())


def test_kept_candidates_are_written_and_named_on_their_rows(tmp_path):
    model = models.save(models.mlp(width=16, depth=1), tmp_path / "mlp.onnx")
    result = _run(model, tmp_path / "ship", keep_candidates=True)
    rows = {row["kind"]: row for row in result["candidates"]}
    assert rows["optimize"]["model"] == str(tmp_path / "ship" / "candidates" / "optimize.onnx")
    assert "model" not in rows["fp16"]                      # skipped on the CPU: nothing made, nothing kept
    assert sorted(p.name for p in (tmp_path / "ship" / "candidates").iterdir()) == ["optimize.onnx"]
    (tmp_path / "other" / "candidates").mkdir(parents=True)
    (tmp_path / "other" / "candidates" / "optimize.onnx").write_bytes(b"kept from before")
    with pytest.raises(UserError, match="optimize.onnx: .*already exists; use --force"):
        _run(model, tmp_path / "other", keep_candidates=True)
    assert (tmp_path / "other" / "candidates" / "optimize.onnx").read_bytes() == b"kept from before"
    again = _run(model, tmp_path / "ship", keep_candidates=True, force=True)
    assert {r["kind"]: r for r in again["candidates"]}["optimize"]["model"].endswith("optimize.onnx")

