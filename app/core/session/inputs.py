"""Input data for a model: the user's .npy/.npz files, or the input plan's values
(app.core.session.input_plan); every feed reports what it used and why."""

from __future__ import annotations

import json

from pathlib import Path

import numpy as np

from app.core.jobs.errors import UserError
from app.core.session.decoder import find_decoder
from app.core.session.decoder_plan import plan_step
from app.core.session.graph_hints import GraphHints, read_hints
from app.core.session.input_plan import PlannedInput, default_dim, looks_like_audio, plan_input  # noqa: F401 (default_dim: re-exported)
from app.core.session.input_spec import FeedSpec  # noqa: F401  (re-exported: the spec lives apart, free of numpy)


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
        from app.core.model.value_type import ort_type_text
        raise UserError("unsupported-input", f"inputs of type {ort_type_text(type_text)} cannot be generated") from None


def load_user_arrays(spec: FeedSpec, names: list[str]) -> dict[str, np.ndarray]:
    arrays = {}
    for key, file in spec.files.items():
        path = Path(file)
        if not path.is_file():
            raise UserError("not-found", f"{path}: input file not found")
        loaded = _read_arrays(path)
        if isinstance(loaded, np.ndarray):
            if key == "*":
                if len(names) != 1:
                    raise UserError("bad-input-file", f"{path.name}: one array given for {len(names)} inputs; use an .npz")
                key = names[0]
            arrays[key] = loaded
        else:
            arrays.update(loaded)
    unknown = set(arrays) - set(names)
    if unknown:
        raise UserError("bad-input-file", f"the model has no input named {', '.join(sorted(unknown))} "
                                          f"(inputs: {', '.join(names)})")
    return arrays


def storable(arrays: dict) -> dict[str, np.ndarray]:
    """The arrays that load back without pickle. ORT gives string tensors as object arrays of
    str: they become fixed-width text (np.str_), which ORT takes back as the same strings.
    Other object arrays (sequences, maps) are left out."""
    kept = {}
    for name, array in arrays.items():
        if not isinstance(array, np.ndarray):
            continue
        if array.dtype == object:
            if not all(isinstance(value, str) for value in array.flat):
                continue
            array = array.astype(np.str_)
        kept[name] = array
    return kept


def save_arrays(path, arrays: dict) -> None:
    """Write arrays to an .npz that another process loads without pickle (see storable)."""
    np.savez(path, **storable(arrays))


#: the member of an .npz kept by position that holds the arrays' names, as JSON
_NAMES = "names"


def save_by_position(path, arrays: dict) -> None:
    """Write arrays to an .npz kept by position, not by name: a model's names are anyone's
    (64 KiB long, or holding "/"), and a zip member's name is not. Read with load_by_position."""
    kept = storable(arrays)
    names = np.frombuffer(json.dumps(list(kept)).encode("utf-8"), dtype=np.uint8)
    np.savez(path, **{_NAMES: names}, **{f"a{index}": array for index, array in enumerate(kept.values())})


def load_by_position(path) -> dict[str, np.ndarray]:
    """The arrays save_by_position wrote, under their names, in their order."""
    with np.load(path, allow_pickle=False) as saved:
        names = json.loads(saved[_NAMES].tobytes().decode("utf-8"))
        return {name: saved[f"a{index}"] for index, name in enumerate(names)}


def _read_arrays(path: Path) -> np.ndarray | dict[str, np.ndarray]:
    """The array of an .npy file, or the arrays of an .npz, read without pickle: a file
    that is not one, or holds objects (which only pickle could load), is a UserError."""
    import zipfile

    try:
        loaded = np.load(path, allow_pickle=False)
        if isinstance(loaded, np.ndarray):
            return loaded
        with loaded:            # an .npz reads each array when it is asked for
            return {name: loaded[name] for name in loaded.files}
    except ValueError as exc:
        if "allow_pickle" in str(exc):
            raise UserError("bad-input-file", f"{path.name}: holds Python objects, which are only read through "
                                              "pickle (never done here); save plain arrays") from None
        raise UserError("bad-input-file", f"{path.name}: is not a whole .npy or .npz file ({exc})") from None
    except (OSError, EOFError, zipfile.BadZipFile) as exc:
        raise UserError("bad-input-file", f"{path.name}: is not a .npy or .npz file ({exc})") from None
    except MemoryError:
        raise UserError("bad-input-file", f"{path.name}: declares an array too large for this machine's "
                                          "memory") from None


def make_feeds(inputs: list[dict], spec: FeedSpec | None = None, hints: GraphHints | None = None, *,
               found: dict[str, tuple[int, str]] | None = None, budget: int | None = None,
               ids: tuple[int, str] | None = None, data=None) -> tuple[dict[str, np.ndarray], dict]:
    """Build one feed per input following the input plan. `inputs` holds {name, dtype,
    shape} (ORT or ONNX type names); `hints` is what the graph says (see read_hints);
    `found` the dims the probe found (label -> (value, reason)); inputs that would need more
    than `budget` bytes together are refused before they are made; `ids` is the value (and
    why) the probe puts where the plan would draw random integer ids; `data` the data folder
    of `spec.data` already read (a caller feeding every sample reads it once).

    Returns (feeds, info): info["inputs"] says per input its dtype, shape, source and
    reason; info["dims"] the symbolic values used; info["guessed"] the dims nobody gave
    (chosen by default or probed); info["decoder"], for a decoder with a KV cache, the step
    its inputs make (app.core.session.decoder_plan)."""
    spec = (spec or FeedSpec()).checked()      # every field read as a preset's would be
    hints = hints or GraphHints()
    rng = np.random.default_rng(spec.seed)
    names = [i["name"] for i in inputs]
    given = load_user_arrays(spec, names) if spec.mode == "files" or spec.files else {}
    folder, from_data = None, {}
    if spec.data:
        from app.core.session.data_folder import image_input, read_folder, sample_arrays

        folder = data or read_folder(spec.data)
        if folder.images:
            from_data = {image_input(inputs): None}
        else:
            from_data = {name: array for name, array in sample_arrays(folder, spec.sample, names).items()
                         if name not in given}
    unknown = sorted(set(spec.values) - set(names))
    if unknown:
        raise UserError("bad-option", f"the model has no input named {', '.join(unknown)} "
                                      f"(inputs: {', '.join(names)})")
    chosen: dict[str, tuple] = {}
    step, made, rows = None, {}, {}
    decoder = find_decoder(inputs, hints)
    if decoder is not None:
        made, rows, chosen, step = plan_step(decoder, inputs, spec, hints, rng, lambda i: numpy_dtype(i["dtype"]),
                                             budget)
    audio = looks_like_audio(inputs)
    feeds, planned = {}, []
    for item in inputs:
        name = item["name"]
        dtype = numpy_dtype(item["dtype"])
        if name in made and name not in given and from_data.get(name) is None:
            feeds[name] = made[name]
            planned.append(rows[name])
            continue
        if name in given or from_data.get(name) is not None:
            feeds[name] = _user_array(item, dtype, given[name] if name in given else from_data[name])
            where = "your file" if name in given else f"sample {folder.sample(spec.sample).name} of your data folder"
            planned.append(PlannedInput(name, feeds[name].dtype.name, list(feeds[name].shape), "file", where,
                                        "yours"))
            continue
        room = None if budget is None else budget - sum(a.nbytes for a in feeds.values())
        feeds[name], plan = plan_input(item, dtype, spec, hints, chosen, audio, rng, found, room, ids)
        if name in from_data:
            feeds[name], plan = _image_feed(folder, spec, item, dtype, plan)
        planned.append(plan)
    return feeds, {"dims": {label: value for label, (value, _) in chosen.items()},
                   "shapes": {k: list(v.shape) for k, v in feeds.items()}, "mode": spec.mode, "seed": spec.seed,
                   "inputs": [p.to_dict() for p in planned],
                   "guessed": sorted({label for p in planned for label in p.guessed}),
                   **({"decoder": step} if step else {})}


def _image_feed(folder, spec: FeedSpec, item: dict, dtype, plan: PlannedInput) -> tuple[np.ndarray, PlannedInput]:
    """The images of the data folder at the shape the plan chose for the input."""
    from app.core.session.data_folder import image_batch
    from app.core.session.input_plan import channel_axis

    layout = spec.image_layout
    if layout == "auto":
        axis = channel_axis(item.get("shape") or plan.shape)
        if axis is None:
            raise UserError("bad-option", f"input '{item['name']}' does not show where its colour channels are; "
                                          "give the image layout (NCHW or NHWC)")
        layout = "NCHW" if axis == 1 else "NHWC"
    array, done = image_batch(folder, spec.sample, plan.shape, spec.image_preset, layout)
    # a size nobody gave stays flagged as the plan's guess
    source, size = ("file", "") if plan.source in ("model", "user", "metadata") else (plan.source,
                                                                                     f"; size: {plan.reason}")
    return array.astype(dtype), PlannedInput(plan.name, plan.dtype, list(array.shape), source,
                                             f"your data folder: {done}{size}", "yours", plan.guessed)


def _user_array(item: dict, dtype, array: np.ndarray) -> np.ndarray:
    name = item["name"]
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
    return array


def model_feeds(path, session, spec: FeedSpec | None = None, hints: GraphHints | None = None,
                data=None) -> tuple[dict[str, np.ndarray], dict]:
    """The feeds of the model at `path`, loaded in `session`, with its graph's hints (`hints`:
    read already; `data`: the data folder, read already)."""
    return make_feeds(session_inputs(session), spec, read_hints(path) if hints is None else hints, data=data)


def session_inputs(session) -> list[dict]:
    """{name, dtype, shape} of an ORT session's inputs (symbolic dims as names, unknown as '?')."""
    result = []
    for index, arg in enumerate(session.get_inputs()):
        try:
            shape = None if arg.shape is None else [
                d if isinstance(d, int) else (d if d else "?") for d in arg.shape]
            result.append({"name": arg.name, "dtype": arg.type, "shape": shape})
        except UnicodeDecodeError:      # ONNX Runtime takes any bytes; Python wants UTF-8 text
            raise UserError("bad-model", f"the model's input {index + 1} has a name, or a dimension name, that "
                                         "is not UTF-8 text") from None
    return result


def origin_word(row: dict) -> str:
    """Where an input's values came from, in the words every tab's label uses: "your data" (a
    sample of the data folder), "your file", "sample" (one made for the model's modality, as
    Optimize does), "probed" (sizes or values Find working inputs or a refused first run
    found) or "generated" (made by the plan, at sizes the row's reason gives)."""
    reason, values = row.get("reason") or "", row.get("values") or ""
    if "your data folder" in reason:
        return "your data"
    if row.get("source") == "file":
        return "your file"
    if row.get("source") == "sample" or values == "sample":
        return "sample"
    if row.get("source") == "probed" or values.startswith("probed"):
        return "probed"
    return "generated"
