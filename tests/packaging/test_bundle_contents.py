"""What the frozen bundle keeps and drops (packaging/bundle_contents.py), on made-up tables."""

import sys

from tests.cli.conftest import ROOT

sys.path.append(str(ROOT / "packaging"))  # a folder of scripts, not a package (PyPI owns the name)
import bundle_contents  # noqa: E402


def test_nvidia_libraries_from_the_build_machine_stay_out_but_ort_providers_stay_in():
    table = [(name, f"/src/{name}", "BINARY") for name in (
        "libcudart.so.13", "libcublasLt.so.13", "libcudnn_graph.so.9", "libnvinfer.so.10", "cudnn64_9.dll",
        "onnxruntime/capi/libonnxruntime_providers_cuda.so", "onnxruntime/capi/DirectML.dll",
        "PySide6/Qt/lib/libicudata.so.73", "libcurl.so.4")]
    kept = [name for name, _, _ in bundle_contents.without_host_nvidia_libraries(table)]
    assert kept == ["onnxruntime/capi/libonnxruntime_providers_cuda.so", "onnxruntime/capi/DirectML.dll",
                    "PySide6/Qt/lib/libicudata.so.73", "libcurl.so.4"]


def test_the_gtk_theme_goes_with_what_only_it_needed():
    links = {
        "/q/libqgtk3.so": {"libgtk-3.so.0", "libpango-1.0.so.0", "libglib-2.0.so.0"},
        "/s/libpango-1.0.so.0": {"libharfbuzz.so.0", "libglib-2.0.so.0"},
        "/s/libharfbuzz.so.0": set(),
        "/s/libglib-2.0.so.0": set(),
        "/q/libqxcb.so": {"libglib-2.0.so.0"},
        "/s/libdbus-1.so.3": set(),  # opened by name at run time: needed by nothing in the table
    }
    table = [("PySide6/Qt/plugins/platformthemes/libqgtk3.so", "/q/libqgtk3.so", "BINARY"),
             ("libpango-1.0.so.0", "/s/libpango-1.0.so.0", "BINARY"),
             ("libharfbuzz.so.0", "/s/libharfbuzz.so.0", "BINARY"),
             ("libglib-2.0.so.0", "/s/libglib-2.0.so.0", "BINARY"),
             ("PySide6/Qt/plugins/platforms/libqxcb.so", "/q/libqxcb.so", "BINARY"),
             ("libdbus-1.so.3", "/s/libdbus-1.so.3", "BINARY"),
             ("PySide6/libpango-1.0.so.0", "libpango-1.0.so.0", "SYMLINK")]
    kept = [name for name, _, _ in bundle_contents.without_gtk_theme(table, needed_names=links.__getitem__)]
    assert kept == ["libglib-2.0.so.0", "PySide6/Qt/plugins/platforms/libqxcb.so", "libdbus-1.so.3"]


def test_without_the_gtk_theme_plugin_nothing_is_dropped():
    table = [("libharfbuzz.so.0", "/s/libharfbuzz.so.0", "BINARY")]
    assert bundle_contents.without_gtk_theme(table, needed_names=lambda path: set()) == table
