from app.core.session.config import SessionConfig
from tests import models


def test_tune_json_contract_and_saved_preset(ortune, tmp_path):
    path = models.save(models.mlp(width=32, depth=2), tmp_path / "mlp.onnx")
    best = tmp_path / "best.json"
    result = ortune("tune", path, "--budget-trials", "12", "--max-threads", "1", "--block-runs", "3",
                    "--save-best", best, "--json")
    assert result.code == 0, result.stderr
    info = result.json()
    for key in ("default", "best", "speedup", "trials"):
        assert key in info
    assert info["trials_used"] == 12
    for entry in (info["default"], info["best"], *info["trials"]):
        assert set(entry) >= {"session", "latency_ms"}
        SessionConfig.from_dict(entry["session"])
    assert SessionConfig.load(best).to_dict() == info["best"]["session"]
    again = ortune("tune", path, "--config", best, "--budget-trials", "3", "--max-threads", "1", "--json")
    assert again.code == 0, again.stderr
    assert again.json()["default"]["session"] == info["best"]["session"]


def test_tune_refuses_bad_budget(ortune, tmp_path):
    path = models.save(models.tiny_add(), tmp_path / "tiny.onnx")
    result = ortune("tune", path, "--budget-trials", "zero")
    assert result.code == 2 and "--budget-trials" in result.stderr
