import hashlib
from pathlib import Path

import onnx
import onnxruntime as ort
import pytest

from app.core.convert.jobs import MAKE
from app.core.convert.options import THIS_PLATFORM
from app.core.jobs.errors import JobCancelled, UserError
from app.core.jobs.protocol import JobContext
from tests import bad_models, convert_models, models


def digest(*paths):
    return [hashlib.sha256(p.read_bytes()).hexdigest() for p in paths]


def loads(path):
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def convert(kind, source, output, **params):
    return MAKE({"kind": kind, "input": str(source), "output": str(output), **params}, None)


KINDS = [  # kind, model, an operator the variant must have gained
    ("fp16", "cnn", "Cast"),
    ("int8-dynamic", "mlp", "MatMulInteger"),
    ("int8-static", "cnn", "QuantizeLinear"),
    ("int4", "mlp", "com.microsoft.MatMulNBits"),
    ("optimize", "cnn", "com.microsoft.FusedConv"),
    ("transformers", "transformer_block", "com.microsoft.SkipLayerNormalization"),
]


@pytest.mark.parametrize("kind, maker, gained", KINDS)
def test_each_kind_makes_a_loadable_faithful_variant(tmp_path, kind, maker, gained):
    source = models.save(getattr(models, maker)(), tmp_path / f"{maker}.onnx")
    before = digest(source)
    output = tmp_path / f"{maker}.{kind}.onnx"
    report = convert(kind, source, output)
    assert digest(source) == before
    loads(output)
    assert report["output"] == str(output)
    assert report["output_bytes"] == output.stat().st_size
    assert gained in report["op_changes"]["added"]
    fidelity = report["fidelity"]
    assert fidelity["passed"] is True, fidelity
    assert fidelity["outputs"][0]["name"] == "y"
    assert fidelity["outputs"][0]["cosine"] > 0.99
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([source.name, output.name])


def test_ort_format_comes_with_its_operator_config(tmp_path):
    source = models.save(models.cnn(), tmp_path / "cnn.onnx")
    report = convert("ort", source, tmp_path / "cnn.ort", options={"type_reduction": True})
    config = tmp_path / "cnn.required_operators_and_types.config"
    assert config.exists() and "Conv" in config.read_text()
    assert report["files"] == [str(config), str(tmp_path / "cnn.ort")]
    assert report["fidelity"]["passed"] is True
    loads(tmp_path / "cnn.ort")


def test_ort_runtime_style_makes_its_scratch_folder_away_from_the_source(tmp_path, monkeypatch):
    """ORT's tool makes a temporary folder beside the model it is given for this style."""
    import tempfile

    made, real = [], tempfile.TemporaryDirectory

    def recording(*args, **kwargs):
        made.append(kwargs.get("dir"))
        return real(*args, **kwargs)

    monkeypatch.setattr(tempfile, "TemporaryDirectory", recording)
    sources, outputs = tmp_path / "sources", tmp_path / "outputs"
    sources.mkdir()
    outputs.mkdir()
    source = models.save(models.cnn(), sources / "cnn.onnx")
    report = convert("ort", source, outputs / "cnn.ort", options={"optimization_style": "Runtime"})
    beside = [Path(folder).resolve() for folder in made if folder]
    assert beside and sources.resolve() not in beside
    assert sorted(p.name for p in sources.iterdir()) == ["cnn.onnx"]
    assert report["fidelity"]["passed"] is True


@pytest.mark.skipif(THIS_PLATFORM != "amd64", reason="the blocked NCHWc layout exists on x86-64 only")
def test_ort_format_keeps_the_layout_a_session_of_the_source_gets_here(tmp_path):
    source = models.save(models.cnn(), tmp_path / "cnn.onnx")
    kept = convert("ort", source, tmp_path / "here.ort")
    assert kept["options"]["target_platform"] == "amd64"
    assert "com.microsoft.nchwc.Conv" in kept["op_changes"]["added"]
    portable = convert("ort", source, tmp_path / "any.ort", options={"target_platform": "any"})
    assert not any(op.startswith("com.microsoft.nchwc") for op in portable["op_changes"]["added"])


def test_fp16_shrinks_the_weights(tmp_path):
    source = models.save(models.mlp(width=128), tmp_path / "mlp.onnx")
    report = convert("fp16", source, tmp_path / "half.onnx")
    assert 0.45 < report["size_ratio"] < 0.6
    assert report["input_bytes"] == source.stat().st_size


def test_fp16_keeps_subgraphs_working(tmp_path):
    source = models.save(models.with_if_subgraph(), tmp_path / "branch.onnx")
    report = convert("fp16", source, tmp_path / "branch.fp16.onnx")
    assert report["fidelity"]["passed"] is True


def test_a_cast_the_converter_breaks_is_repaired(tmp_path):
    from onnxconverter_common import float16

    model = convert_models.cast_to_float()
    bare = tmp_path / "bare.onnx"
    onnx.save(float16.convert_float_to_float16(model, keep_io_types=True), str(bare))
    with pytest.raises(Exception, match="does not match expected type"):
        loads(bare)
    source = models.save(model, tmp_path / "cast.onnx")
    report = convert("fp16", source, tmp_path / "cast.fp16.onnx", session={"inputs": {"dims": {"batch": 3}}})
    loads(tmp_path / "cast.fp16.onnx")
    assert [r["what"] for r in report["repairs"]] == ["kept 1 Cast-to-float32 node(s) in float32"]
    assert any("Cast" in k["what"] for k in report["kept_in_fp32"])
    assert report["fidelity"]["passed"] is True
    assert report["fidelity"]["dims_used"] == {"batch": 3}


def test_weights_in_constant_nodes_are_preprocessed_for_quantization(tmp_path):
    source = models.save(convert_models.weights_in_constant_nodes(), tmp_path / "const.onnx")
    report = convert("int8-dynamic", source, tmp_path / "const.int8.onnx")
    assert "quant_pre_process" in report["repairs"][0]["what"]
    assert "to be an initializer" in report["repairs"][0]["why"]
    loads(tmp_path / "const.int8.onnx")


def test_an_existing_output_is_kept_without_force(tmp_path):
    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    output = tmp_path / "out.onnx"
    output.write_bytes(b"precious")
    with pytest.raises(UserError) as caught:
        convert("fp16", source, output)
    assert caught.value.kind == "output-exists" and "--force" in caught.value.message
    assert output.read_bytes() == b"precious"
    convert("fp16", source, output, force=True)
    loads(output)


def test_the_source_is_never_the_output(tmp_path):
    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    with pytest.raises(UserError, match="source model itself"):
        convert("fp16", source, source, force=True)


@pytest.mark.parametrize("kind, maker, words", [
    ("int8-dynamic", models.tiny_add, "nothing was quantized"),
    ("int8-dynamic", convert_models.ml_domain_only, "no standard ONNX operators"),
    ("fp16", convert_models.integers_only, "no float32"),
    ("int4", models.tiny_add, "int4 packs the constant 2-D weights of MatMul/Gemm nodes, and it has no such nodes"),
])
def test_impossible_conversions_say_why_and_leave_nothing(tmp_path, kind, maker, words):
    source = models.save(maker(), tmp_path / "model.onnx")
    with pytest.raises(UserError) as caught:
        convert(kind, source, tmp_path / "out.onnx")
    assert words in caught.value.message
    assert "\n" not in caught.value.message
    assert [p.name for p in tmp_path.iterdir()] == ["model.onnx"]


@pytest.mark.parametrize("maker", [bad_models.truncated, bad_models.cycle, bad_models.undefined_input,
                                   bad_models.external_escaping])
@pytest.mark.parametrize("fidelity", [True, False])
def test_a_bad_source_gets_the_intake_message(tmp_path, maker, fidelity):
    source, kind = maker(tmp_path)
    with pytest.raises(UserError) as caught:
        convert("fp16", source, tmp_path / "out.onnx", fidelity=fidelity)
    assert caught.value.kind == kind
    assert not (tmp_path / "out.onnx").exists()


def test_external_data_stays_beside_the_output(tmp_path):
    (tmp_path / "src").mkdir()
    source = tmp_path / "src" / "external.onnx"
    onnx.save(models.mlp(width=64), str(source), save_as_external_data=True, location="external.onnx.data")
    before = digest(source, tmp_path / "src" / "external.onnx.data")
    report = convert("fp16", source, tmp_path / "half.onnx")
    assert (tmp_path / "half.onnx.data").exists()
    assert report["external_data"] is True
    assert report["output_bytes"] == sum(p.stat().st_size for p in (tmp_path / "half.onnx", tmp_path / "half.onnx.data"))
    assert digest(source, tmp_path / "src" / "external.onnx.data") == before
    loads(tmp_path / "half.onnx")


@pytest.mark.parametrize("kind", ["fp16", "int8-dynamic", "int4"])
def test_models_past_the_protobuf_limit_are_written_with_external_data(tmp_path, monkeypatch, kind):
    monkeypatch.setattr("app.core.convert.convert.PROTOBUF_LIMIT", 1000)
    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    report = convert(kind, source, tmp_path / "big.onnx")
    assert (tmp_path / "big.onnx.data").exists()
    assert report["fidelity"]["passed"] is True
    loads(tmp_path / "big.onnx")


def test_without_fidelity_the_variant_is_still_loaded(tmp_path):
    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    report = convert("fp16", source, tmp_path / "half.onnx", fidelity=False)
    assert report["fidelity"]["skipped"] is True and report["fidelity"]["passed"] is None


def test_cancel_during_calibration_leaves_no_file(tmp_path):
    source = models.save(models.cnn(), tmp_path / "cnn.onnx")
    ctx = JobContext(lambda kind, payload: ctx.cancel() if "calibrating" in str(payload.get("message")) else None)
    with pytest.raises(JobCancelled):
        MAKE({"kind": "int8-static", "input": str(source), "output": str(tmp_path / "q.onnx"),
                 "options": {"calibration_count": 50}}, ctx)
    assert [p.name for p in tmp_path.iterdir()] == ["cnn.onnx"]


def test_calibration_from_a_folder_of_arrays(tmp_path):
    import numpy as np

    folder = tmp_path / "calibration"
    folder.mkdir()
    rng = np.random.default_rng(5)
    for index in range(3):
        np.save(folder / f"sample{index}.npy", rng.standard_normal((1, 3, 32, 32)).astype(np.float32))
    source = models.save(models.cnn(), tmp_path / "cnn.onnx")
    report = convert("int8-static", source, tmp_path / "q.onnx", options={"calibration": str(folder)})
    assert report["calibration_samples"] == 3
    loads(tmp_path / "q.onnx")


def test_calibration_from_the_data_folder_and_the_check_on_its_first_sample(tmp_path):
    import numpy as np

    folder = tmp_path / "data"
    folder.mkdir()
    rng = np.random.default_rng(6)
    for index in range(4):
        np.savez(folder / f"s{index}.npz", x=rng.standard_normal((1, 3, 32, 32)).astype(np.float32))
    source = models.save(models.cnn(), tmp_path / "cnn.onnx")
    report = convert("int8-static", source, tmp_path / "q.onnx", session={"inputs": {"data": str(folder)}})
    assert report["calibration_samples"] == 4 and report["calibration_source"] == f"your data folder {folder}"
    assert report["fidelity"]["inputs"][0]["reason"] == "sample s0.npz of your data folder"


def test_relative_input_files_are_found_while_the_library_runs(tmp_path, monkeypatch):
    import numpy as np

    monkeypatch.chdir(tmp_path)
    np.save("sample.npy", np.random.default_rng(5).standard_normal((1, 3, 32, 32)).astype(np.float32))
    source = models.save(models.cnn(), tmp_path / "cnn.onnx")
    session = {"inputs": {"mode": "files", "files": {"x": "sample.npy"}}}
    report = convert("int8-static", source, "q.onnx", session=session)
    assert report["calibration_source"] == "your fidelity inputs"
    assert report["calibration_samples"] == 1
    loads(tmp_path / "q.onnx")


def test_mixed_precision_refuses_without_a_gpu(tmp_path, monkeypatch):
    monkeypatch.setattr("app.core.session.providers.probe_providers", lambda ctx=None: {"providers": [
        {"name": "CUDAExecutionProvider", "available": False, "gpu": True, "in_build": False,
         "reason": "not part of this build"}]})
    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    with pytest.raises(UserError) as caught:
        convert("mixed", source, tmp_path / "mixed.onnx")
    assert caught.value.kind == "needs-gpu" and "not part of this build" in caught.value.message


def test_mixed_precision_code_path(tmp_path, monkeypatch):
    """The library itself computes on the CPU, so its path runs here once the GPU gate is lifted."""
    monkeypatch.setattr("app.core.session.providers.probe_providers", lambda ctx=None: {"providers": [
        {"name": "CUDAExecutionProvider", "available": True, "gpu": True, "in_build": True, "reason": ""}]})
    source = models.save(models.mlp(width=16, depth=2), tmp_path / "mlp.onnx")
    report = convert("mixed", source, tmp_path / "mixed.onnx", options={"rtol": 0.01, "atol": 0.001})
    assert report["fidelity"]["passed"] is True
    assert isinstance(report["mixed_kept_nodes"], list)
    loads(tmp_path / "mixed.onnx")


def test_a_killed_jobs_leftovers_are_swept(tmp_path):
    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    leftover = tmp_path / ".out.onnx.999999999.abcd.partial"
    leftover.mkdir()
    (leftover / "out.onnx").write_bytes(b"half")
    convert("fp16", source, tmp_path / "out.onnx")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mlp.onnx", "out.onnx"]


def test_an_already_quantized_model_is_not_quantized_again(tmp_path):
    from onnxruntime.quantization import quantize_dynamic

    models.save(models.mlp(), tmp_path / "mlp.onnx")
    quantize_dynamic(str(tmp_path / "mlp.onnx"), str(tmp_path / "q.onnx"))
    for kind in ("int8-dynamic", "int8-static", "int4"):
        with pytest.raises(UserError, match="is already quantized"):
            convert(kind, tmp_path / "q.onnx", tmp_path / "qq.onnx")
    assert not (tmp_path / "qq.onnx").exists()


def test_library_scratch_files_never_land_in_the_working_folder(tmp_path, monkeypatch):
    models_folder, working = tmp_path / "models", tmp_path / "working"
    models_folder.mkdir()
    working.mkdir()
    source = models.save(convert_models.shape_inference_gives_up(), models_folder / "inverse.onnx")
    monkeypatch.chdir(working)
    report = convert("int8-static", source, "inverse.int8.onnx", options={"preprocess": True}, fidelity=False)
    assert report["output"] == str(working / "inverse.int8.onnx")
    assert sorted(p.name for p in working.iterdir()) == ["inverse.int8.onnx"]
    assert sorted(p.name for p in models_folder.iterdir()) == ["inverse.onnx"]
