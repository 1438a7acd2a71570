"""A benchmark, comparison or sweep whose history cannot be used still prints its result
and exits 0, with one warning line."""

import pytest

from tests import models


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli-kept")
    models.save(models.mlp(), folder / "mlp.onnx")
    models.save(models.mlp(seed=1), folder / "other.onnx")
    return folder


def warnings(stderr):
    return [line for line in stderr.splitlines() if line.startswith("warning:")]


def test_a_damaged_history_is_moved_aside_and_the_result_stored(ortune, folder, tmp_path, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    (data / "history.sqlite").write_bytes(b"this is not a database" * 100)
    monkeypatch.setenv("ORTUNE_DATA_DIR", str(data))
    done = ortune("bench", folder / "mlp.onnx", "--iterations", "20", "--json")
    assert done.code == 0, done.stderr
    report = done.json()
    assert report["latency_ms"]["p50"] > 0 and report["history_id"] == 1
    assert len(warnings(done.stderr)) == 1 and "was damaged" in done.stderr
    assert [p.name.split(".damaged-")[0] for p in data.iterdir() if ".damaged-" in p.name] == ["history.sqlite"]
    assert [e["id"] for e in ortune("history", "--json").json()["results"]] == [1]


@pytest.mark.parametrize("command", [
    ["bench", "mlp.onnx", "--iterations", "20"],
    ["compare", "mlp.onnx", "other.onnx", "--iterations", "20", "--max-seconds", "1", "--pairs", "1"],
    ["bench", "mlp.onnx", "--sweep-concurrency", "1", "--iterations", "20"],
])
def test_a_data_folder_that_is_a_file_costs_no_result(ortune, folder, tmp_path, monkeypatch, command):
    (tmp_path / "data").write_text("a file where the data folder should be")
    monkeypatch.setenv("ORTUNE_DATA_DIR", str(tmp_path / "data"))
    done = ortune(*command, "--json", cwd=folder)
    assert done.code == 0, done.stderr
    result = done.json()
    assert result["history_id"] is None and result["session"]
    assert result.get("latency_ms") or result.get("models") or result.get("cells")
    lines = warnings(done.stderr)
    assert len(lines) == 1 and "cannot be used" in lines[0] and "this result is not stored" in lines[0]
    text = ortune(*command, cwd=folder)
    assert text.code == 0 and "p50" in text.stdout and len(warnings(text.stderr)) == 1
