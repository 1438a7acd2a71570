"""Remote targets end to end over a real OpenSSH server on 127.0.0.1: adding one (its host
key confirmed), measuring on it, results stored here naming it."""

import json
import time
from pathlib import Path

import pytest

from tests import models


def test_add_needs_the_right_fingerprint(sshd, ortune):
    wrong = ortune("targets", "add", "wrongkey", f"{sshd.user}@127.0.0.1", "--port", sshd.port,
                   "--identity", sshd.client_key, "--trust", "SHA256:not-the-key")
    assert wrong.code == 2
    assert "not added" in wrong.stderr and wrong.stderr.count("\n") == 1
    assert "wrongkey" not in ortune("targets", "list").stdout


def test_add_without_a_terminal_or_trust_refuses_and_shows_the_key(sshd, ortune):
    done = ortune("targets", "add", "asked", f"{sshd.user}@127.0.0.1", "--port", sshd.port)
    assert done.code == 2
    assert sshd.fingerprint() in done.stderr and "--trust" in done.stderr


def test_list_test_and_remove(loop_target, sshd, ortune):
    listed = ortune("targets", "list", "--json").json()["targets"]
    assert any(t["name"] == "loop" and t["port"] == sshd.port for t in listed)
    tested = ortune("targets", "test", "loop", "--json")
    assert tested.code == 0, tested.stderr
    info = tested.json()
    cpu = next(p for p in info["providers"] if p["name"] == "CPUExecutionProvider")
    assert cpu["available"] and info["target"]["name"] == "loop"
    assert info["target"]["machine"]["logical_cores"] >= 1
    ortune("targets", "add", "spare", f"{sshd.user}@127.0.0.1", "--port", sshd.port, "--identity", sshd.client_key,
           "--trust", sshd.fingerprint())
    assert ortune("targets", "remove", "spare").code == 0
    assert "spare" not in ortune("targets", "list").stdout
    assert ortune("targets", "test", "loop").code == 0        # the shared host key is kept for loop


def test_bench_on_a_target_is_stored_here_naming_it(loop_target, sshd, ortune, tmp_path):
    model = models.save(models.mlp(), tmp_path / "mlp.onnx")
    done = ortune("bench", model, "--target", loop_target, "--iterations", 30, "--json")
    assert done.code == 0, done.stderr
    report = done.json()
    assert report["target"]["name"] == "loop"
    assert report["model"]["path"] == str(model)                  # this machine's path, not the cache's
    assert report["latency_ms"]["p50"] > 0 and report["inputs"][0]["shape"] == [1, 64]
    cached = list((sshd.remote_home / "data" / "target-cache").glob("*/mlp.onnx"))
    assert len(cached) == 1
    rows = ortune("history", "--json").json()["results"]
    row = next(r for r in rows if r["id"] == report["history_id"])
    assert row["target"] == "loop" and row["model_path"] == str(model)
    text = ortune("bench", model, "--target", loop_target, "--iterations", 30)
    assert "measured on target loop" in text.stdout


def test_compare_on_a_target_forms_its_ratio_there(loop_target, ortune, tmp_path):
    small = models.save(models.mlp(depth=2), tmp_path / "small.onnx")
    big = models.save(models.mlp(depth=8), tmp_path / "big.onnx")
    done = ortune("compare", small, big, "--target", loop_target, "--duration", "0.5", "--max-seconds", "5", "--json")
    assert done.code == 0, done.stderr
    result = done.json()
    assert result["target"]["name"] == "loop"
    assert [m["path"] for m in result["models"]] == [str(small), str(big)]
    assert all("speedup_ci" in m and m["verdict"] for m in result["models"])


def test_convert_on_a_target_brings_the_variant_back(loop_target, ortune, tmp_path, sshd):
    model = models.save(models.mlp(), tmp_path / "mlp.onnx")
    out = tmp_path / "mlp.fp16.onnx"
    done = ortune("convert", "fp16", model, "-o", out, "--target", loop_target, "--speed-seconds", "0.5", "--json")
    assert done.code == 0, done.stderr
    report = done.json()
    assert report["target"]["name"] == "loop" and report["output"] == str(out) and report["check"] == "passed"
    assert out.is_file() and out.stat().st_size == report["output_bytes"]
    assert report["speed"]["verdict"] in ("faster", "slower", "no-difference", "could-not-tell")
    outputs = sshd.remote_home / "data" / "target-cache" / "outputs"
    deadline = time.monotonic() + 60          # the worker there removes its scratch as it ends, after our end
    while list(outputs.glob("*/*")) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not list(outputs.glob("*/*"))      # scratch removed
    before = out.read_bytes()
    again = ortune("convert", "fp16", model, "-o", out, "--target", loop_target)
    assert again.code == 2 and "--force" in again.stderr and out.read_bytes() == before


def test_unknown_target_is_one_line(ortune, tmp_path):
    model = models.save(models.mlp(), tmp_path / "mlp.onnx")
    done = ortune("bench", model, "--target", "nowhere")
    assert done.code == 2 and "no target named 'nowhere'" in done.stderr
    assert json.loads(ortune("bench", model, "--target", "nowhere", "--json").stdout)["error"]


@pytest.mark.parametrize("command", [["profile", "--runs", "5"], ["diagnose"], ["iobinding", "--iterations", "5"],
                                     ["placement"], ["bench", "--sweep-concurrency", "1,2", "--duration", "0.2"]])
def test_every_measuring_command_runs_on_a_target(loop_target, ortune, tmp_path, command):
    model = models.save(models.mlp(), tmp_path / "mlp.onnx")
    done = ortune(command[0], model, *command[1:], "--target", loop_target, "--json")
    assert done.code == 0, done.stderr
    assert done.json()["target"]["name"] == "loop"


def test_convert_on_a_target_names_the_files_it_brought_back(loop_target, ortune, tmp_path):
    import onnx
    model = tmp_path / "big.onnx"
    onnx.save_model(models.mlp(), str(model), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="big.onnx.data", size_threshold=0)
    out = tmp_path / "out" / "big.fp16.onnx"
    out.parent.mkdir()
    done = ortune("convert", "fp16", model, "-o", out, "--target", loop_target, "--no-speed", "--json")
    assert done.code == 0, done.stderr
    files = done.json()["files"]
    assert len(files) == 2 and all(f.startswith(str(out.parent)) and Path(f).is_file() for f in files), files


def test_profile_on_a_target_brings_the_trace_back(loop_target, ortune, tmp_path, sshd):
    model = models.save(models.mlp(), tmp_path / "mlp.onnx")
    out = tmp_path / "trace.json"
    out.write_text("mine")
    refused = ortune("profile", model, "--runs", 3, "--out", out, "--target", loop_target)
    assert refused.code == 2 and "--force" in refused.stderr and out.read_text() == "mine"
    done = ortune("profile", model, "--runs", 3, "--out", out, "--force", "--target", loop_target, "--json")
    assert done.code == 0, done.stderr
    assert done.json()["trace"] == str(out) and json.loads(out.read_text())     # here, not on the target
    assert not list((sshd.remote_home / "data" / "target-cache").glob("*/trace.json"))   # never uploaded


def test_a_wrong_sweep_is_refused_before_connecting(ortune, tmp_path):
    from app.core.targets.store import Target, load_targets, save_targets
    model = models.save(models.mlp(), tmp_path / "mlp.onnx")
    targets = load_targets()
    targets["void"] = Target(name="void", host="192.0.2.1")          # TEST-NET: nothing answers there
    save_targets(targets)
    done = ortune("bench", model, "--sweep", "nosuchdim=1,2", "--target", "void")
    assert done.code == 2 and "no symbolic dimension named nosuchdim" in done.stderr, done.stderr


def test_gate_on_a_target_judges_there_and_keeps_the_result_here(loop_target, ortune, tmp_path):
    old = models.save(models.mlp(depth=2), tmp_path / "old.onnx")
    new = tmp_path / "new.onnx"
    new.write_bytes(old.read_bytes())
    # up to 20 s, as for the identical copy measured here (tests/cli/test_gate_cli.py): one pair of 0.3 s beside the
    # other tests' load left the interval reaching past 50 % (exit 6); the gate stops once the pair is judged
    done = ortune("gate", new, "--against", old, "--target", loop_target, "--duration", "0.3", "--max-seconds", "20",
                  "--max-slowdown", "50", "--json")
    assert done.code == 0, done.stderr
    result = done.json()
    assert result["target"]["name"] == "loop" and result["new"]["path"] == str(new)
    assert result["history_id"] is not None
