"""The Linux packages of a frozen bundle: a portable tarball and a .deb (built with dpkg-deb).

The .deb puts the bundle in /opt/ortune, `ortune` on the PATH, and the desktop entry, icons
and MIME types where desktops look; Debian's triggers refresh the menus, icon caches and MIME
database, so the package needs no scripts of its own."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
GZIP_LEVEL = 6  # xz saves a fifth of the size but takes eight times as long on a 500 MB bundle

# What PyInstaller never bundles on Linux (it must match the user's system) and the app needs.
DEPENDS = ["libgl1", "libegl1", "libxcb1", "fontconfig-config"]
# Qt's native Wayland support; without them Qt runs through XWayland.
RECOMMENDS = ["libwayland-client0", "libwayland-cursor0", "libwayland-egl1"]


def resources(bundle: Path) -> Path:
    return bundle / "_internal" / "resources"


def make_tarball(bundle: Path, dist: Path, info: dict, level: int = GZIP_LEVEL) -> Path:
    """ortune-VERSION-linux-x86_64.tar.gz: unpack anywhere and run ortune-VERSION/ortune."""
    top = f"{info['id']}-{info['version']}"
    out = dist / f"{top}-linux-x86_64.tar.gz"
    partial = out.with_name(out.name + ".part")
    with tarfile.open(partial, "w:gz", compresslevel=level) as tar:
        tar.add(bundle, arcname=top)
        tar.add(HERE / "linux" / "install-desktop-entry.sh", arcname=f"{top}/install-desktop-entry.sh")
    partial.replace(out)
    return out


def glibc_floor(bundle: Path) -> str:
    """The newest glibc symbol version any bundled binary asks for: the oldest glibc it runs on."""
    versions = set()
    pattern = re.compile(rb"GLIBC_2\.(\d+)")
    for path in bundle.rglob("*"):
        if path.is_file() and not path.is_symlink() and (".so" in path.name or os.access(path, os.X_OK)):
            versions.update(int(match) for match in pattern.findall(path.read_bytes()))
    return f"2.{max(versions)}"


def _link_tree(source: Path, target: Path) -> None:
    """Hard-link the bundle into the package tree (same disk), copying where that fails."""
    def link_or_copy(src, dst):
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)
    shutil.copytree(source, target, symlinks=True, copy_function=link_or_copy)


def _control(info: dict, installed_kib: int, glibc: str) -> str:
    return "\n".join([
        f"Package: {info['id']}",
        f"Version: {info['version']}",
        "Architecture: amd64",
        f"Maintainer: {info['name']} developers",
        f"Installed-Size: {installed_kib}",
        "Section: science",
        "Priority: optional",
        f"Depends: libc6 (>= {glibc}), {', '.join(DEPENDS)}",
        f"Recommends: {', '.join(RECOMMENDS)}",
        f"Description: {info['description']}",
        f" {info['name']} opens .onnx and .ort models, makes variants of them (fp16, int8, int4,",
        " ORT format, optimised), checks how far each drifts from the source, tunes the session,",
        " benchmarks, profiles per operator and explains why a model is slow. The `ortune`",
        " command does the same from scripts. ONNX Runtime's CUDA provider is included and",
        " uses the system's CUDA and cuDNN libraries when they are installed.",
        "",
    ])


def make_deb(bundle: Path, dist: Path, work: Path, info: dict, level: int = GZIP_LEVEL) -> Path:
    app_id = info["id"]
    stage = work / "deb"
    shutil.rmtree(stage, ignore_errors=True)
    _link_tree(bundle, stage / "opt" / app_id)
    (stage / "usr" / "bin").mkdir(parents=True)
    (stage / "usr" / "bin" / app_id).symlink_to(f"/opt/{app_id}/{app_id}")
    share = stage / "usr" / "share"
    res = resources(bundle)
    (share / "applications").mkdir(parents=True)
    shutil.copy(res / "ortune.desktop", share / "applications" / f"{app_id}.desktop")
    (share / "mime" / "packages").mkdir(parents=True)
    shutil.copy(res / "ortune-mime.xml", share / "mime" / "packages" / f"{app_id}.xml")
    shutil.copytree(res / "icons" / "hicolor", share / "icons" / "hicolor")
    (share / "icons" / "hicolor" / "scalable" / "apps").mkdir(parents=True)
    shutil.copy(res / "icons" / "ortune.svg", share / "icons" / "hicolor" / "scalable" / "apps" / f"{app_id}.svg")

    installed = sum(p.stat().st_size for p in stage.rglob("*") if p.is_file() and not p.is_symlink())
    (stage / "DEBIAN").mkdir()
    (stage / "DEBIAN" / "control").write_text(
        _control(info, (installed + 1023) // 1024, glibc_floor(bundle)), encoding="utf-8")
    out = dist / f"{app_id}_{info['version']}_amd64.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zgzip", f"-z{level}", "--build", str(stage),
                    str(out)], check=True, stdout=subprocess.DEVNULL)
    shutil.rmtree(stage)
    return out
