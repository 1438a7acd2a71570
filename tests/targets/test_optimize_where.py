"""optimize where it will run: every candidate made and measured on a target (the folder to
ship brought back), or spread over Ray workers, each ratio formed on one worker."""

import json
from pathlib import Path

import numpy as np

from app.core.targets.upload import FOLDER_MAIN
from tests import models

# a search on a target ends when its budget does (its finalists are measured for what is left)
QUICK = ("--no-tune", "--budget-seconds", "40", "--screen-seconds", "0.3", "--threads", "1", "--json")
# a cluster's tasks each get a part of the budget, which must hold a worker's start
ON_CLUSTER = ("--no-tune", "--budget-seconds", "60", "--screen-seconds", "0.3", "--threads", "1", "--json")


def _keeps_the_contract(result):
    """The JSON contract of issue 24, as `optimize --json` prints it."""
    for key in ("choice", "candidates", "inputs", "data", "budget_seconds", "elapsed_seconds", "target"):
        assert key in result, key
    for key in ("kind", "model", "preset", "speedup", "speedup_ci", "verdict", "fidelity", "settings"):
        assert key in result["choice"], key
    assert "passed" in result["choice"]["fidelity"]
    for row in result["candidates"]:
        for key in ("kind", "status", "reason", "speedup", "speedup_ci", "verdict", "fidelity", "size_bytes"):
            assert key in row, (row["kind"], key)


def test_optimize_on_a_target_brings_the_folder_back(loop_target, ortune, tmp_path):
    model = models.save(models.mlp(width=16, depth=1), tmp_path / "searched.onnx")
    out = tmp_path / "ship"
    done = ortune("optimize", model, "-o", out, "--kinds", "optimize,ort", "--keep-candidates", "--target",
                  loop_target, *QUICK, timeout=300)
    assert done.code == 0, done.stderr
    result = done.json()
    assert result["target"]["name"] == "loop" and result["out_dir"] == str(out)
    _keeps_the_contract(result)
    model_file = "model.ort" if result["choice"]["kind"] == "ort" else "model.onnx"    # as the ORT format won or not
    assert sorted(p.name for p in out.iterdir()) == sorted(["candidates", model_file, "optimize.json", "preset.json",
                                                            "report.html", "session.py"])
    assert result["choice"]["model"] == str(out / model_file) and result["choice"]["preset"] == str(out / "preset.json")
    shipped = json.loads((out / "optimize.json").read_text())
    assert shipped["target"]["name"] == "loop" and shipped["out_dir"] == str(out), "rewritten as this machine sees it"
    assert "The target loop" in (out / "report.html").read_text()
    made = {r["kind"]: r for r in result["candidates"]}
    assert made["optimize"]["status"] == "passed" and made["optimize"]["speedup"] is not None
    assert (out / "candidates" / "optimize.onnx").is_file() and made["optimize"]["model"].startswith(str(out))
    again = ortune("optimize", model, "-o", out, "--kinds", "optimize", "--target", loop_target, *QUICK)
    assert again.code == 2 and "--force" in again.stderr and len(again.stderr.strip().splitlines()) == 1
    # the target keeps its candidates: the same search there again reuses them, and says so
    reused = ortune("optimize", model, "-o", out, "--kinds", "optimize,ort", "--force", "--target", loop_target,
                    *QUICK, timeout=300)
    assert reused.code == 0, reused.stderr
    rows = {r["kind"]: r for r in reused.json()["candidates"]}
    assert "reused from" in rows["optimize"]["reason"] and rows["optimize"]["speedup"] == made["optimize"]["speedup"]
    assert Path(reused.json()["choice"]["model"]).is_file()


def _data(folder, count=6, width=16):
    """Samples for models.mlp(width): an .npy each, a label file and one answer beside them."""
    rng = np.random.default_rng(3)
    (folder / "expected").mkdir(parents=True)
    for index in range(count):
        np.save(folder / f"s{index}.npy", rng.normal(size=(1, width)).astype(np.float32))
    np.save(folder / "expected" / "s1.npy", np.zeros((1, width), np.float32))
    (folder / "notes.txt").write_text("read by no loader: it stays here")
    return folder


def test_optimize_on_a_target_takes_the_data_folder_along(sshd, loop_target, ortune, tmp_path):
    model = models.save(models.mlp(width=16, depth=1), tmp_path / "searched.onnx")
    data = _data(tmp_path / "data")
    # made there even on a CPU without VNNI, where int8 is skipped by default
    done = ortune("optimize", model, "-o", tmp_path / "ship", "--data", data, "--kinds", "optimize,int8-static",
                  "--try-expected-slower", "--target", loop_target, *QUICK, timeout=300)
    assert done.code == 0, done.stderr
    result = done.json()
    assert result["target"]["name"] == "loop"
    assert result["data"]["judged"] == "your data" and result["data"]["folder"] == str(data)
    assert (result["data"]["calibrate_samples"], result["data"]["check_samples"]) == (3, 3)
    rows = {r["kind"]: r for r in result["candidates"]}
    assert rows["optimize"]["status"] == "passed" and rows["optimize"]["judged_on"] == "your data"
    assert rows["int8-static"]["options"]["calibration"] == f"{data} (the calibration half)", \
        "calibrated on the folder's half there, named as this machine sees it"
    assert "your data: 3 held-out samples" in (tmp_path / "ship" / "report.html").read_text()
    sent = [p.parent for p in (sshd.remote_home / "data" / "target-cache").glob(f"*/{FOLDER_MAIN}")]
    assert len(sent) == 1 and sorted(str(p.relative_to(sent[0])) for p in sent[0].rglob("*") if p.is_file()) == [
        ".ortune-main", "expected/s1.npy", FOLDER_MAIN, *[f"s{i}.npy" for i in range(6)]], "only what the loader reads"


def test_a_data_folder_that_cannot_travel_is_refused_in_one_line(loop_target, ortune, tmp_path):
    model = models.save(models.mlp(width=16, depth=1), tmp_path / "searched.onnx")
    data = _data(tmp_path / "data")
    (data / "s9.npy").symlink_to(tmp_path / "searched.onnx")
    done = ortune("optimize", model, "-o", tmp_path / "ship", "--data", data, "--target", loop_target)
    assert done.code == 2 and "leads out of the data folder" in done.stderr and done.stderr.count("\n") == 1
    assert not (tmp_path / "ship").exists()


def test_optimize_over_two_ray_workers(ray_cluster, ortune, tmp_path):
    model = models.save(models.mlp(width=16, depth=1), tmp_path / "searched.onnx")
    out = tmp_path / "ship"
    done = ortune("optimize", model, "-o", out, "--kinds", "optimize,ort", "--cluster", ray_cluster.address,
                  *ON_CLUSTER, timeout=300)
    assert done.code == 0, done.stderr
    result = done.json()
    _keeps_the_contract(result)
    workers = {w["node"] for w in result["target"]["workers"]}
    assert result["target"]["cluster"] and result["target"]["address"] == ray_cluster.address
    rows = {r["kind"]: r for r in result["candidates"]}
    nodes = {rows[kind]["measured_on"]["node"] for kind in ("optimize", "ort")}
    assert nodes == workers, "the two candidates went to the two workers"
    for kind in ("optimize", "ort"):
        assert rows[kind]["status"] == "passed" and rows[kind]["speedup_ci"] is not None
    assert (out / "model.onnx").is_file() and (out / "preset.json").is_file()
    assert "Ray workers" in (out / "report.html").read_text()


def test_optimize_over_ray_workers_on_your_data_and_again_reusing_them(ray_cluster, ortune, tmp_path):
    model = models.save(models.mlp(width=18, depth=1), tmp_path / "clustered.onnx")   # a width of its own
    data = _data(tmp_path / "data", width=18)
    first = ortune("optimize", model, "-o", tmp_path / "a", "--data", data, "--kinds", "optimize,ort",
                   "--cluster", ray_cluster.address, *ON_CLUSTER, timeout=300)
    assert first.code == 0, first.stderr
    result = first.json()
    assert result["data"]["judged"] == "your data" and result["data"]["folder"] == str(data)
    rows = {r["kind"]: r for r in result["candidates"]}
    for kind in ("optimize", "ort"):
        assert rows[kind]["status"] == "passed" and rows[kind]["judged_on"] == "your data"
        assert rows[kind]["history_id"] and "reused" not in rows[kind], "kept here, in this machine's history"
    again = ortune("optimize", model, "-o", tmp_path / "b", "--data", data, "--kinds", "optimize,ort",
                   "--cluster", ray_cluster.address, *ON_CLUSTER, timeout=300)
    assert again.code == 0, again.stderr
    reused = {r["kind"]: r for r in again.json()["candidates"]}
    for kind in ("optimize", "ort"):
        assert reused[kind]["reused"]["history_id"] == rows[kind]["history_id"], kind
        assert "reused from" in reused[kind]["reason"] and reused[kind]["speedup"] == rows[kind]["speedup"]
        assert reused[kind]["measured_on"] == rows[kind]["measured_on"], "the worker that measured it"
    assert (tmp_path / "b" / "model.onnx").is_file()
