"""Measuring in alternation until the answer is precise: rounds go on past the time asked
while any member's 95 % interval reaches further than ±`width` from its speedup, up to
`extend_s` seconds more. A claim is a single figure, so it is only as good as that
figure's interval: "×1.30 [1.05–1.60]" is no promise of ×1.30, "×1.30 [1.27–1.33]" is.

Built on the comparison's own pieces (app.core.measure.alternate: its members, rounds and
summary), with only the stopping rule changed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from app.core.measure.alternate import (MIN_ROUNDS, Alternation, BlockPlan, OnEvent, plan_blocks, run_alternation,
                                      summarize)
from app.core.measure.runs import RunSettings
from app.core.jobs.entry import Job
from app.core.jobs.params import Params
from app.core.jobs.protocol import JobContext

#: a claim's interval reaches at most this far either side of it, when time allows
CLAIM_WIDTH = 0.03
#: the runs per block the narrowness check looks at
THIN = 50


def narrow(row: dict, width: float = CLAIM_WIDTH) -> bool:
    """Whether a summarized row's interval lies within ±`width` of its speedup."""
    low, high = row["speedup_ci"]
    speedup = row["speedup"]
    return low >= speedup / (1.0 + width) and high <= speedup * (1.0 + width)


def thinned(result: Alternation, runs: int = THIN) -> Alternation:
    """The blocks of `result` thinned to about `runs` runs each (every k-th, in order): the
    bootstrap's cost grows with every run kept, the medians' interval barely moves. Each
    block's load goes with it, thinned alike (its CPU times, and its switches in proportion),
    with the sets of processes the rounds ran in: without them a finalist measured beside a
    core burner was judged as if the machine had been quiet."""
    blocks, loads = [], []
    for index, member in enumerate(result.blocks):
        own = result.loads[index] if index < len(result.loads) else []
        kept_blocks, kept_loads = [], []
        for round_index, block in enumerate(member):
            step = max(1, len(block) // runs)
            kept_blocks.append(block[::step])
            if round_index < len(own):
                load = dict(own[round_index])
                if "cpu_ms" in load:
                    load["cpu_ms"] = load["cpu_ms"][::step]
                if load.get("switches"):
                    load["switches"] = round(load["switches"] * len(kept_blocks[-1]) / max(1, len(block)))
                if load.get("runs"):
                    load["runs"] = len(kept_blocks[-1])
                kept_loads.append(load)
        blocks.append(kept_blocks)
        loads.append(kept_loads)
    return Alternation(result.plan, result.reports, blocks, result.walls, loads, list(result.pairs))


@dataclass
class NarrowPlan(BlockPlan):
    width: float = CLAIM_WIDTH
    result: Alternation | None = field(default=None, repr=False, compare=False)
    checked: int = 0              # the rounds at the last look at the intervals

    def done(self, rounds: int, elapsed_s: float, answered: Callable[[], bool] | None = None) -> bool:
        if rounds < self.min_rounds or elapsed_s < self.budget_s:
            return False
        if elapsed_s >= self.budget_s + self.extend_s or self.result is None:
            return True
        # the bootstrap grows with the rounds: look again only once a quarter more have run,
        # on blocks thinned to THIN runs each (the interval of medians barely moves)
        if rounds < self.checked * 1.25:
            return False
        self.checked = rounds
        return all(narrow(row, self.width) for row in summarize(thinned(self.result))[1:])

    def to_dict(self) -> dict:
        return super().to_dict() | {"width": self.width,
                                    "stopping_rule": f"rounds go on while an interval reaches past ±{self.width:.0%} "
                                                     "of its speedup, for at most extend_s more seconds"}


def alternate_until_narrow(job: Job, members: list[Params], settings: RunSettings, ctx: JobContext,
                           extend_s: float, width: float = CLAIM_WIDTH, on_event: OnEvent | None = None,
                           on_partial: Callable[[Alternation], None] | None = None,
                           min_rounds: int = MIN_ROUNDS) -> Alternation:
    """As app.core.measure.alternate.alternate (member 0 the reference; a cancel hands the
    whole rounds so far to `on_partial`), with rounds that go on, for up to `extend_s`
    seconds past `settings.duration_s` per member, until every interval is narrow."""
    def narrowing(run_ms: float, result: Alternation) -> NarrowPlan:
        base = plan_blocks(settings, run_ms, len(members), min_rounds)
        return NarrowPlan(base.block_runs, budget_s=base.budget_s, min_rounds=base.min_rounds,
                          extend_s=max(0.0, extend_s), width=width, result=result)

    return run_alternation(job, members, ctx, on_event, on_partial, narrowing)
