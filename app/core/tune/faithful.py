"""Tune's output check: a setting may change what the model computes (OpenVINO at its default
precision computes in bf16 on CPUs with AMX, TensorRT with fp16 kernels in half precision),
and a faster setting that changes the answers must not win. Each contender's outputs are
checked once, when its session is made, against the user's own session's outputs on the same
feeds, under the fidelity policy of the pair (app.core.session.fidelity_policy): float16's
where either side computes in a lowered precision, float32's otherwise (a quantised model
keeps its own). A contender outside it leaves the race with the outputs where it drifts;
the finalists' re-measurement holds them to the same policy (app.core.tune.confirm)."""

from __future__ import annotations

from app.core.session.config import SessionConfig
from app.core.session.fidelity_policy import FLOAT16, FLOAT32, POLICIES, FidelityPolicy
from app.core.session.openvino import NAME as OPENVINO

#: OpenVINO's precisions that compute the model's own float32
_FULL = ("FP32", "ACCURACY")


class Unfaithful(Exception):
    """A contender whose outputs drift from the user's session's beyond the policy."""

    def __init__(self, fidelity: dict):
        self.message = drift_text(fidelity)
        super().__init__(self.message)
        self.fidelity = fidelity


def lowered(config: SessionConfig) -> bool:
    """Whether the session's first provider computes in less than float32."""
    first = config.providers[0] if config.providers else None
    if first is None:
        return False
    if first.name == OPENVINO:
        return str(first.options.get("precision", "")).upper() not in _FULL
    return str(first.options.get("trt_fp16_enable", "")).lower() in ("1", "true")


def policy_of(config: SessionConfig, base: SessionConfig, precision: str | None = None) -> FidelityPolicy:
    """The policy a contender is held to against the user's session (see the module
    docstring); a model that computes in less than float32 itself (`precision`, as
    fidelity_policy.model_precision reads it) keeps its own policy, as settings that fuse its
    quantised nodes or leave them apart differ by a quantisation step."""
    order = ["float32", "float16", "int8", "int4"]
    own = POLICIES.get(precision or "float32", FLOAT32)
    provider = FLOAT16 if lowered(config) or lowered(base) else FLOAT32
    return max(own, provider, key=lambda policy: order.index(policy.name))


def check_outputs(session, feeds: dict, reference: dict, policy: FidelityPolicy) -> dict:
    """The fidelity of `session`'s outputs on `feeds` against `reference` (the user's
    session's, by name); Unfaithful where they are outside `policy`."""
    from app.core.bench.compare import output_fidelity

    outputs = dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))
    fidelity = output_fidelity(reference, outputs, policy.tolerance())
    if not fidelity["passed"]:
        raise Unfaithful(fidelity)
    return fidelity


def drift_text(fidelity: dict) -> str:
    """'its outputs drift from your settings' beyond the float16 policy: out (cosine 0.9912 …)'."""
    from app.core.text import printable

    drifting = [f"{printable(row['name'], 60)} ({row.get('problem') or 'outside the bounds'})"
                for row in fidelity["outputs"] if row.get("passed") is False]
    policy = (fidelity.get("tolerance") or {}).get("policy", "float32")
    return f"its outputs drift from your settings' beyond the {policy} policy: {'; '.join(drifting)}"


def summary(fidelity: dict) -> dict:
    """What a trial's row keeps of its check."""
    return {"passed": fidelity["passed"], "policy": fidelity["tolerance"]["policy"],
            "max_abs_diff": fidelity["max_abs_diff"], "min_cosine": fidelity["min_cosine"],
            "notes": fidelity.get("notes", [])}
