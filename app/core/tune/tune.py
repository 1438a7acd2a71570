"""Auto-tuning session settings: a noise-aware race instead of one mean per setting.

Every measurement of a contender is a block of `block_runs` timed runs, taken right
after a block of the user's own session (the pacer). The block's score is the ratio of
the two medians, so a slow spell of a shared machine, which slows both alike, cancels
out. Rounds measure all live contenders in a shuffled order (the first, those that
change fewest of your settings first); after each round the
clearly worse (confidence interval above the leader's) are dropped, then successive
halving keeps the best 1/eta. Depth grows as the field shrinks, so most of the budget
goes to the close contenders. The whole race runs in one child process that builds a
session per contender: no process start-up per trial.

A trial is one block of one contender. `strategy="grid"` measures every contender the
same number of blocks: the exhaustive baseline the race is judged against.

The race's figures are in-process figures: sessions taking turns in one process share
caches, allocator and cores in a way no deployed session does (a BERT winner at ×1.04-1.08
in the race ran at ×0.93 alone), so they only rank; the finalists are judged again, each
in its own process (app.core.tune.confirm)."""

from __future__ import annotations

import json
import math
import os
import random
import time

import numpy as np

from app.core.jobs.errors import JobCancelled, UserError
from app.core.session.probe import prepare_feeds
from app.core.jobs.protocol import JobContext
from app.core.session.config import SessionConfig
from app.core.measure.stats import mean_ci
from app.core.measure.timing import time_loop
from app.core.session.fidelity_policy import file_precision
from app.core.tune.faithful import Unfaithful, check_outputs, policy_of, summary
from app.core.tune.space import apply_candidate, build_space, describe, effective, physical_cores

class Contender:
    def __init__(self, index: int, label: str, config: SessionConfig):
        self.index, self.label, self.config = index, label, config
        self.ratios: list[float] = []      # contender median / pacer median, per block
        self.alive = True
        self.eliminated_in_round: int | None = None
        self.dropped_because: str | None = None
        self.error: str | None = None
        self.fidelity: dict | None = None  # its outputs against the user's session's (app.core.tune.faithful)

    def drop(self, round_index: int, because: str) -> None:
        self.alive, self.eliminated_in_round, self.dropped_because = False, round_index, because

    @property
    def score(self) -> float:
        """Latency relative to the user's session (below 1: faster)."""
        return float(np.mean(self.ratios)) if self.ratios else math.inf

    def interval(self) -> tuple[float, float]:
        _, low, high = mean_ci(self.ratios)
        return low, high

    def entry(self, pacer_ms: float) -> dict:
        low, high = self.interval() if len(self.ratios) > 1 else (None, None)
        return {"label": self.label, "session": self.config.to_dict(),
                "latency_ms": self.score * pacer_ms if self.ratios else None,
                "relative": self.score if self.ratios else None,
                "race_speedup": 1.0 / self.score if self.ratios and self.score > 0 else None,
                "ci_ms": [low * pacer_ms, high * pacer_ms] if low is not None else None,
                "blocks": len(self.ratios), "alive": self.alive,
                "eliminated_in_round": self.eliminated_in_round, "dropped_because": self.dropped_because,
                "error": self.error, "fidelity": self.fidelity}


class SessionPool:
    """Sessions of live contenders, kept between rounds while memory allows."""

    def __init__(self, path: str, feeds: dict, keep: int, warmup: int, ctx: JobContext, check=None):
        """`check(session, config)`: a contender's output check, the first time its session is
        made (its fidelity; app.core.tune.faithful.Unfaithful where it drifts)."""
        self.path, self.feeds, self.keep, self.warmup, self.ctx = path, feeds, keep, warmup, ctx
        self.runners: dict[int, object] = {}
        self.check = check
        self.checked: dict[int, dict] = {}

    def runner(self, key: int, config: SessionConfig):
        if key in self.runners:
            return self.runners[key]
        from app.core.session.create import create_session, idle_threads_sleep

        session = create_session(self.path, idle_threads_sleep(config))
        if key >= 0 and self.check is not None and key not in self.checked:
            self.checked[key] = self.check(session, config)
        runner = make_runner(session, self.feeds, config, self.ctx)
        for _ in range(self.warmup):
            runner()
        if len(self.runners) < self.keep:
            self.runners[key] = runner
        return runner

    def drop(self, key: int) -> None:
        self.runners.pop(key, None)


def make_runner(session, feeds: dict, config: SessionConfig, ctx: JobContext):
    """A no-argument function doing one inference the way the preset says (IO binding or not)."""
    import onnxruntime as ort
    from app.core.measure.runs import make_run

    run_options = ort.RunOptions()
    ctx.on_cancel(lambda: setattr(run_options, "terminate", True))
    binds = config.io_binding and config.providers[0].name != "CPUExecutionProvider"
    return make_run(session, feeds, run_options, io_binding=binds)


def measure_block(runner, runs: int, ctx: JobContext) -> float:
    """Median latency (ms) of `runs` timed inferences."""
    timing = time_loop(runner, runs, cancelled=lambda: ctx.cancelled)
    return float(np.median(np.frombuffer(timing.samples_ns, np.int64))) / 1e6


def prune(contenders: list[Contender], round_index: int, eta: int) -> None:
    """Drop the clearly worse (CI test), then keep the best 1/eta of the rest."""
    field = [c for c in contenders if c.alive]
    if len(field) <= 1:
        return
    leader = min(field, key=lambda c: c.score)
    if len(leader.ratios) > 1:
        leader_high = leader.interval()[1]
        for contender in field:
            if contender is not leader and len(contender.ratios) > 1 and contender.interval()[0] > leader_high:
                contender.drop(round_index, "clearly slower than the leader: their 95 % intervals did not overlap")
    field = sorted((c for c in field if c.alive), key=lambda c: c.score)
    for contender in field[max(1, math.ceil(len(field) / eta)):]:
        contender.drop(round_index, f"not among the best 1/{eta} of those left")


class _BudgetSpent(Exception):
    pass


class Race:
    def __init__(self, params, ctx: JobContext):
        """params: TuneParams (app.core.tune.jobs)."""
        self.params = params
        self.ctx = ctx
        self.started = time.monotonic()
        self.rng = random.Random(params.seed)
        cores = self.cores = physical_cores()
        candidates = params.candidates
        if candidates is None:
            candidates = build_space(params.limits, cores)
        if not candidates:
            raise UserError("bad-option", "the search space is empty: loosen the limits")
        self.contenders, self.merged = distinct(params.session, candidates, cores)
        index, count = params.share                     # a cluster's task races its share (app.core.tune.spread)
        if count > 1:
            self.contenders = [Contender(i, c.label, c.config) for i, c in enumerate(self.contenders[index::count])]
        if not self.contenders:
            raise UserError("bad-option", "every setting of the search space is the same as your settings: "
                                          "loosen the limits")
        self.pacer_ms: list[float] = []
        self.trials = 0
        self.rounds = 0
        from app.core.session.create import create_session
        probe = create_session(params.path, params.session)
        first = prepare_feeds(params.path, probe, params.session.inputs, ctx)
        self.feeds, self.feed_info = first.feeds, first.info
        reference = dict(zip([o.name for o in probe.get_outputs()], probe.run(None, self.feeds)))
        del probe, first
        keep = max(4, int(3e9 // (3 * max(os.path.getsize(params.path), 1))))

        precision = file_precision(params.path)

        def check(session, config: SessionConfig) -> dict:
            return check_outputs(session, self.feeds, reference, policy_of(config, params.session, precision))

        self.pool = SessionPool(params.path, self.feeds, keep, params.warmup, ctx, check)
        self.pacer = self.pool.runner(-1, params.session)
        self.setup_seconds = self.elapsed()

    def over_budget(self) -> bool:
        """Whether the race's budget is spent. Its time counts from the end of its setup (its
        sessions and feeds: a start its caller planned apart), and it is not spent before one
        setting was measured: a race stopped with none had nothing to offer but an error."""
        if not any(c.ratios for c in self.contenders) and any(c.alive for c in self.contenders):
            return False
        if self.params.budget_trials is not None and self.trials >= self.params.budget_trials:
            return True
        return self.params.budget_seconds is not None and self.racing() >= self.params.budget_seconds

    def racing(self) -> float:
        return self.elapsed() - self.setup_seconds

    def measure(self, contender: Contender) -> None:
        if self.over_budget():
            raise _BudgetSpent()
        self.ctx.check_cancel()
        try:
            runner = self.pool.runner(contender.index, contender.config)
            contender.fidelity = summary(self.pool.checked[contender.index])
            pacer = measure_block(self.pacer, self.params.block_runs, self.ctx)
            own = measure_block(runner, self.params.block_runs, self.ctx)
        except JobCancelled:
            raise
        except Unfaithful as exc:       # faster or not, it gives other answers: out, and never offered
            contender.fidelity, contender.error = summary(exc.fidelity), exc.message
            contender.drop(self.rounds, exc.message)
        except Exception as exc:  # a setting ORT refuses: that contender is out, the race goes on
            contender.error = getattr(exc, "message", None) or str(exc).splitlines()[0][:200]
            contender.drop(self.rounds, "it failed")
            self.pool.drop(contender.index)
        else:
            self.pacer_ms.append(pacer)
            contender.ratios.append(own / pacer)
        self.trials += 1

    def finished(self) -> bool:
        field = [c for c in self.contenders if c.alive]
        if self.params.strategy == "grid":
            return self.rounds >= self.params.grid_blocks
        return not field or (len(field) == 1 and len(field[0].ratios) >= self.params.final_blocks)

    def run(self) -> dict:
        cancelled, self.stop_reason = False, ""
        try:
            while not self.finished():
                # One block each while screening; the few left get more.
                depth = 1 if self.params.strategy == "grid" or self.rounds < 2 else 2 ** (self.rounds - 1)
                for _ in range(depth):
                    order = [c for c in self.contenders if c.alive]
                    self.rng.shuffle(order)
                    if self.rounds == 0:        # screening: what changes fewest of your settings first
                        order.sort(key=lambda c: changes(c.config, self.params.session, self.cores))
                    for contender in order:
                        self.measure(contender)
                    self.report()
                if self.params.strategy == "race":
                    prune(self.contenders, self.rounds, self.params.eta)
                    for contender in self.contenders:
                        if not contender.alive:
                            self.pool.drop(contender.index)
                self.rounds += 1
            self.stop_reason = self.decided_reason()
        except _BudgetSpent:
            self.stop_reason = self.budget_reason()
        except JobCancelled:
            cancelled = True
            self.stop_reason = f"You stopped it after {self.elapsed():.0f} s, in round {self.rounds + 1}."
        self.report()
        return self.result(cancelled)

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def budget_reason(self) -> str:
        if self.params.budget_trials is not None and self.trials >= self.params.budget_trials:
            return f"The budget of {self.params.budget_trials:,} trials was spent, in round {self.rounds + 1}."
        return f"The time budget of {self.params.budget_seconds:g} s was spent, in round {self.rounds + 1}."

    def decided_reason(self) -> str:
        """Why a race that ended by itself ended, and against which budget."""
        if self.params.strategy == "grid":
            why = f"every setting was measured {self.params.grid_blocks} times"
        elif not any(c.alive for c in self.contenders):
            why = "no setting could run"
        elif len(self.contenders) == 1:
            why = f"there was one setting to try besides yours, and it had its {self.params.final_blocks} blocks"
        else:
            last = 1 + max(c.eliminated_in_round for c in self.contenders if not c.alive)
            why = (f"all settings but one were eliminated by round {last}, and the last one had its "
                   f"{self.params.final_blocks} blocks: more time would not change the ranking")
        budget = [f"{self.params.budget_seconds:g} s"] if self.params.budget_seconds is not None else []
        budget += [f"{self.params.budget_trials:,} trials"] if self.params.budget_trials is not None else []
        of = f" of the {' or '.join(budget)} budget" if budget else ""
        return f"Stopped after {self.elapsed():.0f} s and {self.trials:,} trials{of}: {why}."

    def reference_ms(self) -> float:
        return float(np.median(self.pacer_ms)) if self.pacer_ms else math.nan

    def report(self) -> None:
        fraction = None
        if self.params.budget_trials:
            fraction = min(1.0, self.trials / int(self.params.budget_trials))
        elif self.params.budget_seconds:
            fraction = min(1.0, max(0.0, self.racing()) / float(self.params.budget_seconds))
        alive = sum(c.alive for c in self.contenders)
        self.ctx.progress(fraction, f"round {self.rounds + 1}: {alive} left after {self.trials} trials")
        ranked = sorted(self.contenders, key=lambda c: (not c.alive, c.score))
        reference = self.reference_ms()
        self.ctx.data("leaderboard", {"round": self.rounds, "trials": self.trials, "default_ms": reference,
                                      "rows": [c.entry(reference) for c in ranked if c.ratios or c.error]})

    def result(self, cancelled: bool) -> dict:
        """What the race saw, in-process: every measured contender (best score first) and the
        user's session as the pacer measured it. Which one wins is decided after a fresh
        re-measurement (app.core.tune.confirm)."""
        measured = [c for c in self.contenders if c.ratios]
        if not measured:
            first_error = next((c.error for c in self.contenders if c.error), "")
            raise UserError("tuning-failed", "no setting could be measured" + (f": {first_error}" if first_error else ""))
        reference = self.reference_ms()
        return {"strategy": self.params.strategy, "default_ms": reference, "default_blocks": len(self.pacer_ms),
                "trials": [c.entry(reference) for c in sorted(measured, key=lambda c: c.score)],
                "failed": [{"label": c.label, "error": c.error,
                            "unfaithful": bool(c.fidelity) and not c.fidelity["passed"]}
                           for c in self.contenders if c.error],
                "merged": self.merged, "trials_used": self.trials, "space_size": len(self.contenders),
                "rounds": self.rounds, "cancelled": cancelled, "stop_reason": self.stop_reason,
                "seconds": self.elapsed(), "setup_seconds": self.setup_seconds,
                "inputs": self.feed_info["inputs"], "input_dims": self.feed_info["dims"]}


#: the settings a race changes, as ORT runs them (space.effective)
CHANGED = ("providers", "graph_optimization_level", "execution_mode", "intra_op_num_threads", "inter_op_num_threads",
           "intra_op_allow_spinning", "dynamic_block_base", "io_binding")


def changes(config: SessionConfig, base: SessionConfig, cores: int) -> int:
    """How many of your settings a contender changes, as ORT runs them ("extended
    optimisation, 2 threads" is one where yours run a thread per core on two cores; spinning
    counts only where both have a pool to spin). A budget that ends in the first round has
    then measured the single changes, which tell most: on PP-OCR cls a 15 s tune measured 14
    of 63 settings in a shuffled order, "1 thread" (×1.63 on its text lines, as optimize
    found) not among them, and said nothing beat your settings."""
    mine, yours = effective(config, cores), effective(base, cores)
    return sum(mine[key] != yours[key] for key in CHANGED
               if not (key.endswith("spinning") and None in (mine[key], yours[key])))


def distinct(base: SessionConfig, candidates: list[dict], cores: int) -> tuple[list[Contender], list[dict]]:
    """The contenders, one per setting ORT would run differently (space.effective), none the
    same as the user's own session; and {label, same_as} for each candidate left out."""
    def key(config: SessionConfig) -> str:
        return json.dumps(effective(config, cores), sort_keys=True)

    seen = {key(base): "your settings"}
    contenders, merged = [], []
    for candidate in candidates:
        config, label = apply_candidate(base, candidate), describe(candidate, base)
        setting = key(config)
        if setting in seen:
            merged.append({"label": label, "same_as": seen[setting]})
        else:
            seen[setting] = label
            contenders.append(Contender(len(contenders), label, config))
    return contenders, merged
