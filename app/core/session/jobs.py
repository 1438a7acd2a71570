"""The session's jobs: which providers really start, what this ONNX Runtime offers a
session form, one run of a model to prove the runtime works, inputs the model runs on,
and node placement."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.jobs.entry import Job
from app.core.jobs.params import Params, setting
from app.core.session.config import SessionConfig

PLACEMENT_METHODS = ("auto", "assignment", "profiling")


@dataclass
class NoParams(Params):
    """For jobs that take nothing."""


@dataclass
class ModelSession(Params):
    path: str
    session: SessionConfig = setting(factory=SessionConfig)


@dataclass
class PlacementParams(ModelSession):
    method: str = setting("auto", choices=PLACEMENT_METHODS, flag="--method")


def probe_job(params: NoParams, ctx) -> dict:
    from app.core.session.providers import probe_providers
    return probe_providers(ctx)


def capabilities_job(params: NoParams, ctx) -> dict:
    """What this ORT offers that a session form may show: its version and config keys."""
    import onnxruntime as ort

    from app.core.session.config import supported_config_keys
    return {"ort_version": ort.__version__, "config_keys": sorted(supported_config_keys())}


def smoke_run_job(params: ModelSession, ctx) -> dict:
    """Load a model with a preset and run it once: proves the runtime works end to end."""
    from app.core.session.create import create_session
    from app.core.session.inputs import model_feeds

    session = create_session(params.path, params.session)
    feeds, info = model_feeds(params.path, session, params.session.inputs)
    outputs = session.run(None, feeds)
    return {"providers": session.get_providers(), "dims": info["dims"], "inputs": info["inputs"],
            "outputs": [{"name": o.name, "shape": list(v.shape)} for o, v in zip(session.get_outputs(), outputs)]}


def probe_inputs_job(params: ModelSession, ctx) -> dict:
    """Plan the model's inputs with the session's settings and run it once on them: whether the
    plan works, what it chose for every input, and the error of the try that failed."""
    from app.core.jobs.errors import UserError
    from app.core.model.intake import first_line
    from app.core.session.create import create_session
    from app.core.session.inputs import model_feeds

    session = create_session(params.path, params.session)
    ctx.check_cancel()
    info = {"inputs": [], "dims": {}, "guessed": []}
    try:
        feeds, info = model_feeds(params.path, session, params.session.inputs)
        ctx.progress(None, "one run on the planned inputs")
        session.run(None, feeds)
    except UserError as exc:
        error = exc.message
    except Exception as exc:  # ORT refuses the inputs with its own exception types
        ctx.check_cancel()
        error = first_line(str(exc))
    else:
        error = None
    tried = [{"dims": dict(info["dims"]), "error": error}]
    return {"inputs": info["inputs"], "dims": info["dims"], "guessed": info["guessed"], "tried": tried,
            "worked": error is None}


def placement_job(params: PlacementParams, ctx) -> dict:
    from app.core.session.placement import placement
    return placement(params.path, params.session, ctx, params.method)


PROBE_PROVIDERS = Job("probe-providers", probe_job, NoParams)
CAPABILITIES = Job("session-capabilities", capabilities_job, NoParams)
SMOKE_RUN = Job("smoke-run", smoke_run_job, ModelSession)
PLACEMENT = Job("placement", placement_job, PlacementParams)
PROBE_INPUTS = Job("probe-inputs", probe_inputs_job, ModelSession)
