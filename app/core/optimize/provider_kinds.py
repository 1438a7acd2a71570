"""The execution provider as a candidate: the source model itself, run on another provider
(or the same provider with another precision), timed against the source on the user's
provider in the same alternation as the conversions, and checked by the same fidelity
policy — the provider's outputs against the user's provider's on the same feeds.

A provider's float32 is held to the float32 policy (it computes the same function); a
precision option that lowers it (OpenVINO's default is bf16 on CPUs with AMX and f16 on
GPUs) is held to the float16 policy, and a candidate outside it is reported with the outputs
where it drifts. Only providers that really start here are tried (the provider probe, in a
child process): nothing is installed; the folder shipped names what the chosen one needs."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.session.config import ProviderSpec, SessionConfig
from app.core.session.fidelity_policy import FLOAT16, FLOAT32, FidelityPolicy
from app.core.session.providers import SHORT_NAMES


@dataclass(frozen=True)
class ProviderKind:
    name: str                 # the candidate's kind, as --kinds takes it
    provider: str             # ORT's provider name
    options: tuple            # (key, value) pairs of its provider options
    policy: FidelityPolicy
    title: str
    summary: str


PROVIDER_KINDS: dict[str, ProviderKind] = {k.name: k for k in (
    ProviderKind("openvino", SHORT_NAMES["openvino"], (), FLOAT16, "OpenVINO (its default precision)",
                 "The source model run by OpenVINO at its default precision (bf16 on CPUs with AMX, f16 on GPUs): "
                 "held to the float16 policy. Tried where the OpenVINO provider (the onnxruntime-ep-openvino "
                 "plugin or the onnxruntime-openvino build) starts."),
    ProviderKind("openvino-fp32", SHORT_NAMES["openvino"], (("precision", "FP32"),), FLOAT32, "OpenVINO (FP32)",
                 "The source model run by OpenVINO in float32: held to the float32 policy."),
    ProviderKind("cpu", SHORT_NAMES["cpu"], (), FLOAT32, "CPU provider",
                 "The source model on ONNX Runtime's CPU provider, where your session runs on another."),
    ProviderKind("cuda", SHORT_NAMES["cuda"], (), FLOAT32, "CUDA provider",
                 "The source model on the CUDA provider, where it starts here."),
    ProviderKind("tensorrt", SHORT_NAMES["tensorrt"], (), FLOAT32, "TensorRT provider",
                 "The source model on the TensorRT provider (float32), where it starts here."),
    ProviderKind("dml", SHORT_NAMES["dml"], (), FLOAT32, "DirectML provider",
                 "The source model on the DirectML provider, where it starts here."),
)}


def usable_providers(wanted: list[str], config: SessionConfig, ctx) -> dict[str, dict] | None:
    """Provider name -> the provider probe's row (run in a child: a provider can crash in
    native code), when a provider candidate is wanted; None when none is or the probe failed."""
    from app.core.jobs.errors import JobFailed, UserError
    from app.core.runner.process import run_child
    from app.core.session.jobs import PROBE_PROVIDERS, ProbeParams

    if not wants_providers(wanted):
        return None
    try:
        probed = run_child(PROBE_PROVIDERS, ProbeParams(ep_libraries=dict(config.ep_libraries)), ctx)
    except (UserError, JobFailed) as exc:
        ctx.log(f"the execution providers could not be probed: {exc.message}", "warning")
        return None
    return {row["name"]: row for row in probed["providers"]}


def wants_providers(wanted: list[str]) -> bool:
    """Whether the search tries any provider candidate (and so probes the providers)."""
    return not wanted or any(kind in PROVIDER_KINDS for kind in wanted)


def session_for(kind: str, config: SessionConfig) -> SessionConfig:
    """The user's session with the candidate's provider and options instead of theirs (the
    options the user gave that provider are kept, the candidate's win)."""
    from app.core.session.create import with_plugin_records

    spec = PROVIDER_KINDS[kind]
    session = config.checked()
    own = next((p.options for p in config.providers if p.name == spec.provider), {})
    options = {**own, **dict(spec.options)}
    if spec.provider == SHORT_NAMES["openvino"] and config.intra_op_num_threads and not options.get("num_of_threads"):
        # OpenVINO keeps its own threads (ORT's intra-op count does not reach it): it is judged on
        # as many as the user's session runs, not on every core against their one
        options["num_of_threads"] = str(config.intra_op_num_threads)
    session.providers = [ProviderSpec(spec.provider, options)]
    session.validate()
    return with_plugin_records(session)     # the preset it ships names the plugin package it came from


def skip_reason(kind: str, config: SessionConfig, usable: dict[str, dict]) -> str:
    """'' when the candidate can run here and differs from the user's session; else why not.
    `usable`: provider name -> the provider probe's row (available, reason)."""
    spec = PROVIDER_KINDS[kind]
    first, own = config.providers[0], dict(spec.options)
    # the options the kind sets, and the precision it leaves at the provider's default
    if first.name == spec.provider and all(str(first.options.get(k, "")) == str(own.get(k, ""))
                                           for k in {*own, "precision"}):
        return "your session already runs on it: every candidate is measured against it"
    row = usable.get(spec.provider)
    if row is None or not row.get("available"):
        why = (row or {}).get("reason") or "it is not part of this ONNX Runtime"
        return f"{spec.provider} does not start here: {why}"
    return ""


def pending_report(kind: str, source: str, config: SessionConfig, tolerance: dict, decoder: bool = False) -> dict:
    """What the screening times for a provider candidate: the source on the candidate's
    session, its outputs checked against the user's provider's under its policy (the user's
    tolerance over it). A decoder's is judged as its conversions are, on its next tokens
    against the source on the user's session (`agree_with`), the outputs' figures beside."""
    from app.core.optimize.rows import candidate_tolerance

    spec = PROVIDER_KINDS[kind]
    session = session_for(kind, config)
    return {"kind": kind, "input": source, "output": source, "options": dict(session.providers[0].options),
            "provider": spec.provider, "session": session,
            "tolerance": {**spec.policy.tolerance(), **candidate_tolerance(tolerance, decoder)},
            "agree_with": config.checked() if decoder else None}


def next_tokens(report: dict, ctx) -> dict | None:
    """A decoder's provider candidate asked the task's question, in a child (a provider can crash
    in native code): its next tokens against the source's on the user's session; None where the
    candidate is no decoder's. {"problem"} where it could not be asked."""
    from app.core.convert.jobs import NEXT_TOKENS, NextTokensParams
    from app.core.jobs.errors import JobFailed, UserError
    from app.core.runner.process import run_child
    from app.core.session.fidelity_policy import GivenTolerance

    if report.get("agree_with") is None:
        return None
    params = NextTokensParams(path=report["input"], session=report["session"],
                              reference_session=report["agree_with"],
                              tolerance=GivenTolerance.from_dict(report["tolerance"]))
    try:
        return run_child(NEXT_TOKENS, params, ctx)["check"]
    except (UserError, JobFailed) as exc:
        return {"problem": exc.message}


def provider_row(kind: str, report: dict, speed: dict, size_bytes: int, ctx=None) -> dict:
    """The leaderboard row of a provider candidate from its screening (`speed`, with the
    fidelity its member measured, and for a decoder its next tokens, asked here): passed, or
    failed its check with the outputs that drift."""
    from app.core.convert.next_tokens import judge
    from app.core.optimize.rows import failed_row, made_row

    fidelity = speed.pop("fidelity", None) or {}
    if fidelity.get("outputs") and ctx is not None:
        fidelity = judge(fidelity, next_tokens(report, ctx))
    used = speed.get("providers") or []
    if used[:1] != [report["provider"]]:
        return failed_row(kind, "refused", f"{report['provider']} did not take the session: it ran on "
                                           f"{', '.join(used) or 'no provider'}")
    if not fidelity.get("outputs"):
        return failed_row(kind, "refused", "its outputs could not be checked against your provider's")
    check = "passed" if fidelity.get("passed") else "failed"
    made = {"fidelity": fidelity, "check": check, "speed": speed, "output_bytes": size_bytes, "seconds": 0.0,
            "options": report["options"]}
    row = made_row(kind, made)
    row["provider"] = report["provider"]
    row["session"] = report["session"].to_dict()
    row["providers_used"] = speed.get("providers", [])
    row["ships"] = shipped_text(kind, report["provider"], report["options"])
    if row["status"] == "failed-check":
        row["reason"] += f"; {kind} is not faithful on this model under {_policy(fidelity)}"
    return row


def _policy(fidelity: dict) -> str:
    from app.core.session.fidelity_policy import policy_text

    return policy_text(fidelity.get("tolerance") or {})


def shipped_text(kind: str, provider: str, options: dict) -> str:
    """'the source model on OpenVINOExecutionProvider with precision FP32': what to ship, in
    words (a provider at its default precision says so)."""
    from app.core.text import printable

    given = ", ".join(f"{printable(k, 40)} {printable(v, 80)}" for k, v in options.items())
    text = f"the source model on {printable(provider, 80)}" + (f" with {given}" if given else "")
    return text + (" at its default precision" if PROVIDER_KINDS[kind].policy is FLOAT16 else "")
