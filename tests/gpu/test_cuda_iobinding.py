"""The CUDA path of the IO binding demo on a real GPU: device OrtValues, outputs bound
to the device, preallocated outputs written in place, CUDA graph replay, and GPU
memory handed back when the measuring process ends."""

import time

import numpy as np
import pytest

from app.core.session.config import ProviderSpec, SessionConfig
from tests import models
from app.core.iobinding.jobs import IOBINDING

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cuda")]
MODE_NAMES = ["plain", "bind-inputs-each-run", "device-inputs", "preallocated-outputs", "cuda-graph"]


def cuda_config(**options) -> SessionConfig:
    return SessionConfig(providers=[ProviderSpec("CUDAExecutionProvider", {k: str(v) for k, v in options.items()})])


@pytest.fixture(scope="module")
def cnn_path(tmp_path_factory):
    return models.save(models.cnn(channels=16, size=64), tmp_path_factory.mktemp("gpu") / "cnn.onnx")


@pytest.fixture(scope="module")
def cuda_session(cnn_path):
    from app.core.session.create import create_session

    return create_session(cnn_path, cuda_config())


def image(batch=4, seed=0):
    return np.random.default_rng(seed).standard_normal((batch, 3, 64, 64)).astype(np.float32)


def test_a_device_ortvalue_lives_on_the_gpu_and_round_trips():
    import onnxruntime as ort

    host = image()
    value = ort.OrtValue.ortvalue_from_numpy(host, "cuda", 0)
    assert value.device_name().lower() == "cuda"
    assert value.shape() == list(host.shape)
    assert value.data_ptr() != host.ctypes.data
    np.testing.assert_array_equal(value.numpy(), host)


def test_the_session_really_runs_on_cuda(cuda_session):
    assert cuda_session.get_providers()[0] == "CUDAExecutionProvider"


def test_outputs_bound_to_the_device_stay_there(cuda_session):
    import onnxruntime as ort

    host = image()
    expected = cuda_session.run(None, {"x": host})[0]
    binding = cuda_session.io_binding()
    binding.bind_ortvalue_input("x", ort.OrtValue.ortvalue_from_numpy(host, "cuda", 0))
    binding.bind_output("y", "cuda", 0)
    cuda_session.run_with_iobinding(binding)
    output = binding.get_outputs()[0]
    assert output.device_name().lower() == "cuda"
    np.testing.assert_allclose(binding.copy_outputs_to_cpu()[0], expected, rtol=1e-4, atol=1e-5)


def test_a_preallocated_output_is_written_in_place(cuda_session):
    import onnxruntime as ort

    host = image()
    expected = cuda_session.run(None, {"x": host})[0]
    out = ort.OrtValue.ortvalue_from_shape_and_type(list(expected.shape), np.float32, "cuda", 0)
    address = out.data_ptr()
    binding = cuda_session.io_binding()
    binding.bind_ortvalue_input("x", ort.OrtValue.ortvalue_from_numpy(host, "cuda", 0))
    binding.bind_ortvalue_output("y", out)
    for _ in range(3):
        cuda_session.run_with_iobinding(binding)
    assert out.data_ptr() == address
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-5)


def test_a_cuda_graph_replays_with_inputs_updated_in_place(cnn_path, cuda_session):
    import onnxruntime as ort

    from app.core.session.create import create_session

    graph_session = create_session(cnn_path, cuda_config(enable_cuda_graph=1))
    first, second = image(seed=1), image(seed=2)
    placed = ort.OrtValue.ortvalue_from_numpy(first, "cuda", 0)
    out = ort.OrtValue.ortvalue_from_shape_and_type([4, 10], np.float32, "cuda", 0)
    binding = graph_session.io_binding()
    binding.bind_ortvalue_input("x", placed)
    binding.bind_ortvalue_output("y", out)
    for _ in range(4):                  # ordinary runs, then the capture, then replays
        graph_session.run_with_iobinding(binding)
    np.testing.assert_allclose(out.numpy(), cuda_session.run(None, {"x": first})[0], rtol=1e-4, atol=1e-5)
    placed.update_inplace(second)       # same address, new data: the replay must see it
    graph_session.run_with_iobinding(binding)
    np.testing.assert_allclose(out.numpy(), cuda_session.run(None, {"x": second})[0], rtol=1e-4, atol=1e-5)


def test_the_demo_measures_all_five_modes_on_cuda(cnn_path):
    from app.core.runner.process import run_job

    config = cuda_config()
    config.inputs.dims["batch"] = 8
    result = run_job(IOBINDING, {"path": str(cnn_path), "session": config.to_dict(),
                                                         "provider": "cuda", "iterations": 30, "warmup": 3})
    modes = {m["name"]: m for m in result["modes"]}
    assert list(modes) == MODE_NAMES
    assert [m["status"] for m in modes.values()] == ["measured"] * 5, [m["skipped_reason"] for m in modes.values()]
    in_bytes, out_bytes = 8 * 3 * 64 * 64 * 4, 8 * 10 * 4
    assert (result["input_bytes"], result["output_bytes"]) == (in_bytes, out_bytes)
    assert modes["plain"]["bytes_copied_per_run"] == in_bytes + out_bytes
    assert modes["bind-inputs-each-run"]["bytes_copied_per_run"] == in_bytes
    assert all(modes[n]["bytes_copied_per_run"] == 0 for n in MODE_NAMES[2:])
    assert result["transfer"]["to_device_bytes_per_s"] > 0 and result["transfer"]["to_host_bytes_per_s"] > 0
    assert modes["plain"]["copy_ms_per_run"] > 0
    for mode in modes.values():
        assert mode["max_abs_diff"] < 1e-3, mode
        assert mode["latency_ms"]["p50"] > 0


def test_gpu_memory_is_released_when_the_measuring_process_ends(cnn_path):
    pynvml = pytest.importorskip("pynvml")
    from app.core.runner.process import JobHandle

    def used() -> int:
        pynvml.nvmlInit()
        try:
            return int(pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(0)).used)
        finally:
            pynvml.nvmlShutdown()

    before = used()
    handle = JobHandle(IOBINDING,
                       {"path": str(cnn_path), "session": cuda_config().to_dict(), "provider": "cuda",
                        "iterations": 10, "warmup": 1}).start()
    result = handle.wait()
    during = result["device_memory"]["used_bytes"]
    assert during - before > 32 * 2 ** 20, "the child's CUDA context and sessions should show as used memory"
    deadline = time.monotonic() + 15
    while used() - before > 32 * 2 ** 20 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert used() - before <= 32 * 2 ** 20


def test_the_command_reports_cuda(ortune, cnn_path):
    result = ortune("iobinding", cnn_path, "--provider", "cuda", "--iterations", "10", "--warmup", "3", "--json")
    assert result.code == 0, result.stderr
    info = result.json()
    assert info["provider"] == "CUDAExecutionProvider" and info["device"] == "cuda"
    assert info["modes"][-1]["status"] == "measured"
