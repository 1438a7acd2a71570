from tests import models


def test_optimize_writes_the_folder_and_prints_the_answer(ortune, tmp_path):
    model = models.save(models.mlp(width=16, depth=1), tmp_path / "mlp.onnx")
    out = tmp_path / "ship"
    done = ortune("optimize", model, "-o", out, "--kinds", "optimize,fp16", "--no-tune", "--budget-seconds", "20",
                  "--screen-seconds", "0.3", "--threads", "1", "--json")
    assert done.code == 0, done.stderr
    result = done.json()
    assert result["choice"]["kind"] in ("source", "optimize") and result["budget_seconds"] == 20
    assert [row["kind"] for row in result["candidates"]][:2] == ["source", "optimize"]
    assert sorted(p.name for p in out.iterdir()) == ["model.onnx", "optimize.json", "preset.json", "report.html",
                                                     "session.py"]
    again = ortune("optimize", model, "-o", out, "--kinds", "optimize", "--no-tune", "--budget-seconds", "5")
    assert again.code == 2 and "already exists; use --force" in again.stderr
    assert len(again.stderr.strip().splitlines()) == 1


def test_optimize_refuses_bad_input_in_one_line(ortune, tmp_path):
    model = models.save(models.tiny_add(), tmp_path / "add.onnx")
    for args, message in ((("--kinds", "fp8"), "unknown candidate kind 'fp8'"), (("--objective", "speed"), "invalid choice"),
                          (("--target", "gpu-box"), "no target named 'gpu-box'"),
                          (("--budget-seconds", "0"), "--budget-seconds must be at least 1"),
                          (("--cluster-tasks", "3"), "--cluster-tasks is for a search spread over a cluster"),
                          (("--cluster", "127.0.0.1:1", "--cluster-tasks", "0"), "expected a number of at least 1")):
        done = ortune("optimize", model, "-o", tmp_path / "ship", *args)
        assert done.code == 2 and message in done.stderr, (args, done.stderr)
        assert not (tmp_path / "ship").exists()
