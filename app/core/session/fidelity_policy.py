"""The one fidelity policy: what a variant of each kind must meet to be called faithful,
declared once and named in every verdict. Convert's check, drift, repair, compare,
optimize and the gate all take their default tolerance from here, so one file is judged by
one question wherever it is checked: the float16 variant convert passed is not failed by the
gate on a stricter float32 bound.

Each policy asks the question its users ask:
- float32: a rewrite that should compute the same function (offline optimisation, ORT
  format, fusions, a compiled context): tight element-wise bounds;
- float16: half precision (fp16, mixed; bf16 on a provider): bounds of float16's precision;
- int8: quantised activations and weights: the outputs' direction (cosine) decides, and
  the element-wise difference is reported beside it: an unnormalised output of a wide
  layer moves by far more than 0.1 under int8 (max |Δ| 0.83 at cosine 0.9997) and is
  still the same answer;
- int4: weight-only 4-bit: the user asks whether the answer is the same, so where a model
  has class scores or logits the task-level question decides (top-1 / next-token
  agreement), and the other figures are reported beside it.
Every policy also reports the task-level agreement where an output holds class scores
(`[N, C]` probabilities, or an output named as scores or logits, a decoder's `[B, S, V]`
logits too), and the lower precisions require it once there are enough rows for it to be
a rate.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

from app.core.jobs.params import Params, setting

#: fewer rows than this make a top-1 agreement a coin, not a rate: reported, not required
TASK_ROWS = 10
#: a decoder's variant is asked for its next tokens over this many greedy steps, from a
#: prompt of this many tokens (app.core.convert.next_tokens)
NEXT_TOKEN_STEPS, NEXT_TOKEN_PROMPT = 16, 8


@dataclass(frozen=True)
class FidelityPolicy:
    name: str
    question: str          # what the policy asks, in words
    atol: float
    rtol: float
    min_cosine: float
    min_top1: float        # the least top-1 agreement on score outputs (0: reported only)
    #: what decides a pass: "bounds" (element-wise and cosine), "direction" (the cosine; the
    #: element-wise figure reported beside it) or "task" (the top-1 agreement where an output
    #: holds class scores or logits, else the direction)
    decides: str = "bounds"

    def tolerance(self) -> dict:
        return {"atol": self.atol, "rtol": self.rtol, "min_cosine": self.min_cosine, "min_top1": self.min_top1,
                "policy": self.name}

    def describe(self) -> str:
        return policy_text(self.tolerance())


FLOAT32 = FidelityPolicy("float32", "a rewrite that computes the same function", 1e-4, 1e-3, 0.9999, 0.0)
FLOAT16 = FidelityPolicy("float16", "half precision keeps the answers within float16's precision",
                         1e-2, 1e-2, 0.999, 0.99)
INT8 = FidelityPolicy("int8", "quantised arithmetic keeps the outputs' direction and, where there are classes, "
                              "the top class; the element-wise difference is reported beside it", 0.1, 0.1, 0.99, 0.95,
                      decides="direction")
INT4 = FidelityPolicy("int4", "weight-only 4-bit keeps the top class or next token; the element-wise figures are "
                              "reported beside it", 0.1, 0.1, 0.99, 0.9, decides="task")
POLICIES = {policy.name: policy for policy in (FLOAT32, FLOAT16, INT8, INT4)}
#: the policy every candidate optimize makes of a decoder is held to: the next tokens decide
DECODER_TASK = INT4

#: the policy each conversion kind is held to
KIND_POLICY = {"fp16": FLOAT16, "mixed": FLOAT16, "int8-dynamic": INT8, "int8-static": INT8, "int4": INT4,
               "ort": FLOAT32, "optimize": FLOAT32, "transformers": FLOAT32, "compiled": FLOAT32}

_INT4_OPS = {"MatMulNBits", "GatherBlockQuantized"}
_INT8_OPS = {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "MatMulInteger", "ConvInteger",
             "QLinearConv", "QLinearMatMul", "DynamicQuantizeMatMul", "MatMulIntegerToFloat", "QGemm", "QAttention"}
_FLOAT16, _BFLOAT16 = 10, 16


def for_kind(kind: str, options: dict | None = None) -> FidelityPolicy:
    """The policy a variant made by conversion `kind` with `options` is held to."""
    if kind == "transformers" and (options or {}).get("fp16"):
        return FLOAT16
    return KIND_POLICY.get(kind, FLOAT32)


def model_precision(model) -> str:
    """"int4", "int8", "float16" or "float32": what a model (an onnx ModelProto) computes in."""
    ops = {node.op_type for node in model.graph.node}
    if ops & _INT4_OPS:
        return "int4"
    if ops & _INT8_OPS:
        return "int8"
    if any(t.data_type in (_FLOAT16, _BFLOAT16) for t in model.graph.initializer) or any(
            node.op_type == "Cast" and any(a.name == "to" and a.i in (_FLOAT16, _BFLOAT16) for a in node.attribute)
            for node in model.graph.node):
        return "float16"
    return "float32"


def for_precisions(source: str | None, variant: str | None) -> tuple[FidelityPolicy, str]:
    """(the policy, why): a variant in a lower precision than its source is held to that
    precision's policy; two models of one precision (or a source in the lower one) to the
    strict float32 policy, as two unrelated models are; so is a pair whose precision could
    not be read (None)."""
    if source is None or variant is None:
        return FLOAT32, "a model's graph could not be read here, so the strict policy applies"
    order = ["float32", "float16", "int8", "int4"]
    if order.index(variant) > order.index(source):
        return POLICIES[variant], f"the new model computes in {variant}, the old one in {source}"
    return FLOAT32, f"both models compute in {source}" if source == variant else \
        f"the new model computes in {variant}, no lower than the old one ({source})"


def for_pair(source_model, variant_model) -> tuple[FidelityPolicy, str]:
    """for_precisions of two onnx ModelProtos."""
    return for_precisions(model_precision(source_model), model_precision(variant_model))


def file_precision(path: str) -> str | None:
    """model_precision of a model file; None where its graph cannot be read here (an .ort
    file, or one onnx cannot parse: the run itself says what is wrong with it)."""
    import onnx

    try:
        return model_precision(onnx.load(str(path), load_external_data=False))
    except Exception:       # any parse failure: the judgement falls back to the strict policy
        return None


def for_paths(source: str, variant: str) -> tuple[FidelityPolicy, str]:
    """for_precisions of two model files."""
    return for_precisions(file_precision(source), file_precision(variant))


def bounds_text(tolerance: dict) -> str:
    """"|Δ| ≤ 0.01 + 0.01·|source|, cosine ≥ 0.999, top-1 ≥ 99 %": a tolerance in words."""
    text = (f"|Δ| ≤ {tolerance['atol']:g} + {tolerance['rtol']:g}·|source|, "
            f"cosine ≥ {tolerance['min_cosine']:g}")
    if tolerance.get("min_top1"):
        text += f", top-1 agreement ≥ {tolerance['min_top1']:.0%}"
    return text


def policy_text(tolerance: dict) -> str:
    """"the float16 policy (|Δ| ≤ 0.01 + 0.01·|source|, cosine ≥ 0.999, top-1 agreement ≥ 99 %)":
    how every verdict names the tolerance it applied (a stored one without a policy: float32's)."""
    return f"the {tolerance.get('policy', 'float32')} policy ({bounds_text(tolerance)})"


def _policy_name(value: str, label: str) -> None:
    if value not in POLICIES:
        from app.core.jobs.errors import UserError
        raise UserError("bad-option", f"no fidelity policy is called {value!r} (there are {', '.join(POLICIES)})")


@dataclass(eq=False)
class GivenBounds(Params, Mapping):
    """The bounds a user gives over a policy's, each optional: a job's `tolerance` parameter.

    Read as a mapping of the bounds given (`{**policy.tolerance(), **given}`), and written
    as one (`to_dict`), so a preset or a stored report says only what the user set."""
    atol: float | None = setting(None, minimum=0, flag="--tol-abs", metavar="X",
                                 help="absolute tolerance per element (default by kind)")
    rtol: float | None = setting(None, minimum=0, flag="--tol-rel", metavar="X",
                                 help="relative tolerance per element (default by kind)")
    min_cosine: float | None = setting(None, minimum=-1, maximum=1, flag="--tol-cosine", metavar="X",
                                       help="lowest cosine similarity that passes (default by kind)")

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}

    def __getitem__(self, key: str):
        return self.to_dict()[key]

    def __iter__(self):
        return iter(self.to_dict())

    def __len__(self) -> int:
        return len(self.to_dict())


@dataclass(eq=False)
class GivenTolerance(GivenBounds):
    """GivenBounds, and the top-1 agreement and the policy they are read over, where a job
    takes a whole stored tolerance (a conversion's, a gate's)."""
    min_top1: float | None = setting(None, minimum=0, maximum=1)
    policy: str | None = setting(None, check=_policy_name)
