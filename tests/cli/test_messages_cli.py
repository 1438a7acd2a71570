"""A wrong command line is one line that says what is wrong, prefixed once."""

import pytest


@pytest.mark.parametrize("args, words", [
    (["bench"], "the following arguments are required: MODEL (see ortune bench --help)"),
    (["bench", "m.onnx", "--bogus"], "unrecognized arguments: --bogus"),
    (["nosuch"], "invalid choice: 'nosuch'"),
    (["gui", "--bogus"], "unrecognized arguments: --bogus (see ortune gui --help)"),
    (["convert", "nosuch", "m.onnx", "-o", "o.onnx"], "argument KIND: invalid choice: 'nosuch'"),
    (["tune", "m.onnx", "--save-best"], "argument --save-best: expected one argument"),
])
def test_a_parse_error_is_prefixed_once(ortune, args, words):
    done = ortune(*args)
    assert done.code == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ortune: ") and "ortune: ortune" not in lines[0]
    assert words in lines[0]


def _with_unused_weight(path):
    import numpy as np
    from onnx import TensorProto, helper

    from tests import models

    unused = helper.make_tensor("unused_weight", TensorProto.FLOAT, [4], np.zeros(4, np.float32))
    graph = helper.make_graph([helper.make_node("Add", ["x", "x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], [unused])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return models.save(model, path)


@pytest.mark.parametrize("command", [["bench", "--iterations", "3"], ["profile", "--runs", "2"]])
def test_onnx_runtimes_own_warnings_are_ortune_warnings(ortune, tmp_path, command):
    """ONNX Runtime logs an initializer no node uses at its warning level, in colour."""
    _with_unused_weight(tmp_path / "unused.onnx")
    (tmp_path / "warn.json").write_text('{"log_severity_level": 2}')
    done = ortune(command[0], "unused.onnx", *command[1:], "--config", "warn.json", "--json", cwd=tmp_path)
    assert done.code == 0, done.stderr
    assert done.stderr.splitlines() == ["warning: ONNX Runtime: Removing initializer 'unused_weight'. It is not used "
                                        "by any node and should be removed from the model."]
    assert done.json()
