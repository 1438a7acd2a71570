"""The user's data folder: samples by input name or images with a preset, feeding the input
plan as its "file" source; labels and expected outputs beside them."""

import numpy as np
import pytest

from app.core.jobs.errors import UserError
from app.core.session.data_folder import read_folder
from app.core.session.inputs import FeedSpec, make_feeds

IMAGE_INPUT = [{"name": "pixels", "dtype": "tensor(float)", "shape": ["batch", 3, "height", "width"]}]


def _image(path, colour, size=(40, 30)):
    from PIL import Image
    Image.new("RGB", size, colour).save(path)


def test_npz_samples_feed_inputs_by_name_and_the_rest_is_planned(tmp_path):
    np.savez(tmp_path / "a.npz", x=np.full((1, 4), 2.0, np.float32))
    np.savez(tmp_path / "b.npz", x=np.full((1, 4), 3.0, np.float32))
    inputs = [{"name": "x", "dtype": "float", "shape": ["batch", 4]},
              {"name": "mask", "dtype": "int64", "shape": ["batch", 4]}]
    feeds, info = make_feeds(inputs, FeedSpec(data=str(tmp_path), sample=1))
    assert feeds["x"].tolist() == [[3.0] * 4] and feeds["mask"].tolist() == [[1] * 4]
    x, mask = info["inputs"]
    assert x["source"] == "file" and x["reason"] == "sample b.npz of your data folder"
    assert mask["source"] != "file"


def test_images_are_resized_to_the_plan_and_normalised_by_the_preset(tmp_path):
    _image(tmp_path / "white.png", (255, 255, 255))
    spec = FeedSpec(data=str(tmp_path), shapes={"pixels": [1, 3, 8, 6]})
    feeds, info = make_feeds(IMAGE_INPUT, spec)
    assert feeds["pixels"].shape == (1, 3, 8, 6) and feeds["pixels"].dtype == np.float32
    assert feeds["pixels"][0, :, 0, 0] == pytest.approx([(1 - 0.485) / 0.229, (1 - 0.456) / 0.224,
                                                         (1 - 0.406) / 0.225], rel=1e-5)
    assert info["inputs"][0]["source"] == "file"
    assert info["inputs"][0]["reason"].startswith("your data folder: white.png resized to 8×6")
    raw, _ = make_feeds([{"name": "pixels", "dtype": "float", "shape": [1, 5, 5, 3]}],
                        FeedSpec(data=str(tmp_path), image_preset="raw"))
    assert raw["pixels"].shape == (1, 5, 5, 3) and raw["pixels"].max() == 255     # NHWC, from the shape
    guessed, info = make_feeds(IMAGE_INPUT, FeedSpec(data=str(tmp_path)))
    assert info["inputs"][0]["source"] == "default"          # a size nobody gave stays flagged


def test_labels_and_expected_outputs_are_read_beside_the_samples(tmp_path):
    for name in ("cat", "dog"):
        np.save(tmp_path / f"{name}.npy", np.zeros((1, 4), np.float32))
    (tmp_path / "labels.csv").write_text("cat.npy,3\ndog,1\n")
    (tmp_path / "expected").mkdir()
    np.save(tmp_path / "expected" / "dog.npy", np.ones((1, 2), np.float32))
    folder = read_folder(tmp_path)
    assert [p.name for p in folder.samples] == ["cat.npy", "dog.npy"]
    assert folder.label(0) == 3 and folder.label(1) == 1
    assert folder.expected(0, ["y"]) is None and folder.expected(1, ["y"])["y"].tolist() == [[1.0, 1.0]]


@pytest.mark.parametrize("setup, message", [
    (lambda p: None, "holds no samples"),
    (lambda p: (np.save(p / "a.npy", np.zeros(2)), _image(p / "b.png", "red")), "holds both arrays"),
    (lambda p: (np.save(p / "a.npy", np.zeros(2)), (p / "labels.txt").write_text("a,cat")), "line 1: expects"),
])
def test_folders_that_cannot_be_read_say_why(tmp_path, setup, message):
    setup(tmp_path)
    with pytest.raises(UserError, match=message):
        read_folder(tmp_path)
    with pytest.raises(UserError, match="does not exist"):
        read_folder(tmp_path / "missing")


def test_images_need_one_image_input(tmp_path):
    _image(tmp_path / "a.png", "blue")
    two = IMAGE_INPUT + [{"name": "other", "dtype": "float", "shape": [1, 3, 4, 4]}]
    with pytest.raises(UserError, match="one 4-D float input"):
        make_feeds(two, FeedSpec(data=str(tmp_path)))
