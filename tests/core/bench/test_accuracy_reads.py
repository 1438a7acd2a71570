"""Scoring a data folder reads the folder and the model's graph once, not once per sample:
the cost of many samples is the cost of reading them."""

import numpy as np
import pytest
import onnxruntime as ort

from app.core.bench.accuracy import score_samples
from app.core.bench.sample_log import read_samples
from app.core.jobs.protocol import JobContext
from app.core.session import data_folder, graph_hints, inputs
from app.core.session.inputs import FeedSpec
from tests import models


def test_scoring_reads_the_folder_and_the_graph_once(tmp_path, monkeypatch):
    model = models.save(models.mlp(width=16), tmp_path / "m.onnx")
    data = tmp_path / "data"
    data.mkdir()
    for index in range(30):
        np.save(data / f"s{index:02}.npy", np.full((1, 16), index, np.float32))
    reads = {"folder": 0, "graph": 0}

    def counted(module, name, key):
        real = getattr(module, name)

        def wrapper(*args, **kwargs):
            reads[key] += 1
            return real(*args, **kwargs)
        monkeypatch.setattr(module, name, wrapper)
    counted(data_folder, "read_folder", "folder")
    counted(graph_hints, "read_hints", "graph")
    counted(inputs, "read_hints", "graph")
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    work = tmp_path / "work"
    work.mkdir()
    result = score_samples(model, session, FeedSpec(data=str(data)), work, True, JobContext())
    assert result["samples"] == 30
    assert reads == {"folder": 1, "graph": 1}
    feeds = [feeds for feeds, _ in read_samples(work)]
    assert len(feeds) == 30 and feeds[29]["x"].tolist() == [[29.0] * 16]


def _naive(got: list, wanted: list) -> dict:
    """Sample by sample, as one would write it: MAE over every element, argmax per row."""
    diff = sum(float(np.abs(a.astype(np.float64) - b).sum()) for a, b in zip(got, wanted))
    rows = [(a.reshape(-1, a.shape[-1]).argmax(1), b.reshape(-1, b.shape[-1]).argmax(1)) for a, b in zip(got, wanted)]
    return {"mean_abs_error": diff / sum(a.size for a in got),
            "argmax_agreement": sum(int((m == t).sum()) for m, t in rows) / sum(m.size for m, _ in rows)}


def test_scores_over_many_chunks_and_shapes_are_those_of_each_sample(tmp_path, monkeypatch):
    from onnxconverter_common import float16

    from app.core.bench import accuracy, sample_log

    monkeypatch.setattr(sample_log, "CHUNK_BYTES", 2048)         # many chunks, many batches
    monkeypatch.setattr(accuracy, "BATCH_SAMPLES", 7)
    source = models.mlp(width=16)
    first = models.save(source, tmp_path / "m.onnx")
    second = models.save(float16.convert_float_to_float16(source, keep_io_types=True), tmp_path / "m16.onnx")
    data = tmp_path / "data"
    (data / "expected").mkdir(parents=True)
    rng = np.random.default_rng(2)
    samples = [rng.standard_normal((1 + index % 3, 16)).astype(np.float32) for index in range(60)]
    for index, x in enumerate(samples):
        np.save(data / f"s{index:02}.npy", x)
        if index % 4 == 0:
            np.save(data / "expected" / f"s{index:02}.npy", np.zeros((1 + index % 3, 16), np.float32))
    sessions = [ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]) for path in (first, second)]
    answers = [[s.run(None, {"x": x})[0] for x in samples] for s in sessions]
    labels = [int(a[0].argmax()) if i % 2 else int(rng.integers(16)) for i, a in enumerate(answers[0])]
    (data / "labels.csv").write_text("".join(f"s{i:02},{label}\n" for i, label in enumerate(labels)))
    work = tmp_path / "work"
    work.mkdir()
    reference = score_samples(first, sessions[0], FeedSpec(data=str(data)), work, True, JobContext())
    member = score_samples(second, sessions[1], FeedSpec(data=str(data)), work, False, JobContext())
    assert reference["against_reference"] is None and member["samples"] == reference["samples"] == 60
    assert member["against_reference"] == pytest.approx(_naive(answers[1], answers[0]))
    kept = list(range(0, 60, 4))
    for result, got in ((reference, answers[0]), (member, answers[1])):
        assert result["against_expected"] == pytest.approx(
            _naive([got[i] for i in kept], [np.zeros_like(got[i]) for i in kept]))
        assert result["label_accuracy"] == pytest.approx(
            np.mean([int(a.reshape(-1, 16)[0].argmax() == label) for a, label in zip(got, labels)]))
        assert result["labelled"] == 60 and result["label_accuracy"] >= 0.5
    assert len(list(work.glob("samples-*.npz"))) > 10
