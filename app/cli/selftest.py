"""`ortune --self-test`: prove this installation works end to end (used on frozen builds)."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time

from app.core.store.paths import demo_model_path
from app.core.text import printable
from app.core.bench.jobs import BENCH
from app.core.convert.jobs import CONVERT
from app.core.model.jobs import INSPECT
from app.core.session.jobs import PROBE_PROVIDERS, SMOKE_RUN


def _steps(demo: str, scratch: str) -> list[tuple[str, str, dict]]:
    return [
        ("read the demo model", INSPECT, {"path": demo}),
        ("check execution providers", PROBE_PROVIDERS, {}),
        ("run the demo model", SMOKE_RUN, {"path": demo}),
        ("benchmark the demo model", BENCH,
         {"path": demo, "run": {"warmup": 2, "iterations": 20}, "record": False}),
        ("convert the demo model to fp16 and check it", CONVERT,
         {"kind": "fp16", "input": demo, "output": os.path.join(scratch, "demo_fp16.onnx")}),
    ]


def run_self_test() -> int:
    from app.core.runner.process import run_job

    demo = str(demo_model_path())
    failures = 0
    scratch = tempfile.mkdtemp(prefix="ortune-self-test-")
    for title, ref, params in _steps(demo, scratch):
        started = time.monotonic()
        try:
            run_job(ref, params)
        except Exception as exc:  # report every step, then fail as a whole
            failures += 1
            sys.stdout.write(f"FAIL  {title}: {printable(getattr(exc, 'message', exc), 2000)}\n")
        else:
            sys.stdout.write(f"ok    {title} ({time.monotonic() - started:.1f} s)\n")
    shutil.rmtree(scratch, ignore_errors=True)
    sys.stdout.write("self-test passed\n" if not failures else f"self-test failed ({failures} step(s))\n")
    return 1 if failures else 0
