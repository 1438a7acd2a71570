"""Decoders with a KV cache: which inputs are the cache (`past`), which outputs give it back
(`present`), and the inputs of one step of generation, consistent with each other.

Exporters name the cache differently (`past_key_values.N.key` -> `present.N.key` from
Optimum, torch.onnx and onnxruntime-genai's builder; GPT-2's old `past_N` -> `present_N`,
key and value stacked on a leading axis of 2), so the cache is found by name and rank: a
float input named "past…" of rank 3 to 5, paired with the output its name gives ("present"
for "past_key_values" or "past") or, failing that, the present output at its position.
Its axes: the batch and the sequence (named so, else the first and the second to last);
the others (heads, head size) are the model's sizes, read from the declaration, else the
present output's, else the graph's shape inference, else the genai_config.json beside the
model; never guessed.

A step is one of two phases: `decode` (the default: 1 new token after `past` tokens of
cache, as every token after the first is made) or `prefill` (the prompt, `prompt` tokens,
with an empty cache: the time to the first token). The attention mask covers past + new,
the positions count on from past (never random), and every cache input holds `past`."""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.core.jobs.errors import UserError
from app.core.session.fields import FIELD
from app.core.session.graph_hints import GraphHints

PHASES = FIELD["inputs.phase"].values
DEFAULT_PAST = FIELD["inputs.past_length"].default         # a decode step at a context of 128
DEFAULT_PROMPT = FIELD["inputs.prompt_length"].default
_PAST = re.compile(r"past", re.I)
_BATCH = re.compile(r"batch|^n$|^b$|^bs$", re.I)
_LENGTH = re.compile(r"past|seq|len|total|context", re.I)
_IDS = re.compile(r"input_ids|^ids$|tokens", re.I)
_MASK = re.compile(r"attention_mask|mask", re.I)
_POSITIONS = re.compile(r"position", re.I)
_CACHE_BRANCH = re.compile(r"use_cache", re.I)
_CROSS = re.compile(r"encoder|cross", re.I)


@dataclass(frozen=True)
class CacheInput:
    """One past input, the present output that gives it back, and its axes."""
    name: str
    output: str | None
    dtype: str
    declared: tuple
    batch_axis: int
    seq_axis: int
    sizes: tuple[int | None, ...]    # per axis, the model's size (None for batch, sequence and unknowns)
    cross: bool = False              # cross-attention: the encoder's keys and values, as long as its output

    def shape(self, batch: int, length: int) -> list[int]:
        dims = list(self.sizes)
        dims[self.batch_axis], dims[self.seq_axis] = batch, length
        return dims

    def unknown_axes(self) -> list[int]:
        return [a for a, s in enumerate(self.sizes) if s is None and a not in (self.batch_axis, self.seq_axis)]


@dataclass(frozen=True)
class Decoder:
    cache: tuple[CacheInput, ...]
    ids: str | None
    mask: str | None
    positions: str | None
    cache_branch: str | None
    max_context: int | None           # the most positions the model has, where it says

    def to_dict(self) -> dict:
        return {"cache": [{"past": c.name, "present": c.output} for c in self.cache], "ids": self.ids,
                "mask": self.mask, "positions": self.positions, "max_context": self.max_context}


def _label(item: dict, axis: int) -> str:
    dim = (item.get("shape") or [])[axis]
    return dim if isinstance(dim, str) else ""


def _fixed(item: dict, axis: int) -> int | None:
    """The size the model declares on `axis`, if it fixes one."""
    shape = item.get("shape") or []
    return shape[axis] if axis < len(shape) and isinstance(shape[axis], int) and shape[axis] >= 0 else None


def _axes(declared: list) -> tuple[int, int]:
    """(batch axis, sequence axis) of a cache input."""
    labels = [d if isinstance(d, str) else "" for d in declared]
    stacked = len(declared) == 5 and declared[0] == 2          # GPT-2's old [2, batch, heads, past, size]
    batch = next((a for a, label in enumerate(labels) if _BATCH.search(label)), 1 if stacked else 0)
    seq = next((a for a, label in enumerate(labels) if a != batch and _LENGTH.search(label)), len(declared) - 2)
    return batch, seq


def _present_for(name: str, position: int, pasts: int, hints: GraphHints) -> str | None:
    """The output that gives `name` back: by its name, else the one at its position among the
    "present" outputs, else among the outputs of the cache's rank (an exporter's own names)."""
    outputs = hints.outputs
    for guess in (name.replace("past_key_values", "present"), name.replace("past_key_values", "present_key_values"),
                  name.replace("past", "present")):
        if guess in outputs and guess != name:
            return guess
    if _CROSS.search(name):
        return None                  # given back by name only: a decoder run with its cache gives none
    presents = [o for o in outputs if "present" in o.lower()]
    if len(presents) != pasts:
        rank = len(hints.shapes.get(name) or [])
        presents = [o for o in outputs if rank and len(hints.shapes.get(o) or []) == rank]
    return presents[position] if len(presents) == pasts else None


def find_decoder(inputs: list[dict], hints: GraphHints) -> Decoder | None:
    """The model's cache and the inputs that go with it, or None when it has no cache."""
    pasts = [i for i in inputs if _PAST.search(i["name"]) and "float" in i["dtype"] and i.get("shape")
             and 3 <= len(i["shape"]) <= 5]
    ids = next((i["name"] for i in inputs if _IDS.search(i["name"]) and "int" in i["dtype"]), None)
    if not pasts or ids is None:
        return None
    cache = []
    for position, item in enumerate(pasts):
        declared = list(item["shape"])
        batch, seq = _axes(declared)
        output = _present_for(item["name"], position, len(pasts), hints)
        given = hints.shapes.get(output) if output else None
        sizes = []
        for axis, dim in enumerate(declared):
            if axis in (batch, seq):
                sizes.append(None)
            elif isinstance(dim, int) and dim > 0:
                sizes.append(dim)
            elif given and len(given) == len(declared) and isinstance(given[axis], int) and given[axis] > 0:
                sizes.append(given[axis])
            else:
                sizes.append(None)
        cross = bool(_CROSS.search(item["name"]))
        if output is None and hints.outputs and not cross:
            return None              # a "past…" input nothing gives back: not a cache (a time series' past values)
        cache.append(CacheInput(item["name"], output, item["dtype"], tuple(declared), batch, seq, tuple(sizes), cross))
    if all(c.cross for c in cache):
        return None
    names = [i["name"] for i in inputs]

    def find(pattern) -> str | None:
        return next((n for n in names if pattern.search(n) and n not in {c.name for c in cache} and n != ids), None)

    positions = find(_POSITIONS)
    return Decoder(tuple(cache), ids, find(_MASK), positions, find(_CACHE_BRANCH), _max_context(hints, positions))


def _max_context(hints: GraphHints, positions: str | None) -> int | None:
    """The rows of the position table the positions index, else genai_config's context length."""
    for use in hints.uses.get(positions or "", []):
        table = hints.static_shape(use.others[0]) if use.op_type == "Gather" and use.slot == 1 else None
        if table and len(table) == 2 and int(use.attributes.get("axis", 0)) == 0:
            return table[0]
    context = hints.metadata.get("genai.context_length")
    return int(context) if context and context.isdigit() else None


@dataclass(frozen=True)
class Step:
    """The sizes of one step: `batch` sequences, `new` tokens each after `past` of cache."""
    phase: str
    batch: int
    past: int
    new: int
    origin: tuple[str, str]          # (source, reason) as the input plan gives them

    @property
    def context(self) -> int:
        return self.past + self.new


def choose_step(decoder: Decoder, inputs: list[dict], spec) -> Step:
    """The step the plan measures: the user's dims by the model's own names first (a batch, a
    past length, a new-token length), then the phase and its length from the spec."""
    by_name = {i["name"]: i for i in inputs}
    first = next(c for c in decoder.cache if not c.cross)
    past_label = _label(by_name[first.name], first.seq_axis)
    batch_label = _label(by_name[decoder.ids], 0)
    new_label = _label(by_name[decoder.ids], 1) if len(by_name[decoder.ids].get("shape") or []) > 1 else ""
    dims = spec.dims
    # a size the export fixed is the model's: a static past or prompt length, a static batch
    fixed_past, fixed_new, fixed_batch = (_fixed(by_name[first.name], first.seq_axis), _fixed(by_name[decoder.ids], 1),
                                          _fixed(by_name[decoder.ids], 0))
    batch = fixed_batch if fixed_batch is not None else dims.get(batch_label, 1)
    phase = "prefill" if fixed_past == 0 else "decode" if fixed_past else spec.phase
    if phase == "prefill":
        new = fixed_new if fixed_new is not None else dims.get(new_label, spec.prompt_length)
        past = 0
        words = f"prefill: a prompt of {new} tokens, no cache yet (the time to the first token)"
    else:
        new = fixed_new if fixed_new is not None else dims.get(new_label, 1)
        past = fixed_past if fixed_past is not None else dims.get(past_label, spec.past_length)
        words = (f"decode step: {new} new token{'s' if new != 1 else ''} after {past} past "
                 f"(context {past + new})")
    yours = (past_label in dims or new_label in dims or spec.phase != PHASES[0] or spec.past_length != DEFAULT_PAST
             or spec.prompt_length != DEFAULT_PROMPT)
    if fixed_past is not None or fixed_new is not None:
        source = "model"
        words += ", as the export fixed it"
    else:
        source = "user" if yours else "default"
    step = Step(phase, batch, past, new, (source, words))
    limit = decoder.max_context
    if limit is not None and step.context > limit:
        raise UserError("bad-option", f"a context of {step.context} tokens is past the {limit} positions the model "
                                      f"has; choose a shorter past or prompt")
    for item in decoder.cache:
        if item.unknown_axes():
            axis = item.unknown_axes()[0]
            label = _label(by_name[item.name], axis) or f"{item.name}[{axis}]"
            if label not in dims:
                raise UserError("missing-shape", f"the cache input '{item.name}' leaves axis {axis} ({label}) open "
                                                 f"and the graph does not say its size; give it with --dim {label}=N")
    return step


def step_labels(decoder: Decoder, inputs: list[dict], step: Step) -> dict[str, int]:
    """The model's names for the step's sizes (so other inputs, and a preset, agree)."""
    by_name = {i["name"]: i for i in inputs}
    labels = {}
    ids = by_name[decoder.ids]
    for axis, value in ((0, step.batch), (1, step.new)):
        if axis < len(ids.get("shape") or []) and _label(ids, axis):
            labels[_label(ids, axis)] = value
    for item in decoder.cache:
        for axis, value in ((item.batch_axis, step.batch), (item.seq_axis, step.past))[:1 if item.cross else 2]:
            if _label(by_name[item.name], axis):
                labels.setdefault(_label(by_name[item.name], axis), value)
    if decoder.mask and len(by_name[decoder.mask].get("shape") or []) > 1 and _label(by_name[decoder.mask], 1):
        labels.setdefault(_label(by_name[decoder.mask], 1), step.context)
    return labels


def model_has_cache(path) -> bool:
    """Whether the model at `path` (a file or a genai folder) is a decoder with a KV cache
    to generate with, read from its graph without a session."""
    from app.core.model.genai import model_file
    from app.core.model.proto_scan import ScanError, load_structure
    from app.core.model.value_type import describe_value
    from app.core.session.graph_hints import read_hints

    try:
        model = load_structure(model_file(path))
    except (ScanError, OSError, ValueError, UserError):
        return False
    weights = {t.name for t in model.graph.initializer}
    inputs = [describe_value(v) for v in model.graph.input if v.name not in weights]
    return find_decoder(inputs, read_hints(path)) is not None

