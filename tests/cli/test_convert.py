import os
import signal
import stat
import subprocess
import sys
import time

import onnxruntime as ort
import pytest

from tests import models, transformer_models
from tests.convert_models import gemm_layers
from tests.cli.conftest import ROOT
from tests.rope_models import llama_rope


def test_convert_prints_the_contract_as_json(ortune, tmp_path):
    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    output = tmp_path / "mlp.int8.onnx"
    done = ortune("convert", "int8-dynamic", source, "-o", output, "--per-channel", "--dim", "batch=2", "--json")
    assert done.code == 0, done.stderr
    report = done.json()
    for field in ("kind", "input", "output", "input_bytes", "output_bytes", "seconds", "fidelity", "speed"):
        assert field in report
    speed = report["speed"]
    assert set(speed) >= {"ratio", "ratio_ci", "verdict", "source_p50_ms", "variant_p50_ms", "rounds"}
    assert speed["verdict"] in ("faster", "slower", "no-difference", "could-not-tell") and speed["rounds"] >= 10
    assert report["kind"] == "int8-dynamic" and report["output"] == str(output)
    assert report["options"]["per_channel"] is True
    fidelity = report["fidelity"]
    assert set(fidelity["outputs"][0]) >= {"name", "max_abs_diff", "max_rel_diff", "cosine", "nonfinite"}
    assert fidelity["passed"] is True and fidelity["dims_used"] == {"batch": 2}
    ort.InferenceSession(str(output), providers=["CPUExecutionProvider"])
    assert "WARNING" not in done.stderr


def test_convert_text_report(ortune, tmp_path):
    source = models.save(models.transformer_block(), tmp_path / "block.onnx")
    done = ortune("convert", "transformers", source, "-o", tmp_path / "fused.onnx", "--num-heads", "4")
    assert done.code == 0, done.stderr
    assert "SkipLayerNormalization ×1 added" in done.stdout
    assert "PASSED" in done.stdout
    assert "speed: " in done.stdout and "the source's speed" in done.stdout


def test_transformers_with_default_flags_say_what_they_read_and_fused(ortune, tmp_path):
    source = models.save(transformer_models.gpt2_layer(), tmp_path / "gpt2.onnx")
    done = ortune("convert", "transformers", source, "-o", tmp_path / "fused.onnx", "--fp16", "--no-speed")
    assert done.code == 0, done.stderr
    assert "fused       Attention ×1" in done.stdout and "(as gpt2, 4 heads, hidden size 32; model type: a causal" \
        in done.stdout
    assert "float16     100% of the weights" in done.stdout
    assert "PASSED" in done.stdout


def test_a_llama_decoders_group_query_attention_and_rotations_are_counted_per_layer(ortune, tmp_path):
    source = models.save(llama_rope(layers=2), tmp_path / "llama.onnx")
    done = ortune("convert", "transformers", source, "-o", tmp_path / "fused.onnx", "--no-speed")
    assert done.code == 0, done.stderr
    assert "  attention   GroupQueryAttention in 2 of 2 layers\n" in done.stdout
    assert "  rotary      fused for 4 of 4 rotations (4 inside GroupQueryAttention)\n" in done.stdout
    assert "next tokens agree on 16 of 16 greedy steps" in done.stdout


def test_speed_seconds_is_read_as_a_number_of_seconds(ortune, tmp_path):
    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    done = ortune("convert", "fp16", source, "-o", tmp_path / "half.onnx", "--speed-seconds", "two")
    assert done.code == 2 and done.stderr.strip() == "ortune: --speed-seconds expects a number, not 'two'"
    done = ortune("convert", "fp16", source, "-o", tmp_path / "half.onnx", "--speed-seconds", "-1")
    assert done.code == 2 and "--speed-seconds must be at least 0" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mlp.onnx"]


def test_no_speed_skips_the_speed_check_and_keeps_the_exit_code(ortune, tmp_path):
    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    done = ortune("convert", "int8-dynamic", source, "-o", tmp_path / "q.onnx", "--no-speed", "--json")
    assert done.code == 0, done.stderr
    assert done.json()["speed"] == {"skipped": True, "why": "the speed check was turned off"}
    text = ortune("convert", "int8-dynamic", source, "-o", tmp_path / "q.onnx", "--force", "--no-speed")
    assert "speed: not measured — the speed check was turned off" in text.stdout


def test_an_existing_output_needs_force(ortune, tmp_path):
    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    output = tmp_path / "out.onnx"
    output.write_bytes(b"keep")
    done = ortune("convert", "fp16", source, "-o", output, "--no-speed", "--json")
    assert done.code == 2
    assert done.json()["error"]["kind"] == "output-exists"
    assert len(done.stderr.strip().splitlines()) == 1 and "--force" in done.stderr
    assert output.read_bytes() == b"keep"
    assert ortune("convert", "fp16", source, "-o", output, "--force", "--no-fidelity", "--no-speed").code == 0


def test_an_option_of_another_kind_is_refused(ortune, tmp_path):
    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    done = ortune("convert", "fp16", source, "-o", tmp_path / "x.onnx", "--block-size", "32", "--no-speed")
    assert done.code == 2
    assert "--block-size is not an option of fp16 (it belongs to int4)" in done.stderr


def test_an_impossible_conversion_is_one_line(ortune, tmp_path):
    source = models.save(models.tiny_add(), tmp_path / "add.onnx")
    done = ortune("convert", "int8-dynamic", source, "-o", tmp_path / "q.onnx", "--no-speed")
    assert done.code == 2
    assert "nothing was quantized" in done.stderr
    assert "Traceback" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["add.onnx"]


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="Ctrl+C is sent to a process group on POSIX")
def test_ctrl_c_cancels_and_leaves_nothing(tmp_path):
    """Ctrl+C reaches the command and its job process alike (one process group)."""
    import psutil

    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    # The streams go to a file beside the folder, not to pipes: a pipe is held open by every process
    # that inherited it, so reading it to its end would wait on more than the command itself.
    stderr_file = tmp_path.parent / f"{tmp_path.name}-stderr.txt"
    with open(stderr_file, "w") as stderr:
        process = subprocess.Popen([sys.executable, "-m", "app", "convert", "int8-static", source.name, "-o",
                                    "q.onnx", "--calibration-count", "1000000"], cwd=tmp_path, start_new_session=True,
                                   stdout=subprocess.DEVNULL, stderr=stderr, text=True,
                                   env=dict(os.environ, PYTHONPATH=str(ROOT)))
    deadline = time.monotonic() + 120
    while not list(tmp_path.glob(".q.onnx.*.partial")) and time.monotonic() < deadline:
        time.sleep(0.1)
    job = [p for p in psutil.Process(process.pid).children()]
    os.killpg(process.pid, signal.SIGINT)
    process.wait(timeout=120)
    err = stderr_file.read_text()
    assert process.returncode == 3
    assert err.strip().splitlines()[-1] == "ortune: cancelled"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mlp.onnx"]
    # the job's processes, and the resource tracker a spawned child comes with, end with the command
    _, alive = psutil.wait_procs(job, timeout=10)
    assert job and not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in alive)


def _needs_21_values(path):
    """A model that runs only on an input of exactly 21 values: no default or plan finds that."""
    import numpy as np
    from onnx import TensorProto, helper

    shape = helper.make_tensor("shape", TensorProto.INT64, [2], np.array([3, 7], np.int64))
    graph = helper.make_graph([helper.make_node("Reshape", ["x", "shape"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "n"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 7])], [shape])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return models.save(model, path)


def test_a_variant_whose_check_cannot_run_is_made_and_exits_4(ortune, tmp_path):
    source = _needs_21_values(tmp_path / "fixed.onnx")
    output = tmp_path / "fixed.fp16.onnx"
    done = ortune("convert", "fp16", source, "-o", output, "--json")
    assert done.code == 4, done.stderr
    report = done.json()
    assert report["check"] == "not-run" and output.is_file()
    assert "could not run on the check's inputs" in report["fidelity"]["problem"]
    assert report["speed"]["skipped"] is True and "does not run on the check's inputs" in report["speed"]["why"]
    text = ortune("convert", "fp16", source, "-o", output, "--force")
    assert text.code == 4 and "NOT CHECKED" in text.stdout and "speed: not measured" in text.stdout
    given = ortune("convert", "fp16", source, "-o", output, "--force", "--dim", "n=21", "--no-speed", "--json")
    assert given.code == 0 and given.json()["check"] == "passed"


def test_a_failed_check_exits_4(ortune, tmp_path):
    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    done = ortune("convert", "int8-dynamic", source, "-o", tmp_path / "q.onnx", "--tol-abs", "0", "--tol-rel", "0",
                  "--tol-cosine", "1.0", "--no-speed", "--json")
    assert done.code == 4 and done.json()["check"] == "failed"
    assert done.json()["fidelity"]["inputs"][0]["name"] == "x"


def test_force_never_replaces_a_fifo(ortune, tmp_path):
    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    os.mkfifo(tmp_path / "out.onnx")
    done = ortune("convert", "fp16", source, "-o", tmp_path / "out.onnx", "--force", "--no-speed", "--json")
    assert done.code == 2 and done.json()["error"]["kind"] == "bad-output"
    assert len(done.stderr.strip().splitlines()) == 1 and "FIFO" in done.stderr
    assert stat.S_ISFIFO(os.lstat(tmp_path / "out.onnx").st_mode)


@pytest.mark.parametrize("flags", [["--provider", "nonsense"], ["--input", "x=objects.npy"]])
def test_a_wrong_setting_for_the_check_ends_the_conversion(tmp_path, flags):
    """The user's settings, not the source, are wrong: exit 2 and no variant, not "made, check not run"."""
    import numpy as np
    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    np.save(tmp_path / "objects.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    done = subprocess.run([sys.executable, "-m", "app", "convert", "fp16", source.name, "-o", "out.onnx", "--no-speed", *flags],
                          cwd=tmp_path, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert not (tmp_path / "out.onnx").exists()


def test_int4_says_the_gemm_layers_it_rewrote_to_pack_them(ortune, tmp_path):
    source = models.save(gemm_layers(), tmp_path / "gemms.onnx")
    done = ortune("convert", "int4", source, "-o", tmp_path / "int4.onnx", "--speed-seconds", "0")
    assert done.code == 0, done.stderr
    assert "Gemm ×2 rewritten as MatMul + Add, whose weights int4 packs" in done.stdout


def test_transformers_says_the_rotary_angles_it_rewrote(ortune, tmp_path):
    source = models.save(llama_rope(layers=2, broadcast_freqs=True), tmp_path / "llama.onnx")
    done = ortune("convert", "transformers", source, "-o", tmp_path / "fused.onnx", "--speed-seconds", "0")
    assert done.code == 0, done.stderr
    assert "rewritten   rotary angles ×1 as MatMul + Transpose" in done.stdout
    assert "GroupQueryAttention in 2 of 2 layers" in done.stdout
