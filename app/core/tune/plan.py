"""Tune's time planned against its budget, before the race and again after it.

Most of a short tune is not racing: every re-measurement starts one process per member (an
interpreter, ONNX Runtime, a session, its feeds, a warm-up), and on a busy two-core machine
each start took about 3 s. Shares of the budget fixed in advance ignored that, and a 40 s
tune took 70–88 s. So the race has what is left once its own start and the re-measurement
after it (the finalists with the user's settings, then the winner's fresh confirmation) are
planned at their cost; after the race, the re-measurement is planned again on what is
really left, with the start cost the race itself took."""

from __future__ import annotations

from dataclasses import dataclass

#: the first guess of what starting one measured process costs, in seconds
START_GUESS_S = 3.0
#: the shortest race worth starting: one round of a few settings
RACE_LEAST_S = 2.0
#: the shortest a member of the re-measurement is timed, however little budget is left
LEAST_EACH_S = 0.1
#: the fewest rounds and runs per block an alternation takes (app.core.measure.alternate), which
#: set the least time a member is timed for whatever it is asked
ROUNDS_RUNS = 10 * 5


@dataclass(frozen=True)
class Post:
    """The re-measurement after the race: `count` finalists for `each` seconds each, then
    (when one is found faster) the winner once more against the user's settings."""
    count: int
    each: float
    start_s: float

    def seconds(self) -> float:
        measured = (self.count + 1) * (self.start_s + self.each)
        confirmation = 2 * (self.start_s + self.each)
        return measured + confirmation


def least_each(run_ms: float | None) -> float:
    """The least seconds a member is really timed for, given its time per run."""
    return max(LEAST_EACH_S, ROUNDS_RUNS * (run_ms or 0.0) / 1000.0)


def post_race(left_s: float | None, finalists: int, each_s: float, start_s: float,
              run_ms: float | None = None) -> Post:
    """The most finalists, then the longest time each, whose re-measurement fits `left_s`
    (None: no budget, as asked); when none fits, one finalist at the least time."""
    if left_s is None:
        return Post(finalists, each_s, start_s)
    floor = least_each(run_ms)
    for count in range(finalists, 0, -1):
        fixed = (count + 3) * start_s
        room = (left_s - fixed) / (count + 3)       # each member's time that fits
        if room >= each_s:
            return Post(count, each_s, start_s)
        if room >= max(floor, each_s / 2) or (count == 1 and room >= floor):
            return Post(count, room, start_s)
    return Post(1, floor, start_s)


def race_seconds(budget_s: float, start_s: float, finalists: int, each_s: float) -> float:
    """The race's time within `budget_s`: what is left once its own start and the least
    re-measurement after it are planned (at least RACE_LEAST_S, even past the budget)."""
    post = post_race(budget_s - start_s - RACE_LEAST_S, finalists, each_s, start_s)
    return max(RACE_LEAST_S, budget_s - start_s - post.seconds())


def least_budget(start_s: float, run_ms: float | None = None) -> float:
    """The least budget a tune needs: its race's start, the shortest race, one finalist."""
    return start_s + RACE_LEAST_S + Post(1, least_each(run_ms), start_s).seconds()


#: how far past its budget a tune may run to measure its best alone at the least (+20 %)
OVERRUN = 0.2


def out_of_time(left_s: float | None, budget_s: float, start_s: float, run_ms: float | None) -> str:
    """'' when the re-measurement after the race fits what is left of the budget (or 20 % past
    it); else why nothing can be offered: measuring the race's best alone against the user's
    settings, at the least, needs two starts and the fewest rounds of runs this long."""
    if left_s is None:
        return ""
    need = 2 * (start_s + least_each(run_ms))
    if left_s + OVERRUN * budget_s >= need:
        return ""
    spent_s = budget_s - left_s
    runs = f", runs of {run_ms:.3g} ms" if run_ms else ""
    return (f"Nothing is offered: the race ended with {max(0.0, left_s):.0f} s of the {budget_s:g} s budget left, and "
            f"measuring its best alone against your settings needs about {need:.0f} s here (two processes "
            f"starting in {start_s:.1f} s each{runs}); a budget of about {10 * -(-(spent_s + need) // 10):.0f} s "
            "leaves that. Your settings stay.")
