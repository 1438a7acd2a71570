from tests import models


def test_diagnose_json_and_text(ortune, tmp_path, monkeypatch):
    from tests.gui.test_diagnosis_panel import faster_when_fixed

    monkeypatch.setattr("app.core.diagnose.diagnose.measure_overrides", faster_when_fixed)
    path = models.save(models.shape_dependent(), tmp_path / "shape.onnx")
    result = ortune("diagnose", path, "--runs", "3", "--json")
    assert result.code == 0, result.stderr
    findings = result.json()["findings"]
    found = {f["id"] for f in findings}
    # on a busy machine (a shared CI runner) no operator is blamed: the busy-machine finding says why
    assert "symbolic-dims" in found and ("hot-op-types" in found or "busy-machine" in found), found
    for finding in findings:
        assert set(finding) >= {"id", "severity", "title", "evidence", "fix"}
    text = ortune("diagnose", path, "--runs", "3")
    assert text.code == 0 and "(symbolic-dims)" in text.stdout and "evidence" in text.stdout


def test_diagnose_bad_provider_is_exit_2(ortune, tmp_path):
    path = models.save(models.tiny_add(), tmp_path / "tiny.onnx")
    result = ortune("diagnose", path, "--provider", "dml")
    assert result.code == 2
    assert len(result.stderr.strip().splitlines()) == 1


def test_diagnose_bad_runs_is_one_line_not_an_internal_error(ortune, tmp_path):
    path = models.save(models.tiny_add(), tmp_path / "tiny.onnx")
    result = ortune("diagnose", path, "--runs", "abc")
    assert result.code == 2
    assert result.stderr.strip() == "ortune: --runs expects a whole number, not 'abc'"
