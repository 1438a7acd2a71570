"""The window reads a model through the command line's intake: the same file for a link,
the same refusal, and the Overview shows the intake's warnings and every kind of value."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from onnx import TensorProto, helper

from tests import bad_models, models

ROOT = Path(__file__).resolve().parents[2]


def cli_inspect(path):
    done = subprocess.run([sys.executable, "-m", "app", "inspect", "--json", str(path)], capture_output=True,
                          text=True, timeout=300, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    return done.returncode, done.stdout, done.stderr.strip()


def linked_model(tmp_path, data_beside_link: bool) -> Path:
    real = tmp_path / "real"
    real.mkdir()
    path = bad_models.external_ok(real)
    if data_beside_link:
        shutil.move(real / "external.onnx.data", tmp_path / "external.onnx.data")
    link = tmp_path / "link.onnx"
    link.symlink_to(path)
    return link


def test_a_linked_model_is_the_same_file_in_the_window_and_the_command_line(qtbot, window, tmp_path):
    link = linked_model(tmp_path, data_beside_link=False)
    code, stdout, _ = cli_inspect(link)
    assert code == 0
    with qtbot.waitSignal(window.model_opened, timeout=60000) as opened:
        window.open_model(link)
    summary = opened.args[0].summary
    assert summary["path"] == json.loads(stdout)["path"] == str((tmp_path / "real" / "external.onnx").resolve())
    assert summary["external_data_files"] == ["external.onnx.data"]


def test_a_linked_model_refused_by_the_command_line_is_refused_by_the_window(qtbot, window, tmp_path):
    link = linked_model(tmp_path, data_beside_link=True)
    code, _, stderr = cli_inspect(link)
    assert code == 2 and stderr.startswith("ortune: ")
    with qtbot.waitSignal(window.error_shown, timeout=60000) as shown:
        window.open_model(link)
    assert stderr.removeprefix("ortune: ") in shown.args[1]
    assert window.model_list.models() == []


def test_a_fifo_is_named_in_the_window(qtbot, window, tmp_path):
    fifo = tmp_path / "pipe.onnx"
    os.mkfifo(fifo)
    with qtbot.waitSignal(window.error_shown, timeout=60000) as shown:
        window.open_model(fifo)
    assert "is a FIFO (named pipe), not a regular file" in shown.args[1]


def test_the_overview_shows_warnings_and_whole_types(qtbot, window, tmp_path):
    """A classifier's ZipMap output, in a graph without a name (the checker's complaint)."""
    zipmap = helper.make_sequence_type_proto(helper.make_map_type_proto(
        TensorProto.INT64, helper.make_tensor_type_proto(TensorProto.FLOAT, None)))
    graph = helper.make_graph(
        [helper.make_node("ZipMap", ["x"], ["probabilities"], domain="ai.onnx.ml", classlabels_int64s=[0, 1])], "",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])],
        [helper.make_value_info("probabilities", zipmap)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 1)])
    model.ir_version = 8
    path = models.save(model, tmp_path / "classifier.onnx")
    with qtbot.waitSignal(window.model_opened, timeout=60000):
        window.open_model(path)
    overview = window.panel("Overview")
    overview.ensure_built()
    overview.model_changed(window.current_model())
    assert "Warning: the onnx checker says: Field 'name' of 'graph' is required to be non-empty" \
        in overview.heading.text()
    assert overview.io_table.rows == [["input", "x", "float", "[1, 2]"],
                                      ["output", "probabilities", "sequence(map(int64, float))", "–"]]
