"""The alternation engine: its order, its plan, one member at a time, its speedups, cancel."""

import os
import threading
import time

import psutil
import pytest

from app.core.measure.alternate import MIN_BLOCK_RUNS, MIN_ROUNDS, BlockPlan, alternate, plan_blocks, round_order, summarize
from app.core.measure.runs import RunSettings
from app.core.jobs.errors import JobCancelled
from app.core.jobs.protocol import JobContext
from tests.sample_jobs import PACED_MEMBER, SampleParams


def test_two_members_swap_every_round():
    assert [round_order(2, r) for r in range(4)] == [[0, 1], [1, 0], [0, 1], [1, 0]]


def test_every_member_takes_every_place():
    orders = [round_order(3, r) for r in range(3)]
    assert all(sorted(order) == [0, 1, 2] for order in orders)
    for place in range(3):
        assert sorted(order[place] for order in orders) == [0, 1, 2]


@pytest.mark.parametrize("settings, run_ms, plan", [
    (RunSettings(iterations=200), 0.01, BlockPlan(20, rounds=10)),        # a fast model: the count decides
    (RunSettings(iterations=30), 0.01, BlockPlan(MIN_BLOCK_RUNS, rounds=10)),
    (RunSettings(iterations=2000), 5.0, BlockPlan(20, rounds=100)),       # 20 runs fill 100 ms
    (RunSettings(iterations=100), 50.0, BlockPlan(MIN_BLOCK_RUNS, rounds=20)),
    (RunSettings(duration_s=3.0), 1.0, BlockPlan(100, budget_s=6.0)),     # per member: two share 6 s
])
def test_plan_maps_the_run_settings_to_rounds_of_blocks(settings, run_ms, plan):
    assert plan_blocks(settings, run_ms, 2) == plan


def test_a_budget_still_runs_the_fewest_rounds():
    plan = BlockPlan(10, budget_s=1.0)
    assert not plan.done(MIN_ROUNDS - 1, 5.0) and plan.done(MIN_ROUNDS, 1.0) and not plan.done(MIN_ROUNDS, 0.5)


def test_a_short_budget_gets_shorter_blocks_so_the_rounds_fit():
    # a conversion's speed check: 1 s per member, 30 rounds asked: blocks of ~33 ms, not 100 ms
    plan = plan_blocks(RunSettings(duration_s=1.0), 1.0, 2, min_rounds=30, extend_s=4.0)
    assert plan == BlockPlan(33, budget_s=2.0, min_rounds=30, extend_s=4.0)
    assert plan_blocks(RunSettings(duration_s=1.0), 50.0, 2, min_rounds=30).block_runs == MIN_BLOCK_RUNS


def test_an_unanswered_interval_gets_more_rounds_up_to_the_extension():
    plan = BlockPlan(10, budget_s=1.0, min_rounds=20, extend_s=2.0)
    assert not plan.done(19, 5.0, lambda: True)                        # too few rounds, whatever the time
    assert plan.done(20, 1.5, lambda: True) and not plan.done(20, 1.5, lambda: False)
    assert plan.done(20, 3.0, lambda: False)                           # the extension is spent: it says so


def test_members_take_turns_one_at_a_time():
    members = [SampleParams(value=2.0), SampleParams(value=1.0), SampleParams(value=4.0)]
    result = alternate(PACED_MEMBER, members, RunSettings(iterations=120), JobContext())
    assert result.rounds == 10 and result.plan.block_runs == 12     # 12 runs of the slowest fill 48 ms
    spans = [report["spans"] for report in result.reports]
    for round_index in range(result.rounds):
        starts = {index: spans[index][round_index][0] for index in range(3)}
        assert sorted(starts, key=starts.get) == round_order(3, round_index)
    every = sorted(span for member in spans for span in member)
    assert all(end <= next_start for (_, end), (next_start, _) in zip(every, every[1:]))
    rows = summarize(result)
    assert rows[0] == {"speedup": 1.0, "speedup_ci": [1.0, 1.0], "verdict": "reference", "conclusive": True,
                       "rounds": 10}
    assert rows[1] == {"speedup": 2.0, "speedup_ci": [2.0, 2.0], "verdict": "faster", "conclusive": True,
                       "rounds": 10, "rounds_judged": 10, "too_busy": False, "measure": "wall", "claim": 2.0,
                       "widened_ci": [2.0, 2.0], "contention": 0.0,
                       "why": "faster: the 95 % interval [×2–×2] lies above ×1.02"}
    assert rows[2]["speedup"] == 0.5 and rows[2]["verdict"] == "slower"


def test_cancel_ends_every_member(tmp_path):
    ctx = JobContext()
    members = [SampleParams(value=1.0, path=str(tmp_path)), SampleParams(value=1.0, path=str(tmp_path))]

    def cancel_when_both_started():
        while len(list(tmp_path.glob("*.pid"))) < 2:
            time.sleep(0.01)
        ctx.cancel()

    threading.Thread(target=cancel_when_both_started, daemon=True).start()
    started = time.monotonic()
    with pytest.raises(JobCancelled):
        alternate(PACED_MEMBER, members, RunSettings(duration_s=60.0), ctx)
    assert time.monotonic() - started < 30
    pids = [int(p.stem) for p in tmp_path.glob("*.pid")]
    assert len(pids) == 2 and os.getpid() not in pids
    assert not any(psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE for pid in pids)


def test_progress_fills_once_over_every_planned_pair_and_never_reads_full_while_work_remains():
    """Compare sat at "100 %, ETA 0 s" from 20 s to 67 s: each pair of processes filled the bar
    again, and the rounds that narrow an interval past the budget read 100 %."""
    from app.core.measure.pairs import Pairs

    said = []
    ctx = JobContext(lambda kind, payload: said.append(payload) if kind == "progress" else None)
    members = [SampleParams(value=1.0), SampleParams(value=1.0)]
    unanswered = Pairs(2, max_s=60.0, answered=lambda result: len(set(result.pairs)) >= 3)   # a third pair
    alternate(PACED_MEMBER, members, RunSettings(iterations=40), ctx, pairs=unanswered)
    fractions = [p["fraction"] for p in said]
    known = [f for f in fractions if f is not None]
    assert known == sorted(known) and all(f < 1.0 for f in known), "full while rounds remained"
    assert any(p["message"].startswith("pair 2") and p["fraction"] >= 0.5 for p in said)   # one bar over both
    third = [p for p in said if p["message"].startswith("pair 3")]
    assert third and all(p["fraction"] is None for p in third)       # a pair past the plan: no known end
