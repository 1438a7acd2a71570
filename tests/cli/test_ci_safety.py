"""Safe in CI: what a model names, and what a pull request plants beside the reports, can
neither forge what the runner shows nor reach outside an output, and it ends in one line,
never in a traceback or a hang."""

import os
import re
import subprocess
import sys

import onnx
import pytest

from app.core.gate import judge
from tests import models
from tests.cli.conftest import ROOT
from tests.gate_results import gate_result
from tests.hostile_models import FORGED_COMMAND, NOT_XML, ci_hostile

QUICK = ("--warmup", "2", "--duration", "0.1", "--pairs", "1", "--max-seconds", "1", "--threads", "1", "--no-history")
COMMAND_LINE = re.compile(r"^\s*(::|##\[)")


def _forged(text: str) -> list[str]:
    """Lines a runner would read as a workflow command that are not ORTune's own annotations."""
    return [line for line in text.splitlines() if COMMAND_LINE.match(line)
            and not line.startswith(("::error title=ORTune gate%3A", "::warning title=ORTune gate%3A"))]


@pytest.fixture
def hostile(tmp_path):
    path = tmp_path / "hostile.onnx"
    onnx.save(ci_hostile(), str(path))
    return path


@pytest.fixture
def mlp(tmp_path):
    return models.save(models.mlp(width=8, depth=1), tmp_path / "mlp.onnx")


@pytest.fixture
def faked(monkeypatch):
    """The gate's measuring replaced by a result (the reports and the checks are the subject)."""
    import app.cli.gate as gate_cli

    monkeypatch.setattr(gate_cli, "run_job_cli", lambda *a, **k: gate_result(judge.REGRESSION))


def test_gate_and_optimize_print_no_line_a_runner_reads_as_a_command(ortune, hostile, tmp_path, monkeypatch):
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    gate = ortune("gate", hostile, "--against", hostile, *QUICK, "--max-slowdown", "50")
    assert gate.code in (0, 6), gate.stderr
    assert FORGED_COMMAND[2:] in gate.stdout, "the input's name is shown"
    assert _forged(gate.stdout + gate.stderr) == []
    shipped = ortune("optimize", hostile, "-o", tmp_path / "ship", "--kinds", "ort", "--screen-seconds", "0.05",
                     "--no-tune", "--budget-seconds", "8", cwd=tmp_path)
    assert shipped.code == 0, shipped.stderr
    assert FORGED_COMMAND[2:] in shipped.stdout and _forged(shipped.stdout + shipped.stderr) == []


@pytest.mark.parametrize("planted", ["link", "folder", "fifo"])
def test_reports_go_through_no_link_folder_or_fifo_planted_beside_them(ortune, mlp, tmp_path, faked, planted):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    for report in ("gate.xml", "gate.md"):       # the names the reports were once staged under
        staged = tmp_path / f".{report}.partial"
        {"link": lambda: staged.symlink_to(victim), "folder": staged.mkdir, "fifo": lambda: os.mkfifo(staged)}[planted]()
    done = ortune("gate", mlp, "--against", mlp, "--junit", tmp_path / "gate.xml", "--markdown", tmp_path / "gate.md")
    assert done.code == 5, done.stderr
    assert victim.read_text() == "keep me"
    for report in ("gate.xml", "gate.md"):
        assert (tmp_path / report).is_file() and not (tmp_path / report).is_symlink()
    assert (tmp_path / "gate.xml").read_text().startswith("<?xml")
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".ortune-")], "no staging file left"


@pytest.mark.parametrize("flag", ["--junit", "--markdown"])
@pytest.mark.parametrize("which", ["new", "old", "preset"])
def test_an_input_is_never_an_output_even_with_force(ortune, mlp, tmp_path, faked, flag, which):
    old = tmp_path / "old.onnx"
    old.write_bytes(mlp.read_bytes())
    preset = tmp_path / "preset.json"
    preset.write_text("{}")
    target = {"new": mlp, "old": old, "preset": preset}[which]
    before = target.read_bytes()
    done = ortune("gate", mlp, "--against", old, "--config", preset, flag, target, "--force")
    assert done.code == 2 and "is one of this command's inputs" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and target.read_bytes() == before


def test_two_reports_at_one_path_are_refused_before_measuring(ortune, mlp, tmp_path, faked):
    done = ortune("gate", mlp, "--against", mlp, "--junit", tmp_path / "r", "--markdown", tmp_path / "r")
    assert done.code == 2 and "--junit and --markdown" in done.stderr and not (tmp_path / "r").exists()


def test_a_report_folder_that_cannot_be_written_is_refused_before_measuring(ortune, mlp, faked):
    done = ortune("gate", mlp, "--against", mlp, "--junit", "/sys/gate.xml")
    assert done.code == 2 and "not writable" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_fifo_as_the_step_summary_is_refused_not_waited_on(mlp, tmp_path):
    fifo = tmp_path / "summary"
    os.mkfifo(fifo)
    env = dict(os.environ, PYTHONPATH=str(ROOT), GITHUB_STEP_SUMMARY=str(fifo), ORTUNE_DATA_DIR=str(tmp_path / "d"))
    done = subprocess.run([sys.executable, "-m", "app", "gate", mlp, "--against", mlp, *QUICK, "--max-slowdown", "50"],
                          capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert done.returncode in (0, 6), done.stderr
    assert "GITHUB_STEP_SUMMARY" in done.stderr and "not a regular file" in done.stderr


def test_junit_with_names_xml_forbids_parses(ortune, hostile, tmp_path):
    """The model's output named with U+FFFE, U+FFFF and a control; the file name with U+FFFE."""
    import xml.etree.ElementTree as ElementTree

    odd = tmp_path / f"new{NOT_XML[:2]}.onnx"
    odd.write_bytes(hostile.read_bytes())
    done = ortune("gate", odd, "--against", hostile, *QUICK, "--max-slowdown", "50", "--junit", tmp_path / "g.xml")
    assert done.code in (0, 6), done.stderr
    suite = ElementTree.parse(tmp_path / "g.xml").getroot().find("testsuite")
    assert int(suite.find("properties/property[@name='characters_replaced']").get("value")) >= 2


def test_an_output_name_of_64_kib_is_kept_by_position(ortune, tmp_path):
    from onnx import TensorProto, helper

    name = "o" * 70_000
    graph = helper.make_graph([helper.make_node("Relu", ["x"], [name])], "long",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "long.onnx"))
    done = ortune("gate", tmp_path / "long.onnx", "--against", tmp_path / "long.onnx", *QUICK, "--max-slowdown", "50",
                  "--json")
    assert done.code in (0, 6), done.stderr
    assert done.json()["criteria"][1]["verdict"] == "pass"


def _read_only(folder, command: list[str]) -> subprocess.CompletedProcess:
    """`command` (ortune's arguments) run where `folder` is a read-only file system (a mount of
    its own, as root) or a folder without write permission (as anyone else)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), ORTUNE_DATA_DIR=str(folder.parent / "data"))
    ortune = [sys.executable, "-m", "app", *map(str, command)]
    if os.geteuid() == 0:
        script = 'mount -t tmpfs -o ro tmpfs "$0" && exec "$@"'
        return subprocess.run(["unshare", "-m", "sh", "-c", script, str(folder), *ortune], capture_output=True,
                              text=True, timeout=300, env=env)
    folder.chmod(0o555)
    try:
        return subprocess.run(ortune, capture_output=True, text=True, timeout=300, env=env)
    finally:
        folder.chmod(0o755)


def test_optimize_to_a_read_only_place_fails_before_searching(mlp, tmp_path):
    folder = tmp_path / "read-only"
    folder.mkdir()
    done = _read_only(folder, ["optimize", mlp, "-o", folder / "ship", "--budget-seconds", "600"])
    assert done.returncode == 2 and "not writable" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "data" / "history.sqlite").exists() or "optimize" not in subprocess.run(
        [sys.executable, "-m", "app", "history"], capture_output=True, text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT), ORTUNE_DATA_DIR=str(tmp_path / "data"))).stdout


def test_a_tiny_budget_still_ships_a_session_py_that_runs(ortune, mlp, tmp_path):
    done = ortune("optimize", mlp, "-o", tmp_path / "ship", "--budget-seconds", "3", "--json")
    assert done.code == 0, done.stderr
    assert done.json()["inputs"], "the input plan is part of the result"
    script = (tmp_path / "ship" / "session.py").read_text()
    assert "feeds = {}" not in script and "'x':" in script
    ran = subprocess.run([sys.executable, str(tmp_path / "ship" / "session.py")], capture_output=True, text=True,
                         timeout=120)
    assert ran.returncode == 0, ran.stderr


def test_session_py_without_a_plan_feeds_the_sessions_own_inputs(mlp, tmp_path):
    from app.core.optimize.session_code import session_script
    from app.core.session.config import SessionConfig

    (tmp_path / "model.onnx").write_bytes(mlp.read_bytes())
    (tmp_path / "session.py").write_text(session_script(SessionConfig(), "model.onnx", []))
    ran = subprocess.run([sys.executable, str(tmp_path / "session.py")], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0 and ran.stdout.strip(), ran.stderr


@pytest.mark.parametrize("command", [["inspect"], ["bench", "--iterations", "3"], ["optimize", "-o", "out"],
                                     ["gate", "--against", "mlp.onnx"]])
def test_a_file_name_that_is_not_utf8_gets_a_sentence(mlp, tmp_path, command):
    bad = os.fsencode(tmp_path) + b"/bad\xff.onnx"
    with open(bad, "wb") as handle:
        handle.write(mlp.read_bytes())
    argv = [sys.executable.encode(), b"-m", b"app", command[0].encode(), bad, *[c.encode() for c in command[1:]]]
    done = subprocess.run(argv, capture_output=True, timeout=120, cwd=tmp_path,
                          env=dict(os.environ, PYTHONPATH=str(ROOT), ORTUNE_DATA_DIR=str(tmp_path / "d")))
    stderr = done.stderr.decode("utf-8")
    assert done.returncode == 2 and "not valid UTF-8" in stderr and "incompatible" not in stderr
    assert len(stderr.strip().splitlines()) == 1


def test_a_table_is_never_written_over_a_model_it_compares_even_with_force(ortune, mlp, tmp_path):
    before = mlp.read_bytes()
    done = ortune("compare", mlp, mlp, "--csv", mlp, "--force", "--iterations", "5")
    assert done.code == 2 and "is one of this command's inputs" in done.stderr and mlp.read_bytes() == before
    profiled = ortune("profile", mlp, "--csv", tmp_path / "t.csv", "--out", tmp_path / "t.csv", "--runs", "2")
    assert profiled.code == 2 and "--csv and --out" in profiled.stderr
