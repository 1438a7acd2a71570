"""Every job a user can run, and every part a job starts, in one list: the window, the
command line, a target's worker and the tests start each through its entry (see
app.core.jobs.entry), and the tests check every entry here. Every list of kinds (what the
history keeps, the kinds `ortune history --kind` takes) is derived from it."""

from __future__ import annotations

from app.core.bench.jobs import BENCH, CELL, COMPARE, MEMBER, SWEEP
from app.core.convert.jobs import CONVERT, DETECT_TRANSFORMER, MAKE, NEXT_TOKENS
from app.core.diagnose.jobs import DIAGNOSE, GATHER
from app.core.drift.jobs import DRIFT, REPAIR
from app.core.gate.jobs import GATE
from app.core.generate.jobs import GENERATE
from app.core.graph.jobs import COST, DIFF, DRAW, NETRON, SUMMARY
from app.core.iobinding.jobs import IOBINDING
from app.core.jobs.entry import Job
from app.core.model.jobs import INSPECT
from app.core.optimize.jobs import OPTIMIZE, OPTIMIZE_PART
from app.core.profile.jobs import COPY_TRACE, DIFF_TRACES, PROFILE, READ_TRACE
from app.core.session.jobs import CAPABILITIES, PLACEMENT, PROBE_INPUTS, PROBE_PROVIDERS, SMOKE_RUN
from app.core.targets.jobs import SCAN_HOST_KEYS
from app.core.tune.jobs import RACE, TUNE

JOBS: tuple[Job, ...] = (
    INSPECT, PROBE_PROVIDERS, CAPABILITIES, SMOKE_RUN, PROBE_INPUTS, PLACEMENT, MAKE, CONVERT, DETECT_TRANSFORMER,
    NEXT_TOKENS,
    BENCH, MEMBER, COMPARE, CELL, SWEEP, PROFILE, READ_TRACE, DIFF_TRACES, COPY_TRACE, IOBINDING, TUNE, RACE,
    DIAGNOSE, GATHER, COST, SUMMARY, DIFF, DRIFT, REPAIR, DRAW, NETRON, OPTIMIZE, OPTIMIZE_PART, GATE,
    GENERATE, SCAN_HOST_KEYS,
)

#: the entries whose results the history keeps, each under a kind of its own
RECORDED: tuple[Job, ...] = tuple(job for job in JOBS if job.records)
#: the kinds of result the history keeps: every list of them (the command's --kind, the
#: window's filter) is this one
RECORDED_KINDS: tuple[str, ...] = tuple(job.records.kind for job in RECORDED)


def entry_named(name: str) -> Job | None:
    """The entry a request names (a target's worker is sent the name), or None."""
    return next((job for job in JOBS if job.name == name), None)


def recorded_entry(kind: str) -> Job | None:
    """The entry whose results the history keeps under `kind` (a stored row names it), or None."""
    return next((job for job in RECORDED if job.records.kind == kind), None)
