"""Every candidate is kept in the history, and the same search again reuses it (app.core.optimize.reuse)."""

from app.core.optimize import candidates
from app.core.optimize.jobs import OPTIMIZE
from app.core.optimize.params import OptimizeParams
from app.core.optimize.reuse import Reuse
from app.core.optimize.rows import CHOSEN, explain, failed_row, measured_reason, source_row
from app.core.launch.start import run
from app.core.session.config import SessionConfig
from app.core.store.history import History
from tests import models


def _params(model, out, threads=1, **given) -> dict:
    # 30 s: time for the finalists' precise measurement, so that what is kept is the final figure
    # (with 20 s a loaded machine left none, and the search again measured the kept candidate; 30 s
    # left 20 s for it at a load of 9 on two cores; the search spends its budget, so more costs CI)
    return {"model": str(model), "out_dir": str(out), "screen_seconds": 0.3, "tune": False, "kinds": ["optimize"],
            "budget_seconds": 30, "session": SessionConfig(intra_op_num_threads=threads).to_dict(), **given}


def _run(model, out, **given):
    return {r["kind"]: r for r in run(OPTIMIZE, _params(model, out, **given))["candidates"]}


def _found(model, out, **given):
    """What a search with these parameters would reuse of its optimize candidate (what the
    search asks before it makes the candidate: app.core.optimize.search.Search.make)."""
    params = OptimizeParams.from_dict(_params(model, out, **given))
    return Reuse(params, model).find("optimize", candidates.kind_options("optimize", params.session))


def test_the_same_search_reuses_its_candidates_and_a_change_measures_anew(tmp_path, monkeypatch):
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

    stored_entry = History.get

    def chosen_before(history, entry_id):       # kept by a search whose answer it was
        entry = stored_entry(history, entry_id)
        row = entry["report"]["optimize_candidate"]["row"]
        row.update(reason=f"{CHOSEN}{row['reason']}", measured_reason=row["reason"])
        return entry
    monkeypatch.setattr(History, "get", chosen_before)
    found = _found(model, tmp_path / "c")[0]
    assert not found["reason"].startswith("chosen") and "reused from" in found["reason"]
    assert "measured_reason" not in found, "this search's answer is yet to be told"

    def unmeasured(history, entry_id):
        entry = stored_entry(history, entry_id)
        entry["report"]["optimize_candidate"]["row"].update(speedup=None, speedup_ci=None, verdict=None)
        return entry
    monkeypatch.setattr(History, "get", unmeasured)
    assert _found(model, tmp_path / "c") is None, "a candidate whose speed check could not run is measured anew"


def test_deleting_a_candidates_entry_removes_its_copy_and_the_search_measures_it_anew(tmp_path, monkeypatch):
    from app.core.store import kept

    monkeypatch.setenv("ORTUNE_DATA_DIR", str(tmp_path / "data"))
    model = models.save(models.mlp(width=20, depth=1), tmp_path / "deleted.onnx")
    first = _run(model, tmp_path / "a", budget_seconds=20)["optimize"]    # kept and deleted: any figure will do
    copy = kept.folder_of(History().get(first["history_id"])["report"]["output"])
    assert copy is not None and copy.parent == kept.root() and (copy / kept.NOTE).is_file()
    assert _found(model, tmp_path / "b", budget_seconds=20) is not None, "kept: a search would reuse it"
    assert History().delete(first["history_id"]) == [copy] and not copy.exists()
    # what the search asks before it makes the candidate (the first test runs a search that reuses)
    assert _found(model, tmp_path / "b", budget_seconds=20) is None, "its copy went with it: made anew"


def _copy(name: str, model: str, created: float, size: int = 10):
    from app.core.store import kept
    import json

    folder = kept.root() / name
    folder.mkdir(parents=True)
    (folder / "m.onnx").write_bytes(b"x" * size)
    (folder / kept.NOTE).write_text(json.dumps({"model_sha256": model, "created": created}))
    return folder


def test_the_copies_are_bounded_per_model_and_in_all_and_orphans_go(tmp_path, monkeypatch):
    from app.core.store import kept

    monkeypatch.setenv("ORTUNE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(kept, "KEEP_PER_MODEL", 2)
    now = 1_000_000.0
    a = [_copy(f"a{i}", "A", now - i) for i in range(4)]          # a0 newest
    b = [_copy(f"b{i}", "B", now - 10 - i, size=100) for i in range(2)]
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    named = {str(f / "m.onnx") for f in a + b} | {str(outside / "m.onnx")}
    gone = kept.bound(named, keep=a[3], now=now)
    assert sorted(p.name for p in gone) == ["a2"], "the newest two of A, and the one just made, stay"
    monkeypatch.setattr(kept, "CAP_BYTES", 150)
    assert [p.name for p in kept.bound(named, now=now)] == ["a3", "b1"], "the oldest go first past the cap"
    orphan = _copy("o", "C", now - kept.ORPHAN_AGE_S - 1)
    young = _copy("y", "C", now - 5)
    assert kept.bound(named, now=now) == [orphan] and young.exists(), "an unnamed copy goes once it is old"
    assert outside.exists()


def test_nothing_outside_the_historys_folder_is_removed(tmp_path, monkeypatch):
    from app.core.store import kept

    monkeypatch.setenv("ORTUNE_DATA_DIR", str(tmp_path / "data"))
    victim = tmp_path / "mine" / "model.onnx"
    victim.parent.mkdir()
    victim.write_bytes(b"precious")
    kept.root().mkdir(parents=True)
    (kept.root() / "link").symlink_to(victim.parent, target_is_directory=True)
    model = models.save(models.tiny_add(), tmp_path / "add.onnx")
    history = History()
    identity = history.model_identity(model)
    ids = [history.record("convert", {"output": path, "model": identity}, facts={"model": identity})
           for path in (str(victim), str(kept.root() / "link" / "model.onnx"), str(kept.root()))]
    assert [history.delete(i) for i in ids] == [[], [], []]
    assert victim.read_bytes() == b"precious" and (kept.root() / "link").is_symlink()
    assert not kept.remove(victim.parent) and not kept.remove(kept.root())


def test_the_reason_kept_for_reuse_leaves_out_the_words_of_the_answer(tmp_path):
    # reused and chosen again, a row read "chosen: … — chosen: … — faster than the source …"
    source = tmp_path / "m.onnx"
    source.write_bytes(b"x")
    row = {"kind": "ort", "status": "passed", "verdict": "faster", "speedup": 1.2, "latency_ms": 1.0,
           "source_latency_ms": 1.2, "reason": "faster than the source (×1.20 [1.10–1.30])"}
    slower = dict(row, kind="optimize", speedup=1.1, reason="faster than the source (×1.10 [1.05–1.15])")
    explain([source_row(source), row, slower], row, None)
    assert row["reason"] == f"{CHOSEN}faster than the source (×1.20 [1.10–1.30])"
    assert slower["reason"].endswith(", but less than ort")
    assert measured_reason(row) == "faster than the source (×1.20 [1.10–1.30])"
    assert measured_reason(slower) == "faster than the source (×1.10 [1.05–1.15])"
    failed = failed_row("int8-dynamic", "failed-check", "its outputs drift")
    assert measured_reason(failed) == "its outputs drift", "a row that did not pass has no answer's words"
