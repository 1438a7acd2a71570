from tests import models


def test_iobinding_json_has_the_contract_fields(ortune, tmp_path):
    path = models.save(models.cnn(), tmp_path / "cnn.onnx")
    result = ortune("iobinding", path, "--provider", "cpu", "--iterations", "5", "--warmup", "1",
                    "--dim", "batch=2", "--json")
    assert result.code == 0, result.stderr
    info = result.json()
    assert info["provider"] == "CPUExecutionProvider"
    assert info["inputs"][0]["shape"] == [2, 3, 32, 32]
    assert [m["name"] for m in info["modes"]] == ["plain", "bind-inputs-each-run", "device-inputs",
                                                  "preallocated-outputs", "cuda-graph"]
    for mode in info["modes"]:
        assert {"name", "latency_ms", "bytes_copied_per_run", "explanation", "available",
                "skipped_reason"} <= set(mode)
    assert info["modes"][0]["latency_ms"]["p50"] > 0
    assert info["modes"][4]["latency_ms"] is None and info["modes"][4]["skipped_reason"]
    for mode in info["modes"][1:4]:
        assert len(mode["speedup_ci"]) == 2 and mode["verdict"] in ("faster", "slower", "no-difference", "could-not-tell")


def test_iobinding_text_names_the_modes_and_the_cpu_note(ortune, tmp_path):
    path = models.save(models.mlp(), tmp_path / "mlp.onnx")
    result = ortune("iobinding", path, "--iterations", "3", "--warmup", "0")
    assert result.code == 0, result.stderr
    for text in ("1. Plain run", "4. Preallocated outputs", "5. CUDA graph", "skipped", "On the CPU",
                 "vs plain p50 [95 % interval]", "verdict: faster or slower when the whole"):
        assert text in result.stdout
    row = next(line for line in result.stdout.splitlines() if line.startswith("2. Bind inputs each run"))
    assert "× [" in row and any(word in row for word in ("faster", "slower", "no-difference", "could-not-tell"))


def test_iobinding_refuses_other_providers_in_one_line(ortune, tmp_path):
    path = models.save(models.mlp(), tmp_path / "mlp.onnx")
    result = ortune("iobinding", path, "--provider", "openvino", "--json")
    assert result.code == 2
    assert result.json()["error"]["kind"] == "bad-option"
    assert len(result.stderr.strip().splitlines()) == 1 and "openvino" in result.stderr
    result = ortune("iobinding", path, "--iterations", "0")
    assert result.code == 2 and "--iterations" in result.stderr
