"""Which conversion kinds can help on the session's provider, and why the others are skipped.

Each skip reason is the sentence the conversions' own speed check gives when such a variant
comes out slower (app.core.convert.speed.slower_hint), so the search does not spend its
budget making a variant the machine is known to run slower."""

from __future__ import annotations

from app.core.convert.options import KINDS
from app.core.convert.speed import CPU, slower_hint
from app.core.optimize import provider_kinds
from app.core.session.config import SessionConfig
from app.core.session.providers import GPU_PROVIDERS

#: the order candidates are made in: the ones most likely to help first, so a short budget
#: spends itself on them
ORDER = ("optimize", "ort", "int8-dynamic", "int8-static", "int4", "transformers", "fp16", "mixed", "compiled")
#: every candidate kind: the conversions, then the source on another execution provider
#: (app.core.optimize.provider_kinds)
ALL_KINDS = ORDER + tuple(provider_kinds.PROVIDER_KINDS)


def kind_title(kind: str) -> tuple[str, str]:
    """(title, summary) of a candidate kind, as the window lists it."""
    if kind in provider_kinds.PROVIDER_KINDS:
        spec = provider_kinds.PROVIDER_KINDS[kind]
        return spec.title, spec.summary
    return KINDS[kind].title, KINDS[kind].summary
_INT8 = ("int8-dynamic", "int8-static")
_HALF = ("fp16", "mixed")


def skip_reason(kind: str, config: SessionConfig, shape: dict, cpu_flags: set[str]) -> str:
    """'' when `kind` can help here; else why not. `shape`: the detect-transformer job's
    result for the model; `cpu_flags`: the CPU's instruction-set flags (empty: unknown)."""
    from app.core.session.machine_cpu import int8_acceleration

    provider = config.provider_names()[0]
    on_cpu = provider == CPU
    if kind in _HALF and provider not in GPU_PROVIDERS:
        return slower_hint(kind, [CPU], {})
    if kind in _INT8 and on_cpu and cpu_flags and not int8_acceleration(cpu_flags):
        return slower_hint(kind, [CPU], {}, cpu_flags)
    if kind == "int4" and not shape.get("hidden_size"):
        return "the model has no MatMul with constant two-dimensional weights to pack into 4 bits"
    if kind == "compiled":
        return "a compiled EP context model starts sooner but runs no faster, and the search judges run time"
    if kind == "transformers" and not shape.get("num_heads"):
        return "no transformer attention was found in the graph (no attention heads could be read)"
    return ""


def kind_options(kind: str, config: SessionConfig) -> dict:
    """The options a candidate is made with: the kind's defaults, made for the session's provider."""
    if kind == "optimize":
        from app.core.session.providers import provider_name

        short = {provider_name(name): name for name in ("cpu", "cuda", "tensorrt", "dml", "openvino")}
        return {"target_provider": short.get(config.provider_names()[0], "cpu")}
    return {}


#: the kinds whose skip is an expectation of this machine's speed, not a kind that cannot be made
EXPECTED_SLOWER = _INT8 + _HALF


def plan(wanted: list[str], config: SessionConfig, shape: dict, cpu_flags: set[str],
         try_expected_slower: bool = False, usable: dict[str, dict] | None = None) -> list[tuple[str, str]]:
    """Every candidate kind in ALL_KINDS with its skip reason ('' for the ones to make or run).
    `try_expected_slower`: make the kinds expected to run slower here too, to see them measured;
    `usable`: provider name -> the provider probe's row (None: the providers were not probed)."""
    assert set(ORDER) == set(KINDS), "a new conversion kind needs its place in ORDER"
    rows = []
    for kind in ALL_KINDS:
        if wanted and kind not in wanted:
            rows.append((kind, "not asked for (the kinds to try were narrowed)"))
        elif kind in provider_kinds.PROVIDER_KINDS:
            rows.append((kind, "the execution providers were not probed (a search over a cluster tries the conversions only)" if usable is None
                         else provider_kinds.skip_reason(kind, config, usable)))
        elif try_expected_slower and kind in EXPECTED_SLOWER:
            rows.append((kind, ""))
        else:
            rows.append((kind, skip_reason(kind, config, shape, cpu_flags)))
    return rows


#: what making and checking one candidate holds at its peak besides the model's own bytes:
#: the converter's copy, the source's and the variant's sessions in the check (first guess)
MAKE_FACTOR = 4
MAKE_BASE_BYTES = 400 << 20


def parallel_makes(model_bytes: int, memory_budget: int, cores: int, count: int) -> int:
    """How many candidates are made (and checked) at once: as many as the memory budget
    holds at MAKE_FACTOR × the model's bytes each (plus a base), no more than the cores
    (each conversion keeps one busy), and at least one."""
    per_make = MAKE_FACTOR * model_bytes + MAKE_BASE_BYTES
    return max(1, min(count, cores, memory_budget // per_make))


#: what one member of a timing holds besides the model's bytes (a process with ORT, its feeds)
MEMBER_BASE_BYTES = 250 << 20


def parallel_members(model_bytes: int, memory_budget: int) -> int:
    """How many models (the source among them) can be timed together, each in its process
    with the model held about twice (the file read and the session's own copy), at least two."""
    return max(2, memory_budget // (2 * model_bytes + MEMBER_BASE_BYTES))
