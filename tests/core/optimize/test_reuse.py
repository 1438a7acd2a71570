"""Every candidate is kept in the history, and the same search again reuses it (app.core.optimize.reuse)."""

from app.core.optimize import candidates
from app.core.optimize.jobs import OPTIMIZE
from app.core.optimize.params import OptimizeParams
from app.core.optimize.reuse import Reuse
from app.core.targets.start import run
from app.core.session.config import SessionConfig
from app.core.store.history import History
from tests import models


def _params(model, out, threads=1, **given) -> dict:
    return {"model": str(model), "out_dir": str(out), "screen_seconds": 0.3, "tune": False, "kinds": ["optimize"],
            "budget_seconds": 60, "session": SessionConfig(intra_op_num_threads=threads).to_dict(), **given}


def _run(model, out, **given):
    return {r["kind"]: r for r in run(OPTIMIZE, _params(model, out, **given))["candidates"]}


def _found(model, out, **given):
    """What a search with these parameters would reuse of its optimize candidate (what the
    search asks before it makes the candidate: app.core.optimize.search.Search.make)."""
    params = OptimizeParams.from_dict(_params(model, out, **given))
    return Reuse(params, model).find("optimize", candidates.kind_options("optimize", params.session))


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

    # the other cases ask the history as the search would, without running three more searches
    assert _found(model, tmp_path / "c")[0]["reused"]["history_id"] == first["history_id"]
    assert _found(model, tmp_path / "c", fresh=True) is None, "--fresh measures anew"
    assert _found(model, tmp_path / "d", threads=2) is None, "a changed setting is measured anew"
    assert _found(model, tmp_path / "d", screen_seconds=0.5) is None, "a changed timing length is measured anew"
    other = models.save(models.mlp(width=24, depth=2), tmp_path / "other.onnx")
    assert _found(other, tmp_path / "e") is None, "another model is measured anew"
