"""The drawing job: dot's layout, the cache keyed by the file's content, and the node details."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import numpy_helper

from app.core.graph.details import node_facts
from app.core.graph.drawing import draw_model
from app.core.graph.jobs import DRAW
from app.core.graph.layout import unpack
from app.core.jobs.protocol import JobContext
from tests import models


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    """A cache of this test's own: what another test drew is not found here."""
    monkeypatch.setenv("ORTUNE_CACHE_DIR", str(tmp_path / "cache"))


class Recorder(JobContext):
    def __init__(self):
        super().__init__()
        self.pictures = []

    def data(self, kind, payload):
        if kind == "picture":
            self.pictures.append(payload)


def _draw(path, **params):
    ctx = Recorder()
    result = draw_model(DRAW.make_params({"path": str(path), **params}), ctx)
    return ctx.pictures[-1], result


def _drawn(picture):
    """id -> [x, y, w, h], and (tail id, head id, points) per arrow."""
    layout, packed = picture["layout"], unpack(picture["layout"])
    ids, offsets = layout["ids"], packed["offsets"]
    boxes = {node_id: packed["boxes"][i].tolist() for i, node_id in enumerate(ids)}
    arrows = [(ids[t], ids[h], packed["points"][offsets[i]:offsets[i + 1]].tolist())
              for i, (t, h) in enumerate(zip(packed["tails"], packed["heads"]))]
    return boxes, arrows


def test_every_drawn_node_gets_a_box_below_the_nodes_it_reads(tmp_path):
    picture, _ = _draw(models.save(models.cnn(), tmp_path / "cnn.onnx"), details=False)
    boxes, arrows = _drawn(picture)
    assert set(boxes) == {n["id"] for n in picture["structure"]["nodes"]}
    assert len(arrows) == picture["layout"]["arrow_count"] == 8
    for tail, head, points in arrows:
        assert boxes[tail][1] < boxes[head][1], "top to bottom"
        assert len(points) >= 4 and (len(points) - 1) % 3 == 0, "cubic pieces"
    boxes = list(boxes.values())
    for i, (x, y, w, h) in enumerate(boxes):
        for x2, y2, w2, h2 in boxes[i + 1:]:
            assert abs(x - x2) >= (w + w2) / 2 or abs(y - y2) >= (h + h2) / 2, "no two boxes overlap"


def test_an_open_body_is_framed_around_its_nodes(tmp_path):
    picture, _ = _draw(models.save(models.with_if_subgraph(), tmp_path / "if.onnx"), expanded=["3"], details=False)
    boxes, arrows = _drawn(picture)
    frames = {c["body"]: c["rect"] for c in picture["layout"]["clusters"]}
    assert set(frames) == {"3/then_branch/", "3/else_branch/"}
    for node in picture["structure"]["nodes"]:
        if node["body"] in frames:
            left, top, width, height = frames[node["body"]]
            x, y, w, h = boxes[node["id"]]
            assert left <= x - w / 2 and x + w / 2 <= left + width and top <= y - h / 2 and y + h / 2 <= top + height
    dashed = unpack(picture["layout"])["dashed"]
    assert {(t, h) for (t, h, _), body in zip(arrows, dashed) if body} == {("3", "3/then_branch/0"),
                                                                            ("3", "3/else_branch/0")}


def test_the_cache_is_keyed_by_content_and_by_the_open_bodies(tmp_path):
    first = models.save(models.with_if_subgraph(), tmp_path / "a.onnx")
    picture, _ = _draw(first, details=False)
    assert picture["cached"] is False
    copy = tmp_path / "copy.onnx"
    copy.write_bytes(first.read_bytes())
    again, _ = _draw(copy, details=False)
    assert again["cached"] is True and again["layout"] == picture["layout"] and again["key"] == picture["key"]
    opened, _ = _draw(copy, expanded=["3"], details=False)
    assert opened["cached"] is False and len(opened["layout"]["ids"]) > len(picture["layout"]["ids"])
    other, _ = _draw(models.save(models.cnn(), tmp_path / "cnn.onnx"), details=False)
    assert other["key"] != picture["key"]


def test_details_give_shapes_on_the_plan_initializer_values_and_cost(tmp_path):
    model = models.cnn()
    _, result = _draw(models.save(model, tmp_path / "cnn.onnx"))
    conv = node_facts(result["details"], "0")
    assert conv["op_type"] == "Conv" and conv["domain"] == "ai.onnx" and conv["attributes"]["pads"] == "[1, 1, 1, 1]"
    assert conv["inputs"][0] == {"name": "x", "kind": "tensor", "dtype": "float", "shape": [1, 3, 32, 32]}
    assert conv["outputs"][0]["shape"] == [1, 8, 32, 32]
    weight = numpy_helper.to_array(next(t for t in model.graph.initializer if t.name == "c1.w"))
    facts = next(w for w in conv["initializers"] if w["name"] == "c1.w")
    assert facts["shape"] == [8, 3, 3, 3] and facts["bytes"] == weight.nbytes
    assert np.isclose(facts["min"], weight.min()) and np.isclose(facts["max"], weight.max())
    assert np.isclose(facts["mean"], weight.mean())
    assert conv["cost"]["macs"] == 8 * 32 * 32 * 27 and conv["cost"]["parameters"] == 8 * 27 + 8
    assert result["details"]["flops"]["0"] == conv["cost"]["flops"] and "5" in result["details"]["flops"]
    _, again = _draw(tmp_path / "cnn.onnx")
    assert again["details"] == result["details"]
