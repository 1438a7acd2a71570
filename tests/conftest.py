"""Test setup shared by every suite: Qt offscreen, and settings/data folders that are
temporary, so no test ever touches a user's real ones (child processes inherit these)."""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
_ROOT = tempfile.mkdtemp(prefix="ortune-tests-")
os.environ["ORTUNE_CONFIG_DIR"] = os.path.join(_ROOT, "config")
os.environ["ORTUNE_DATA_DIR"] = os.path.join(_ROOT, "data")

import pytest  # noqa: E402

from tests import models  # noqa: E402


@pytest.fixture
def demo_model():
    from app.core.store.paths import demo_model_path
    return demo_model_path()


@pytest.fixture
def model_dir(tmp_path):
    """A folder of small test models built with onnx.helper."""
    return models.write_all(tmp_path)
