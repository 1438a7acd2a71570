"""The one verdict rule: is one model faster than another, slower, no different, or can the
measurement not tell? Every command, tab, report, the gate and optimize take their speed
verdicts from `judge_speed` and their words from `verdict_words`, so one interval always
reads the same wherever it is shown.

The interval decides the direction. A busy machine does not void the evidence: contention
exaggerates a gap between two models, it neither makes one from nothing nor turns it round,
so the interval is widened toward ×1 by as much as contention can have added to the gap in
that run, and the verdict is read off the widened interval:
- faster: the whole widened interval lies above 1 + PRACTICAL_BAND;
- slower: the whole widened interval lies below 1 / (1 + PRACTICAL_BAND);
- no difference: it lies within ±DECISIVE_WIDTH around 1 (a gap, if any, too small to act on);
- could not tell: anything else, that is, a widened interval that reaches from the
  no-difference zone to beyond it, or one that is not finite.

How far contention moves a ratio: when other processes take a model's core, each run they
interrupt takes longer in wall time, and the longer model is hit in more of its runs, so the
gap between two models widens: measured at 35 to 70 % on a machine with twice as many
runnable processes as cores (WALL_INFLATION). Judged on each run's own CPU time (a single-
threaded run), a wait for the core does not count, and only what the neighbours share with
it (caches, memory bandwidth, a hyper-thread sibling) moves it (CPU_INFLATION). The widening
is that inflation times the share of rounds in which a member was switched out in most of its
runs (app.core.measure.noise.disturbed): nothing on a quiet machine, all of it when every
round was disturbed. An end of the interval on one side of ×1 moves toward ×1, its gap
divided by the inflation (`deflated`); an interval that already holds ×1 keeps
its ends, since a gap that is not there cannot be exaggerated. So a tenfold int8 win
measured beside a core burner stays a win, and two copies of one file stay no different.

A claim is the figure a winner is reported at: the speedup itself on a quiet machine; when
the machine was busy, the speedup less the inflation (never below the interval's own lower
end), and the verdict's sentence says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: differences smaller than this (±2 %) are "no difference" even when they are measurable: two
#: processes of one file differ by a percent or two, steadily (benchmarks/compare_truth.py)
PRACTICAL_BAND = 0.02
#: "no difference" is an answer only when the interval lies within ±10 % around 1; a wider one
#: that still reaches the band could not tell
DECISIVE_WIDTH = 0.10
#: how much contention can widen the gap between two models timed in wall time, at most
WALL_INFLATION = 0.7
#: the same for runs judged on their own CPU time, which a wait for the core does not lengthen
CPU_INFLATION = 0.1

FASTER, SLOWER, NO_DIFFERENCE, COULD_NOT_TELL, REFERENCE = (
    "faster", "slower", "no-difference", "could-not-tell", "reference")
VERDICTS = (FASTER, SLOWER, NO_DIFFERENCE, COULD_NOT_TELL)
#: not judged: timed one after the other, without an interval (results stored before comparisons
#: and sweeps alternated, as app.core.store.migrations reads them)
SEQUENTIAL = "one-after-the-other"
_WORDS = {FASTER: "faster", SLOWER: "slower", NO_DIFFERENCE: "no difference", COULD_NOT_TELL: "could not tell",
          REFERENCE: "reference", SEQUENTIAL: "one after the other"}
RULE = (f"faster or slower when the whole 95 % interval, widened toward ×1 by the contention measured in the run, lies "
        f"beyond ±{PRACTICAL_BAND:.0%} around ×1; no difference when it lies within ±{DECISIVE_WIDTH:.0%}; "
        f"otherwise could not tell")


@dataclass(frozen=True)
class SpeedVerdict:
    """A speed verdict with what it rests on. `speedup` is the reference's time over the
    model's (above 1: faster), `interval` its 95 % interval, `widened` that interval widened
    for `contention` (0 quiet … 1 every round disturbed), `claim` the figure to report a
    winner (or loser) at, `why` one sentence a person reads."""
    verdict: str
    speedup: float
    interval: tuple[float, float]
    widened: tuple[float, float]
    contention: float
    claim: float
    why: str

    @property
    def answered(self) -> bool:
        return self.verdict != COULD_NOT_TELL

    def to_dict(self) -> dict:
        return {"verdict": self.verdict, "claim": self.claim, "widened_ci": list(self.widened),
                "contention": self.contention, "why": self.why}


def verdict_words(verdict: str | None) -> str:
    """How a verdict reads: "no difference", "could not tell" …; "–" where there is none."""
    return _WORDS.get(verdict or "", "–")


def inflation(contention: float, measure: str = "wall") -> float:
    """How many times contention (0 … 1) on `measure` can have stretched a gap (its logarithm)."""
    share = min(1.0, max(0.0, contention if math.isfinite(contention) else 1.0))
    return 1.0 + (CPU_INFLATION if measure == "cpu" else WALL_INFLATION) * share


def deflated(ratio: float, grow: float) -> float:
    """`ratio` with its gap taken back by the inflation `grow`: what it may have been before
    contention stretched it; never across ×1. The gap of a speedup is how much more than ×1
    it is, of a slowdown how much longer the slower model takes (×0.5: 100 %)."""
    if not (ratio > 0 and math.isfinite(ratio)):
        return ratio
    if ratio >= 1.0:
        return 1.0 + (ratio - 1.0) / grow
    return 1.0 / (1.0 + (1.0 / ratio - 1.0) / grow)


def widened(low: float, high: float, grow: float) -> tuple[float, float]:
    """[low, high] widened toward ×1 by the inflation `grow` (each end only ever toward ×1)."""
    return min(low, deflated(low, grow)), max(high, deflated(high, grow))


def _x(value: float) -> str:
    return f"×{value:.3g}"


def judge_speed(speedup: float, low: float, high: float, contention: float = 0.0, measure: str = "wall",
                band: float = PRACTICAL_BAND, width: float = DECISIVE_WIDTH) -> SpeedVerdict:
    """The verdict on a speedup with its 95 % interval [low, high], measured with `contention`
    (the share of disturbed rounds, 0 … 1) on `measure` ("wall" or "cpu" time)."""
    grow = inflation(contention, measure)
    finite = all(math.isfinite(v) for v in (low, high)) and low > 0
    wide = widened(low, high, grow) if finite else (low, high)
    busy = grow > 1.0
    # said only where it shows: a move too small for three digits read "widened to" the same interval
    moved = busy and finite and (_x(wide[0]), _x(wide[1])) != (_x(low), _x(high))
    stretched = f", widened to [{_x(wide[0])}–{_x(wide[1])}] for a busy machine" if moved else ""
    interval = f"[{_x(low)}–{_x(high)}]" if finite else "an interval that could not be computed"
    claim = speedup
    if not finite:
        verdict, why = COULD_NOT_TELL, f"could not tell: {interval} (too few rounds)"
    elif wide[0] > 1.0 + band:
        verdict = FASTER
        claim = max(low, deflated(speedup, grow)) if busy else speedup
        why = f"faster: the 95 % interval {interval}{stretched} lies above ×{1 + band:.2f}"
    elif wide[1] < 1.0 / (1.0 + band):
        verdict = SLOWER
        claim = min(high, deflated(speedup, grow)) if busy else speedup
        why = f"slower: the 95 % interval {interval}{stretched} lies below ×{1 / (1 + band):.2f}"
    elif wide[0] >= 1.0 / (1.0 + width) and wide[1] <= 1.0 + width:
        verdict = NO_DIFFERENCE
        why = (f"no difference: the 95 % interval {interval}{stretched} lies within ±{width:.0%} of ×1 and does not "
               f"clear ±{band:.0%}")
    else:
        verdict = COULD_NOT_TELL
        why = (f"could not tell: the 95 % interval {interval}{stretched} reaches from within ±{band:.0%} of ×1 to "
               f"beyond ±{width:.0%}" + ("; measure on a quieter machine or for longer" if busy
                                        else "; measure for longer"))
    # a claim within 1 % of the measured figure is that figure: "claimed at ×0.727, not the ×0.726" said nothing
    if claim != speedup and abs(math.log(claim / speedup)) < 0.01:
        claim = speedup
    if busy and verdict in (FASTER, SLOWER) and claim != speedup:
        why += f"; claimed at {_x(claim)}, not the {_x(speedup)} measured, as contention may have widened the gap"
    return SpeedVerdict(verdict, speedup, (low, high), wide, min(1.0, max(0.0, contention)), claim, why)

