"""Test setup shared by every suite: Qt offscreen, and settings/data/cache folders that are
temporary, so no test ever touches a user's real ones (child processes inherit these).

ORTUNE_BLOCK_QT=1 makes PySide6, shiboken6 and pyqtgraph unimportable here and in the
processes the tests start (tests/qt_blocked/sitecustomize.py); pytest-qt needs Qt, so:
`ORTUNE_BLOCK_QT=1 python -m pytest -p no:pytest-qt tests/core`."""

from __future__ import annotations

import collections
import importlib.util
import os
import tempfile

if os.environ.get("ORTUNE_BLOCK_QT") == "1":
    _BLOCKER = os.path.join(os.path.dirname(__file__), "qt_blocked", "sitecustomize.py")
    _spec = importlib.util.spec_from_file_location("tests_qt_blocker", _BLOCKER)
    _spec.loader.exec_module(importlib.util.module_from_spec(_spec))
    os.environ["PYTHONPATH"] = os.pathsep.join(
        filter(None, [os.path.dirname(_BLOCKER), os.environ.get("PYTHONPATH")]))

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
_ROOT = tempfile.mkdtemp(prefix="ortune-tests-")
os.environ["ORTUNE_CONFIG_DIR"] = os.path.join(_ROOT, "config")
os.environ["ORTUNE_DATA_DIR"] = os.path.join(_ROOT, "data")
os.environ["ORTUNE_OUTPUT_DIR"] = os.path.join(_ROOT, "variants")
os.environ["ORTUNE_CACHE_DIR"] = os.path.join(_ROOT, "cache")

import pytest  # noqa: E402

from tests import models  # noqa: E402


#: fixtures whose one instance per test process is costly or exclusive: their tests share one
#: worker under `pytest -n 2 --dist loadgroup` (CI), so the resource starts once
SHARED_RESOURCES = ("ray_cluster",)


@pytest.hookimpl(tryfirst=True)     # before xdist's own, which reads the groups into the test ids
def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist's loadgroup, each test file runs in one worker (its module fixtures
    are made once), and the tests of a shared resource's fixture together in one worker."""
    groups = {}
    for item in items:
        marker = item.get_closest_marker("xdist_group")
        if marker is None:
            shared = next((name for name in SHARED_RESOURCES if name in item.fixturenames), None)
            marker = pytest.mark.xdist_group(shared or item.nodeid.partition("::")[0])
            item.add_marker(marker)
        groups[item] = marker.args[0] if marker.args else marker.kwargs.get("name", "")
    # the groups in the order workers take them (CI passes --no-loadscope-reorder): a shared
    # resource's first, for they are the longest (the Ray cluster's: 6 min of one worker) and
    # were last, as the fewest tests, in xdist's own order; then by number of tests, as xdist
    if getattr(config.option, "dist", "no") == "loadgroup":
        sizes = collections.Counter(groups.values())
        items.sort(key=lambda item: (groups[item] not in SHARED_RESOURCES, -sizes[groups[item]]))


def pytest_collection_finish(session):
    """In a loadgroup worker, every test id carries its group (pytest-xdist adds it): a pytest
    on which that is lost spreads a file's tests and a shared resource's over both workers,
    each starting its own (a Ray cluster is 20 s), so CI stops here and says why."""
    if getattr(session.config.option, "loadgroup", False) and session.items and not any("@" in i.nodeid for i in session.items):
        raise pytest.UsageError("pytest-xdist's --dist loadgroup has no effect with this pytest "
                                f"({pytest.__version__}): the test extra pins a pytest on which it works")


@pytest.fixture
def demo_model():
    from app.core.store.paths import demo_model_path
    return demo_model_path()


@pytest.fixture
def model_dir(tmp_path):
    """A folder of small test models built with onnx.helper."""
    return models.write_all(tmp_path)
