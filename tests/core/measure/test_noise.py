"""What a busy machine does to a comparison, on synthetic rounds: the interval stays wide when
a noisy spell spans many rounds, runs a context switch hit are left out, rounds too many
switches ruined are set aside, and a machine too busy for any answer says so."""

from __future__ import annotations

import numpy as np

from app.core.measure.alternate import Alternation, BlockPlan, summarize
from app.core.measure.noise import MAX_HIT, clean_rounds, disturbed, run_length, trimmed
from app.core.measure.stats import median_ratio, round_log_ratios
from app.core.gate.judge import REGRESSION, slowdown, speed_decision


def spell_rounds(seed: int, rounds: int = 80, start: int = 30, length: int = 50, factor: float = 1.12):
    """Two byte-identical models, except that for `length` rounds in a row the candidate's
    process sat on a busy core and ran `factor` slower (a neighbour's build)."""
    rng = np.random.default_rng(seed)
    reference, candidate = [], []
    for index in range(rounds):
        slow = factor if start <= index < start + length else 1.0
        reference.append(rng.lognormal(0.0, 0.05, 50))
        candidate.append(slow * rng.lognormal(0.0, 0.05, 50))
    return reference, candidate


def plain_bootstrap(reference, candidate) -> tuple[float, float]:
    """The interval as rounds resampled one by one would give it (the old rule)."""
    rounds = len(reference)
    picks = np.random.default_rng(0).integers(0, rounds, size=(500, rounds))
    medians = [np.median(np.asarray(blocks)[picks].reshape(len(picks), -1), axis=1) for blocks in (reference, candidate)]
    low, high = np.percentile(medians[0] / medians[1], [2.5, 97.5])
    return float(low), float(high)


def test_a_spell_over_many_rounds_keeps_the_interval_wide_enough_for_identical_models():
    plain = regressions = 0
    for seed in range(20):
        reference, candidate = spell_rounds(seed)
        speedup, low, high = median_ratio(reference, candidate)
        regressions += speed_decision(*slowdown(speedup, [low, high])[1:], 0.05) == REGRESSION
        plain += speed_decision(*slowdown(speedup, list(plain_bootstrap(reference, candidate)))[1:], 0.05) == REGRESSION
    assert plain >= 15           # the old interval called most of these copies a regression
    assert regressions == 0


def test_neighbouring_rounds_that_look_alike_are_kept_together():
    reference, candidate = spell_rounds(1)
    assert run_length(round_log_ratios(reference, candidate)) > 5
    rng = np.random.default_rng(2)
    independent = rng.normal(0.0, 0.05, 80)
    assert run_length(independent) == int(np.ceil(80 ** (1 / 3)))


def test_a_real_difference_is_still_found_through_a_spell():
    reference, candidate = spell_rounds(3, factor=1.05)
    candidate = [block * 1.25 for block in candidate]
    speedup, low, high = median_ratio(reference, candidate)
    assert speed_decision(*slowdown(speedup, [low, high])[1:], 0.05) == REGRESSION


def test_a_block_is_judged_without_the_runs_its_switches_hit():
    block = np.array([1.0, 1.01, 0.99, 6.0, 7.5, 1.02])
    assert sorted(trimmed(block, {"switches": 2})) == [0.99, 1.0, 1.01, 1.02]
    assert trimmed(block, {"switches": 0}) is block and trimmed(block, {}) is block


def test_rounds_where_most_runs_were_hit_are_set_aside_or_the_machine_is_too_busy():
    sizes = [[10] * 20, [10] * 20]
    quiet = [[{"switches": 1}] * 20, [{"switches": 2}] * 20]
    some = [[{"switches": 1}] * 20, [{"switches": 9}] * 4 + [{"switches": 0}] * 16]
    busy = [[{"switches": 1}] * 20, [{"switches": 9}] * 15 + [{"switches": 0}] * 5]
    assert not disturbed(quiet, sizes).any()
    kept, too_busy = clean_rounds(some, sizes, min_rounds=10)
    assert list(kept) == list(range(4, 20)) and not too_busy
    kept, too_busy = clean_rounds(busy, sizes, min_rounds=10)
    assert too_busy and kept.size == 20
    assert MAX_HIT * 10 < 9


def _alternation(reference_runs, candidate_runs, loads) -> Alternation:
    blocks = [[np.asarray(block, dtype=np.float64) for block in member] for member in (reference_runs, candidate_runs)]
    return Alternation(BlockPlan(10, rounds=len(reference_runs)), [], blocks,
                       [[0.1] * len(reference_runs)] * 2, loads)


def test_a_longer_model_hit_by_more_switches_keeps_its_quiet_ratio():
    """The model doing twice the work is switched out in more of its runs (a longer run is
    more often the one a switch lands in); its median rises further than the other's, and
    the plain ratio of medians widens the gap. Less the hit runs, the ratio is the quiet one."""
    rng = np.random.default_rng(4)
    reference, candidate, loads = [], [], [[], []]
    for _ in range(30):
        small, large = rng.lognormal(0, 0.1, 20), 2.0 * rng.lognormal(0, 0.1, 20)
        small[:4] += 5.0         # 4 of 20 runs hit: the median moves a little
        large[:9] += 5.0         # 9 of 20 hit: the median moves to a hit run's neighbour
        reference.append(small)
        candidate.append(large)
        loads[0].append({"switches": 4, "runs": 20})
        loads[1].append({"switches": 9, "runs": 20})
    raw = np.median(np.concatenate(reference)) / np.median(np.concatenate(candidate))
    row = summarize(_alternation(reference, candidate, loads))[1]
    assert abs(raw / 0.5 - 1) > 0.05
    assert abs(row["speedup"] / 0.5 - 1) < 0.02 and not row["too_busy"] and row["measure"] == "wall"


def test_cpu_times_are_judged_when_every_block_has_them():
    reference = [np.full(10, 3.0) for _ in range(12)]        # wall times a wait for a core lengthened
    candidate = [np.full(10, 2.0) for _ in range(12)]
    loads = [[{"cpu_ms": np.full(10, 1.0), "switches": 9, "runs": 10} for _ in range(12)],
             [{"cpu_ms": np.full(10, 2.0), "switches": 9, "runs": 10} for _ in range(12)]]
    row = summarize(_alternation(reference, candidate, loads))[1]
    assert row["measure"] == "cpu" and row["speedup"] == 0.5 and not row["too_busy"]


def test_a_busy_machine_widens_the_interval_and_keeps_the_verdict_it_still_supports():
    reference = [np.full(10, 1.0) for _ in range(12)]
    candidate = [np.full(10, 2.0) for _ in range(12)]
    loads = [[{"switches": 8, "runs": 10} for _ in range(12)], [{"switches": 8, "runs": 10} for _ in range(12)]]
    row = summarize(_alternation(reference, candidate, loads))[1]
    assert row["too_busy"] and row["contention"] == 1.0 and row["conclusive"] and row["verdict"] == "slower"
    assert row["widened_ci"][0] == 0.5 < row["widened_ci"][1] < 1.0 and "busy" in row["why"]
    near = [np.full(10, 1.03) for _ in range(12)]       # ×0.97: no more than contention can make of ×0.98
    row = summarize(_alternation(reference, near, loads))[1]
    assert row["verdict"] == "no-difference" and "busy" in row["why"]
    quiet = [[{"switches": 0, "runs": 10} for _ in range(12)] for _ in range(2)]
    assert summarize(_alternation(reference, near, quiet))[1]["verdict"] == "slower"
