import json
import os
import subprocess
import sys

import pytest

from app.core.jobs.errors import UserError
from app.core.jobs.protocol import JobContext
from app.core.optimize.jobs import OPTIMIZE
from app.core.session.config import SessionConfig
from app.core.store.migrations import REPORT_VERSION, VERSION_KEY
from tests import models

#: what may come on top of budget × 1.1: a stopped child's grace to end (runner.CANCEL_GRACE_S) and the writing
ALLOWANCE_S = 6.0
NAMED = "<script>alert(1)</script>"


def _run(model, out, emit=None, **given):
    params = {"model": str(model), "out_dir": str(out), "screen_seconds": 0.3, "tune": False,
              "session": SessionConfig(intra_op_num_threads=1).to_dict(), **given}
    return OPTIMIZE(params, JobContext(emit))


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    folder = tmp_path_factory.mktemp("optimize")
    # a model name with markup: the report must show it as text
    model = models.save(models.mlp(width=32, depth=2), folder / f"{NAMED.replace('/', '_')}.onnx")
    events = []
    result = _run(model, folder / "ship", lambda kind, payload: events.append((kind, payload)),
                  kinds=["optimize", "fp16", "transformers"], budget_seconds=30)
    return result, folder / "ship", events


def test_the_result_keeps_its_contract(shipped):
    result, folder, _ = shipped
    for key in ("choice", "candidates", "inputs", "data", "budget_seconds", "elapsed_seconds", "target"):
        assert key in result
    choice = result["choice"]
    for key in ("kind", "model", "preset", "speedup", "speedup_ci", "verdict", "fidelity", "settings"):
        assert key in choice
    assert choice["fidelity"]["passed"] and choice["model"].startswith(str(folder))
    assert choice["preset"] == str(folder / "preset.json")
    kinds = [row["kind"] for row in result["candidates"]]
    assert kinds[0] == "source" and "optimize" in kinds
    for row in result["candidates"]:
        assert row["status"] in ("passed", "failed-check", "refused", "skipped") and row["reason"]
        for key in ("speedup", "speedup_ci", "verdict", "fidelity", "size_bytes"):
            assert key in row
    made = next(row for row in result["candidates"] if row["kind"] == "optimize")
    assert made["status"] == "passed" and made["verdict"] in ("faster", "slower", "no-difference", "could-not-tell")
    assert made["speedup_ci"][0] <= made["speedup"] <= made["speedup_ci"][1] and made["size_bytes"] > 0
    assert result["inputs"][0]["name"] == "x" and result["inputs"][0]["shape"] == [1, 32]
    assert result["partial"] is False


def test_the_answer_is_a_faster_faithful_candidate_or_the_source(shipped):
    result, _, _ = shipped
    choice = result["choice"]
    if choice["kind"] == "source":
        assert not any(r["verdict"] == "faster" and r["status"] == "passed" for r in result["candidates"][1:])
    else:
        assert choice["verdict"] == "faster" and choice["speedup_ci"][0] > 1.02


def test_kinds_that_cannot_help_are_skipped_with_their_reason(shipped):
    rows = {row["kind"]: row for row in shipped[0]["candidates"]}
    assert rows["fp16"]["status"] == "skipped" and "CPU provider" in rows["fp16"]["reason"]
    assert rows["transformers"]["status"] == "skipped" and "attention" in rows["transformers"]["reason"]
    assert rows["int8-dynamic"]["status"] == "skipped" and "not asked for" in rows["int8-dynamic"]["reason"]


def test_each_candidate_is_sent_as_it_finishes(shipped):
    result, _, events = shipped
    sent = [payload["payload"]["kind"] for kind, payload in events if kind == "data"
            and payload["kind"] == "candidate"]
    assert sent == [row["kind"] for row in result["candidates"][1:]]
    fractions = [p["fraction"] for kind, p in events if kind == "progress" and p["fraction"] is not None]
    assert fractions == sorted(fractions) and any("s left" in p["message"] for k, p in events if k == "progress")


def test_the_folder_holds_what_to_ship(shipped, tmp_path):
    result, folder, _ = shipped
    assert sorted(p.name for p in folder.iterdir()) == ["model.onnx", "optimize.json", "preset.json",
                                                          "report.html", "session.py"]
    assert all("model" not in row for row in result["candidates"]), "without --keep-candidates none is kept"
    written = json.loads((folder / "optimize.json").read_text())
    assert written["choice"] == json.loads(json.dumps(result["choice"]))
    assert written[VERSION_KEY] == REPORT_VERSION, "a saved result says its version, as a stored one does"
    assert SessionConfig.load(folder / "preset.json").to_dict() == SessionConfig.from_dict(
        result["choice"]["settings"]).to_dict()
    script = (folder / "session.py").read_text()
    assert "import app" not in script and "from app" not in script and "intra_op_num_threads = 1" in script
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, str(folder / "session.py")], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "y (1, 32) float32" in done.stdout


def test_the_report_is_offline_and_escapes_what_came_from_the_model(shipped):
    html = (shipped[1] / "report.html").read_text()
    assert "http" not in html and "<script" not in html
    assert "&lt;script&gt;alert(1)&lt;_script&gt;" in html
    assert "<svg" in html and "Leaderboard" in html and "ONNX Runtime" in html


def test_the_machine_names_the_providers_that_start_here_not_only_those_built_in(shipped):
    machine = shipped[0]["machine"]
    assert "CPUExecutionProvider" in machine["usable_providers"]
    # every provider of the build is either usable or comes with the reason it is not
    told = set(machine["usable_providers"]) | {p["name"] for p in machine["not_usable_providers"]}
    assert set(machine["in_build_providers"]) <= told
    assert all(p["reason"] for p in machine["not_usable_providers"])


def test_the_budget_is_honoured(tmp_path):
    model = models.save(models.mlp(width=32, depth=2), tmp_path / "mlp.onnx")
    budget = 12.0     # too short for every kind and tuning: the search must stop itself
    result = _run(model, tmp_path / "ship", budget_seconds=budget, tune=True)
    assert result["budget_seconds"] == budget
    assert result["elapsed_seconds"] <= budget * 1.1 + ALLOWANCE_S
    assert any("budget" in row["reason"] for row in result["candidates"]) or result["tune"].get("skipped")


def test_cancel_keeps_what_was_measured(tmp_path):
    model = models.save(models.mlp(width=16, depth=1), tmp_path / "mlp.onnx")
    ctx = JobContext()

    def emit(kind, payload):
        if kind == "data" and payload["kind"] == "candidate" and payload["payload"]["kind"] == "optimize":
            ctx.cancel()

    ctx._emit = emit
    result = OPTIMIZE({"model": str(model), "out_dir": str(tmp_path / "ship"), "screen_seconds": 0.3, "tune": False,
                       "kinds": ["optimize", "ort"], "budget_seconds": 60}, ctx)
    assert result["partial"] is True
    rows = {row["kind"]: row for row in result["candidates"]}
    assert rows["optimize"]["status"] == "passed" and rows["optimize"]["speedup"] is not None
    assert "ort" not in rows
    assert "Partial" in (tmp_path / "ship" / "report.html").read_text()


def test_existing_files_are_refused_before_any_work(tmp_path):
    model = models.save(models.tiny_add(), tmp_path / "add.onnx")
    (tmp_path / "ship").mkdir()
    (tmp_path / "ship" / "preset.json").write_text("{}")
    with pytest.raises(UserError, match="already exists; use --force"):
        _run(model, tmp_path / "ship")
    assert sorted(p.name for p in (tmp_path / "ship").iterdir()) == ["preset.json"]
    with pytest.raises(UserError, match="unknown candidate kind .fp8."):
        _run(model, tmp_path / "other", kinds=["fp8"])
