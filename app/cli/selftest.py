"""`ortune --self-test`: prove this installation works end to end (used on frozen builds)."""

from __future__ import annotations

import sys
import time

from app.core.paths import demo_model_path


def _steps(demo: str) -> list[tuple[str, str, dict]]:
    return [
        ("read the demo model", "app.core.inspecting:inspect_job", {"path": demo}),
        ("check execution providers", "app.core.providers:probe_job", {}),
        ("run the demo model", "app.core.sessions:smoke_run_job", {"path": demo}),
    ]


def run_self_test() -> int:
    from app.core.runner import run_job

    demo = str(demo_model_path())
    failures = 0
    for title, ref, params in _steps(demo):
        started = time.monotonic()
        try:
            run_job(ref, params)
        except Exception as exc:  # report every step, then fail as a whole
            failures += 1
            sys.stdout.write(f"FAIL  {title}: {getattr(exc, 'message', exc)}\n")
        else:
            sys.stdout.write(f"ok    {title} ({time.monotonic() - started:.1f} s)\n")
    sys.stdout.write("self-test passed\n" if not failures else f"self-test failed ({failures} step(s))\n")
    return 1 if failures else 0
