"""The user's own data: a folder of samples, each one .npz (one array per input, named as
the input), one .npy (a model with one input) or one image (for a model's image input,
resized to the plan's size and normalised by a preset). Optionally, beside them:

- `labels.csv` or `labels.txt`: lines `sample,label` (the file name or its stem, then a
  whole number), the class each sample belongs to;
- `expected/`: per sample, `<stem>.npy` (the model's first output) or `<stem>.npz` (outputs
  by name), what the model should return.

Arrays are loaded without pickle. A sample's values are the input plan's "file" source."""

from __future__ import annotations

import math
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from app.core.jobs.errors import UserError
from app.core.jobs.memory import budget_bytes
from app.core.formatting import human_bytes

ARRAY_SUFFIXES = (".npy", ".npz")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".webp", ".tif", ".tiff")
LABEL_FILES = ("labels.csv", "labels.txt")
EXPECTED_FOLDER = "expected"
#: the label column's name in a labels.csv header line
HEADER_LABELS = ("label", "class")
#: preset -> (scale, mean, std) per channel, applied to 0-255 pixel values as (x * scale - mean) / std
PRESETS = {
    "imagenet": (1 / 255, (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)),
    "unit": (1 / 255, (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)),
    "raw": (1.0, (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)),
}
#: an array this small is read without asking whether the memory budget holds it
SMALL_ARRAY_BYTES = 64 << 20
#: an image past this many pixels is refused before it is decoded (PIL's own bomb bound)
MAX_IMAGE_PIXELS = 89_478_485
PRESET_TEXT = {"imagenet": "scaled to 0–1, ImageNet mean/std", "unit": "scaled to 0–1", "raw": "0–255"}


@dataclass
class DataFolder:
    path: Path
    samples: list[Path]
    images: bool
    labels: dict[str, int] = field(default_factory=dict)     # sample stem -> label
    answers: dict[str, Path] = field(default_factory=dict)   # sample stem -> its file in expected/

    def sample(self, index: int) -> Path:
        return self.samples[index % len(self.samples)]

    def label(self, index: int) -> int | None:
        return self.labels.get(self.sample(index).stem)

    def expected(self, index: int, output_names: list[str]) -> dict[str, np.ndarray] | None:
        """What the model should return for sample `index`, by output name (None: not given)."""
        path = self.answers.get(self.sample(index).stem)
        if path is None:
            return None
        loaded = _load(path)
        if isinstance(loaded, np.ndarray):
            return {output_names[0]: loaded}
        return {name: loaded[name] for name in loaded if name in output_names}


def _expected_files(folder: Path) -> dict[str, Path]:
    """The files of `expected/` by sample stem (an .npy before an .npz of the same stem)."""
    found: dict[str, Path] = {}
    expected = folder / EXPECTED_FOLDER
    if not expected.is_dir():
        return found
    for path in sorted(expected.iterdir(), key=lambda p: ARRAY_SUFFIXES.index(p.suffix) if p.suffix in
                       ARRAY_SUFFIXES else len(ARRAY_SUFFIXES)):
        if path.suffix in ARRAY_SUFFIXES and path.is_file():
            found.setdefault(path.stem, path)
    return found


def _not_loadable(path: Path, why: str) -> UserError:
    return UserError("bad-input-file", f"{path.name}: is not an .npy or .npz file loadable without pickle ({why})")


def _check_header(path: Path, stream, held: int, member: str = "") -> tuple:
    """Refuse an array from its header alone, before its data is read: one of Python objects
    (pickle), or one whose header claims more bytes than the file holds or than the memory budget.
    Returns the header's (shape, fortran_order, dtype); the stream is left where the data begins."""
    where = f"{member}: " if member else ""
    try:
        version = np.lib.format.read_magic(stream)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, fortran_order, dtype = read_header(stream)
    except (ValueError, OSError, EOFError) as exc:
        raise _not_loadable(path, f"{where}{exc}") from None
    if dtype.hasobject:
        raise _not_loadable(path, f"{where}it holds Python objects, which only pickle can read")
    claimed = int(np.prod(shape, dtype=object)) * dtype.itemsize
    held -= stream.tell()                 # what follows the header
    if claimed > held:
        raise UserError("bad-input-file", f"{path.name}: {where}its header claims {human_bytes(claimed)} of data but "
                                          f"the file holds {human_bytes(held)}")
    if claimed > SMALL_ARRAY_BYTES:       # below, asking the system what is free costs more than reading it
        budget = budget_bytes()
        if claimed > budget:
            raise UserError("bad-input-file", f"{path.name}: {where}its array takes {human_bytes(claimed)}, more "
                                              f"than the memory budget ({human_bytes(budget)})")
    return shape, fortran_order, dtype


def _read_npy(path: Path, stream):
    """The array of the .npy file open in `stream`, its header checked before its data is read.
    A large one is mapped, not read: a feed whose shape the model refuses costs no reading."""
    shape, fortran_order, dtype = _check_header(path, stream, path.stat().st_size)
    count = math.prod(shape)
    if count * dtype.itemsize > SMALL_ARRAY_BYTES:
        return np.memmap(stream, dtype=dtype, mode="c", offset=stream.tell(), shape=tuple(shape),
                         order="F" if fortran_order else "C")
    array = np.fromfile(stream, dtype=dtype, count=count) if count else np.empty(0, dtype)
    if fortran_order:
        return array.reshape(shape[::-1]).transpose()
    return array.reshape(shape)


def _read_npz(path: Path) -> dict[str, np.ndarray]:
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            with archive.open(info) as stream:
                _check_header(path, stream, info.file_size, info.filename)
    with np.load(path, allow_pickle=False) as loaded:
        return {name: loaded[name] for name in loaded.files}


def _load(path: Path):
    """The array of an .npy or the arrays of an .npz, each refused from its header when it
    cannot be what it claims or would not fit (an .npy is opened and read once)."""
    try:
        with open(path, "rb") as stream:
            if stream.read(2) != b"PK":      # not a zip archive: an .npy or nothing loadable
                stream.seek(0)
                return _read_npy(path, stream)
        return _read_npz(path)
    except (ValueError, OSError, EOFError, KeyError, zipfile.BadZipFile) as exc:
        raise _not_loadable(path, str(exc)) from None


def _labels(folder: Path) -> dict[str, int]:
    for name in LABEL_FILES:
        path = folder / name
        if not path.is_file():
            continue
        labels = {}
        try:
            text = path.read_bytes().decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise UserError("bad-input-file", f"{path.name}: is not UTF-8 text (byte {exc.start:,}); save it as "
                                              "UTF-8") from None
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            sample, _, label = line.replace("\t", ",").partition(",")
            if number == 1 and label.strip().lower() in HEADER_LABELS:
                continue                  # a CSV header: "sample,label"
            try:
                labels[Path(sample.strip()).stem] = int(label.strip())
            except ValueError:
                raise UserError("bad-input-file", f"{path.name} line {number}: expects 'sample,label' with a whole "
                                                  f"number label, not {line.strip()[:60]!r}") from None
        return labels
    return {}


def read_folder(path: str | Path) -> DataFolder:
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise UserError("not-found", f"{folder}: the data folder does not exist")
    files = sorted(p for p in folder.iterdir() if p.is_file())
    arrays = [p for p in files if p.suffix.lower() in ARRAY_SUFFIXES]
    images = [p for p in files if p.suffix.lower() in IMAGE_SUFFIXES]
    if arrays and images:
        raise UserError("bad-input-file", f"{folder}: holds both arrays ({arrays[0].name}) and images "
                                          f"({images[0].name}); keep one kind of sample in a data folder")
    if not arrays and not images:
        raise UserError("bad-input-file", f"{folder}: holds no samples (.npy, .npz or images such as .png, .jpg)")
    return DataFolder(folder, arrays or images, bool(images), _labels(folder), _expected_files(folder))


def sample_arrays(folder: DataFolder, index: int, names: list[str]) -> dict[str, np.ndarray]:
    """The arrays of array sample `index`, by input name."""
    path = folder.sample(index)
    loaded = _load(path)
    if isinstance(loaded, np.ndarray):
        if len(names) != 1:
            raise UserError("bad-input-file", f"{path.name}: one array for a model with {len(names)} inputs; "
                                              "give each sample as an .npz with one array per input")
        return {names[0]: loaded}
    unknown = sorted(set(loaded) - set(names))
    if unknown:
        raise UserError("bad-input-file", f"{path.name}: the model has no input named {', '.join(unknown)} "
                                          f"(inputs: {', '.join(names)})")
    return loaded


def image_input(inputs: list[dict]) -> str:
    """The input images go to: the model's only float input of rank 4."""
    candidates = [i["name"] for i in inputs if "float" in i["dtype"] and i.get("shape") and len(i["shape"]) == 4]
    if len(candidates) != 1:
        raise UserError("bad-input-file", "images feed a model with one 4-D float input; this one has "
                                          f"{len(candidates) or 'no'} such inputs — give .npz samples instead")
    return candidates[0]


def image_batch(folder: DataFolder, index: int, shape: list[int], preset: str, layout: str) -> tuple[np.ndarray, str]:
    """Images `index`, `index + 1` … (one per batch row) at `shape`, as the preset normalises
    them; `layout` NCHW or NHWC. Returns the array and what was done to the images."""

    channels_first = layout == "NCHW"
    batch, channels, height, width = (shape[0], shape[1], shape[2], shape[3]) if channels_first else (
        shape[0], shape[3], shape[1], shape[2])
    if channels not in (1, 3):
        raise UserError("bad-input-file", f"images have 1 or 3 channels; this input takes {channels} ({layout})")
    scale, mean, std = PRESETS[preset]
    rows = []
    for row in range(max(batch, 1)):
        path = folder.sample(index + row)
        pixels = _decoded(path, "RGB" if channels == 3 else "L", (width, height))
        values = np.asarray(pixels, dtype=np.float32).reshape(height, width, channels) * scale
        values = (values - np.array(mean[:channels], np.float32)) / np.array(std[:channels], np.float32)
        rows.append(values.transpose(2, 0, 1) if channels_first else values)
    names = ", ".join(folder.sample(index + r).name for r in range(max(batch, 1)))
    return np.stack(rows).astype(np.float32), f"{names} resized to {height}×{width}, {PRESET_TEXT[preset]}, {layout}"


def _decoded(path: Path, mode: str, size: tuple[int, int]):
    """The image at `path` in `mode`, resized to `size`; its pixel count is checked from its
    header (PIL reads the size without decoding) before any pixel is decoded."""
    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as image:
                pixels = image.size[0] * image.size[1]
                if pixels > MAX_IMAGE_PIXELS:
                    raise UserError("bad-input-file", f"{path.name}: is {image.size[0]:,}×{image.size[1]:,} pixels, "
                                                      f"more than an image sample may have ({MAX_IMAGE_PIXELS:,})")
                return image.convert(mode).resize(size, Image.BILINEAR)
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise UserError("bad-input-file", f"{path.name}: is too large to decode safely ({exc})") from None
    except (OSError, ValueError, SyntaxError) as exc:
        raise UserError("bad-input-file", f"{path.name}: cannot be read as an image ({exc})") from None
