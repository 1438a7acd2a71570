"""IO binding and device tensors: the same model fed five ways, and where the copies go.

Each mode of `iobinding_modes.plan_modes` is carried out on a real session: a plain
run() with numpy arrays, IO binding with inputs bound every run, inputs placed on
the device once, preallocated output OrtValues, and (on CUDA) a captured CUDA graph.
The modes are measured in alternating rounds, so a noisy machine slows every mode
alike, and each mode's outputs are checked against the plain run's. Each mode's speed-up
over the plain run is judged as a comparison's is (app.core.measure.alternate.summarize over
the rounds): a ratio of medians with its 95 % interval and a verdict. On a GPU the
host<->device copy rates are measured with the same arrays, which turns each mode's
bytes per run into milliseconds.
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable

from app.core.jobs.errors import UserError
from app.core.session.probe import prepare_feeds
from app.core.iobinding.modes import (DEFAULT_ITERATIONS, DEFAULT_WARMUP, DEVICE_ONCE, NUMPY, PREALLOCATED, BIND_EACH_RUN, ModePlan, bytes_per_run,
                                      copy_ms, device_id_of, plan_modes, provider_note, session_config_for)
from app.core.jobs.protocol import JobContext
from app.core.model.intake import admit
from app.core.ort_messages import ort_text
from app.core.session.providers import provider_name
from app.core.session.config import SessionConfig
from app.core.session.create import create_session, effective_settings
from app.core.session.load import LoadWatch
from app.core.measure.alternate import Alternation, BlockPlan, round_order, summarize
from app.core.measure.stats import latency_stats
from app.core.measure.timing import time_loop

TRANSFER_REPEATS = 10
SPEEDUP_DEFINITION_MODES = ("speedup = plain run p50 / mode p50, each p50 over all the runs of its rounds; the 95 % "
                            "interval resamples whole rounds; in each round every mode runs a few runs in turn, in one "
                            "process, in a rotated order")
PROGRESS_INTERVAL_S = 0.1


@dataclass
class ModeRun:
    """One mode being measured: a step that does one run, and how to read its outputs back."""
    plan: ModePlan
    step: Callable[[], None] | None = None
    fetch: Callable[[], list] | None = None
    samples: list[float] = field(default_factory=list)
    blocks: list = field(default_factory=list)          # the samples (ms) of each alternating round
    error: str = ""


def binding_obstacle(session) -> str:
    """Why this model's values cannot be bound to device memory here ("" when they can)."""
    for kind, values in (("input", session.get_inputs()), ("output", session.get_outputs())):
        for value in values:
            if not value.type.startswith("tensor(") or value.type == "tensor(string)":
                return (f"IO binding here needs numeric tensors, and the {kind} '{value.name}' is "
                        f"{value.type}.")
    return ""


def prepare(plan: ModePlan, session, feeds: dict, references: list, run_options) -> tuple[Callable, Callable]:
    """(step, fetch) for a mode: step() does one run; fetch() returns its outputs as numpy arrays."""
    import onnxruntime as ort

    names = [o.name for o in session.get_outputs()]
    if plan.inputs == NUMPY:
        last: list = []

        def plain_step() -> None:
            last[:] = session.run(names, feeds, run_options)

        return plain_step, lambda: list(last)
    binding = session.io_binding()
    if plan.inputs == DEVICE_ONCE:
        for name, array in feeds.items():
            binding.bind_ortvalue_input(name, ort.OrtValue.ortvalue_from_numpy(array, plan.device, plan.device_id))
    for name, reference in zip(names, references):
        if plan.outputs == PREALLOCATED:
            value = ort.OrtValue.ortvalue_from_shape_and_type(list(reference.shape), reference.dtype.type,
                                                              plan.device, plan.device_id)
            binding.bind_ortvalue_output(name, value)
        else:
            binding.bind_output(name, plan.device, plan.device_id)
    if plan.inputs == BIND_EACH_RUN:
        def step() -> None:
            # Binding copies a host array to the device at once, as a new frame or batch would be.
            for input_name, array in feeds.items():
                binding.bind_cpu_input(input_name, array)
            session.run_with_iobinding(binding, run_options)
    else:
        def step() -> None:
            session.run_with_iobinding(binding, run_options)
    return step, binding.copy_outputs_to_cpu


def measure_transfers(inputs: list, outputs: list, device: str, device_id: int = 0,
                      repeats: int = TRANSFER_REPEATS) -> dict:
    """Median time to copy these inputs host->device and these outputs device->host, and the rates."""
    import onnxruntime as ort

    placed_inputs = [ort.OrtValue.ortvalue_from_numpy(a, device, device_id) for a in inputs]
    placed_outputs = [ort.OrtValue.ortvalue_from_numpy(a, device, device_id) for a in outputs]

    def median_ms(copy: Callable[[], None]) -> float:
        return statistics.median(time_loop(copy, repeats).ms())

    def upload() -> None:
        for value, array in zip(placed_inputs, inputs):
            value.update_inplace(array)

    def download() -> None:
        for value in placed_outputs:
            value.numpy()

    result = {"to_device_bytes": int(sum(a.nbytes for a in inputs)),
              "to_host_bytes": int(sum(a.nbytes for a in outputs)),
              "to_device_ms": median_ms(upload), "to_host_ms": median_ms(download)}
    for direction in ("to_device", "to_host"):
        seconds = result[f"{direction}_ms"] / 1000.0
        count = result[f"{direction}_bytes"]
        result[f"{direction}_bytes_per_s"] = count / seconds if count and seconds > 0 else None
    return result


def device_memory(device_id: int) -> dict | None:
    """GPU memory in use on the device (all processes), when nvidia-ml-py can tell."""
    try:
        import pynvml
        pynvml.nvmlInit()
        try:
            info = pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(device_id))
            return {"used_bytes": int(info.used), "total_bytes": int(info.total)}
        finally:
            pynvml.nvmlShutdown()
    except Exception:  # no library, no driver, no such device: memory is a bonus, never a failure
        return None


def _describe(arrays: dict) -> list[dict]:
    return [{"name": n, "dtype": a.dtype.name, "shape": list(a.shape), "bytes": int(a.nbytes)}
            for n, a in arrays.items()]


def max_abs_diff(expected: list, got: list) -> float:
    import numpy as np

    worst = 0.0
    for a, b in zip(expected, got):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return float("inf")
        if a.dtype.kind in "OSU" or b.dtype.kind in "OSU":
            if not np.array_equal(a, b):
                return float("inf")
        elif a.size:
            worst = max(worst, float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))))
    return worst


class _Progress:
    """Progress within [start, end], sent at most every PROGRESS_INTERVAL_S."""

    def __init__(self, ctx: JobContext):
        self.ctx = ctx
        self.last = 0.0

    def __call__(self, fraction: float, message: str, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self.last >= PROGRESS_INTERVAL_S:
            self.last = now
            self.ctx.progress(fraction, message)


def _guarded(run: ModeRun, ctx: JobContext, work: Callable[[], None]) -> None:
    """Do `work` for a mode; an ORT failure marks that mode failed instead of ending the job."""
    try:
        work()
    except Exception as exc:  # ORT raises its own exception types for a run it cannot do
        ctx.check_cancel()
        run.error = ort_text(str(exc))


def start_mode(run: ModeRun, session, open_session: Callable, feeds: dict, references: list, run_options,
               warmup: int, ctx: JobContext) -> None:
    """Prepare a mode and warm it up; a mode with its own provider options gets its own session."""
    if run.plan.provider_options:
        try:
            session = open_session(run.plan)
        except UserError as exc:      # e.g. a model that cannot be captured as a CUDA graph
            run.error = exc.message
            return

    def setup() -> None:
        run.step, run.fetch = prepare(run.plan, session, feeds, references, run_options)
        for _ in range(max(warmup, run.plan.min_warmup)):
            run.step()

    _guarded(run, ctx, setup)


def round_runs(iterations: int) -> int:
    """The runs of each mode in one alternating round: ten rounds or more (fewer ratios give no useful interval)."""
    return max(1, min(10, iterations // 10))


def measure(runs: list[ModeRun], iterations: int, ctx: JobContext, progress: _Progress) -> None:
    """`iterations` timed runs of every mode, in alternating rounds of a few runs each."""
    chunk = round_runs(iterations)
    done = 0
    rounds = 0
    while done < iterations:
        count = min(chunk, iterations - done)
        for position in round_order(len(runs), rounds):
            run = runs[position]
            if run.error:
                continue

            def timed(run=run) -> None:
                block = time_loop(run.step, count, cancelled=lambda: ctx.cancelled).ms()
                run.samples.extend(block)
                run.blocks.append(list(block))

            _guarded(run, ctx, timed)
        done += count
        rounds += 1
        ctx.check_cancel()
        progress(0.25 + 0.65 * done / iterations, f"measured {done} of {iterations} runs per mode")


def judge_modes(runs: list[ModeRun], block_runs: int) -> tuple[dict[int, dict], Alternation | None]:
    """Each measured mode's speed-up over the plain run (runs[0]), as a comparison judges it:
    {index: summarize's row}, and the rounds they came from (None when the plain run has none)."""
    plain = runs[0]
    if plain.error or not plain.blocks:
        return {}, None
    order = [0] + [i for i, run in enumerate(runs) if i and run.blocks and not run.error]
    rounds = Alternation(BlockPlan(block_runs, rounds=len(plain.blocks)), [], [runs[i].blocks for i in order],
                         [[] for _ in order])
    return dict(zip(order, summarize(rounds))), rounds


def _mode_result(run: ModeRun, input_bytes: int, output_bytes: int, transfer: dict | None,
                 judged: dict | None, references: list) -> dict:
    """A mode's row of the report; its speed-up is a ratio of medians (robust on a noisy machine)
    with its 95 % interval and verdict (`judged`: its row of judge_modes)."""
    plan = run.plan
    to_device, to_host = bytes_per_run(plan, input_bytes, output_bytes)
    measured = plan.available and not run.error and bool(run.samples)
    stats = latency_stats(run.samples) if measured else None
    judged = judged if measured and judged else {}
    result = {
        "name": plan.name, "title": plan.title, "available": plan.available,
        "status": "measured" if measured else ("failed" if run.error else "skipped"),
        "skipped_reason": run.error or plan.skipped_reason,
        "latency_ms": stats, "iterations": len(run.samples) if measured else 0,
        "bytes_to_device_per_run": to_device, "bytes_to_host_per_run": to_host,
        "bytes_copied_per_run": to_device + to_host,
        "copy_ms_per_run": copy_ms(to_device, to_host, transfer),
        "speedup_vs_plain": judged.get("speedup"), "speedup_ci": judged.get("speedup_ci"),
        "verdict": judged.get("verdict"), "conclusive": judged.get("conclusive"),
        "max_abs_diff": None, "explanation": plan.explanation,
        "inputs": plan.inputs, "outputs": plan.outputs, "provider_options": dict(plan.provider_options),
    }
    if measured:
        result["max_abs_diff"] = max_abs_diff(references, run.fetch())
    return result


def run_iobinding(path: str, config: SessionConfig, provider: str | None = None,
                  iterations: int = DEFAULT_ITERATIONS, warmup: int = DEFAULT_WARMUP,
                  ctx: JobContext | None = None) -> dict:
    import onnxruntime as ort

    ctx = ctx or JobContext()
    if iterations < 1 or warmup < 0:
        raise UserError("bad-option", "iterations must be at least 1 and warm-up runs at least 0")
    model_path = admit(path).path
    provider = provider_name(provider or config.providers[0].name)
    plans = plan_modes(provider, device_id_of(config, provider))
    progress = _Progress(ctx)
    progress(0.0, f"starting a session on {provider}", force=True)
    base_config = session_config_for(config, provider, plans[0])
    session = create_session(model_path, base_config)
    ctx.check_cancel()
    first = prepare_feeds(model_path, session, config.inputs, ctx)     # inputs nothing made work end the job
    feeds, feed_info, references = first.feeds, first.info, first.outputs
    outputs = dict(zip([o.name for o in session.get_outputs()], references))
    obstacle = binding_obstacle(session)
    if obstacle:
        plans = [p if not p.binds or not p.available else dataclasses.replace(p, available=False,
                                                                             skipped_reason=obstacle)
                 for p in plans]

    run_options = ort.RunOptions()
    # ORT's Python wrapper looks this entry up on every run_with_iobinding and pays for a raised
    # exception when it is missing (tens of microseconds); 0 is its default value.
    run_options.add_run_config_entry("gpu_graph_id", "0")
    remove_hook = ctx.on_cancel(lambda: setattr(run_options, "terminate", True))
    def open_session(plan: ModePlan):
        return create_session(model_path, session_config_for(config, provider, plan))

    runs = [ModeRun(plan) for plan in plans]
    watch = LoadWatch()
    try:
        for index, run in enumerate(runs):
            if run.plan.available:
                ctx.check_cancel()
                progress(0.05 + 0.2 * index / len(runs), f"preparing: {run.plan.title}", force=True)
                start_mode(run, session, open_session, feeds, references, run_options, warmup, ctx)
        measure([r for r in runs if r.plan.available and not r.error], iterations, ctx, progress)
    finally:
        remove_hook()
    load = watch.stop().to_dict()
    ctx.check_cancel()

    device = plans[0].device
    transfer = None
    if device != "cpu" and not obstacle:
        progress(0.92, "measuring host-device copies", force=True)
        transfer = measure_transfers(list(feeds.values()), references, device, plans[0].device_id)
    input_bytes = sum(a.nbytes for a in feeds.values())
    output_bytes = sum(a.nbytes for a in references)
    judged, rounds = judge_modes(runs, round_runs(iterations))
    modes = [_mode_result(r, input_bytes, output_bytes, transfer, judged.get(i), references)
             for i, r in enumerate(runs)]
    progress(1.0, "done", force=True)
    return {
        "model": str(model_path.resolve()), "provider": provider, "device": device,
        "device_id": plans[0].device_id, "ort_version": ort.__version__,
        "iterations": iterations, "warmup": warmup,
        "inputs": [{**plan, **described} for plan, described in zip(feed_info["inputs"], _describe(feeds))],
        "outputs": _describe(outputs), "feeds": feed_info,
        "input_bytes": int(input_bytes), "output_bytes": int(output_bytes),
        "transfer": transfer, "modes": modes, "note": provider_note(provider),
        "speedup_definition": SPEEDUP_DEFINITION_MODES,
        "alternation": rounds.describe() if rounds is not None else None,
        "device_memory": device_memory(plans[0].device_id) if device == "cuda" else None,
        "session": effective_settings(session, base_config), "load": load,
    }
