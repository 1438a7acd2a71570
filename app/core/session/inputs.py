"""Input data for a model: seeded random, zeros, or the user's .npy/.npz files.

Symbolic dimensions get the user's values, or defaults guessed from their names
(1 for batch-like names); every feed reports which values it used."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from app.core.jobs.errors import UserError
from app.core.session.input_spec import FeedSpec  # noqa: F401  (re-exported: the spec lives apart, free of numpy)

_BATCH = re.compile(r"batch|^n$|^b$|num_?images|unk__", re.I)
_SEQUENCE = re.compile(r"seq|sequence|length|len$|tokens|time|frames|steps|past|total", re.I)
_SPATIAL = re.compile(r"height|width|^h$|^w$", re.I)
DEFAULT_SEQUENCE = 32
DEFAULT_SPATIAL = 224

# ORT's type strings ('tensor(float)') and ONNX's names ('float') -> numpy
_NUMPY_TYPES = {
    "float": np.float32, "float16": np.float16, "double": np.float64, "bfloat16": np.float32,
    "int8": np.int8, "uint8": np.uint8, "int16": np.int16, "uint16": np.uint16,
    "int32": np.int32, "uint32": np.uint32, "int64": np.int64, "uint64": np.uint64,
    "bool": np.bool_, "string": np.str_,
}


def numpy_dtype(type_text: str):
    name = type_text.strip()
    if name.startswith("tensor(") and name.endswith(")"):
        name = name[7:-1]
    try:
        return np.dtype(_NUMPY_TYPES[name])
    except KeyError:
        raise UserError("unsupported-input", f"inputs of type {type_text} cannot be generated") from None


def default_dim(name: str) -> int:
    if _BATCH.search(name):
        return 1
    if _SEQUENCE.search(name):
        return DEFAULT_SEQUENCE
    if _SPATIAL.search(name):
        return DEFAULT_SPATIAL
    return 1


def resolve_shape(name: str, shape, spec: FeedSpec, used: dict) -> list[int]:
    """Concrete shape of one input; `used` collects the symbolic dims chosen."""
    if name in spec.shapes:
        return list(spec.shapes[name])
    if shape is None:
        raise UserError("missing-shape",
                        f"input '{name}' has no declared shape; give it one with --shape {name}=D1,D2,...")
    concrete = []
    for index, dim in enumerate(shape):
        if isinstance(dim, int) and dim >= 0:
            concrete.append(dim)
            continue
        label = dim if isinstance(dim, str) and dim not in ("", "?") else f"{name}[{index}]"
        value = spec.dims.get(label)
        if value is None:
            value = default_dim(label) if label != f"{name}[{index}]" else (1 if index == 0 else default_dim(name))
        used[label] = value
        concrete.append(value)
    return concrete


def _random_values(name: str, dtype, shape, rng, vocab: int):
    lowered = name.lower()
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        if "mask" in lowered:
            return np.ones(shape, dtype)
        if "type" in lowered or "segment" in lowered:
            return np.zeros(shape, dtype)
        high = vocab
        if dtype.kind == "u" or dtype.itemsize < 8:
            high = min(high, int(np.iinfo(dtype).max))
        return rng.integers(0, max(high, 1), size=shape, dtype=dtype)
    if dtype.kind == "U":
        return np.full(shape, "text", dtype=object)
    return rng.standard_normal(shape).astype(dtype)


def load_user_arrays(spec: FeedSpec, names: list[str]) -> dict[str, np.ndarray]:
    arrays = {}
    for key, file in spec.files.items():
        path = Path(file)
        if not path.is_file():
            raise UserError("not-found", f"{path}: input file not found")
        try:
            loaded = np.load(path, allow_pickle=False)
        except ValueError as exc:
            raise UserError("bad-input-file", f"{path.name}: cannot be loaded without pickle ({exc})") from None
        except OSError as exc:
            raise UserError("bad-input-file", f"{path.name}: is not a .npy or .npz file ({exc})") from None
        if isinstance(loaded, np.ndarray):
            if key == "*":
                if len(names) != 1:
                    raise UserError("bad-input-file", f"{path.name}: one array given for {len(names)} inputs; use an .npz")
                key = names[0]
            arrays[key] = loaded
        else:
            with loaded:
                for array_name in loaded.files:
                    arrays[array_name] = loaded[array_name]
    unknown = set(arrays) - set(names)
    if unknown:
        raise UserError("bad-input-file", f"the model has no input named {', '.join(sorted(unknown))} "
                                          f"(inputs: {', '.join(names)})")
    return arrays


def make_feeds(inputs: list[dict], spec: FeedSpec | None = None) -> tuple[dict[str, np.ndarray], dict]:
    """Build one feed per input. `inputs` holds {name, dtype, shape} (ORT or ONNX type names).

    Returns (feeds, info) where info["dims"] lists the symbolic values used."""
    spec = spec or FeedSpec()
    spec.validate()
    rng = np.random.default_rng(spec.seed)
    names = [i["name"] for i in inputs]
    given = load_user_arrays(spec, names) if spec.mode == "files" or spec.files else {}
    used: dict[str, int] = {}
    feeds = {}
    for item in inputs:
        name = item["name"]
        dtype = numpy_dtype(item["dtype"])
        if name in given:
            array = given[name]
            if array.dtype != dtype:
                try:
                    array = array.astype(dtype, casting="same_kind")
                except TypeError:
                    raise UserError("bad-input-file", f"input '{name}' needs {dtype.name}, the file holds "
                                                      f"{array.dtype.name}") from None
            declared = item.get("shape")
            if declared is not None and (len(declared) != array.ndim or any(
                    isinstance(d, int) and d >= 0 and d != s for d, s in zip(declared, array.shape))):
                raise UserError("bad-input-file", f"input '{name}' is declared {list(declared)}, "
                                                  f"the file holds shape {list(array.shape)}")
            feeds[name] = array
            continue
        shape = resolve_shape(name, item.get("shape"), spec, used)
        elements = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if elements * dtype.itemsize > 8 << 30:
            raise UserError("bad-option", f"input '{name}' with shape {shape} would need "
                                          f"{elements * dtype.itemsize / 2**30:.0f} GiB; choose smaller dimensions")
        if spec.mode == "zeros":
            feeds[name] = np.zeros(shape, dtype) if dtype.kind != "U" else np.full(shape, "", dtype=object)
        else:
            feeds[name] = _random_values(name, dtype, shape, rng, spec.vocab_size)
    return feeds, {"dims": used, "shapes": {k: list(v.shape) for k, v in feeds.items()}, "mode": spec.mode,
                   "seed": spec.seed}


def session_inputs(session) -> list[dict]:
    """{name, dtype, shape} of an ORT session's inputs (symbolic dims as names, unknown as '?')."""
    result = []
    for arg in session.get_inputs():
        shape = None if arg.shape is None else [
            d if isinstance(d, int) else (d if d else "?") for d in arg.shape]
        result.append({"name": arg.name, "dtype": arg.type, "shape": shape})
    return result
