"""Where a search ran, as its result and report say it: the CPU, ONNX Runtime, the session's
providers, and which of the build's providers start there."""

from __future__ import annotations

from app.core.jobs.errors import JobCancelled, JobFailed, UserError
from app.core.runner.process import run_child


def machine_facts(config) -> dict:
    """The CPU, ONNX Runtime, the session's providers, and which of the build's providers
    start here: a GPU build lists CUDA and TensorRT where no driver is, so each is tried
    (app.core.session.providers, in a child: a provider's start can crash) and a report
    never calls "available" one that cannot run here. The probe takes about a second and is
    not cancelled: a cancelled search still says where it ran."""
    import onnxruntime

    from app.core.jobs.protocol import JobContext
    from app.core.session.jobs import PROBE_PROVIDERS, ProbeParams
    from app.core.session.machine_cpu import cpu_description

    in_build = onnxruntime.get_available_providers()
    try:
        probed = run_child(PROBE_PROVIDERS, ProbeParams(), JobContext())["providers"]
        usable = [p["name"] for p in probed if p["available"]]
        not_usable = [{"name": p["name"], "reason": p["reason"]} for p in probed if p["in_build"] and not p["available"]]
    except (UserError, JobFailed, JobCancelled) as exc:
        usable, not_usable = [], [{"name": name, "reason": f"not tried: {exc}"} for name in in_build]
    return {"cpu": cpu_description()[0], "onnxruntime": onnxruntime.__version__, "providers": config.provider_names(),
            "in_build_providers": in_build, "usable_providers": usable, "not_usable_providers": not_usable}
