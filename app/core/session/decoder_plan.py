"""The input plan of a decoder's step (app.core.session.decoder): token ids, a mask of
past + new ones, positions counting on from past, and a cache of `past` tokens, each input
with where its shape and values came from. Inputs the user gave a shape, a value or a file
for, and inputs that are not the decoder's, are left to the general plan."""

from __future__ import annotations

import numpy as np

from app.core.session.decoder import Decoder, choose_step, step_labels
from app.core.session.graph_hints import GraphHints
from app.core.session.input_plan import PlannedInput
from app.core.session.value_rules import value_rule


def plan_step(decoder: Decoder, inputs: list[dict], spec, hints: GraphHints, rng, dtype_of,
              budget: int | None = None) -> tuple[dict[str, np.ndarray], dict[str, PlannedInput], dict, dict]:
    """(arrays, planned rows, chosen dims for the general plan, the step as a report says it)
    for the decoder's inputs; `dtype_of(item)` gives an input's numpy dtype; a step whose
    inputs would need more than `budget` bytes (or 8 GiB for one) is refused before they are made."""
    step = choose_step(decoder, inputs, spec)
    by_name = {i["name"]: i for i in inputs}
    _check_size(decoder, by_name, step, spec, dtype_of, budget)
    source, words = step.origin
    chosen = {label: (value, (source, words)) for label, value in step_labels(decoder, inputs, step).items()}
    arrays, rows = {}, {}

    def put(name: str, array: np.ndarray, reason: str, values: str) -> None:
        if name in spec.shapes or name in spec.values:
            return                           # the user's shape or value: the general plan makes it
        arrays[name] = array
        rows[name] = PlannedInput(name, array.dtype.name, list(array.shape), source, reason, values)

    ids_item = by_name[decoder.ids]
    ids_dtype = dtype_of(ids_item)
    shape = [step.batch, step.new][:len(ids_item.get("shape") or [0, 0])]
    rule = value_rule(decoder.ids, ids_dtype, ids_item.get("shape"), hints)
    if spec.mode == "zeros":
        ids, said = np.zeros(shape, ids_dtype), "zeros"
    elif rule is not None and rule.make is not None:
        ids, said = rule.make(shape, ids_dtype, rng), rule.reason
    else:
        ids = rng.integers(0, spec.vocab_size, size=shape).astype(ids_dtype)
        said = f"random ids below {spec.vocab_size:,}"
    put(decoder.ids, ids, words, said)
    if decoder.mask:
        item = by_name[decoder.mask]
        shape = [step.batch, step.context][:len(item.get("shape") or [0, 0])]
        put(decoder.mask, np.ones(shape, dtype_of(item)), f"covers past + new: {step.context} tokens",
             f"ones: {step.context} = {step.past} past + {step.new} new")
    if decoder.positions:
        item = by_name[decoder.positions]
        counting = np.arange(step.past, step.context, dtype=dtype_of(item))
        shape = [step.batch, step.new][-len(item.get("shape") or [0]):]
        put(decoder.positions, np.broadcast_to(counting, shape).copy(), "go on from the past",
             f"positions {step.past}…{step.context - 1}")
    if decoder.cache_branch:
        item = by_name[decoder.cache_branch]
        shape = [d if isinstance(d, int) else 1 for d in item.get("shape") or []]
        put(decoder.cache_branch, np.full(shape, step.past > 0, dtype_of(item)), words,
             "true: the cache is used" if step.past else "false: no cache yet")
    per_token, cross_bytes = 0, 0
    for cache in decoder.cache:
        item = by_name[cache.name]
        dtype = dtype_of(item)
        if cache.cross:
            array, row = _cross_cache(cache, dtype, step, spec, rng, chosen)
            cross_bytes += array.nbytes
            put(cache.name, array, row[0], row[1])
            if cache.name in rows:
                rows[cache.name].source = row[2]
            continue
        shape = cache.shape(step.batch, step.past)
        shape = [spec.dims.get(_open_label(cache, a), 1) if d is None else d for a, d in enumerate(shape)]
        per_token += int(np.prod(shape[:cache.seq_axis] + shape[cache.seq_axis + 1:], dtype=np.int64)) * dtype.itemsize
        array = np.zeros(shape, dtype) if spec.mode == "zeros" else _normal(rng, shape, dtype)
        put(cache.name, array, f"{step.past} past tokens; heads and head size: the model's",
             "zeros" if spec.mode == "zeros" else f"random normal, seed {spec.seed}")
    report = {"phase": step.phase, "batch": step.batch, "past": step.past, "new": step.new,
              "context": step.context, "max_context": decoder.max_context, "cache_inputs": len(decoder.cache),
              "kv_cache_bytes_per_token": per_token, "kv_cache_bytes": per_token * step.context,
              **({"cross_attention_cache_bytes": cross_bytes} if cross_bytes else {})}
    return arrays, rows, chosen, report


def _check_size(decoder: Decoder, by_name: dict, step, spec, dtype_of, budget: int | None) -> None:
    """Refuse a step whose inputs would not fit, before any is made (the general plan's limits)."""
    from app.core.jobs.errors import UserError
    from app.core.session.input_plan import DEFAULT_SEQUENCE

    sizes = {decoder.ids: step.batch * step.new * dtype_of(by_name[decoder.ids]).itemsize}
    if decoder.mask:
        sizes[decoder.mask] = step.batch * step.context * dtype_of(by_name[decoder.mask]).itemsize
    for cache in decoder.cache:
        length = spec.dims.get(_open_label(cache, cache.seq_axis), DEFAULT_SEQUENCE) if cache.cross else step.past
        dims = [spec.dims.get(_open_label(cache, a), 1) if d is None else d
                for a, d in enumerate(cache.shape(step.batch, length))]
        sizes[cache.name] = int(np.prod(dims, dtype=np.float64)) * dtype_of(by_name[cache.name]).itemsize
    name, largest = max(sizes.items(), key=lambda item: item[1])
    if largest > 8 << 30:
        raise UserError("bad-option", f"input '{name}' of this step ({step.origin[1]}) would need "
                                      f"{largest / 2**30:.0f} GiB; choose a shorter context or a smaller batch")
    if budget is not None and sum(sizes.values()) > budget:
        raise UserError("over-memory-budget", f"the inputs of this step ({step.origin[1]}) alone would need "
                                              f"{sum(sizes.values()) / 2**30:.2f} GiB, more than the job's memory "
                                              "budget; choose a shorter context or a smaller batch, or raise the "
                                              "budget with --memory-limit")


def _cross_cache(cache, dtype, step, spec, rng, chosen: dict) -> tuple[np.ndarray, tuple]:
    """A cross-attention cache: the encoder's keys and values, as long as the encoder's output
    (the user's size for it, else the plan's usual text length, said as a default):
    (array, (reason, values, source))."""
    from app.core.session.input_plan import DEFAULT_SEQUENCE

    label = _open_label(cache, cache.seq_axis)
    fixed = cache.declared[cache.seq_axis]
    length = fixed if isinstance(fixed, int) and fixed >= 0 else spec.dims.get(label, DEFAULT_SEQUENCE)
    source = "model" if isinstance(fixed, int) and fixed >= 0 else "user" if label in spec.dims else "default"
    given = source != "default"
    chosen.setdefault(label, (length, (source, "the encoder's output length")))
    shape = cache.shape(step.batch, length)
    shape = [spec.dims.get(_open_label(cache, a), 1) if d is None else d for a, d in enumerate(shape)]
    array = np.zeros(shape, dtype) if spec.mode == "zeros" else _normal(rng, shape, dtype)
    reason = f"cross-attention: the encoder's {length} positions" + ("" if given else f" (set it with --dim {label}=N)")
    return array, (reason, "zeros" if spec.mode == "zeros" else f"random normal, seed {spec.seed}", source)


def _normal(rng, shape: list[int], dtype) -> np.ndarray:
    """Seeded normal values drawn as float32 (a long cache drawn as float64 took twice its size)."""
    return rng.standard_normal(shape, dtype=np.float32).astype(dtype, copy=False)


def _open_label(cache, axis: int) -> str:
    dim = cache.declared[axis]
    return dim if isinstance(dim, str) else f"{cache.name}[{axis}]"

