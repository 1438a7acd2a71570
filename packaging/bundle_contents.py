"""What goes into the frozen bundle beyond what PyInstaller's analysis finds, and what
comes out of it. Used by ortune.spec (entries are PyInstaller TOC tuples: dest, source, kind)."""

from __future__ import annotations

import importlib.metadata
import os
import re
from pathlib import PurePosixPath

# NVIDIA's CUDA, cuDNN and TensorRT libraries. ORT's CUDA and TensorRT providers are kept
# and load these from the user's own installation, which must match the user's driver;
# copies found on the build machine would tie the bundle to that machine (cuBLAS and cuDNN
# alone are over a gigabyte) and could shadow the user's matching versions.
_NVIDIA_LIBRARY = re.compile(
    r"^lib(cudart|cublas|cublasLt|cudnn\w*|curand|cufft|cusparse|cusolver|nvrtc\w*|nvJitLink|nvinfer\w*|"
    r"nvonnxparser|nvToolsExt)\.(so|dll)|^(cudart|cublas|cublasLt|cudnn|curand|cufft|nvinfer)\w*\.dll$",
    re.IGNORECASE)

# Qt's GTK 3 theme plugin needs the user's libgtk-3, which is never bundled: it would load the
# system's GTK on top of the bundle's own (older) glib, pango and cairo, which fails or crashes
# on newer desktops. Without it Qt uses its built-in GNOME theme and the desktop portal.
_GTK_THEME_PLUGIN = "libqgtk3.so"


def _name(dest: str) -> str:
    return PurePosixPath(dest.replace(os.sep, "/")).name


def without_host_nvidia_libraries(binaries: list[tuple]) -> list[tuple]:
    return [entry for entry in binaries if not _NVIDIA_LIBRARY.match(_name(entry[0]))]


def _needed_names(path: str) -> set[str]:
    from PyInstaller.depend.bindepend import get_imports
    return {name for name, _ in get_imports(path)}


def without_gtk_theme(binaries: list[tuple], needed_names=_needed_names) -> list[tuple]:
    """Drop the GTK 3 theme plugin, then every library that only it (directly or not) needed.
    `needed_names(path)` gives the libraries a binary links to."""
    by_dest = {entry[0]: entry for entry in binaries}
    dropped = {dest for dest in by_dest if _name(dest) == _GTK_THEME_PLUGIN}
    if not dropped:  # Windows, or a Qt without the plugin
        return binaries
    needs = {dest: (needed_names(entry[1]) if entry[2] != "SYMLINK" else set()) for dest, entry in by_dest.items()}
    while True:
        # Only what a dropped file needed may go: libraries that Qt or ORT open by name at
        # run time are needed by nothing in the table and must stay.
        candidates = set().union(*(needs[dest] for dest in dropped))
        kept_needs = set().union(*(needs[dest] for dest in by_dest if dest not in dropped))
        orphans = {dest for dest in by_dest if dest not in dropped
                   and _name(dest) in candidates and _name(dest) not in kept_needs}
        if not orphans:
            break
        dropped |= orphans
    orphan_links = {dest for dest, entry in by_dest.items() if entry[2] == "SYMLINK"
                    and _name(entry[1]) in {_name(d) for d in dropped}}
    return [entry for entry in binaries if entry[0] not in dropped | orphan_links]


def ort_package_metadata(package_names: list[str]) -> list[tuple]:
    """The installed ONNX Runtime package's metadata, so the app can name the package it ships."""
    from PyInstaller.utils.hooks import copy_metadata

    datas = []
    for name in package_names:
        try:
            importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        datas += copy_metadata(name)
    return datas


def ort_flatbuffer_sources() -> list[tuple]:
    """ORT-format (.ort) models are read through flatbuffer bindings that
    onnxruntime.tools.ort_format_model imports by bare name from its own folder, which it puts
    on sys.path only when the folder exists on disk: so they go in as source files, and the
    `flatbuffers` package they import is a hidden import of the spec. (That folder cannot join
    the analysis path: its types.py would hide the standard library's.)"""
    from PyInstaller.utils.hooks import collect_data_files

    return collect_data_files("onnxruntime.tools.ort_format_model", include_py_files=True,
                              subdir="ort_flatbuffers_py")
