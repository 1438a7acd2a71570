"""Names in a model and file names are text from anyone: the command line shows them
escaped and cut, never as bytes that drive the terminal or forge a line; --json keeps
them exact (issue 22)."""

import json
import re

import pytest

from tests.hostile_models import EVIL, hostile_names
from tests.models import save

#: a byte a terminal acts on: C0 except newline and tab, DEL, and the C1 controls
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def assert_printable(text: str) -> None:
    assert not _CONTROL.search(text), repr(_CONTROL.search(text).group())
    assert not any(line.startswith("error: forged") for line in text.splitlines()), "a name forged a line"


@pytest.fixture
def hostile(tmp_path):
    return save(hostile_names(), tmp_path / "evil.onnx")


def test_inspect_shows_every_name_escaped(ortune, hostile):
    done = ortune("inspect", hostile)
    assert done.code == 0, done.stderr
    assert_printable(done.stdout + done.stderr)
    for shown in ("maker\\x1b[2J", "key\\x1b[2J", "value\\x1b[2J\\x1b]0;owned\\x07", "x\\x1b[2J", "batch\\x1b",
                  "evil\\x1b[2J", "\\x9b2J\\x85\\x0aerror: forged line"):
        assert shown in done.stdout


def test_json_keeps_the_names_exact(ortune, hostile):
    done = ortune("inspect", hostile, "--json")
    info = json.loads(done.stdout)
    assert info["producer"] == f"maker{EVIL}" and info["metadata"][f"key{EVIL}"] == f"value{EVIL}"
    assert info["inputs"][0]["name"] == f"x{EVIL}" and info["inputs"][0]["shape"][0] == f"batch{EVIL}"


def test_a_ten_megabyte_metadata_value_is_cut(ortune, tmp_path):
    done = ortune("inspect", save(hostile_names(metadata_bytes=10_000_000), tmp_path / "big.onnx"))
    assert done.code == 0, done.stderr
    assert len(done.stdout) < 50_000 and "more characters)" in done.stdout


def test_bench_and_its_log_file_show_names_escaped(ortune, tmp_path, monkeypatch):
    monkeypatch.setenv("ORTUNE_DATA_DIR", str(tmp_path / "data"))
    model = save(hostile_names(custom_op=False), tmp_path / "evil.onnx")
    # at ONNX Runtime's warning level it logs the unused initializer's name into the jobs log
    config = tmp_path / "verbose.json"
    config.write_text(json.dumps({"log_severity_level": 1}))
    done = ortune("bench", model, "--config", config, "--iterations", "3", "--warmup", "1", "--no-history")
    assert done.code == 0, done.stderr
    assert_printable(done.stdout + done.stderr)
    assert "x\\x1b[2J" in done.stdout and "unused\\x1b]0;owned" in done.stderr
    log = (tmp_path / "data" / "logs" / "jobs.log").read_text(encoding="utf-8")
    assert "Removing initializer 'unused\\x1b]0;owned" in log and "\x1b" not in log and "\x07" not in log


def test_an_error_line_escapes_the_file_name(ortune, tmp_path, hostile):
    done = ortune("inspect", tmp_path / "no\x1b[2Jpe.onnx")
    assert done.code == 2 and done.stderr.startswith("ortune: ") and "no\\x1b[2Jpe.onnx" in done.stderr
    assert_printable(done.stderr)
    done = ortune("bench", hostile, "--iterations", "3", "--no-history")     # ORT refuses the evil domain
    assert done.code == 2 and "evil\\x1b" in done.stderr
    assert_printable(done.stdout + done.stderr)


def test_inspects_heading_escapes_the_file_name(ortune, tmp_path, hostile):
    named = tmp_path / "e\x1b]0;t\x07vil.onnx"
    named.write_bytes(hostile.read_bytes())
    done = ortune("inspect", named)
    assert done.code == 0 and done.stdout.splitlines()[0].endswith("e\\x1b]0;t\\x07vil.onnx")
    assert_printable(done.stdout)
