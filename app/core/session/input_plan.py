"""The input plan: for every input of a model, a concrete shape and values, each with where
it came from and why. Every job that runs a model feeds it from here.

Precedence for a dimension: the user's shape or dims; the model's metadata (an image
size); the value another input already gave the same named dimension; a realistic
default for what the dimension looks like (batch 1, text length 128, images 224, one
audio window). Values follow what the input feeds in the graph (see value_rules),
else seeded random values of the right type."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from app.core.jobs.errors import UserError
from app.core.session.graph_hints import GraphHints
from app.core.session.input_spec import FeedSpec
from app.core.session.value_rules import value_rule

_BATCH = re.compile(r"batch|^n$|^b$|num_?images|unk__|^bs$", re.I)
_SEQUENCE = re.compile(r"seq|sequence|length|len$|tokens|time|frames|steps|past|total|words", re.I)
_HEIGHT, _WIDTH = re.compile(r"height|^h$", re.I), re.compile(r"width|^w$", re.I)
_AUDIO = re.compile(r"audio|wav|pcm|speech|samples|input_values|waveform", re.I)
_SAMPLE_RATE = re.compile(r"^(sr|sample_?rate|sampling_?rate)$", re.I)
DEFAULT_SEQUENCE = 128
DEFAULT_SPATIAL = 224
AUDIO_WINDOW = 512            # one voice-activity window at 16 kHz
SAMPLE_RATE = 16000
#: (source, reason) of a dimension
Origin = tuple[str, str]
#: how trustworthy each source is, most first: an input's source is its weakest dimension's
SOURCES = ("file", "user", "metadata", "model", "graph", "probed", "default")
FIXED: Origin = ("model", "fixed by the model")


@dataclass
class PlannedInput:
    name: str
    dtype: str
    shape: list[int]
    source: str
    reason: str
    values: str
    guessed: list[str] = field(default_factory=list)     # the dims chosen by default, for the probe

    def to_dict(self) -> dict:
        return {"name": self.name, "dtype": self.dtype, "shape": self.shape, "source": self.source,
                "reason": self.reason, "values": self.values}


def dim_label(name: str, index: int, dim) -> str | None:
    """The plan's name for a dimension the model leaves open: its symbol, else "input[index]"
    (None for a fixed one)."""
    if isinstance(dim, int) and dim >= 0:
        return None
    return dim if isinstance(dim, str) and dim not in ("", "?") else f"{name}[{index}]"


def known_shape(item: dict, dims: dict, shapes: dict, planned: list | None, metadata: dict | None = None,
                audio: bool = False) -> list[tuple[int, str]]:
    """An input's shape as far as it is known without planning, each dimension with where it
    comes from: "fixed" (by the model), "yours" (FeedSpec `dims` or `shapes`), or "plan": what
    the last plan chose (`planned`), else the plan's default from what the input declares and
    the model's `metadata` (what the graph says, and the probe, are known only once it plans)."""
    name, declared = item["name"], item.get("shape")
    if declared is None:
        return [(d, "yours") for d in shapes[name]] if shapes.get(name) else [(d, "plan") for d in planned or []]
    known = []
    for index, dim in enumerate(declared):
        label = dim_label(name, index, dim)
        if label is None:
            known.append((dim, "fixed"))
        elif name in shapes and index < len(shapes[name]):
            known.append((shapes[name][index], "yours"))
        elif label in dims:
            known.append((dims[label], "yours"))
        elif planned is not None and index < len(planned):
            known.append((planned[index], "plan"))
        else:
            known.append((_default_dim(label, index, declared, item, GraphHints(metadata=metadata or {}), audio)[0],
                          "plan"))
    return known


def default_dim(label: str) -> int:
    """The default for a dimension known only by its name (what a form shows before a plan)."""
    if _BATCH.search(label):
        return 1
    if _HEIGHT.search(label) or _WIDTH.search(label):
        return DEFAULT_SPATIAL
    return DEFAULT_SEQUENCE if _SEQUENCE.search(label) else 1


def channel_axis(declared: list) -> int | None:
    """Where a 4-D input keeps its colour channels (NCHW: 1, NHWC: 3), if it looks like an image."""
    if len(declared) != 4:
        return None
    for axis in (1, 3):
        if declared[axis] in (1, 3, 4):
            return axis
    return None


def _default_dim(label: str, index: int, declared: list, item: dict, hints: GraphHints,
                 audio: bool) -> tuple[int, Origin]:
    """A dimension nobody gave a value: from the metadata or a realistic default."""
    channel = channel_axis(declared) if "float" in item["dtype"] else None
    if channel is not None and index != 0 and index != channel:
        spatial = [i for i in range(1, 4) if i != channel]
        size = hints.image_size()
        if size is not None:
            return size[spatial.index(index)], ("metadata", f"the model's metadata says imgsz {list(size)}")
        return DEFAULT_SPATIAL, ("default", f"{DEFAULT_SPATIAL} pixels, a usual image size")
    if _BATCH.search(label) or index == 0 and len(declared) > 1:
        return 1, ("default", "batch 1")
    if _HEIGHT.search(label) or _WIDTH.search(label):
        return DEFAULT_SPATIAL, ("default", f"{DEFAULT_SPATIAL} pixels, a usual image size")
    if audio and "float" in item["dtype"] and len(declared) <= 2 and index == len(declared) - 1:   # a waveform
        return AUDIO_WINDOW, ("default", f"{AUDIO_WINDOW} samples, one window at {SAMPLE_RATE // 1000} kHz")
    if _SEQUENCE.search(label) or "int" in item["dtype"]:
        return DEFAULT_SEQUENCE, ("default", f"length {DEFAULT_SEQUENCE}, a usual text length")
    return 1, ("default", "1: nothing says more")


def _plan_dims(item: dict, spec: FeedSpec, hints: GraphHints, chosen: dict, audio: bool,
               found: dict[str, tuple[int, str]]) -> tuple[list[int], list[Origin], list[str]]:
    """The shape, each dimension's origin, and the labels of the dimensions nobody gave
    (chosen by default, or found by the probe: `found` maps a label to its value and why)."""
    name, declared = item["name"], item.get("shape")
    if name in spec.shapes:
        return list(spec.shapes[name]), [("user", "your shape")], []
    if declared is None:
        raise UserError("missing-shape",
                        f"input '{name}' has no declared shape; give it one with --shape {name}=D1,D2,... "
                        "(or in the Session tab's inputs)")
    shape, origins, guessed = [], [], []
    for index, dim in enumerate(declared):
        label = dim_label(name, index, dim)
        if label is None:
            shape.append(dim)
            origins.append(FIXED)
            continue
        if label in spec.dims:
            value, origin = spec.dims[label], ("user", f"your {label}")
        elif label in found:
            value, origin = found[label][0], ("probed", found[label][1])
        elif label in chosen:
            value, (source, reason) = chosen[label]
            # the same dimension as another input's: as trusted as it is there (a guess stays a guess)
            origin = (source, reason if source in ("default", "probed") else f"{label}, as another input has it")
        else:
            value, origin = _default_dim(label, index, declared, item, hints, audio)
        chosen.setdefault(label, (value, origin))
        shape.append(value)
        origins.append(origin)
        if origin[0] in ("default", "probed"):
            guessed.append(label)
    return shape, origins, guessed


def _weakest(origins: list[Origin], default: Origin) -> Origin:
    """The least trusted source among the dimensions, with the reasons of all that have it,
    and of those probed (what was refused is news, whatever the source)."""
    chosen = [o for o in origins if o != FIXED] or origins    # a fixed dim is no choice
    if not chosen:
        return default
    origins = chosen
    source = max((o[0] for o in origins), key=SOURCES.index)
    reasons = list(dict.fromkeys(reason for kind, reason in origins if kind in (source, "probed")))
    return source, "; ".join(reasons)


def _values(name: str, dtype: np.dtype, shape: list[int], rule, spec: FeedSpec, rng,
            ids: tuple[int, str] | None) -> tuple[np.ndarray, str]:
    lowered = name.lower()
    if rule is not None:
        if rule.fixed is not None:
            array = np.array(rule.fixed, dtype=dtype)
            return (array.reshape(shape) if array.size == int(np.prod(shape)) else array), rule.reason
        return rule.make(shape, dtype, rng), rule.reason
    if spec.mode == "zeros":
        return (np.zeros(shape, dtype) if dtype.kind != "U" else np.full(shape, "", dtype=object)), "zeros"
    if dtype == np.bool_:
        return (np.ones(shape, bool), "ones (a mask)") if "mask" in lowered else (rng.random(shape) < 0.5, "random")
    if dtype.kind in "iu":
        if not shape and _SAMPLE_RATE.search(name):
            return np.array(SAMPLE_RATE, dtype), f"{SAMPLE_RATE} Hz"
        if "mask" in lowered:
            return np.ones(shape, dtype), "ones (a mask)"
        if "position" in lowered or lowered.startswith("pos"):
            last = shape[-1] if shape else 1
            return np.broadcast_to(np.arange(last, dtype=dtype), shape).copy(), "positions counting up"
        if "type" in lowered or "segment" in lowered:
            return np.zeros(shape, dtype), "zeros (one segment)"
        if ids is not None:
            return np.full(shape, ids[0], dtype), ids[1]
        high = spec.vocab_size
        if dtype.kind == "u" or dtype.itemsize < 8:
            high = min(high, int(np.iinfo(dtype).max))
        return rng.integers(0, max(high, 1), size=shape, dtype=dtype), f"random ids below {max(high, 1):,}"
    if dtype.kind == "U":
        return np.full(shape, "text", dtype=object), "the word 'text'"
    return rng.standard_normal(shape).astype(dtype), f"random normal, seed {spec.seed}"


def plan_input(item: dict, dtype: np.dtype, spec: FeedSpec, hints: GraphHints, chosen: dict, audio: bool,
               rng, found: dict[str, tuple[int, str]] | None = None, room: int | None = None,
               ids: tuple[int, str] | None = None) -> tuple[np.ndarray, PlannedInput]:
    """One input's values and what the plan says of them; `room`: the bytes of the memory
    budget the inputs before this one left (None: no budget); `ids`: the value (and why) the
    probe puts where the plan would draw random integer ids."""
    name = item["name"]
    declared = item.get("shape")
    rule = value_rule(name, dtype, declared, hints)
    if rule is not None and rule.fixed is not None and (declared is None or len(declared) <= 1):
        shape = [] if declared == [] else [len(rule.fixed)]
        origins, guessed = [("graph", rule.reason)], []
    else:
        earlier = {label: (value, f"probed: {value}, which ran when Find working inputs tried it")
                   for label, value in spec.probed.items()}
        shape, origins, guessed = _plan_dims(item, spec, hints, chosen, audio, earlier | (found or {}))
    elements = int(np.prod(shape, dtype=np.int64)) if shape else 1
    size = elements * dtype.itemsize
    if size > 8 << 30:
        raise UserError("bad-option", f"input '{name}' with shape {shape} would need "
                                      f"{size / 2**30:.0f} GiB; choose smaller dimensions")
    if room is not None and size > room:
        raise UserError("over-memory-budget", f"the inputs alone would need more than the job's memory budget "
                                              f"(input '{name}' with shape {shape} is {size / 2**30:.2f} GiB); "
                                              "set smaller dims (--dim NAME=N, or the Session tab's Inputs table) "
                                              "or raise the budget with --memory-limit")
    if name in spec.values:
        array, values = _constant(name, dtype, shape, spec.values[name])
        origins = origins + [("user", f"your value {spec.values[name]:g}")]
    else:
        array, values = _values(name, dtype, shape, rule, spec, rng, ids)
    array = np.asarray(array)        # a 0-d draw is a numpy scalar, which ORT does not take
    source, reason = _weakest(origins, ("model", "a scalar"))
    return array, PlannedInput(name, dtype.name if dtype.kind != "U" else "string", list(array.shape), source,
                               reason, values, guessed)


def _constant(name: str, dtype: np.dtype, shape: list[int], value: float) -> tuple[np.ndarray, str]:
    """Every element of the input set to the user's value (--value NAME=V)."""
    if dtype.kind in "iub" and float(value) != int(value):
        raise UserError("bad-option", f"input '{name}' holds {dtype.name}: its value must be a whole number, "
                                      f"not {value:g}")
    if dtype.kind == "U":
        raise UserError("bad-option", f"input '{name}' holds text: give it with --input {name}=FILE.npy")
    return np.full(shape, value, dtype=dtype), f"{value:g} (yours)"


def looks_like_audio(inputs: list[dict]) -> bool:
    """A model with a sample-rate input, or an input named like a waveform."""
    return any(_SAMPLE_RATE.search(i["name"]) or _AUDIO.search(i["name"]) for i in inputs)
