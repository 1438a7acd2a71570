"""The Windows installer of a frozen bundle, compiled by Inno Setup from packaging/windows/ortune.iss.

Not run on Linux; CI builds it on a Windows runner (.github/workflows/windows-installer.yml)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent / "windows" / "ortune.iss"


def inno_compiler() -> str:
    found = shutil.which("iscc")
    if found:
        return found
    for root in (os.environ.get("ProgramFiles(x86)"), os.environ.get("ProgramFiles")):
        candidate = Path(root or "") / "Inno Setup 6" / "ISCC.exe"
        if root and candidate.exists():
            return str(candidate)
    raise SystemExit("build: Inno Setup 6 (ISCC.exe) is not installed: https://jrsoftware.org/isdl.php")


def check_directml(bundle: Path) -> None:
    """The installer promises DirectML: the bundle must hold onnxruntime-directml's DirectML.dll."""
    if not any(bundle.rglob("DirectML.dll")):
        raise SystemExit("build: DirectML.dll is not in the bundle; build in an environment with "
                         "onnxruntime-directml installed (pip install . picks it on Windows)")


def make_installer(bundle: Path, dist: Path, info: dict, icon: Path) -> Path:
    check_directml(bundle)
    subprocess.run([inno_compiler(), f"/DAppVersion={info['version']}", f"/DBundleDir={bundle}",
                    f"/DIconFile={icon}", f"/DOutputDir={dist}", "/Q", str(SCRIPT)], check=True)
    return dist / f"ORTune-{info['version']}-windows-x64-setup.exe"
