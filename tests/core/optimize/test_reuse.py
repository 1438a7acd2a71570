"""Every candidate is kept in the history, and the same search again reuses it (app.core.optimize.reuse)."""

from app.core.jobs.protocol import JobContext
from app.core.optimize.jobs import OPTIMIZE
from app.core.session.config import SessionConfig
from app.core.store.history import History
from tests import models


def _run(model, out, threads=1, **given):
    params = {"model": str(model), "out_dir": str(out), "screen_seconds": 0.3, "tune": False, "kinds": ["optimize"],
              "budget_seconds": 60, "session": SessionConfig(intra_op_num_threads=threads).to_dict(), **given}
    return {r["kind"]: r for r in OPTIMIZE(params, JobContext())["candidates"]}


def test_the_same_search_reuses_its_candidates_and_a_change_measures_anew(tmp_path):
    # a width no other test uses: the history of the test run is shared
    model = models.save(models.mlp(width=24, depth=3), tmp_path / "reused.onnx")
    first = _run(model, tmp_path / "a")["optimize"]
    assert first["status"] == "passed" and "reused" not in first and first["history_id"]
    stored = History().get(first["history_id"])
    assert stored["kind"] == "convert" and stored["variant"].startswith("optimize: optimize")
    assert stored["report"]["optimize_candidate"]["row"]["speedup"] == first["speedup"]

    again = _run(model, tmp_path / "b")["optimize"]
    assert again["reused"]["history_id"] == first["history_id"] and "reused from" in again["reason"]
    assert again["speedup"] == first["speedup"] and again["speedup_ci"] == first["speedup_ci"]
    assert (tmp_path / "b" / "model.onnx").is_file()

    fresh = _run(model, tmp_path / "c", fresh=True)["optimize"]
    assert "reused" not in fresh and fresh["history_id"] != first["history_id"]
    changed = _run(model, tmp_path / "d", threads=2)["optimize"]
    assert "reused" not in changed, "a changed setting is measured anew"
    other = models.save(models.mlp(width=24, depth=2), tmp_path / "other.onnx")
    assert "reused" not in _run(other, tmp_path / "e")["optimize"], "another model is measured anew"
