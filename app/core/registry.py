"""Every job a user can run, in one list: the window, the command line and the tests start
each through its entry (see app.core.jobs.entry), and the tests check every entry here."""

from __future__ import annotations

from app.core.bench.jobs import BENCH, CELL, COMPARE, MEMBER, SWEEP
from app.core.convert.jobs import CONVERT, DETECT_TRANSFORMER, MAKE
from app.core.diagnose.jobs import DIAGNOSE
from app.core.drift.jobs import DRIFT, REPAIR
from app.core.gate.jobs import GATE
from app.core.generate.jobs import GENERATE
from app.core.graph.jobs import COST, DIFF, DRAW, NETRON, SUMMARY
from app.core.iobinding.jobs import IOBINDING
from app.core.jobs.entry import Job
from app.core.model.jobs import INSPECT
from app.core.optimize.jobs import OPTIMIZE
from app.core.optimize.spread import OPTIMIZE_PART
from app.core.profile.jobs import COPY_TRACE, DIFF_TRACES, PROFILE, READ_TRACE
from app.core.session.jobs import CAPABILITIES, PLACEMENT, PROBE_INPUTS, PROBE_PROVIDERS, SMOKE_RUN
from app.core.targets.jobs import SCAN_HOST_KEYS
from app.core.tune.jobs import RACE, TUNE

JOBS: tuple[Job, ...] = (
    INSPECT, PROBE_PROVIDERS, CAPABILITIES, SMOKE_RUN, PROBE_INPUTS, PLACEMENT, MAKE, CONVERT, DETECT_TRANSFORMER,
    BENCH, MEMBER, COMPARE, CELL, SWEEP, PROFILE, READ_TRACE, DIFF_TRACES, COPY_TRACE, IOBINDING, TUNE, RACE,
    DIAGNOSE, COST, SUMMARY, DIFF, DRIFT, REPAIR, DRAW, NETRON, OPTIMIZE, OPTIMIZE_PART, GATE,
    GENERATE, SCAN_HOST_KEYS,
)

#: the kinds of result the history keeps, one per entry that records its result: every list
#: of them (the command's --kind, the window's filter, the renderers' tests) is this one
RECORDED_KINDS: tuple[str, ...] = tuple(dict.fromkeys(job.records.kind for job in JOBS if job.records))
