"""Realistic samples by modality, for a search given no data folder: a variant checked on
random values can pass on noise and fail on a photo (an int8 detector calibrated on noise
learns the wrong ranges), so each input the plan can recognise gets samples like the ones it
will meet:

- an image input (one float input of rank 4 with 1 or 3 channels): real photos (bundled
  from scikit-image's public-domain and CC0 pictures, resources/samples) and their mirror
  images; a text-line input (32 or 48 pixels high and at least three times as wide, as
  text recognisers and their orientation classifiers take) gets lines of drawn text instead;
- bytes (integer ids fed to an input named for bytes, as file-type detectors take): the
  first bytes of real files shipped with Python and ORTune;
- token ids (integer ids the plan would draw at random): ids with the word-like (Zipf)
  frequencies of text, the sequence opened and closed by BERT's [CLS] and [SEP] where the
  vocabulary is that large; masks, segments and positions stay as the plan makes them;
- an audio input: speech-like sound (voiced syllables of a gliding pitch with formant
  resonances, pauses and a noise floor) at the plan's length.

The samples are written as a data folder (app.core.session.data_folder) that the search
splits like the user's own (one half calibrates, the other checks); each input they feed
says "sample" and how it was made. `None`: nothing recognisable, the plan's synthetic
values stay."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from app.core.store.paths import resources_dir

COUNT = 8
TEXT_HEIGHTS = (32, 48)
SAMPLE_RATE = 16000
BERT_VOCAB, CLS, SEP = 30000, 101, 102
_IDS = re.compile(r"(?:random|token) ids below (?:the )?([\d,]+)")
_TEXT_MODEL = re.compile(r"ocr|crnn|(^|[_\W])(rec|text|cls)([_\W]|$)")
_DETECTOR = re.compile(r"(^|[_\W])det([_\W]|$)|detect")
_BATCH_LABEL = re.compile(r"\[0\]$|batch", re.I)
_BYTES = re.compile(r"byte", re.I)
#: a segment input (BERT's token_type_ids): ids below 2 by its embedding table, yet not text; one
#: sentence is one segment, all zeros
_SEGMENT = re.compile(r"token_type|type_ids|segment", re.I)
_AUDIO = re.compile(r"audio|wav|pcm|speech|samples|input_values|waveform|^input$", re.I)
WORDS = ("invoice total amount date paid order number street city account balance receipt station "
         "platform north south price tax customer thank you welcome open closed monday friday 2024 "
         "ORTune model fast check 17.50 42 No. 7 Tel Road").split()


def photos() -> list[Path]:
    return sorted((resources_dir() / "samples").glob("*.jpg"))


def _image_kind(row: dict, guessed_size: bool, model_name: str) -> str | None:
    from app.core.session.input_plan import channel_axis

    shape = row["shape"]
    if "float" not in row["dtype"] or len(shape) != 4:
        return None
    axis = channel_axis(shape)
    if axis is None or shape[axis] not in (1, 3):
        return None
    height, width = (shape[2], shape[3]) if axis == 1 else (shape[1], shape[2])
    if height in TEXT_HEIGHTS and width >= 3 * height:
        return "text-line"
    return "text-line" if guessed_size and text_line_name(model_name) else "photo"


def text_line_name(model_name: str) -> bool:
    """A model named as a text recogniser or a text line's classifier (PP-OCR's rec and cls,
    a CRNN), not a text detector, which takes whole pages."""
    name = model_name.lower()
    return bool(_TEXT_MODEL.search(name)) and not _DETECTOR.search(name)


def text_line_shape(row: dict, model_name: str) -> list[int]:
    """The shape a text-line input is given when its size was only guessed: 48 pixels high
    (PP-OCR's), 192 wide for an orientation classifier, 320 for a recogniser."""
    shape = list(row["shape"])
    width = 192 if re.search(r"(^|[_\W])cls([_\W]|$)", model_name.lower()) else 320
    if shape[1] in (1, 3):
        return shape[:2] + [TEXT_HEIGHTS[-1], width]
    return [shape[0], TEXT_HEIGHTS[-1], width, shape[3]]


def modalities(rows: list[dict], guessed: tuple[str, ...] = (), model_name: str = "") -> dict[str, str]:
    """Input name -> "photo", "text-line", "bytes", "tokens" or "speech", for the inputs (the input
    plan's rows: name, dtype, shape, values) that samples can feed. One image input at most
    (a data folder of images feeds one); images and arrays are not mixed. `guessed`: the
    dims nobody gave; a model whose image size was guessed and whose name says it reads
    text lines (`model_name`) gets text lines."""
    guessed_size = any(not _BATCH_LABEL.search(label) for label in guessed)
    images = {row["name"]: kind for row in rows if (kind := _image_kind(row, guessed_size, model_name))}
    if len(images) == 1:
        return images
    found = {row["name"]: "bytes" if _BYTES.search(row["name"]) else "tokens" for row in rows
             if _IDS.match(row.get("values", "")) and not _SEGMENT.search(row["name"])}
    floats = [row for row in rows if "float" in row["dtype"] and row["shape"]]
    audio = [row for row in floats if _AUDIO.search(row["name"]) and len(row["shape"]) <= 3]
    if audio:
        found[audio[0]["name"]] = "speech"
    return found


def _text_line(rng, width: int, height: int) -> "Image":
    from PIL import Image, ImageDraw, ImageFont

    words = " ".join(rng.choice(WORDS, size=int(rng.integers(2, 6))))
    shade = int(rng.integers(215, 256))
    image = Image.new("RGB", (width, height), (shade, shade, int(rng.integers(200, 256))))
    font = ImageFont.load_default(size=int(height * 0.6))
    ink = tuple(int(v) for v in rng.integers(0, 70, size=3))
    ImageDraw.Draw(image).text((int(rng.integers(2, 12)), height * 0.15), words, fill=ink, font=font)
    noise = rng.normal(0, 6, (height, width, 3))
    return Image.fromarray(np.clip(np.asarray(image, np.float32) + noise, 0, 255).astype(np.uint8))


def _token_ids(rng, shape: list[int], high: int, dtype: str) -> np.ndarray:
    ranks = np.minimum(rng.zipf(1.2, size=shape), 50_000) - 1
    if high > BERT_VOCAB:
        ids = 1000 + ranks % (high - 1000)
        ids[..., 0], ids[..., -1] = CLS, SEP
    else:
        ids = ranks % max(high, 1)
    return ids.astype(dtype)


def byte_files() -> list[Path]:
    """Real files of several kinds, shipped with Python and ORTune: source text, a CSV
    module's, photos (JPEG)."""
    import csv
    import email
    import json

    return [Path(json.__file__), Path(csv.__file__), Path(email.__file__).with_name("message.py"), *photos()]


def _file_bytes(index: int, shape: list[int], high: int, dtype: str) -> np.ndarray:
    """The bytes of a real file, from its start, padded with `high - 1` (a byte model's
    padding token, 256 for 0–255 bytes) where the file is shorter."""
    files = byte_files()
    length = int(np.prod(shape))
    data = np.frombuffer(files[index % len(files)].read_bytes()[:length], np.uint8).astype(np.int64)
    ids = np.full(length, min(256, high - 1), np.int64)
    ids[:data.size] = np.minimum(data, high - 1)
    return ids.reshape(shape).astype(dtype)


def _companion(row: dict) -> np.ndarray | None:
    """A mask, segment or position input as the plan makes it (its `values` say which)."""
    values, shape, dtype = row.get("values", ""), row["shape"], row["dtype"]
    if _SEGMENT.search(row["name"]) or values.startswith("zeros"):
        return np.zeros(shape, dtype)
    if values.startswith("ones"):
        return np.ones(shape, dtype)
    if values.startswith("positions") and shape:
        # a decoder's step goes on from its past ("positions 127…127"), as the plan made them
        start = re.match(r"positions (\d+)…", values)
        first = int(start.group(1)) if start else 0
        return np.broadcast_to(np.arange(first, first + shape[-1], dtype=dtype), shape).copy()
    return None


def speech(rng, length: int) -> np.ndarray:
    """`length` samples at 16 kHz of speech-like sound, peak about 0.5."""
    t = np.arange(length) / SAMPLE_RATE
    pitch = rng.uniform(100, 220) * (1 + 0.1 * np.sin(2 * np.pi * rng.uniform(0.5, 2) * t))
    phase = 2 * np.pi * np.cumsum(pitch) / SAMPLE_RATE
    formants = (rng.uniform(500, 900), rng.uniform(1100, 2000), rng.uniform(2400, 3000))
    voice = sum(np.sin(k * phase) / k * sum(np.exp(-((k * pitch - f) / 250.0) ** 2) for f in formants)
                for k in range(1, 25))
    syllables = np.clip(np.sin(2 * np.pi * rng.uniform(3, 5) * t + rng.uniform(0, np.pi)), 0, None) ** 0.7
    wave = voice * syllables
    wave = 0.5 * wave / max(float(np.abs(wave).max()), 1e-6) + rng.normal(0, 0.005, length)
    return wave.astype(np.float32)


def _speech_array(rng, shape: list[int], dtype: str) -> np.ndarray:
    rows = int(np.prod(shape[:-1])) if len(shape) > 1 else 1
    return np.stack([speech(rng, shape[-1]) for _ in range(rows)]).reshape(shape).astype(dtype)


def describe(kind: str) -> str:
    return {"photo": "sample: real photos (public-domain and CC0 pictures from scikit-image) and their mirror images, "
                     "resized to the input",
            "text-line": "sample: lines of drawn text (PIL), dark on light, with a little noise",
            "tokens": "sample: token ids with the word-like (Zipf) frequencies of text, not from a tokenizer",
            "bytes": "sample: the bytes of real files (Python source text, photos), padded where shorter",
            "speech": f"sample: speech-like sound at {SAMPLE_RATE // 1000} kHz (voiced syllables, pauses, a noise "
                      "floor)"}[kind]


def write_samples(rows: list[dict], folder: Path, count: int = COUNT, seed: int = 0, guessed: tuple[str, ...] = (),
                  model_name: str = "") -> dict | None:
    """A data folder of `count` samples in `folder` for the inputs `modalities` recognises:
    {"folder", "kinds" {input: kind}, "described" {input: sentence, a companion mask's too},
    "count", "shapes" {input: shape} (a text line's, where its size was only guessed)}; None
    when none is recognised."""
    kinds = modalities(rows, guessed, model_name)
    if not kinds:
        return None
    shapes: dict[str, list[int]] = {}         # a text line whose size was guessed gets a text line's
    rows = [dict(row, shape=shapes.setdefault(row["name"], text_line_shape(row, model_name)))
            if kinds.get(row["name"]) == "text-line" and _image_kind(row, False, "") != "text-line" else row
            for row in rows]
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    by_name = {row["name"]: row for row in rows}
    companions: dict[str, np.ndarray] = {}     # a mask, segment or position input beside token ids
    name, kind = next(((n, k) for n, k in kinds.items() if k in ("photo", "text-line")), (None, None))
    if kind == "photo":
        from PIL import Image, ImageOps

        pictures = photos()
        for index in range(count):
            with Image.open(pictures[index % len(pictures)]) as image:
                picture = ImageOps.mirror(image) if index >= len(pictures) else image.copy()
            picture.save(folder / f"sample-{index:02d}.png")
    elif kind == "text-line":
        shape = by_name[name]["shape"]
        height, width = (shape[2], shape[3]) if shape[1] in (1, 3) else (shape[1], shape[2])
        for index in range(count):
            _text_line(rng, width, height).save(folder / f"sample-{index:02d}.png")
    else:
        if {"tokens", "bytes"} & set(kinds.values()):      # the ids' companions, at the shape the ids were given
            made = {row["name"]: _companion(row) for row in rows if row["name"] not in kinds}
            companions = {name: array for name, array in made.items() if array is not None}
        for index in range(count):
            arrays = dict(companions)
            for name, kind in kinds.items():
                row = by_name[name]
                if kind in ("tokens", "bytes"):
                    high = int(_IDS.match(row["values"]).group(1).replace(",", ""))
                    arrays[name] = (_token_ids(rng, row["shape"], high, row["dtype"]) if kind == "tokens"
                                    else _file_bytes(index, row["shape"], high, row["dtype"]))
                else:
                    arrays[name] = _speech_array(rng, row["shape"], row["dtype"])
            np.savez(folder / f"sample-{index:02d}.npz", **arrays)
    # a mask beside the ids is in the sample files too: said to be made with them, not to be the user's
    described = {n: describe(k) for n, k in kinds.items()} | {
        n: "sample: zeros, one segment (a single sentence)" if _SEGMENT.search(n) else
        f"sample: made with the samples as the input plan makes it ({by_name[n]['values']})" for n in companions}
    return {"folder": str(folder), "kinds": kinds, "described": described, "count": count, "shapes": shapes}


def label_inputs(rows: list[dict], samples: dict | None) -> list[dict]:
    """The input rows with those the samples fed said to be samples, and how they were made."""
    if not samples:
        return rows
    return [dict(row, source="sample", reason=samples["described"][row["name"]], values="sample")
            if row["name"] in samples["described"] else row for row in rows]


def probe_inputs(source: Path, params, ctx) -> dict:
    """The inputs the model runs on (the plan, then the probe): what the samples are made for
    and what the shipped session.py feeds when no candidate was measured; {"why"} when they
    could not be found."""
    from app.core.jobs.errors import JobFailed, UserError
    from app.core.runner.process import run_child
    from app.core.session.jobs import PROBE_INPUTS, ModelSession

    try:
        return run_child(PROBE_INPUTS, ModelSession(str(source), params.session), ctx)
    except (UserError, JobFailed) as exc:
        return {"why": f"the inputs could not be found ({exc.message})"}


def make_samples(source: Path, probe: dict, params, scratch: Path) -> dict | None:
    """Samples by modality (write_samples) when no data folder was given, from
    the inputs the probe found the model runs on; {"why"} when none could be made."""
    if "why" in probe:
        return {"why": f"no samples: {probe['why']}"}
    made = write_samples(probe["inputs"], scratch / "samples", seed=params.session.inputs.seed,
                         guessed=tuple(probe["guessed"]), model_name=source.stem)
    if made and not probe["worked"] and not made["shapes"]:
        return {"why": f"no samples: the model did not run on the inputs found ({probe['message']})"}
    if not made:
        return {"why": "no input looks like an image, text, token ids or audio: no samples were made"}
    params.session.inputs.shapes.update(made["shapes"])     # a text line's size, where it was only guessed
    return made
