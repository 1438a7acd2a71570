"""`ortune --self-test`: prove this installation works end to end (used on frozen builds)."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time

from app.core.store.paths import demo_model_path


def _steps(demo: str, scratch: str) -> list[tuple[str, str, dict]]:
    return [
        ("read the demo model", "app.core.model.inspect:inspect_job", {"path": demo}),
        ("check execution providers", "app.core.session.providers:probe_job", {}),
        ("run the demo model", "app.core.session.create:smoke_run_job", {"path": demo}),
        ("benchmark the demo model", "app.core.bench.bench:bench_job",
         {"path": demo, "run": {"warmup": 2, "iterations": 20}, "record": False}),
        ("convert the demo model to fp16 and check it", "app.core.convert.convert:convert_job",
         {"kind": "fp16", "input": demo, "output": os.path.join(scratch, "demo_fp16.onnx")}),
    ]


def run_self_test() -> int:
    from app.core.jobs.runner import run_job

    demo = str(demo_model_path())
    failures = 0
    scratch = tempfile.mkdtemp(prefix="ortune-self-test-")
    for title, ref, params in _steps(demo, scratch):
        started = time.monotonic()
        try:
            run_job(ref, params)
        except Exception as exc:  # report every step, then fail as a whole
            failures += 1
            sys.stdout.write(f"FAIL  {title}: {getattr(exc, 'message', exc)}\n")
        else:
            sys.stdout.write(f"ok    {title} ({time.monotonic() - started:.1f} s)\n")
    shutil.rmtree(scratch, ignore_errors=True)
    sys.stdout.write("self-test passed\n" if not failures else f"self-test failed ({failures} step(s))\n")
    return 1 if failures else 0
