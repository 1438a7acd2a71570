"""Where the window shows each job's results, keyed by the job's entry (as napari keys a
layer's controls by its type): the tab that makes them, whether History re-opens a stored
one there, and what that tab takes to run a stored one again. Every entry whose results the
history keeps has a view here (a test holds this table to app.core.launch.registry.RECORDED)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from app.core.bench.jobs import BENCH, COMPARE, SWEEP
from app.core.convert.jobs import CONVERT
from app.core.drift.jobs import DRIFT
from app.core.gate.jobs import GATE
from app.core.jobs.entry import Job
from app.core.optimize.jobs import OPTIMIZE
from app.core.profile.jobs import PROFILE
from app.core.tune.jobs import TUNE
from app.gui.shell.handover import DriftPair


@dataclass(frozen=True)
class ResultView:
    tab: str                    # the title of the tab that makes such results: it shows one (show_result)
    reopens: bool = False       # History re-opens a stored one in that tab (else in History, chart and figures)
    # run again from History: what the tab's run_again takes of the stored entry; None: from its own tab only
    again: Callable[[dict], object] | None = None


def _whole(entry: dict) -> dict:
    return entry


def _pair(entry: dict) -> DriftPair:
    """A drift search again: the pair it searched, found afresh."""
    return DriftPair(entry["report"]["source"], entry["report"]["variant"])


RESULT_VIEWS: dict[Job, ResultView] = {
    BENCH: ResultView("Benchmark", again=_whole),
    SWEEP: ResultView("Benchmark", reopens=True, again=_whole),
    COMPARE: ResultView("Compare", reopens=True, again=_whole),
    GATE: ResultView("Compare"),              # a gate's result holds its comparison of the pair
    PROFILE: ResultView("Profile"),
    TUNE: ResultView("Tune"),
    CONVERT: ResultView("Convert"),
    DRIFT: ResultView("Drift", again=_pair),  # run_again: a DriftPair finds that pair's drift
    OPTIMIZE: ResultView("Optimize", reopens=True),   # a stored search: its leaderboard and answer
}
