"""The search: make each conversion that can help, check its fidelity, time it against the
source in alternation, repair a failing one once, measure the best few precisely, tune the
session of the best, pick the answer and write the folder to ship.

The budget is spent where it tells: every candidate is made and checked first, several at
once within the memory budget (each conversion is a process of its own); then each is
screened, alone on the cores, by a short speed check, so the budget reaches every kind; the
best few are then measured again together for a share of the budget until their intervals
are narrow (app.core.optimize.finalists); what is left goes to tuning the best candidate's
session, whose winner tune itself measures again, fresh, against the user's settings. No
work starts once the budget is spent, and work still running past it is stopped
(app.core.optimize.budget). Without a data folder the candidates are judged on realistic
samples where the inputs allow (app.core.optimize.samples)."""

from __future__ import annotations

import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from app.core.convert.jobs import CONVERT, DETECT_TRANSFORMER, ConvertParams
from app.core.convert.options import kind_info
from app.core.convert.speed import not_measured
from app.core.drift.jobs import REPAIR, RepairParams
from app.core.drift.repair import KEEP_OPTION
from app.core.jobs.errors import JobCancelled, JobFailed, UserError
from app.core.session.fidelity_policy import GivenTolerance
from app.core.model.jobs import ModelPath
from app.core.optimize import candidates, finalists, provider_kinds
from app.core.optimize.budget import Budget
from app.core.optimize.plan import TUNE_OWN, least_to_measure, nothing_measured, tune_keep, tune_least, tune_needs
from app.core.optimize.confirm import confirm_best
from app.core.optimize.machine import machine_facts
from app.core.optimize.params import OptimizeParams
from app.core.optimize.reuse import Reuse
from app.core.store.recording import ALSO
from app.core.optimize.rows import (candidate_tolerance, choose, explain, failed_row, made_row, source_row,
                                    tune_summary)
from app.core.optimize.samples import label_inputs, make_samples, probe_inputs
from app.core.runner.process import run_child
from app.core.tune.jobs import TUNE, TuneParams
from app.core.tune.space import SearchLimits

#: the share of the budget kept for measuring the finalists precisely
FINAL_SHARE = 0.2
#: how the reason of a candidate a cancel left unmade begins
STOPPED = "the search was stopped"
REPAIR_STEPS = 3


class Search:
    def __init__(self, params: OptimizeParams, source: Path, scratch: Path, budget: Budget, split: dict | None = None):
        self.params, self.source, self.scratch, self.budget = params, source, scratch, budget
        self.split = split          # the data folder's halves (app.core.optimize.split), if one was given
        self.config = params.session
        self.rows: list[dict] = [source_row(source)]
        self.made: dict[str, str] = {"source": str(source)}     # kind -> the model file made in scratch
        self.sessions: dict = {}    # kind -> the session a provider candidate runs the source on
        self.reports: list[dict] = []
        self.tune: dict = {"skipped": True, "why": "not reached"}
        self.reuse = Reuse(params, source)     # candidates measured before, kept in the history
        self.run_tune = TUNE        # how tune runs: here, or spread over a cluster (app.core.optimize.spread)
        self.finals: dict = {"skipped": True, "why": "not reached"}
        self.parallel = 1
        self.fixed_s = 0.0          # the least the work besides tuning needs to measure anything (screen)
        self.decoder = False        # a decoder with a KV cache: its candidates are judged on their next tokens

    # the seconds kept for tuning at what a process start is seen to cost now (app.core.optimize.plan);
    # the least of it making and screening leave it; and what the screening leaves (tuning's, the finalists')
    tune_reserve = property(lambda self: tune_keep(self.params.budget_seconds, self.budget.start_s) * self.params.tune)
    tune_floor = property(lambda self: tune_least(self.params.budget_seconds, self.budget.start_s) * self.params.tune)
    reserve = property(lambda self: self.tune_reserve + self.params.budget_seconds * FINAL_SHARE)

    def judge_decoder(self, decoder: bool) -> None:
        """A decoder's candidates are judged on their next tokens; one judged otherwise before is not reused."""
        self.decoder = decoder
        self.reuse.base["tolerance"] = candidate_tolerance(self.params.tolerance, decoder)

    def _add(self, row: dict) -> None:
        self.rows.append(row)
        self.budget.ctx.data("candidate", row)

    def screen(self, plan: list[tuple[str, str]]) -> None:
        """Make and check every kind to make (several at once), then time those that passed
        against the source, together (app.core.optimize.finalists.screen_together), with the
        provider candidates, which that timing checks too; a row is added for each kind, in
        the plan's order."""
        to_run = {kind: provider_kinds.pending_report(kind, str(self.source), self.config, self.params.tolerance,
                                                      self.decoder)
                  for kind, why in plan if not why and kind in provider_kinds.PROVIDER_KINDS}
        self.sessions = {kind: report["session"] for kind, report in to_run.items()}
        to_make = [kind for kind, why in plan if not why and kind not in to_run]
        speed_s = min(self.params.screen_seconds,
                      max(0.2, 0.3 * (self.params.budget_seconds - self.reserve) / max(1, len(to_make) + len(to_run))))
        read_s = self.budget.elapsed()
        made = self.make_all(to_make, speed_s) if to_make else {}
        # what measuring anything needs: this reading, the rounds of making, two timed against the source
        self.fixed_s = (read_s + -(-len(to_make) // self.parallel) * self.budget.make_cost.value
                        + 3 * (self.budget.start_s + speed_s) + self.budget.finish)
        checked = {kind: report for kind, report in made.items() if "status" not in report
                   and report["check"] == "passed"}
        speeds = self.time_all(checked | to_run, speed_s / 2)
        for kind, why in plan:
            self.budget.ctx.check_cancel()
            if why:
                self._add(failed_row(kind, "skipped", why))
            elif kind in to_run and isinstance(speeds.get(kind), str):
                self._add(failed_row(kind, "skipped", speeds[kind]))
            elif kind in to_run:
                self.made[kind] = str(self.source)
                self.reports.append({"speed": {"inputs": speeds[kind].get("inputs", [])}})   # the inputs it ran on
                self._add(provider_kinds.provider_row(kind, to_run[kind], speeds[kind], self.rows[0]["size_bytes"],
                                                      self.budget.ctx))
            elif "status" in made[kind]:
                self._add(made[kind])
            elif kind in checked and isinstance(speeds.get(kind), str):
                self._add(failed_row(kind, "skipped", speeds[kind]))
            else:
                self._add(self.row(kind, made[kind], speeds.get(kind)))

    def time_all(self, checked: dict[str, dict], each_s: float) -> dict[str, dict | str]:
        """kind -> its speed block, or why it was not timed: in groups as large as the memory
        budget holds, each group with the source, while the budget (less tune's share) lasts."""
        from app.core.jobs.memory import budget_bytes

        memory = self.budget.ctx.memory_budget or budget_bytes()
        group = max(1, candidates.parallel_members(self.source.stat().st_size, memory) - 1)
        kinds, speeds = list(checked), {}
        for start in range(0, len(kinds), group):
            chunk = kinds[start:start + group]
            while chunk and self.budget.left() - self.tune_floor < (len(chunk) + 1) * (each_s + self.budget.start_s):
                speeds[chunk.pop()] = "the budget was spent before its speed could be measured"
            if not chunk or self.budget.ran_out:
                speeds.update({k: "the budget was spent before its speed could be measured" for k in chunk})
                continue
            self.budget.expect((len(chunk) + 1) * (self.budget.start_s + 3 * each_s) + self.reserve)
            try:
                started = self.budget.elapsed()
                with self.budget.sub(f"timing {', '.join(chunk)} against the source") as sub:
                    timed, blocks_s = finalists.screen_together({k: checked[k] for k in chunk}, self.config, each_s,
                                                                sub, lambda: self.budget.left() - self.tune_floor)
                speeds.update(timed)
                self.budget.note_alternation(started, blocks_s, len(chunk) + 1)
            except JobCancelled:
                if self.budget.ctx.cancelled:
                    raise
                speeds.update({k: "the budget was spent while its speed was measured" for k in chunk})
            except (UserError, JobFailed) as exc:
                speeds.update({k: not_measured(f"the speed check could not run: {exc.message}") for k in chunk})
        return speeds

    def row(self, kind: str, report: dict, speed: dict | None) -> dict:
        convert = report.pop("convert")
        if speed is not None:
            report["speed"] = speed
        self.reports.append(report)
        self.made[kind] = report["output"]
        row = made_row(kind, report)
        if "calibration" in convert.options and self.split:      # the half is scratch: name the user's folder
            row["options"]["calibration"] = f"{self.split['name']} (the calibration half)"
        self.reuse.hold(kind, convert.options, row, report)
        return row

    def make_all(self, kinds: list[str], speed_s: float) -> dict[str, dict]:
        """kind -> its conversion's report, or the row of one that could not be made."""
        from app.core.jobs.memory import budget_bytes
        import psutil

        memory = self.budget.ctx.memory_budget or budget_bytes()
        cores = psutil.cpu_count(logical=False) or psutil.cpu_count() or 1
        self.parallel = candidates.parallel_makes(self.source.stat().st_size, memory, cores, len(kinds))
        rounds = -(-len(kinds) // self.parallel)
        make_s, start_s = self.budget.make_cost.value, self.budget.start_s
        self.budget.expect(rounds * make_s + (len(kinds) + 1) * (speed_s + start_s) + self.reserve)
        with ThreadPoolExecutor(max_workers=self.parallel) as pool:
            futures = {kind: pool.submit(self.make, kind) for kind in kinds}
            return {kind: future.result() for kind, future in futures.items()}

    def make(self, kind: str) -> dict:
        if self.budget.ctx.cancelled:
            return failed_row(kind, "skipped", f"{STOPPED} before it was made")
        # the finalists' share is not held back: a candidate made and screened is worth more
        if self.budget.ran_out or self.budget.left() - self.tune_floor < self.budget.make_cost.value \
                + 2 * self.budget.start_s:
            return failed_row(kind, "skipped", "the budget was spent before it could be made")
        output = self.scratch / f"{kind}{kind_info(kind).suffix}"
        options = candidates.kind_options(kind, self.config)
        if kind == "int8-static" and self.split:
            options["calibration"] = self.split["calibrate"]
        reused = self.reuse.find(kind, options)
        if reused:
            row, report, self.made[kind] = reused
            self.reports.append(report)
            return row
        convert = ConvertParams(kind=kind, input=str(self.source), output=str(output), force=True, options=options,
                                tolerance=GivenTolerance.from_dict(candidate_tolerance(self.params.tolerance,
                                                                                       self.decoder)),
                                session=self.config, speed_s=0)
        try:
            started = self.budget.elapsed()
            with self.budget.sub(f"{kind}: making and checking it", share=self.parallel) as sub:
                report = CONVERT(convert, sub)
            self.budget.make_cost.note(self.budget.elapsed() - started)
            if report["check"] == "failed" and kind in KEEP_OPTION:
                report = self._repair(convert, report)
        except JobCancelled:
            if self.budget.ctx.cancelled:
                return failed_row(kind, "skipped", f"{STOPPED} while it was being made")
            return failed_row(kind, "skipped", "the budget was spent while it was being made")
        except UserError as exc:
            return failed_row(kind, "refused", exc.message)
        except JobFailed as exc:
            return failed_row(kind, "refused", f"the conversion failed: {exc.message}")
        report["convert"] = convert
        return report

    def measure_finalists(self) -> None:
        """The screening's best few, measured again together within FINAL_SHARE (with what
        screening left over, less tune's share)."""
        self.budget.ctx.check_cancel()
        picked = finalists.pick(self.rows)
        start_s = self.budget.start_s
        # tune's share is kept: a tuned session is worth more than a narrower interval
        seconds = self.budget.left() - self.tune_reserve
        while len(picked) > 1 and seconds < finalists.least_seconds(len(picked) + 1, start_s):
            picked.pop()                        # fewer finalists, rather than none
        self.budget.expect(max(0.0, seconds) + self.tune_reserve)
        try:
            started = self.budget.elapsed()
            with self.budget.sub(f"measuring the best {len(picked)} precisely against the source") as sub:
                self.finals = finalists.measure_finalists(picked, self.made, self.config, seconds, sub, start_s,
                                                          self.sessions)
            if "blocks_s" in self.finals:
                self.budget.note_alternation(started, self.finals["blocks_s"], len(picked) + 1)
        except JobCancelled:
            if self.budget.ctx.cancelled:
                raise
            self.finals = {"skipped": False, "kinds": [r["kind"] for r in picked],
                           "why": "the budget was spent while they were measured: the rounds so far count"}
        except (UserError, JobFailed) as exc:
            self.finals = {"skipped": True, "why": f"the finalists could not be measured again: {exc.message}"}

    def _repair(self, convert: ConvertParams, report: dict) -> dict:
        """The repair loop once, with what is left of the screening budget; the failed report
        when there is too little left for a step."""
        left = self.budget.left() - self.reserve
        step = 2 * self.budget.make_cost.value
        if left < 2 * step:
            report["repair_skipped"] = "too little of the budget was left to repair it"
            return report
        repair = RepairParams(convert=replace(convert, force=True), max_steps=REPAIR_STEPS, max_seconds=max(1.0, left - step))
        with self.budget.sub(f"{convert.kind}: repairing it", share=self.parallel) as sub:
            return REPAIR(repair, sub)

    def tune_best(self, best: dict) -> None:
        self.budget.ctx.check_cancel()
        left = self.budget.left()
        if not self.params.tune:
            self.tune = {"skipped": True, "why": "tuning was turned off"}
            return
        least = tune_needs(self.budget.start_s)
        if left < least:
            need = self.params.budget_seconds + least - left
            self.tune = {"skipped": True, "why": f"{max(0.0, left):.0f} s of the budget were left; tuning needs "
                                                 f"{least:.0f} s at least here, where starting one measured "
                                                 f"process takes {self.budget.start_s:.1f} s (a budget of about "
                                                 f"{10 * -(-need // 10):.0f} s leaves it that)"}
            return
        session = self.sessions.get(best["kind"], self.config)     # a provider candidate's, or the user's
        tune = TuneParams(path=self.made[best["kind"]], session=session,
                          limits=SearchLimits(providers=session.provider_names()), budget_seconds=max(1.0, TUNE_OWN * left),
                          finalists=1, confirm_seconds=min(2.0, max(0.5, 0.08 * left)), start_s=self.budget.start_s)
        self.budget.expect(TUNE_OWN * left)
        try:
            with self.budget.sub(f"tuning the session of {best['kind']}") as sub:
                result = self.run_tune(tune, sub)
        except JobCancelled:
            if self.budget.ctx.cancelled:
                raise
            self.tune = {"skipped": True, "why": "the budget was spent while tuning"}
            return
        except (UserError, JobFailed) as exc:
            self.tune = {"skipped": True, "why": f"tuning could not run: {exc.message}"}
            return
        self.tune = tune_summary(best["kind"], result)


def _inputs(reports: list[dict]) -> list[dict]:
    for report in reports:
        rows = report.get("speed", {}).get("inputs") or report.get("fidelity", {}).get("inputs")
        if rows:
            return rows
    return []


def _data(params: OptimizeParams, split: dict | None, samples: dict | None) -> dict:
    if not split:
        why = samples.get("why", "") if samples else ""
        return {"folder": None, "judged": "synthetic values", "note": why,
                "judged_on": "synthetic values (each input's row says where its values came from)"}
    halves = {"samples": split["samples"], "calibrate_samples": split["calibrate_samples"],
              "check_samples": split["check_samples"], "note": split["note"]}
    if samples:
        made = "; ".join(f"{name}: {text}" for name, text in samples["described"].items())
        return {"folder": None, "judged": "samples", **halves,
                "judged_on": f"samples: {split['check_samples']} held-out samples made for the inputs ({made})"}
    return {"folder": str(Path(params.data).expanduser().absolute()), "judged": "your data", **halves,
            "judged_on": f"your data: {split['check_samples']} held-out samples"}


def _user_session(params: OptimizeParams, split: dict | None, session: dict | None = None) -> dict:
    """A session to show and ship (the user's, or tune's): its data folder is the user's,
    not the held-out half, which goes with the scratch folder."""
    session = params.session.to_dict() if session is None else session
    if split and isinstance(session.get("inputs"), dict):   # samples stay with the scratch folder
        session["inputs"]["data"] = str(Path(params.data).expanduser().absolute()) if params.data else ""
    return session


def optimize(params: OptimizeParams, ctx, place=None) -> dict:
    """`place`: where the candidates are made and measured when not here (a Ray cluster,
    app.core.optimize.spread.ClusterPlace: its screen, run_tune, target and machine)."""
    from app.core.model.intake import admit
    from app.core.optimize.ship import keep_candidates, prepare_folder, ship
    from app.core.optimize.split import split_data
    from app.core.session.data_folder import read_folder
    from app.core.session.machine_cpu import cpu_description

    budget = Budget(params.budget_seconds, ctx)         # the budget counts from the start
    source = Path(admit(params.model, onnx_only="optimize converts .onnx models").path)
    if not params.data and params.session.inputs.data:    # the Session tab's data folder: split it too
        params.data = params.session.inputs.data
    if params.data:
        read_folder(Path(params.data).expanduser())        # a bad folder is refused before anything is made
    folder = prepare_folder(Path(params.out_dir).expanduser(), params.force, source, params.keep_candidates)
    budget.label = "reading the model" + ("" if params.data else " and making samples for its inputs")
    budget.progress()
    partial = False
    with tempfile.TemporaryDirectory(prefix="ortune-optimize-") as scratch, ThreadPoolExecutor(3) as pool:
        # processes at once: the model's layout, the inputs it runs on (for the samples, and for
        # session.py when the budget measures nothing), and the providers that start here
        shape = pool.submit(run_child, DETECT_TRANSFORMER, ModelPath(str(source)), ctx)
        usable = pool.submit(provider_kinds.usable_providers, params.kinds, params.session, ctx) if place is None else None
        probe = pool.submit(probe_inputs, source, params, ctx).result()
        samples = None if params.data else make_samples(source, probe, params, Path(scratch))
        plan = candidates.plan(params.kinds, params.session, shape.result(), cpu_description()[1],
                               params.try_expected_slower, usable.result() if usable is not None else None)
        split = None
        if params.data:
            user_folder = Path(params.data).expanduser().absolute()
            split = split_data(user_folder, Path(scratch)) | {"name": params.data, "folder": str(user_folder)}
        elif "folder" in samples:
            split = split_data(samples["folder"], Path(scratch)) | {"name": "the samples", "folder": str(samples["folder"])}
        if split:
            params.session.inputs.data = split["check"]
        search = Search(params, source, Path(scratch), budget, split)
        search.judge_decoder(bool(shape.result().get("kv_cache")))
        if place is not None:
            search.run_tune = place.run_tune
        try:
            place.screen(search, plan) if place is not None else search.screen(plan)
            if place is None:       # over a cluster each ratio is formed on one worker: not measured again here
                search.measure_finalists()
            search.tune_best(confirm_best(search, params.latency_limit_ms) if place is None
                             else choose(search.rows, params.latency_limit_ms))
        except JobCancelled:
            partial = True
        best = choose(search.rows, params.latency_limit_ms)
        explain(search.rows, best, params.latency_limit_ms)
        least = least_to_measure(search.fixed_s, budget.start_s)
        data = _data(params, split, samples)
        for row in search.rows[1:]:
            if row["fidelity"] is not None:
                row["judged_on"] = data["judged"]
        if "session" in search.tune:
            _user_session(params, split, search.tune["session"])
        for row in search.rows:         # a provider candidate's session ships too
            if "session" in row:
                _user_session(params, split, row["session"])
        result = {"model": str(source), "out_dir": str(folder), "objective": params.objective,
                  "objective_note": "throughput is judged as one stream's runs per second (1 / median latency)"
                                    if params.objective == "throughput" else "",
                  "latency_limit_ms": params.latency_limit_ms, "candidates": search.rows,
                  "tune": search.tune, "finalists": search.finals,
                  "inputs": label_inputs(_inputs(search.reports) or probe.get("inputs", []),
                                         samples if split else None),
                  "data": data, "parallel_makes": search.parallel,
                  "session": _user_session(params, split), "budget_seconds": params.budget_seconds,
                  # a cancel that came after the last step that checks for one still makes the result partial
                  "partial": partial or ctx.cancelled, "unmeasured": nothing_measured(search.rows, params.budget_seconds, least),
                  "status": "cancelled" if ctx.cancelled else "complete",
                  # this machine (a remote target names itself here, as elsewhere), or the cluster
                  "target": place.target() if place is not None else None,
                  "machine": place.machine() if place is not None else machine_facts(params.session)}
        if params.keep_candidates:
            folder.mkdir(exist_ok=True)
            keep_candidates(search.rows, search.made, folder, source)
        result["choice"] = ship(result, best, search.made[best["kind"]], folder, params.force, source,
                                budget.elapsed)
        result[ALSO] = search.reuse.to_keep(search.rows)     # kept by the history recorder, not shipped
    ctx.progress(1.0, "done")
    return result
