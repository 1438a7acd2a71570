"""The session's jobs: which providers really start, what this ONNX Runtime offers a
session form, one run of a model to prove the runtime works, the inputs a model accepts,
and node placement."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.jobs.entry import Job, ON_TARGET
from app.core.jobs.params import Params, setting
from app.core.jobs.results import DevicesResult
from app.core.session.config import SessionConfig

PLACEMENT_METHODS = ("auto", "assignment", "profiling")


@dataclass
class NoParams(Params):
    """For jobs that take nothing."""


@dataclass
class ProbeParams(Params):
    """Which providers start here; `ep_libraries` are plugin libraries to load besides the
    installed onnxruntime-ep-* packages (NAME=PATH, as a session's)."""
    ep_libraries: dict[str, str] = setting(factory=dict, flag="--ep-library")

    @classmethod
    def of_libraries(cls, libraries) -> "ProbeParams":
        """From a session setup's libraries as stored (anything but an object of names: none)."""
        if not isinstance(libraries, dict):
            return cls()
        return cls(ep_libraries={str(name): str(path) for name, path in libraries.items()})


@dataclass
class ModelSession(Params):
    path: str
    session: SessionConfig = setting(factory=SessionConfig)


@dataclass
class PlacementParams(ModelSession):
    method: str = setting("auto", choices=PLACEMENT_METHODS, flag="--method",
                          help="ORT's graph-assignment record (auto where available) or a one-run profile")


def probe_job(params: ProbeParams, ctx) -> dict:
    from app.core.session.providers import probe_providers
    return probe_providers(ctx, params.ep_libraries)


def capabilities_job(params: NoParams, ctx) -> dict:
    """What this ORT offers that a session form may show: its version and config keys."""
    import onnxruntime as ort

    from app.core.session.config import supported_config_keys
    return {"ort_version": ort.__version__, "config_keys": sorted(supported_config_keys())}


def smoke_run_job(params: ModelSession, ctx) -> dict:
    """Load a model with a preset and run it once: proves the runtime works end to end."""
    from app.core.session.create import create_session
    from app.core.session.probe import prepare_feeds

    session = create_session(params.path, params.session)
    run = prepare_feeds(params.path, session, params.session.inputs, ctx)
    return {"providers": session.get_providers(), "dims": run.info["dims"], "inputs": run.info["inputs"],
            "outputs": [{"name": o.name, "shape": list(v.shape)} for o, v in zip(session.get_outputs(), run.outputs)]}


def probe_inputs_job(params: ModelSession, ctx) -> dict:
    """Find inputs the model runs on (the Session tab's "Find working inputs"): the plan,
    then the probe over the dims it guessed. `dims` are the values to keep in the
    session's inputs; a run that nothing made work says so in `message`, it is no error."""
    from app.core.session.create import create_session
    from app.core.session.probe import first_run

    session = create_session(params.path, params.session)
    run = first_run(params.path, session, params.session.inputs, ctx)
    return {"inputs": run.info.get("inputs", []), "dims": run.info.get("dims", {}),
            "guessed": run.info.get("guessed", []), "tried": [a.to_dict() for a in run.tried],
            "worked": run.worked, "message": run.message}


def placement_job(params: PlacementParams, ctx) -> dict:
    from app.core.session.placement import placement
    return placement(params.path, params.session, ctx, params.method)


PROBE_PROVIDERS = Job("probe-providers", probe_job, ProbeParams, result=DevicesResult, runs=ON_TARGET, measures=True)
CAPABILITIES = Job("session-capabilities", capabilities_job, NoParams, runs=ON_TARGET, measures=True)
SMOKE_RUN = Job("smoke-run", smoke_run_job, ModelSession, runs=ON_TARGET, measures=True)
PROBE_INPUTS = Job("probe-inputs", probe_inputs_job, ModelSession, runs=ON_TARGET, measures=True)
PLACEMENT = Job("placement", placement_job, PlacementParams, runs=ON_TARGET, measures=True)
