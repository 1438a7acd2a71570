"""A job's entry: what it runs, the parameters it takes, where it runs and what it returns.

The window, the command line and the tests start a job through its entry, never by a
name, so a reader can follow a click to the function it runs and a rename breaks at
import, not in front of a user. The entry is also the one place for the facts about a job
that other code acts on (where it may run, how it spreads over a cluster, whether history
keeps its result, which of its parameters are files it writes, whether it measures, what
is checked before it starts):
nothing else branches on a name. Each room of app.core declares its entries in its `jobs`
module; app.core.launch.registry lists them all."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Generic, TypeVar

from app.core.jobs.params import Params

P = TypeVar("P", bound=Params)

HERE, TARGET, CLUSTER = "here", "target", "cluster"      # where a job may run
LOCAL_ONLY = frozenset({HERE})
ON_TARGET = frozenset({HERE, TARGET})
ANYWHERE = frozenset({HERE, TARGET, CLUSTER})


@dataclass(frozen=True)
class Records:
    """History keeps the job's result under `kind` (listed in app.core.launch.registry.RECORDED_KINDS), filed by
    `facts(params, result)`: a dict with the `model` it ran on (a path) and, where the
    result does not hold them as a benchmark's does, its `variant`, `providers`, `p50_ms`,
    `p99_ms`, `throughput_per_s`, `session` and `run`; or None when this run asked not to be
    kept. The one start function (app.core.launch.start) stores it, once a run."""
    kind: str
    facts: Callable[[Any, dict], dict | None]


@dataclass(frozen=True)
class Job(Generic[P]):
    name: str                                  # stable: shown in logs and the Jobs dock
    func: Callable[[P, Any], Any]              # func(params, ctx) -> result
    params: type[P]
    child: bool = True                         # runs in a process of its own (app.core.runner)
    result: type = dict                        # what func returns (JSON-able)
    runs: frozenset[str] = field(kw_only=True)   # every entry says: HERE, TARGET (`ortune worker` over ssh), CLUSTER (Ray)
    records: Records | None = None             # how history keeps its result, if it does
    outputs: tuple[str, ...] = ()              # parameter fields naming files it writes (copied back, protected)
    # where its first output goes here when none is named, default_output(params as a dict); run on a
    # target, it is written in the job's scratch folder there and brought back to that place
    default_output: Callable[[dict], str] | None = None
    # folders(params as a dict) -> {field: [(name in the folder, local file)]}: the folders it reads (a data
    # folder), each with the files of it that go along when it runs on a target or a cluster's workers,
    # where the field names the copy
    folders: Callable[[dict], dict[str, list]] | None = None
    text: tuple[str, ...] = ()                 # parameter fields, at any depth, naming things for people (labels):
                                               # never a path, so never uploaded, swapped or confined as one
    measures: bool = False                     # it runs a model and times or checks it
    spread: Callable[..., dict] | None = None  # spread(job, params, address, tasks): run over a Ray cluster
    # arrived(result): a run on a target has come back, its outputs copied here and its paths made
    # this machine's: rewrite what it wrote that names them (a report, a summary)
    arrived: Callable[[Any], None] | None = None
    # before(params, place): the checks made on this machine before a run goes to `place` (HERE, TARGET,
    # CLUSTER), by the one start function, once its parameters are checked: a UserError refuses the run
    # before a target or a cluster is contacted; it may complete the parameters (a folder made absolute)
    before: Callable[[P, str], None] | None = None

    @property
    def on_target(self) -> bool:
        """May a remote target run it (and so a worker accept it)?"""
        return TARGET in self.runs

    def make_params(self, params: P | dict | None = None) -> P:
        """The job's parameters, checked; a dict (JSON, a preset) is read into them."""
        if isinstance(params, self.params):
            return params.checked()
        return self.params.from_dict(params)

    def __call__(self, params: P | dict | None, ctx) -> Any:
        return self.func(self.make_params(params), ctx)
