"""The intake follows ONNX Runtime: what it runs comes in (with a warning where the onnx
checker objects), what it refuses is refused with its reason, and links and special files
get one answer."""

import os
import shutil
import stat

import onnx
import onnxruntime as ort
import pytest

from app.core.jobs.errors import UserError
from app.core.model.inspect import inspect_model
from app.core.model.intake import admit, check_readable
from tests import bad_models, models, odd_models


@pytest.mark.parametrize("maker", odd_models.ALL, ids=lambda m: m.__name__)
def test_a_model_onnx_runtime_runs_comes_in(tmp_path, maker):
    model, warning = maker()
    path = models.save(model, tmp_path / f"{maker.__name__}.onnx")
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    session.run(None, odd_models.feeds(model))                     # ONNX Runtime runs it ...
    info = inspect_model(path)                                      # ... so ORTune lets it in
    assert any(warning in text for text in info["warnings"]), info["warnings"]
    assert all("\n" not in text for text in info["warnings"])
    assert admit(path).path == path.resolve()


def test_the_onnx_checker_alone_would_refuse_those(tmp_path):
    for maker in (odd_models.output_without_shape, odd_models.empty_graph_name, odd_models.untyped_output,
                  odd_models.fused_layer_norm):
        with pytest.raises(onnx.checker.ValidationError):
            onnx.checker.check_model(maker()[0])


def test_what_onnx_runtime_refuses_is_refused_with_its_reason(tmp_path):
    path, _ = bad_models.unknown_operator(tmp_path)
    with pytest.raises(UserError) as refused:
        inspect_model(path)
    message = refused.value.message
    assert message.startswith("unknown_op.onnx: ONNX Runtime cannot load it: ")
    assert "No Op registered for FrobnicateTensor" in message
    assert "onnxruntime::" not in message and ".cc:" not in message and str(tmp_path) not in message


def test_versions_are_judged_by_onnx_runtime(tmp_path):
    path, _ = bad_models.opset_too_new(tmp_path)
    with pytest.raises(UserError) as refused:
        admit(path)
    assert refused.value.kind == "unsupported-version"
    assert "ONNX Runtime refuses its versions" in refused.value.message
    assert "999" in refused.value.message and "::" not in refused.value.message


def test_a_model_ort_cannot_run_at_an_old_opset_is_described_and_a_run_gets_ort_reason(tmp_path):
    from app.core.session.config import SessionConfig
    from app.core.session.create import create_session

    model = models.tiny_add()
    model.opset_import[0].version = 3                 # ONNX Runtime has no Add kernel before opset 7
    path = models.save(model, tmp_path / "old_add.onnx")
    assert any("opset 3" in text for text in inspect_model(path)["warnings"])
    with pytest.raises(UserError) as refused:
        create_session(path, SessionConfig())
    assert "Could not find an implementation for Add(1)" in refused.value.message


def test_a_hard_linked_data_file_is_refused_by_every_reader(tmp_path):
    path = bad_models.external_ok(tmp_path)
    inspect_model(path)
    os.link(tmp_path / "external.onnx.data", tmp_path / "another-name.bin")
    for read in (inspect_model, admit, lambda p: admit(p, weights=True)):
        with pytest.raises(UserError) as refused:
            read(path)
        assert refused.value.kind == "unsafe-external-data"
        assert "2 hard links" in refused.value.message


def test_a_symlinked_model_is_the_file_it_points_to(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    path = bad_models.external_ok(real)
    link = tmp_path / "link.onnx"
    link.symlink_to(path)
    assert check_readable(link) == path.resolve()
    assert inspect_model(link)["path"] == str(path.resolve())
    assert admit(link).external_files == ["external.onnx.data"]


def test_a_symlinked_model_finds_no_data_beside_the_link(tmp_path):
    """The data is looked for beside the file itself, not beside the link."""
    real = tmp_path / "real"
    real.mkdir()
    path = bad_models.external_ok(real)
    shutil.move(real / "external.onnx.data", tmp_path / "external.onnx.data")
    (tmp_path / "link.onnx").symlink_to(path)
    with pytest.raises(UserError, match="external.onnx.data', but that file is missing"):
        inspect_model(tmp_path / "link.onnx")


def test_a_dangling_link_says_so(tmp_path):
    (tmp_path / "gone.onnx").symlink_to(tmp_path / "nothing.onnx")
    with pytest.raises(UserError, match="symbolic link to a missing file"):
        check_readable(tmp_path / "gone.onnx")


def test_a_fifo_is_named_and_never_opened(tmp_path):
    fifo = tmp_path / "pipe.onnx"
    os.mkfifo(fifo)                  # opening it to read would block until someone writes
    with pytest.raises(UserError) as refused:
        inspect_model(fifo)
    assert refused.value.kind == "not-a-file"
    assert "is a FIFO (named pipe), not a regular file" in refused.value.message
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_device_is_named(tmp_path):
    with pytest.raises(UserError) as refused:
        admit(os.devnull)
    assert "is a character device, not a regular file" in refused.value.message
    assert "folder" not in refused.value.message
    with pytest.raises(UserError, match="is a folder"):
        admit(tmp_path)


def test_the_version_verdict_is_onnx_runtime_s_own(tmp_path):
    """For every IR version and ai.onnx opset the onnx package knows (and one more), the
    intake refuses exactly what ONNX Runtime refuses to load, quick path included."""
    from app.core.model.ort_verdict import runtime_version_refusal

    quiet = ort.SessionOptions()
    quiet.log_severity_level = 3
    for ir in range(1, onnx.IR_VERSION + 2):
        for opset in (1, 7, 13, 17, 21, onnx.defs.onnx_opset_version(), onnx.defs.onnx_opset_version() + 1):
            model = models.tiny_add()
            model.ir_version, model.opset_import[0].version = ir, opset
            model.graph.ClearField("node")
            model.graph.output[0].name = "x"
            try:
                ort.InferenceSession(model.SerializeToString(), quiet, providers=["CPUExecutionProvider"])
                loads = True
            except Exception:  # noqa: BLE001 - whatever ORT raises is a refusal
                loads = False
            assert (runtime_version_refusal(ir, (("", opset),)) == "") == loads, (ir, opset)


@pytest.mark.parametrize("location", ["d" * 5000, "data\x00file"])
def test_an_external_data_name_the_system_cannot_take_is_one_line(tmp_path, location):
    import onnx
    from app.core.model.intake import check_external_data
    model = models.mlp()
    tensor = model.graph.initializer[0]
    tensor.data_location = onnx.TensorProto.EXTERNAL
    del tensor.external_data[:]
    tensor.external_data.add(key="location", value=location)
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    with pytest.raises(UserError) as refused:
        check_external_data(path, model)
    assert refused.value.kind == "bad-external-data" and "not a usable file name" in refused.value.message
    assert len(refused.value.message) < 400
