"""Plugin execution providers: found as installed packages or named libraries, registered
where the session is made, recorded in presets and reproduced by the plain-onnxruntime script."""

import subprocess
import sys

import numpy as np
import pytest

from app.core.jobs.errors import UserError
from app.core.session.config import ProviderSpec, SessionConfig
from app.core.session.create import create_session, effective_settings, to_python
from app.core.session.plugins import installed_packages, resolve
from tests.openvino_plugin import openvino_plugin  # noqa: F401 (a fixture)

PACKAGE = "onnxruntime-ep-openvino"


def _outputs(session, model):
    shape = [d if isinstance(d, int) else 1 for d in session.get_inputs()[0].shape]
    image = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    return session.run(None, {session.get_inputs()[0].name: image})[0]


def test_the_installed_package_gives_its_library_and_providers(openvino_plugin):
    library = next(lib for lib in installed_packages() if lib.package == PACKAGE)
    assert library.path.endswith((".so", ".dll")) and library.version and not library.error
    assert "OpenVINOExecutionProvider" in library.ep_names


def test_openvino_runs_through_the_plugin_and_the_preset_records_it(openvino_plugin, demo_model):
    config = SessionConfig(providers=[ProviderSpec("openvino", {"precision": "FP32"})]).checked()
    session = create_session(demo_model, config)
    assert session.get_providers()[0] == "OpenVINOExecutionProvider"
    preset = effective_settings(session, config)
    version = next(lib.version for lib in installed_packages() if lib.package == PACKAGE)
    assert preset["providers"] == [{"name": "OpenVINOExecutionProvider", "options": {"precision": "FP32"},
                                    "plugin": {"package": PACKAGE, "version": version}}]
    again = SessionConfig.from_dict(preset)          # the preset reproduces the session
    assert create_session(demo_model, again).get_providers()[0] == "OpenVINOExecutionProvider"


def test_fp32_matches_the_cpu_provider_and_the_default_precision_may_not(openvino_plugin, demo_model):
    cpu = _outputs(create_session(demo_model, SessionConfig()), demo_model)
    fp32 = _outputs(create_session(demo_model, SessionConfig(providers=[ProviderSpec("openvino", {
        "precision": "FP32"})]).checked()), demo_model)
    assert np.abs(fp32 - cpu).max() < 1e-4
    default = _outputs(create_session(demo_model, SessionConfig(providers=[ProviderSpec("openvino")]).checked()),
                       demo_model)
    assert np.isfinite(default).all() and np.abs(default - cpu).max() < 0.5


def test_a_device_the_plugin_lacks_is_named_with_those_it_has(openvino_plugin, demo_model):
    config = SessionConfig(providers=[ProviderSpec("openvino", {"device_type": "NPU"})]).checked()
    with pytest.raises(UserError, match=r"OpenVINO has no NPU device here \(it has: CPU"):
        create_session(demo_model, config)


def test_a_wrong_property_gets_openvinos_own_words(openvino_plugin, demo_model):
    config = SessionConfig(providers=[ProviderSpec("openvino", {"load_config": '{"CPU": {"TURBO": "1"}}'})])
    with pytest.raises(UserError) as caught:
        create_session(demo_model, config.checked())
    assert "(provider options: OpenVINOExecutionProvider" in caught.value.message and "Unsupported property TURBO" in caught.value.message


def test_a_device_policy_picks_the_providers(openvino_plugin, demo_model):
    session = create_session(demo_model, SessionConfig(device_policy="max-performance").checked())
    assert session.get_providers()[-1] == "CPUExecutionProvider" and len(session.get_providers()) >= 1
    assert _outputs(session, demo_model).shape[0] == 1


def test_the_shipped_script_registers_the_plugin_with_plain_onnxruntime(openvino_plugin, demo_model, tmp_path):
    config = SessionConfig(providers=[ProviderSpec("openvino", {"precision": "FP32"})]).checked()
    preset = SessionConfig.from_dict(effective_settings(create_session(demo_model, config), config))
    script = to_python(preset, demo_model) + "print(session.get_providers()[0])\n"
    assert "import onnxruntime_ep_openvino" in script and "from app" not in script and "import app" not in script
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "OpenVINOExecutionProvider"


def test_a_named_library_that_is_missing_or_no_plugin_gets_one_line(tmp_path):
    with pytest.raises(UserError, match="execution provider library mine: .* not found"):
        resolve(["CPUExecutionProvider"], {"mine": str(tmp_path / "nothing.so")})
    fake = tmp_path / "libfake.so"
    fake.write_bytes(b"not a library")
    with pytest.raises(UserError, match=r"execution provider library fake \(.*libfake.so\): ONNX Runtime could not"):
        resolve(["CPUExecutionProvider"], {"fake": str(fake)})


def test_a_preset_from_a_plugin_that_is_not_installed_says_what_to_install(demo_model):
    config = SessionConfig.from_dict({"providers": [{"name": "WebGpuExecutionProvider", "plugin": {
        "package": "onnxruntime-ep-notthere", "version": "0.1"}}]})
    with pytest.raises(UserError, match="onnxruntime-ep-notthere 0.1, which is not installed here: pip install"):
        create_session(demo_model, config)


def test_a_session_py_made_from_a_form_or_flag_finds_the_plugin_and_names_it(openvino_plugin, demo_model, tmp_path):
    from app.core.optimize.session_code import session_script

    config = SessionConfig(providers=[ProviderSpec("openvino", {"precision": "FP32"})]).checked()
    script = session_script(config, demo_model, [{"name": "image", "shape": [1, 3, 64, 64], "dtype": "float32"}])
    assert f"Needs onnxruntime, {PACKAGE} and numpy." in script
    (tmp_path / "session.py").write_text(script + "print(session.get_providers()[0])\n", encoding="utf-8")
    done = subprocess.run([sys.executable, str(tmp_path / "session.py")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "OpenVINOExecutionProvider"
    assert "numpy only" in session_script(SessionConfig(), "model.onnx", [])


def test_a_library_a_preset_records_is_not_loaded_unless_named(demo_model, tmp_path):
    library = tmp_path / "libthird_party.so"
    library.write_bytes(b"native code the user never named")
    config = SessionConfig.from_dict({"providers": [{"name": "ThirdPartyExecutionProvider",
                                                     "plugin": {"library": str(library)}}]})
    with pytest.raises(UserError) as caught:
        create_session(demo_model, config)
    assert f"load it with --ep-library NAME={library}" in caught.value.message


def test_openvino_without_its_plugin_says_which_package_brings_it():
    from app.core.session.providers import not_in_build_reason

    reason = not_in_build_reason("OpenVINOExecutionProvider", "onnxruntime 1.31.1")
    assert "pip install onnxruntime-ep-openvino" in reason and "onnxruntime-openvino build" in reason
