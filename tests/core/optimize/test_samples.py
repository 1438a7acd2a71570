import numpy as np

from app.core.optimize.samples import label_inputs, modalities, photos, speech, write_samples
from app.core.session.data_folder import image_batch, read_folder, sample_arrays


def _row(name, dtype, shape, values="random normal, seed 0"):
    return {"name": name, "dtype": dtype, "shape": shape, "values": values, "source": "default", "reason": "r"}


PHOTO = [_row("images", "float32", [1, 3, 64, 64])]
TEXT_LINE = [_row("x", "float32", [1, 3, 48, 320])]
TOKENS = [_row("input_ids", "int64", [1, 16], "random ids below 30,522"), _row("attention_mask", "int64", [1, 16],
                                                                              "ones (a mask)")]
AUDIO = [_row("input", "float32", [1, 512]), _row("sr", "int64", [], "16000 Hz")]


def test_each_modality_is_recognised_from_the_inputs():
    assert modalities(PHOTO) == {"images": "photo"}
    assert modalities(TEXT_LINE) == {"x": "text-line"}
    assert modalities(TOKENS) == {"input_ids": "tokens"}
    assert modalities(AUDIO) == {"input": "speech"}
    assert modalities([_row("bytes", "int32", [1, 64], "random ids below 1,000")]) == {"bytes": "bytes"}
    assert modalities([_row("features", "float32", [1, 10])]) == {}


def test_a_text_reader_whose_size_was_guessed_gets_text_lines_at_a_text_lines_size(tmp_path):
    guessed = ("x[2]", "x[3]")
    assert modalities(PHOTO, guessed, "resnet50") == {"images": "photo"}
    assert modalities(PHOTO, guessed, "ppocr_mobile_cls_infer") == {"images": "text-line"}
    assert modalities(PHOTO, guessed, "ch_PP-OCRv4_det_infer") == {"images": "photo"}   # a detector takes pages
    assert modalities(PHOTO, ("batch",), "ppocr_rec") == {"images": "photo"}           # its size was given
    made = write_samples(PHOTO, tmp_path / "s", guessed=guessed, model_name="ppocr_mobile_cls_infer")
    assert made["shapes"] == {"images": [1, 3, 48, 192]}


def test_photo_samples_are_real_photos_a_data_folder_reads(tmp_path):
    assert len(photos()) >= 4
    made = write_samples(PHOTO, tmp_path / "s", count=6)
    folder = read_folder(made["folder"])
    assert folder.images and len(folder.samples) == 6
    batch, _ = image_batch(folder, 0, [1, 3, 64, 64], "unit", "NCHW")
    assert batch.shape == (1, 3, 64, 64) and 0.05 < batch.std() < 0.5     # a picture, not a flat page


def test_text_lines_are_drawn_dark_on_light(tmp_path):
    folder = read_folder(write_samples(TEXT_LINE, tmp_path / "s")["folder"])
    line, _ = image_batch(folder, 0, [1, 3, 48, 320], "unit", "NCHW")
    assert np.median(line) > 0.7 and line.min() < 0.35           # mostly paper, some ink


def test_token_ids_keep_below_the_vocabulary_and_their_mask_comes_along(tmp_path):
    folder = read_folder(write_samples(TOKENS, tmp_path / "s")["folder"])
    arrays = sample_arrays(folder, 0, ["input_ids", "attention_mask"])
    ids = arrays["input_ids"]
    assert ids.shape == (1, 16) and ids.dtype == np.int64 and ids.max() < 30522
    assert ids[0, 0] == 101 and ids[0, -1] == 102                # [CLS] … [SEP] in a BERT-sized vocabulary
    assert (arrays["attention_mask"] == 1).all()


def test_a_decoder_steps_positions_go_on_from_its_past_as_the_plan_made_them(tmp_path):
    rows = [_row("input_ids", "int64", [1, 1], "random ids below 1,000"),
            _row("attention_mask", "int64", [1, 128], "ones: 128 = 127 past + 1 new"),
            _row("position_ids", "int64", [1, 1], "positions 127…127")]
    folder = read_folder(write_samples(rows, tmp_path / "s")["folder"])
    arrays = sample_arrays(folder, 0, ["input_ids", "attention_mask", "position_ids"])
    assert arrays["position_ids"].tolist() == [[127]]
    assert arrays["attention_mask"].shape == (1, 128)


def test_speech_is_loud_in_syllables_and_quiet_between():
    wave = speech(np.random.default_rng(0), 16000)
    assert wave.dtype == np.float32 and 0.4 < np.abs(wave).max() <= 0.55
    frames = np.abs(wave[: 16000 // 400 * 400].reshape(-1, 400)).mean(axis=1)    # 25 ms frames
    assert frames.max() > 10 * frames.min()


def test_the_inputs_fed_by_samples_say_so():
    samples = {"kinds": {"input": "speech"}, "described": {"input": "sample: speech-like sound"}}
    rows = label_inputs(AUDIO, samples)
    assert rows[0]["source"] == "sample" and rows[0]["values"] == "sample" and "speech" in rows[0]["reason"]
    assert rows[1] == AUDIO[1]
    assert label_inputs(AUDIO, None) == AUDIO


def test_a_mask_written_beside_sample_ids_is_said_to_be_made_with_them_not_your_data(tmp_path):
    # the BERT report read "attention_mask … file: sample sample-01.npz of your data folder" where no
    # folder was given: the mask lies in the sample files, so the check's row said it was the user's
    made = write_samples(TOKENS, tmp_path / "s")
    fed = [dict(row, source="file", reason="sample sample-01.npz of your data folder") for row in TOKENS]
    rows = {row["name"]: row for row in label_inputs(fed, made)}
    assert rows["attention_mask"]["source"] == "sample"
    assert rows["attention_mask"]["reason"] == "sample: made with the samples as the input plan makes it (ones (a mask))"
    assert "your data" not in rows["input_ids"]["reason"]


def test_a_segment_input_is_one_segment_not_text(tmp_path):
    # a BERT export's token_type_ids reads its 2-row table: the plan says "ids below 2"; they were drawn as text
    rows = TOKENS + [_row("token_type_ids", "int64", [1, 16], "token ids below 2")]
    assert modalities(rows) == {"input_ids": "tokens"}
    made = write_samples(rows, tmp_path / "s")
    arrays = sample_arrays(read_folder(made["folder"]), 0, ["input_ids", "attention_mask", "token_type_ids"])
    assert (arrays["token_type_ids"] == 0).all() and arrays["token_type_ids"].shape == (1, 16)
    assert "one segment" in made["described"]["token_type_ids"]
