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
