"""The results store: record, list, filter, reload, delete, model hashes."""

import hashlib

import numpy as np
import pytest

from app.core.jobs.errors import UserError
from app.core.store.history import History


def report(path, p50, variant=""):
    return {"model": {"path": str(path), "sha256": "ab" * 32, "size_bytes": 10}, "variant": variant,
            "latency_ms": {"p50": p50, "p99": 2 * p50}, "throughput_per_s": 1000 / p50,
            "providers": ["CPUExecutionProvider"], "session": {"schema": "ortune.session/1"},
            "run": {"iterations": 3}, "ort_version": "1.0", "machine": {"cpu": "test"}}


def test_record_and_reload(tmp_path):
    history = History(tmp_path / "h.sqlite")
    samples = [0.5, 0.25, 1.5]
    first = history.record("bench", report(tmp_path / "a.onnx", 0.5), [3.0], samples)
    second = history.record("bench", report(tmp_path / "b.onnx", 0.2, "fp16")
                            | {"inputs": [{"name": "x", "shape": [1, 4], "source": "user"}]})
    entries = history.entries()
    assert [e["id"] for e in entries] == [second, first]           # newest first
    assert [e["inputs"] for e in entries] == [[{"name": "x", "shape": [1, 4], "source": "user"}], []]
    assert [e["id"] for e in history.entries(model="a.onnx")] == [first]
    assert history.models() == [str(tmp_path / "a.onnx"), str(tmp_path / "b.onnx")]
    entry = history.get(first)
    assert np.allclose(entry["samples_ms"], samples) and np.allclose(entry["warmup_ms"], [3.0])
    assert entry["report"]["latency_ms"]["p50"] == 0.5 and entry["p99_ms"] == 1.0
    assert entry["session"] == {"schema": "ortune.session/1"} and entry["machine"] == {"cpu": "test"}
    history.delete(first)
    with pytest.raises(UserError):
        history.get(first)
    assert [e["variant"] for e in History(tmp_path / "h.sqlite").entries()] == ["fp16"]


def test_model_identity_hashes_the_content(tmp_path):
    path = tmp_path / "m.onnx"
    path.write_bytes(b"model bytes")
    history = History(tmp_path / "h.sqlite")
    identity = history.model_identity(path)
    assert identity["sha256"] == hashlib.sha256(b"model bytes").hexdigest()
    path.write_bytes(b"other bytes, longer")
    assert history.model_identity(path)["sha256"] == hashlib.sha256(b"other bytes, longer").hexdigest()
