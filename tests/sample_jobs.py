"""Jobs used by the runner and GUI tests: each behaves one particular way."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.jobs.entry import LOCAL_ONLY, Job
from app.core.jobs.errors import UserError
from app.core.jobs.params import Params
from app.core.session.jobs import ModelSession


@dataclass
class SampleParams(Params):
    value: Any = None
    code: int = 7
    path: str = ""
    module: str = ""
    kib: int = 64


def echo(params, ctx):
    for i in range(3):
        ctx.progress(i / 3, f"step {i}")
    ctx.log("hello from the child")
    ctx.data("numbers", [1, 2, 3])
    return {"echo": params.value, "pid": os.getpid()}


def where_am_i(params, ctx):
    return {"env": os.environ.get(params.value), "cwd": os.getcwd(), "ppid": os.getppid()}


def user_error(params, ctx):
    raise UserError("bad-option", "the value is wrong")


def internal_error(params, ctx):
    raise ZeroDivisionError("boom")


def abort(params, ctx):
    ctx.progress(0.5, "about to crash")
    time.sleep(0.2)
    os.abort()


def cooperative(params, ctx):
    """Runs until cancelled, checking the flag between steps."""
    for _ in range(6000):
        ctx.check_cancel()
        ctx.progress(None, "waiting")
        time.sleep(0.01)
    return {"finished": True}


def stubborn(params, ctx):
    """Ignores cancel (like a native call that never returns)."""
    ctx.progress(None, "stuck")
    time.sleep(600)
    return {"finished": True}


def stubborn_stager(params, ctx):
    """Stages its output beside `path` as a conversion does, then ignores cancel."""
    from app.core.model.output import Staging
    from app.core.store import leftovers

    with Staging(Path(params.path)) as stage, leftovers.noted(stage.folder):
        ctx.progress(None, "staged")
        time.sleep(600)
    return {"finished": True}


def exit_code(params, ctx):
    os._exit(params.code)


def runtime_refusal(params, ctx):
    """Run a model with an input of the wrong rank: ONNX Runtime raises its own error."""
    import numpy as np
    import onnxruntime as ort
    session = ort.InferenceSession(params.path)
    session.run(None, {"x": np.zeros((2, 3, 4), np.float32)})


def has_module(params, ctx):
    """Whether the job's process has a module loaded (a forked child shares the parent's)."""
    import sys
    return params.module in sys.modules


def hog(params, ctx):
    """Says which inputs it runs on, then takes `kib` KiB in 10 MiB steps and holds them."""
    ctx.data("inputs", {"inputs": [{"name": "x", "shape": [1, 4096]}]})
    held = []
    for _ in range(params.kib // 10240):
        held.append(b"\x01" * (10 << 20))
        time.sleep(0.005)
    time.sleep(30)
    return {"held": len(held)}


def doubler(params, ctx):
    """Answers each number its parent sends with its double, until it is sent "stop"."""
    answered = 0
    while (message := ctx.receive(timeout=30)) != "stop":
        ctx.data("double", message * 2)
        answered += 1
    return {"answered": answered}


def paced_member(params, ctx):
    """A comparison member without a model: every run "takes" `value` ms. It notes when
    it started and stopped and when each block started and ended (a clock all processes
    share), and the runs asked of each block, and leaves its pid in the folder `path`,
    when given. A list of values is one per process started with it, in turn (the ones
    started so far are counted in `path` under the name `module`), the last for any after."""
    from array import array
    from pathlib import Path

    from app.core.measure.alternate import BLOCK, READY

    alive_from = time.monotonic_ns()
    if params.path:
        (Path(params.path) / f"{os.getpid()}.pid").write_text("")
    value = params.value
    if isinstance(value, list):
        started = len(list(Path(params.path).glob(f"{params.module}.*.started")))
        (Path(params.path) / f"{params.module}.{os.getpid()}.started").write_text("")
        value = value[min(started, len(value) - 1)]
    ctx.data(READY, {"run_ms": value})
    spans, runs = [], []
    while "block" in (command := ctx.receive(timeout=30)):
        start = time.monotonic_ns()
        time.sleep(0.002)
        spans.append((start, time.monotonic_ns()))
        runs.append(command["block"])
        ctx.data(BLOCK, {"ns": array("q", [int(value * 1e6)] * command["block"]).tobytes(),
                         "wall_s": value * command["block"] / 1000})
    return {"spans": spans, "runs": runs, "alive": (alive_from, time.monotonic_ns())}


class Payload:
    """A result that can be watched with a weakref (a dict cannot)."""

    def __init__(self, size: int):
        self.blob = bytes(size)


def payload(params, ctx):
    """Returns a result of `kib` KiB: in-process, the caller gets this very object."""
    return Payload(params.kib * 1024)


def gil_holder(params, ctx):
    """Says it started, then computes in C for hours without letting another thread run."""
    ctx.progress(0.0, "holding the interpreter lock")
    return sum(range(10 ** 14))


ORT_LINES = [b"\x1b[1;33m2026-12-01 12:00:00.1 [W:onnxruntime:, graph.cc:4302 Clean] Removing initializer 'w'.\x1b[m\n",
             b"2026-12-01 12:00:00.2 [I:onnxruntime:, session.cc:10 Init] Session created\n",
             b"\x1b[1;31m2026-12-01 12:00:00.3 [E:onnxruntime:, executor.cc:677 Run] Non-zero status code returned "
             b"while running Gather node.\x1b[m\n",
             b"\x1b[1;31m2026-12-01 12:00:00.4 [E:onnxruntime:Default, env.cc:9 Pin] pthread_setaffinity_np failed "
             b"for thread: 8, error code: 22\x1b[m\n"]


def native_log(params, ctx):
    """Writes ONNX Runtime-style log lines to fd 2 as native code does: while the output is
    captured (as when a session is made), the warning twice, and once more after that."""
    from app.core.jobs.stdio import capture_output

    with capture_output():
        for line in ORT_LINES + ORT_LINES[:1]:
            os.write(2, line)
    os.write(2, b"2026-12-01 12:00:01.0 [W:onnxruntime:, run.cc:1 Run] written outside a capture\n")
    return {"done": True}


ECHO = Job("echo", echo, SampleParams, runs=LOCAL_ONLY)
WHERE_AM_I = Job("where-am-i", where_am_i, SampleParams, runs=LOCAL_ONLY)
NATIVE_LOG = Job("native-log", native_log, SampleParams, runs=LOCAL_ONLY)
USER_ERROR = Job("user-error", user_error, SampleParams, runs=LOCAL_ONLY)
INTERNAL_ERROR = Job("internal-error", internal_error, SampleParams, runs=LOCAL_ONLY)
ABORT = Job("abort", abort, SampleParams, runs=LOCAL_ONLY)
COOPERATIVE = Job("cooperative", cooperative, SampleParams, runs=LOCAL_ONLY)
STUBBORN = Job("stubborn", stubborn, SampleParams, runs=LOCAL_ONLY)
STUBBORN_STAGER = Job("stubborn-stager", stubborn_stager, SampleParams, runs=LOCAL_ONLY)
EXIT_CODE = Job("exit-code", exit_code, SampleParams, runs=LOCAL_ONLY)
RUNTIME_REFUSAL = Job("runtime-refusal", runtime_refusal, SampleParams, runs=LOCAL_ONLY)
HAS_MODULE = Job("has-module", has_module, SampleParams, runs=LOCAL_ONLY)
HOG = Job("hog", hog, SampleParams, runs=LOCAL_ONLY)
DOUBLER = Job("doubler", doubler, SampleParams, runs=LOCAL_ONLY)
PACED_MEMBER = Job("paced-member", paced_member, SampleParams, runs=LOCAL_ONLY)
PAYLOAD = Job("payload", payload, SampleParams, child=False, runs=LOCAL_ONLY)
GIL_HOLDER = Job("gil-holder", gil_holder, SampleParams, runs=LOCAL_ONLY)


def probe_inputs_stand_in(params, ctx):
    """Answers like PROBE_INPUTS without running a model: a model whose file name says
    "refuses" gets no working inputs, any other 2 × 64 found by trying."""
    if "refuses" in params.path:
        return {"inputs": [{"name": "ids", "dtype": "int64", "shape": [1, 128], "source": "default",
                            "reason": "length 128, a usual text length", "values": "random ids below 1,000"}],
                "dims": {"batch": 1, "sequence": 128}, "guessed": ["batch", "sequence"],
                "tried": [{"dims": {"batch": 1, "sequence": 128}, "error": "Got invalid dimensions for input: ids\nmore"}],
                "worked": False}
    rows = [{"name": name, "dtype": "int64", "shape": [2, 64], "source": "probed", "reason": "ran with 2 × 64",
             "values": "ones (a mask)" if name == "mask" else "random ids below 1,000"} for name in ("ids", "mask")]
    rows.append({"name": "pixels", "dtype": "float32", "shape": [2, 3, 8, 8], "source": "probed",
                 "reason": "ran with batch 2", "values": "random normal, seed 0"})
    return {"inputs": rows, "dims": {"batch": 2, "sequence": 64, "pixels[0]": 2}, "guessed": [],
            "tried": [{"dims": {"batch": 1, "sequence": 128}, "error": "too short"},
                      {"dims": {"batch": 2, "sequence": 64}, "error": None}], "worked": True}


PROBE_INPUTS_STAND_IN = Job("probe-inputs-stand-in", probe_inputs_stand_in, ModelSession, child=False, runs=LOCAL_ONLY)
