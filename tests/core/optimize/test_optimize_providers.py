"""optimize with the OpenVINO plugin as a candidate, for real: its rows checked under their
policies against the CPU provider, and the folder it ships running with plain onnxruntime and
the plugin (skipped with the reason where the plugin cannot load)."""

import json
import subprocess
import sys

import pytest

from app.core.jobs.protocol import JobContext
from app.core.optimize.jobs import OPTIMIZE
from app.core.session.config import SessionConfig
from tests import models
from tests.openvino_plugin import openvino_plugin  # noqa: F401 (a fixture)

OPENVINO = "OpenVINOExecutionProvider"


@pytest.fixture(scope="module")
def searched(tmp_path_factory):
    from tests.openvino_plugin import openvino_unusable

    if openvino_unusable():
        pytest.skip(openvino_unusable())
    folder = tmp_path_factory.mktemp("optimize-providers")
    model = models.save(models.cnn(channels=8, size=32), folder / "cnn.onnx")
    params = {"model": str(model), "out_dir": str(folder / "ship"), "screen_seconds": 0.3, "tune": False,
              "kinds": ["openvino", "openvino-fp32", "cpu"], "budget_seconds": 25,
              "session": SessionConfig(intra_op_num_threads=1).to_dict()}
    return OPTIMIZE(params, JobContext()), folder / "ship"


def test_openvino_is_measured_against_the_cpu_provider_under_its_policy(searched, openvino_plugin):
    result, _ = searched
    rows = {row["kind"]: row for row in result["candidates"]}
    for kind, policy in (("openvino-fp32", "float32"), ("openvino", "float16")):
        row = rows[kind]
        assert row["status"] in ("passed", "failed-check"), row["reason"]
        assert row["providers_used"][0] == OPENVINO and row["provider"] == OPENVINO
        assert row["fidelity"]["tolerance"]["policy"] == policy
        assert row["verdict"] in ("faster", "slower", "no-difference", "could-not-tell")
        assert row["speedup_ci"][0] <= row["speedup"] <= row["speedup_ci"][1]
    assert rows["openvino-fp32"]["status"] == "passed", "OpenVINO's float32 computes the CPU provider's function"
    assert rows["openvino-fp32"]["session"]["providers"][0]["options"] == {"precision": "FP32", "num_of_threads": "1"}
    assert rows["cpu"]["status"] == "skipped" and "already runs on it" in rows["cpu"]["reason"]


def test_the_folder_ships_the_chosen_provider_and_runs_with_plain_onnxruntime(searched, openvino_plugin):
    result, folder = searched
    choice = result["choice"]
    preset = json.loads((folder / "preset.json").read_text())
    if choice["kind"].startswith("openvino"):
        assert preset["providers"][0]["name"] == OPENVINO and choice["provider"] == OPENVINO
        assert "onnxruntime-ep-openvino" in (folder / "session.py").read_text()
        assert "onnxruntime-ep-openvino" in (folder / "report.html").read_text()
    else:           # nothing faster and faithful: the source ships on the user's provider
        assert preset["providers"][0]["name"] == "CPUExecutionProvider"
        assert not any(r["kind"].startswith("openvino") and r["status"] == "passed" and r["verdict"] == "faster"
                       for r in result["candidates"])
    run = subprocess.run([sys.executable, "-I", str(folder / "session.py")], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert "y (1, 10) float32" in run.stdout


def test_a_decoder_on_openvino_is_judged_on_its_next_tokens(tmp_path, openvino_plugin):
    """As its conversions are: the task decides, against the source on the user's CPU provider."""
    from tests.decoder_models import gpt2

    model = models.save(gpt2(layers=2, hidden=64, vocab=128), tmp_path / "gpt2.onnx")
    params = {"model": str(model), "out_dir": str(tmp_path / "ship"), "screen_seconds": 0.2, "tune": False,
              "kinds": ["openvino-fp32"], "budget_seconds": 15,
              "session": SessionConfig(intra_op_num_threads=1).to_dict()}
    row = next(r for r in OPTIMIZE(params, JobContext())["candidates"] if r["kind"] == "openvino-fp32")
    assert row["status"] == "passed" and row["providers_used"][0] == OPENVINO, row["reason"]
    check = row["fidelity"]["next_tokens"]
    assert check["decides"] and check["steps"] >= 8 and check["rate"] == 1.0, check
    assert "next tokens agree on" in row["reason"]
