"""The frozen Linux build, as a user meets it. Slow (minutes): `python -m pytest -m slow`.

packaging/build.py builds the bundle, the tarball and the .deb into a temporary folder once;
the tests then run what it made, never the source tree."""

from __future__ import annotations

import json
import os
import pkgutil
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

import app
from tests.cli.conftest import ROOT

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(3600),   # the first test pays for the build (its own limit is an hour)
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="builds the Linux packages"),
]


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    pytest.importorskip("PyInstaller", reason="needs pip install -r packaging/requirements-build.txt")
    if shutil.which("dpkg-deb") is None:
        pytest.skip("needs dpkg-deb to make the .deb")
    dist = tmp_path_factory.mktemp("dist")
    # gzip level 1: the packages hold the same files as at the release's level 6, made in less time
    done = subprocess.run([sys.executable, str(ROOT / "packaging" / "build.py"), "--dist", str(dist), "--gzip-level", "1"],
                          cwd=ROOT, capture_output=True, text=True, timeout=3600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    report = json.loads((dist / "build-report.json").read_text())
    return {"bundle": Path(done.stdout.strip().splitlines()[-1]), "dist": dist, "report": report, "said": done.stdout}


def run_frozen(program: Path, *args: str, home: Path, **env) -> tuple[subprocess.CompletedProcess, float]:
    """Start a frozen program with nothing of the build's Python around it."""
    clean = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    clean.update(ORTUNE_CONFIG_DIR=str(home / "config"), ORTUNE_DATA_DIR=str(home / "data"),
                 QT_QPA_PLATFORM="offscreen", **env)
    started = time.monotonic()
    done = subprocess.run([str(program), *args], cwd=home, env=clean, capture_output=True, text=True,
                          timeout=600)
    return done, time.monotonic() - started


def test_build_prints_the_bundle_and_reports_its_size(build, capsys):
    bundle, report = build["bundle"], build["report"]
    assert bundle.is_dir() and bundle.parent == build["dist"]
    assert (bundle / "ortune").is_file()
    assert report["bundle"] == str(bundle)
    assert report["bundle_bytes"] > 0 and report["build_seconds"] > 0
    with capsys.disabled():
        print(f"\nfrozen build: {report['bundle_bytes'] / 2**20:.0f} MiB in {report['build_seconds']:.0f} s; "
              f"self-test {report['self_test_seconds']:.1f} s; installers "
              + ", ".join(f"{Path(i['path']).name} {i['bytes'] / 2**20:.0f} MiB" for i in report["installers"]))


def test_the_bundle_passes_its_self_test(build):
    """The build ran `ortune --self-test` from the bundle as a user would (no Python of the
    build's around it, a fresh home) and stops when it fails; what it printed is read here."""
    assert "self-test passed" in build["said"]
    assert build["said"].count("ok ") >= 3
    assert build["report"]["self_test_seconds"] > 0


def test_the_bundle_tells_its_version_and_package(build, tmp_path):
    done, _ = run_frozen(build["bundle"] / "ortune", "--version", home=tmp_path)
    assert done.stdout.strip() == f"ORTune {app.__version__}"
    devices, _ = run_frozen(build["bundle"] / "ortune", "devices", home=tmp_path)
    assert devices.returncode == 0, devices.stderr
    assert "CPUExecutionProvider" in devices.stdout
    assert "unknown package" not in devices.stdout  # the ONNX Runtime package's metadata is bundled


def test_the_bundle_reads_ort_format_models(build, tmp_path):
    """.ort files are read through flatbuffer bindings that no import statement shows PyInstaller."""
    import onnxruntime as ort

    from app.core.store.paths import demo_model_path

    options = ort.SessionOptions()
    options.optimized_model_filepath = str(tmp_path / "demo.ort")
    options.add_session_config_entry("session.save_model_format", "ORT")
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    ort.InferenceSession(str(demo_model_path()), options, providers=["CPUExecutionProvider"])
    done, _ = run_frozen(build["bundle"] / "ortune", "inspect", str(tmp_path / "demo.ort"), "--json",
                         home=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["format"] == "ort"


def test_every_app_module_is_frozen(build):
    """Jobs are imported by name in the job process: each module of app must be in the bundle."""
    from PyInstaller.archive.readers import CArchiveReader

    frozen = set(CArchiveReader(str(build["bundle"] / "ortune")).open_embedded_archive("PYZ.pyz").toc)
    source = {info.name for info in pkgutil.walk_packages([str(ROOT / "app")], prefix="app.")}
    assert source and source <= frozen


def test_the_deb_installs_the_app_and_its_desktop_files(build, tmp_path):
    deb = build["dist"] / f"ortune_{app.__version__}_amd64.deb"
    fields = subprocess.run(["dpkg-deb", "--field", str(deb)], capture_output=True, text=True, check=True).stdout
    assert f"Version: {app.__version__}" in fields and "Depends: libc6 (>= 2." in fields
    root = tmp_path / "root"
    subprocess.run(["dpkg-deb", "--extract", str(deb), str(root)], check=True)
    assert os.readlink(root / "usr" / "bin" / "ortune") == "/opt/ortune/ortune"
    share = root / "usr" / "share"
    for size in (16, 32, 48, 64, 128, 256, 512):
        assert (share / "icons" / "hicolor" / f"{size}x{size}" / "apps" / "ortune.png").is_file()
    assert (share / "icons" / "hicolor" / "scalable" / "apps" / "ortune.svg").is_file()
    desktop = (share / "applications" / "ortune.desktop").read_text()
    assert "Exec=ortune gui %F" in desktop and "application/x-onnx;" in desktop
    assert 'pattern="*.onnx"' in (share / "mime" / "packages" / "ortune.xml").read_text()
    done, _ = run_frozen(root / "opt" / "ortune" / "ortune", "--self-test", home=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_tarball_unpacks_to_a_runnable_folder(build):
    top = f"ortune-{app.__version__}"
    with tarfile.open(build["dist"] / f"{top}-linux-x86_64.tar.gz") as tar:
        members = {member.name: member for member in tar.getmembers()}
    assert members[f"{top}/ortune"].mode & 0o111
    assert members[f"{top}/install-desktop-entry.sh"].mode & 0o111
    assert f"{top}/_internal/resources/demo/demo_classifier.onnx" in members


def test_the_tarballs_desktop_entry_starts_that_copy(build, tmp_path):
    portable = tmp_path / "my apps" / "ortune"  # a space, as home folders often have
    portable.mkdir(parents=True)
    shutil.copy(ROOT / "packaging" / "linux" / "install-desktop-entry.sh", portable)
    (portable / "_internal").symlink_to(build["bundle"] / "_internal")
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "share"))
    subprocess.run(["sh", str(portable / "install-desktop-entry.sh")], env=env, check=True, capture_output=True)
    entry = tmp_path / "share" / "applications" / "ortune.desktop"
    assert f'Exec="{portable}/ortune" gui %F' in entry.read_text()
    assert (tmp_path / "share" / "mime" / "packages" / "ortune.xml").is_file()
    assert (tmp_path / "share" / "icons" / "hicolor" / "48x48" / "apps" / "ortune.png").is_file()
    subprocess.run(["sh", str(portable / "install-desktop-entry.sh"), "--remove"], env=env, check=True,
                   capture_output=True)
    assert not entry.exists()
    assert not (tmp_path / "share" / "icons" / "hicolor" / "48x48" / "apps" / "ortune.png").exists()
