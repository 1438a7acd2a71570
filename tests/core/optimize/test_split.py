"""Optimize judges on data it did not calibrate on: the user's folder is split in two, one
half calibrates int8-static, the other checks every candidate; what is shown and shipped
names the user's folder, never the scratch halves."""

import json

import numpy as np
from PIL import Image

from app.core.convert.jobs import MAKE
from app.core.jobs.protocol import JobContext
from app.core.optimize.jobs import OPTIMIZE
from app.core.optimize.split import split_data
from app.core.session.config import SessionConfig
from app.core.session.data_folder import read_folder
from tests import models


def _array_folder(folder, count, shape=(1, 3, 32, 32)):
    folder.mkdir()
    rng = np.random.default_rng(3)
    for index in range(count):
        np.save(folder / f"s{index}.npy", rng.standard_normal(shape).astype(np.float32))
    return folder


def test_the_halves_alternate_and_keep_their_labels_and_expected_outputs(tmp_path):
    folder = _array_folder(tmp_path / "data", 5, (1, 4))
    (folder / "labels.csv").write_text("sample,label\n" + "".join(f"s{i}.npy,{i % 2}\n" for i in range(5)))
    (folder / "expected").mkdir()
    for index in range(5):
        np.save(folder / "expected" / f"s{index}.npy", np.full((1, 2), index, np.float32))
    (tmp_path / "scratch").mkdir()
    split = split_data(folder, tmp_path / "scratch")
    calibrate, check = read_folder(split["calibrate"]), read_folder(split["check"])
    assert [p.name for p in calibrate.samples] == ["s0.npy", "s2.npy", "s4.npy"]
    assert [p.name for p in check.samples] == ["s1.npy", "s3.npy"]
    assert check.labels == {"s1": 1, "s3": 1} and calibrate.labels == {"s0": 0, "s2": 0, "s4": 0}
    assert float(check.expected(1, ["y"])["y"][0, 0]) == 3.0
    assert (split["calibrate_samples"], split["check_samples"], split["samples"]) == (3, 2, 5)
    assert sorted(p.name for p in folder.iterdir()) == ["expected", "labels.csv"] + [f"s{i}.npy" for i in range(5)]


def test_one_sample_both_calibrates_and_checks_and_the_note_says_so(tmp_path):
    folder = _array_folder(tmp_path / "data", 1, (1, 4))
    split = split_data(folder, tmp_path)
    assert split["calibrate"] == split["check"] == str(folder) and "both calibrates and checks" in split["note"]


def test_int8_static_calibrates_on_a_folder_of_images(tmp_path):
    folder = tmp_path / "images"
    folder.mkdir()
    rng = np.random.default_rng(4)
    for index in range(3):
        Image.fromarray(rng.integers(0, 255, (40, 40, 3), dtype=np.uint8)).save(folder / f"p{index}.png")
    source = models.save(models.cnn(), tmp_path / "cnn.onnx")
    report = MAKE({"kind": "int8-static", "input": str(source), "output": str(tmp_path / "q.onnx"),
                   "options": {"calibration": str(folder)}}, None)
    assert report["calibration_samples"] == 3 and (tmp_path / "q.onnx").exists()


def test_optimize_calibrates_on_one_half_and_checks_on_the_other(tmp_path):
    data = _array_folder(tmp_path / "data", 6)
    source = models.save(models.cnn(), tmp_path / "cnn.onnx")
    result = OPTIMIZE({"model": str(source), "out_dir": str(tmp_path / "ship"), "screen_seconds": 0.3,
                       "tune": False, "kinds": ["int8-static"], "budget_seconds": 60, "data": str(data),
                       "try_expected_slower": True,      # made on a CPU without VNNI too
                       "session": SessionConfig(intra_op_num_threads=1).to_dict()},
                      JobContext())
    assert result["data"]["calibrate_samples"] == 3 and result["data"]["check_samples"] == 3
    assert "held-out" in result["data"]["judged_on"] and result["data"]["folder"] == str(data)
    row = next(r for r in result["candidates"] if r["kind"] == "int8-static")
    assert row["status"] in ("passed", "failed"), row
    assert row["calibration_samples"] == 3 and row["options"]["calibration"].endswith("(the calibration half)")
    assert result["session"]["inputs"]["data"] == str(data)
    preset = json.loads((tmp_path / "ship" / "preset.json").read_text())
    assert "data-check" not in json.dumps(preset) and "data-calibrate" not in json.dumps(preset)


def test_what_it_was_judged_on_is_said_in_one_sentence():
    from app.core.optimize.rows import judged_text

    data = {"judged_on": "your data: 3 held-out samples", "note": "3 samples calibrate, the other 3 check"}
    assert judged_text(data) == "Judged on your data: 3 held-out samples (3 samples calibrate, the other 3 check)"
