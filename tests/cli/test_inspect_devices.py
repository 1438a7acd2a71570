import json

import pytest

import app
from tests import bad_models


def test_version_and_help(ortune):
    result = ortune("--version")
    assert result.code == 0 and result.stdout.strip() == f"ORTune {app.__version__}"
    result = ortune("--help")
    assert result.code == 0
    for command in ("inspect", "devices", "gui"):
        assert command in result.stdout


def test_inspect_json_has_the_contract_fields(ortune, demo_model):
    result = ortune("inspect", demo_model, "--json")
    assert result.code == 0, result.stderr
    info = result.json()
    for key in ("path", "size_bytes", "ir_version", "opsets", "producer", "inputs", "outputs", "node_count",
                "op_counts", "parameters", "initializer_bytes", "external_data"):
        assert key in info
    assert info["inputs"][0]["shape"] == ["batch", 3, 64, 64]
    assert info["op_counts"]["Conv"] == 3


def test_inspect_text(ortune, demo_model):
    result = ortune("inspect", demo_model)
    assert result.code == 0
    assert "image" in result.stdout and "[batch, 3, 64, 64]" in result.stdout
    assert "Conv" in result.stdout


@pytest.mark.parametrize("maker", [bad_models.empty, bad_models.png, bad_models.truncated,
                                   bad_models.external_escaping, bad_models.cycle], ids=lambda m: m.__name__)
def test_bad_file_gives_one_line_and_exit_2(ortune, tmp_path, maker):
    path, kind = maker(tmp_path)
    result = ortune("inspect", path)
    assert result.code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert path.name in lines[0] and "Traceback" not in result.stderr
    assert result.stdout == ""
    result = ortune("inspect", path, "--json")
    assert result.code == 2
    assert result.json()["error"]["kind"] == kind


def test_bad_option_is_exit_2_with_json_error(ortune):
    result = ortune("inspect", "--json")
    assert result.code == 2
    assert result.json()["error"]["kind"] == "bad-option"
    assert len(result.stderr.strip().splitlines()) == 1


def test_devices_reports_cpu_and_reasons(ortune):
    result = ortune("devices", "--json")
    assert result.code == 0, result.stderr
    info = result.json()
    providers = {p["name"]: p for p in info["providers"]}
    assert providers["CPUExecutionProvider"]["available"] is True
    for item in info["providers"]:
        assert set(item) >= {"name", "available", "reason"}
        assert item["available"] or item["reason"]
    text = ortune("devices")
    assert text.code == 0 and "CPUExecutionProvider" in text.stdout
    json.dumps(info)
