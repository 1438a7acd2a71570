"""An output never destroys what is at its path: not a device, FIFO, socket or folder (even
with --force), not a file the source is made of, and it gets the permissions of a normal
new file."""

import os
import stat

import onnx
import onnxruntime as ort
import pytest

from app.core.convert.jobs import MAKE
from app.core.jobs.errors import UserError
from app.core.profile.jobs import PROFILE
from app.core.runner.process import run_job
from tests import bad_models, models


def convert(source, output, **params):
    return MAKE({"kind": "fp16", "input": str(source), "output": str(output), "fidelity": False, **params},
                None)


def refused(source, output, **params) -> UserError:
    with pytest.raises(UserError) as caught:
        convert(source, output, **params)
    assert "\n" not in caught.value.message
    return caught.value


def test_a_fifo_is_never_replaced(tmp_path):
    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    fifo = tmp_path / "out.onnx"
    os.mkfifo(fifo)
    error = refused(source, fifo, force=True)
    assert error.kind == "bad-output" and "FIFO" in error.message and "even with --force" in error.message
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mlp.onnx", "out.onnx"]


def _device(tmp_path):
    """A character device to aim at: a copy of /dev/null's node in `tmp_path` where this
    user may make one (root); /dev/null itself only where this user cannot replace it."""
    if os.geteuid() != 0:
        return "/dev/null"
    path = tmp_path / "null.onnx"
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("no device node can be made here, and /dev/null is not put at risk")
    return path


def test_a_device_is_never_replaced(tmp_path):
    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    device = _device(tmp_path)
    before = os.lstat(device)
    error = refused(source, device, force=True)
    assert "character device" in error.message
    after = os.lstat(device)
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev and after.st_ino == before.st_ino
    assert not [p for p in os.listdir(os.path.dirname(device)) if p.startswith((".null.", ".null.onnx."))]


def test_a_socket_is_never_replaced(tmp_path):
    import socket

    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(tmp_path / "out.onnx"))
    try:
        error = refused(source, tmp_path / "out.onnx", force=True)
        assert "a socket" in error.message and stat.S_ISSOCK(os.lstat(tmp_path / "out.onnx").st_mode)
    finally:
        listener.close()


def test_a_folder_is_never_replaced(tmp_path):
    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    (tmp_path / "out.onnx").mkdir()
    error = refused(source, tmp_path / "out.onnx", force=True)
    assert "is a folder" in error.message and (tmp_path / "out.onnx").is_dir()


def test_a_fifo_is_never_replaced_by_the_companion_data_file(tmp_path):
    source = bad_models.external_ok(tmp_path)
    os.mkfifo(tmp_path / "out.onnx.data")
    error = refused(source, tmp_path / "out.onnx", force=True)
    assert "out.onnx.data" in error.message and "FIFO" in error.message
    assert stat.S_ISFIFO(os.lstat(tmp_path / "out.onnx.data").st_mode)


@pytest.mark.parametrize("how", ["itself", "symlink", "companion"])
def test_the_source_external_data_is_never_replaced(tmp_path, how):
    source = bad_models.external_ok(tmp_path)
    data = tmp_path / "external.onnx.data"
    before = data.read_bytes()
    output = {"itself": data, "symlink": tmp_path / "link.onnx", "companion": tmp_path / "other.onnx"}[how]
    if how == "symlink":
        output.symlink_to(data.name)
    elif how == "companion":     # the output's own data file would land on the source's
        (tmp_path / "other.onnx.data").symlink_to(data)
    error = refused(source, output, force=True)
    assert error.kind == "bad-output" and "external data (external.onnx.data)" in error.message
    assert data.read_bytes() == before
    ort.InferenceSession(str(source), providers=["CPUExecutionProvider"])


def test_the_source_through_a_hard_link_is_never_replaced(tmp_path):
    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    os.link(source, tmp_path / "same.onnx")
    assert "source model itself" in refused(source, tmp_path / "same.onnx", force=True).message


def test_a_dangling_link_needs_force(tmp_path):
    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    link = tmp_path / "out.onnx"
    link.symlink_to(tmp_path / "gone" / "nowhere.onnx")
    error = refused(source, link)
    assert error.kind == "output-exists" and "link to a missing file" in error.message and "--force" in error.message
    assert link.is_symlink()
    convert(source, link, force=True)
    assert not link.is_symlink() and link.is_file()
    ort.InferenceSession(str(link), providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_outputs_and_their_data_get_normal_permissions(tmp_path, umask):
    source = tmp_path / "wide.onnx"     # weights big enough to stay in a data file in float16
    onnx.save(models.mlp(width=64), str(source), save_as_external_data=True, location="wide.onnx.data")
    previous = os.umask(umask)
    try:
        report = convert(source, tmp_path / "out.onnx")
    finally:
        os.umask(previous)
    assert [os.path.basename(p) for p in report["files"]] == ["out.onnx.data", "out.onnx"]
    for name in ("out.onnx", "out.onnx.data"):
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == 0o666 & ~umask, name


def test_a_trace_never_replaces_a_fifo(tmp_path):
    model = models.save(models.mlp(), tmp_path / "mlp.onnx")
    fifo = tmp_path / "trace.json"
    os.mkfifo(fifo)
    with pytest.raises(UserError) as caught:
        run_job(PROFILE, {"model": str(model), "runs": 1, "out": str(fifo), "force": True})
    assert "FIFO" in caught.value.message
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
