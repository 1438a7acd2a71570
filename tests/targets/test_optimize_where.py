"""optimize where it will run: every candidate made and measured on a target (the folder to
ship brought back), or spread over Ray workers, each ratio formed on one worker."""

import json

from tests import models

QUICK = ("--no-tune", "--budget-seconds", "60", "--screen-seconds", "0.3", "--threads", "1", "--json")


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
    assert sorted(p.name for p in out.iterdir()) == ["candidates", "model.onnx", "optimize.json", "preset.json",
                                                     "report.html", "session.py"]
    assert result["choice"]["model"] == str(out / "model.onnx") and result["choice"]["preset"] == str(out / "preset.json")
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
    assert (out / "model.onnx").is_file()


def test_optimize_on_a_target_refuses_a_data_folder_in_one_line(loop_target, ortune, tmp_path):
    model = models.save(models.mlp(width=16, depth=1), tmp_path / "searched.onnx")
    (tmp_path / "data").mkdir()
    done = ortune("optimize", model, "-o", tmp_path / "ship", "--data", tmp_path / "data", "--target", loop_target)
    assert done.code == 2 and "data folder is not sent" in done.stderr and done.stderr.count("\n") == 1


def test_optimize_over_two_ray_workers(ray_cluster, ortune, tmp_path):
    model = models.save(models.mlp(width=16, depth=1), tmp_path / "searched.onnx")
    out = tmp_path / "ship"
    done = ortune("optimize", model, "-o", out, "--kinds", "optimize,ort", "--cluster", ray_cluster.address,
                  *QUICK, timeout=300)
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
