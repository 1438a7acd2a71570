"""Scoring a data folder reads the folder and the model's graph once, not once per sample:
the cost of many samples is the cost of reading them."""

import numpy as np
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
