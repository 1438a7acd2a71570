"""Every command reads a model through the same intake: one answer for a hard-linked data
file, a link, a device or a FIFO, and a model the onnx checker dislikes but ONNX Runtime runs."""

import os
import shutil

import pytest

from tests import bad_models, models, odd_models

#: every command that reads a model, with what it needs besides the model
COMMANDS = {
    "inspect": lambda m, out: ["inspect", m],
    "bench": lambda m, out: ["bench", m, "--iterations", "3", "--warmup", "1"],
    "profile": lambda m, out: ["profile", m, "--runs", "2", "--out", out / "trace.json"],
    "convert": lambda m, out: ["convert", "fp16", m, "-o", out / "half.onnx", "--no-speed"],
    "iobinding": lambda m, out: ["iobinding", m, "--provider", "cpu", "--iterations", "3"],
    "tune": lambda m, out: ["tune", m, "--budget-trials", "2"],
    "diagnose": lambda m, out: ["diagnose", m],
    "drift": lambda m, out: ["drift", m, m],
    "diff": lambda m, out: ["diff", m, m],
}


def refusal(ortune, command, model, out):
    result = ortune(*COMMANDS[command](model, out))
    lines = result.stderr.strip().splitlines()
    assert result.code == 2, (command, result.stderr)
    assert len(lines) == 1 and "Traceback" not in result.stderr, (command, result.stderr)
    return lines[0]


@pytest.mark.parametrize("command", COMMANDS)
def test_a_hard_linked_data_file_gets_one_answer_from_every_command(ortune, tmp_path, command):
    path = bad_models.external_ok(tmp_path)
    os.link(tmp_path / "external.onnx.data", tmp_path / "same-bytes.bin")
    line = refusal(ortune, command, path, tmp_path)
    assert "external.onnx: tensor" in line and "2 hard links" in line, line
    assert not (tmp_path / "half.onnx").exists() and not (tmp_path / "trace.json").exists()


@pytest.mark.parametrize("command", ["inspect", "bench", "profile", "convert", "tune", "diff"])
def test_a_link_whose_data_sits_beside_the_link_gets_one_answer(ortune, tmp_path, command):
    real = tmp_path / "real"
    real.mkdir()
    path = bad_models.external_ok(real)
    shutil.move(real / "external.onnx.data", tmp_path / "external.onnx.data")
    (tmp_path / "link.onnx").symlink_to(path)
    line = refusal(ortune, command, tmp_path / "link.onnx", tmp_path)
    assert "'external.onnx.data', but that file is missing" in line, line


@pytest.mark.parametrize("command", ["inspect", "bench", "profile", "convert", "iobinding", "tune"])
def test_a_device_or_fifo_is_named_by_every_command(ortune, tmp_path, command):
    fifo = tmp_path / "pipe.onnx"
    os.mkfifo(fifo)
    assert "is a FIFO (named pipe), not a regular file" in refusal(ortune, command, fifo, tmp_path)
    assert "is a character device, not a regular file" in refusal(ortune, command, os.devnull, tmp_path)


def test_inspect_warns_where_the_checker_objects_and_bench_runs_it(ortune, tmp_path):
    model, warning = odd_models.untyped_output()
    path = models.save(model, tmp_path / "untyped.onnx")
    shown = ortune("inspect", "--json", path)
    assert shown.code == 0, shown.stderr
    info = shown.json()
    assert any(warning in text for text in info["warnings"])
    assert info["outputs"] == [{"name": "y", "kind": "unknown", "dtype": "undeclared", "shape": None}]
    text = ortune("inspect", path)
    assert text.code == 0 and f"warning: the onnx checker says: {warning}" in text.stdout
    bench = ortune("bench", path, "--iterations", "3", "--warmup", "1", "--json")
    assert bench.code == 0, bench.stderr
    assert bench.json()["iterations"] == 3
