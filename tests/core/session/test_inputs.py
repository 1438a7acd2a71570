import numpy as np
import pytest

from app.core.jobs.errors import UserError
from app.core.session.inputs import FeedSpec, make_feeds
from tests import models

INPUTS = [{"name": "input_ids", "dtype": "tensor(int64)", "shape": ["batch", "sequence"]},
          {"name": "attention_mask", "dtype": "tensor(int64)", "shape": ["batch", "sequence"]},
          {"name": "pixels", "dtype": "float", "shape": [None, 3, "height", "width"]}]


def test_symbolic_dims_get_named_defaults_and_are_reported():
    feeds, info = make_feeds(INPUTS, FeedSpec())
    assert feeds["input_ids"].shape == (1, 128)
    assert feeds["pixels"].shape == (1, 3, 224, 224)
    assert info["dims"] == {"batch": 1, "sequence": 128, "pixels[0]": 1, "height": 224, "width": 224}
    rows = {row["name"]: row for row in info["inputs"]}
    assert rows["input_ids"] == {"name": "input_ids", "dtype": "int64", "shape": [1, 128], "source": "default",
                                 "reason": "batch 1; length 128, a usual text length", "values": "random ids below 1,000"}
    assert rows["attention_mask"]["values"] == "ones (a mask)"
    assert info["guessed"] == ["batch", "height", "pixels[0]", "sequence", "width"]


def test_user_dims_shapes_and_integer_ranges():
    spec = FeedSpec(dims={"batch": 4, "sequence": 7}, shapes={"pixels": [2, 3, 8, 8]}, vocab_size=50, seed=3)
    feeds, _ = make_feeds(INPUTS, spec)
    assert feeds["input_ids"].shape == (4, 7) and feeds["input_ids"].dtype == np.int64
    assert feeds["input_ids"].min() >= 0 and feeds["input_ids"].max() < 50
    assert (feeds["attention_mask"] == 1).all()
    assert feeds["pixels"].shape == (2, 3, 8, 8) and feeds["pixels"].dtype == np.float32


def test_same_seed_same_feeds_and_zeros_mode():
    a, _ = make_feeds(INPUTS, FeedSpec(seed=5))
    b, _ = make_feeds(INPUTS, FeedSpec(seed=5))
    c, _ = make_feeds(INPUTS, FeedSpec(seed=6))
    assert np.array_equal(a["pixels"], b["pixels"]) and not np.array_equal(a["pixels"], c["pixels"])
    zeros, _ = make_feeds(INPUTS, FeedSpec(mode="zeros"))
    assert not zeros["pixels"].any()


def test_user_files_are_loaded_without_pickle(tmp_path):
    good = tmp_path / "ids.npy"
    np.save(good, np.arange(6, dtype=np.int64).reshape(2, 3))
    feeds, _ = make_feeds(INPUTS[:1], FeedSpec(mode="files", files={"input_ids": str(good)}))
    assert feeds["input_ids"].tolist() == [[0, 1, 2], [3, 4, 5]]
    evil = tmp_path / "evil.npy"
    np.save(evil, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(UserError, match="pickle"):
        make_feeds(INPUTS[:1], FeedSpec(mode="files", files={"input_ids": str(evil)}))
    with pytest.raises(UserError, match="no input named"):
        make_feeds(INPUTS[:1], FeedSpec(mode="files", files={"other": str(good)}))


def test_npz_maps_arrays_to_inputs(tmp_path):
    path = tmp_path / "all.npz"
    np.savez(path, input_ids=np.ones((1, 4), np.int64), attention_mask=np.ones((1, 4), np.int64))
    feeds, _ = make_feeds(INPUTS[:2], FeedSpec(mode="files", files={"*": str(path)}))
    assert feeds["input_ids"].shape == (1, 4)


def test_bad_specs_are_user_errors():
    with pytest.raises(UserError):
        make_feeds(INPUTS, FeedSpec(mode="magic"))
    with pytest.raises(UserError, match="GiB"):
        make_feeds(INPUTS, FeedSpec(dims={"batch": 100000, "sequence": 100000}))


def test_a_dimension_shared_with_a_guessed_one_is_flagged_as_guessed_too():
    _, info = make_feeds(INPUTS[:2], FeedSpec())
    rows = {row["name"]: row for row in info["inputs"]}
    assert rows["attention_mask"]["source"] == rows["input_ids"]["source"] == "default"
    _, info = make_feeds(INPUTS[:2], FeedSpec(dims={"batch": 2, "sequence": 9}))
    assert {row["source"] for row in info["inputs"]} == {"user"}


def test_a_dimension_name_that_is_not_utf8_is_refused_in_one_line(tmp_path):
    """ONNX Runtime loads any bytes as a name; Python cannot read them as text."""
    import onnxruntime as ort

    from app.core.session.inputs import session_inputs

    path = tmp_path / "m.onnx"
    path.write_bytes(models.tiny_add().SerializeToString().replace(b"batch", b"\x91atch"))
    with pytest.raises(UserError, match="not UTF-8 text"):
        session_inputs(ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]))
