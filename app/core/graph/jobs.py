"""The jobs of the graph room: a model's cost, its summary with the cost totals, the
difference between two models, the model drawn (layout and node details), and Netron
serving it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from app.core.jobs.entry import Job, LOCAL_ONLY
from app.core.jobs.params import Params, setting
from app.core.jobs.results import InspectResult
from app.core.session.input_spec import FeedSpec


@dataclass
class CostParams(Params):
    path: str
    inputs: FeedSpec = setting(factory=lambda: FeedSpec(mode="zeros"))
    free_dims: dict[str, int] = setting(factory=dict)   # the session's free dimension overrides


class SummaryResult(InspectResult):
    macs: int | None
    flops: int | None
    activation_bytes: int | None
    peak_activation_bytes: int | None
    cost: dict                     # not_counted, inference_note, inputs; or error


def cost_job(params: CostParams, ctx) -> dict:
    from app.core.graph.cost import model_cost
    from app.core.model.intake import admit
    return model_cost(admit(params.path).path, params.inputs, ctx, params.free_dims)


TOTALS = ("macs", "flops", "activation_bytes", "peak_activation_bytes")


def summary_job(params: CostParams, ctx) -> dict:
    """inspect's summary with the cost totals; a model whose cost cannot be worked out
    (an input without a shape) still gets its summary, and says why."""
    from app.core.graph.cost import model_cost
    from app.core.jobs.errors import UserError
    from app.core.model.inspect import inspect_model

    summary = inspect_model(params.path, ctx)
    try:
        cost = model_cost(summary["path"], params.inputs, ctx, params.free_dims)
    except UserError as exc:
        return {**summary, **dict.fromkeys(TOTALS), "cost": {"error": exc.message}}
    cost.pop("nodes")
    return {**summary, **{k: cost.pop(k) for k in TOTALS}, "cost": cost}


@dataclass
class DiffParams(Params):
    a: str
    b: str
    values: bool = True            # read the weights and compare a hash of each initializer's values


class DiffResult(TypedDict):
    added: list[dict]              # {name, op_type, domain}: in B only
    removed: list[dict]            # in A only
    changed: list[dict]            # {name, op_type, domain, a_name, changes [{what, ...}]}


def diff_job(params: DiffParams, ctx) -> dict:
    from app.core.graph.diff import diff_models
    return diff_models(params.a, params.b, params.values, ctx)


@dataclass
class DrawParams(Params):
    path: str
    expanded: list[str] = setting(factory=list)     # ids of the control-flow nodes drawn open
    details: bool = True                            # also every node's shapes, weights and cost
    inputs: FeedSpec = setting(factory=lambda: FeedSpec(mode="zeros"))


class DrawResult(TypedDict):
    key: str                       # the model file's content hash
    details: dict | None           # {nodes {id: {...}}, inputs, inference_note}; see app.core.graph.details


def draw_job(params: DrawParams, ctx) -> dict:
    from app.core.graph.drawing import draw_model
    return draw_model(params, ctx)


@dataclass
class NetronParams(Params):
    path: str
    browse: bool = True


def netron_job(params: NetronParams, ctx) -> dict:
    from app.core.graph.netron import serve_until_cancelled
    return serve_until_cancelled(params.path, params.browse, ctx)


COST = Job("cost", cost_job, CostParams, runs=LOCAL_ONLY)
SUMMARY = Job("inspect-with-cost", summary_job, CostParams, result=SummaryResult, runs=LOCAL_ONLY)
DIFF = Job("diff", diff_job, DiffParams, result=DiffResult, runs=LOCAL_ONLY)
DRAW = Job("graph-layout", draw_job, DrawParams, result=DrawResult, runs=LOCAL_ONLY)
NETRON = Job("netron", netron_job, NetronParams, runs=LOCAL_ONLY)
