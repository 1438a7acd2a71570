import os
import stat

from app.core.session.config import SessionConfig
from tests import models

QUICK = ("--max-threads", "1", "--block-runs", "3", "--finalists", "2", "--confirm-seconds", "0.1")


def test_tune_json_contract_and_saved_preset(ortune, tmp_path):
    path = models.save(models.mlp(width=32, depth=2), tmp_path / "mlp.onnx")
    best = tmp_path / "best.json"
    result = ortune("tune", path, "--budget-trials", "6", *QUICK, "--save-best", best, "--json")
    assert result.code == 0, result.stderr
    info = result.json()
    for key in ("default", "best", "speedup", "speedup_ci", "verdict", "note", "trials", "alternation"):
        assert key in info
    assert info["trials_used"] == 6
    for entry in (info["default"], info["best"], *info["trials"]):
        assert set(entry) >= {"session", "latency_ms"}
        SessionConfig.from_dict(entry["session"])
    remeasured = [t for t in info["trials"] if t["remeasured"]]
    assert len(remeasured) == 2
    for trial in info["trials"]:
        assert set(trial) >= {"speedup", "speedup_ci", "verdict", "race_speedup"}
        assert (trial["verdict"] in ("faster", "slower", "no-difference", "could-not-tell")) == trial["remeasured"]
    if info["clearly_faster"]:
        assert info["verdict"] == "faster" and info["speedup_ci"][0] > 1.0
    else:
        assert info["best"]["session"] == info["default"]["session"] and info["speedup"] == 1.0
    assert SessionConfig.load(best).to_dict() == info["best"]["session"]
    again = ortune("tune", path, "--config", best, "--budget-trials", "3", *QUICK, "--json")
    assert again.code == 0, again.stderr
    assert again.json()["default"]["session"] == info["best"]["session"]


def test_tune_text_says_what_was_measured_alone(ortune, tmp_path):
    path = models.save(models.foldable(), tmp_path / "foldable.onnx")
    saved = tmp_path / "best.json"
    result = ortune("tune", path, "--opt-level", "disable", "--threads", "1", "--budget-trials", "8", *QUICK,
                    "--save-best", saved)
    assert result.code == 0, result.stderr
    text = result.stdout
    assert f"Saved the best as a preset in {saved}; reuse it with --config {saved}." in text
    assert "with --save-best" not in text and saved.is_file()
    assert "measured again, each alone in its own process" in text
    assert "faster)" in text and "as fast as your settings" in text      # optimising folds A @ B: beyond doubt
    assert "\n* " in text and "optimisation" in text                    # the winner is marked, in words
    assert "The budget of 8 trials was spent" in text                   # and why the race stopped
    assert "alone 95%" in text


def test_tune_refuses_bad_budget(ortune, tmp_path):
    path = models.save(models.tiny_add(), tmp_path / "tiny.onnx")
    result = ortune("tune", path, "--budget-trials", "zero")
    assert result.code == 2 and "--budget-trials" in result.stderr


def test_save_best_onto_a_fifo_is_refused_before_the_search(ortune, tmp_path):
    path = models.save(models.tiny_add(), tmp_path / "tiny.onnx")
    fifo = tmp_path / "best.json"
    os.mkfifo(fifo)
    result = ortune("tune", path, "--budget-trials", "3", *QUICK, "--save-best", fifo, timeout=60)
    assert result.code == 2 and "FIFO" in result.stderr and "round" not in result.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
