"""The search: make each conversion that can help (its own check of fidelity and its speed
against the source, timed in alternation), repair a failing one once, tune the session of
the best, pick the answer and write the folder to ship.

Screening is quick (a short speed check per candidate) so the budget reaches every kind;
what is left goes to tuning the best candidate's session, whose winner tune itself
measures again, alone, against the user's settings. No work starts once the budget is
spent, and work still running past it is stopped (app.core.optimize.budget)."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

from app.core.convert.jobs import CONVERT, DETECT_TRANSFORMER, ConvertParams
from app.core.convert.options import kind_info
from app.core.drift.jobs import REPAIR, RepairParams
from app.core.drift.repair import KEEP_OPTION
from app.core.jobs.errors import JobCancelled, JobFailed, UserError
from app.core.model.jobs import ModelPath
from app.core.optimize import candidates
from app.core.optimize.budget import Budget
from app.core.optimize.confirm import confirm_best
from app.core.optimize.params import OptimizeParams
from app.core.optimize.reuse import Reuse
from app.core.store.recording import ALSO
from app.core.optimize.rows import choose, explain, failed_row, made_row, source_row
from app.core.runner.process import run_child
from app.core.tune.jobs import TUNE, TuneParams

#: the share of the budget kept for tuning the best candidate's session
TUNE_SHARE = 0.35
#: below this many seconds tune cannot race and measure its winner again: it is not started
TUNE_MIN_S = 15.0
#: what making and checking one candidate costs besides its speed check (processes started), first guess
MAKE_GUESS_S = 4.0
REPAIR_STEPS = 3


class Search:
    def __init__(self, params: OptimizeParams, source: Path, scratch: Path, budget: Budget, split: dict | None = None):
        self.params, self.source, self.scratch, self.budget = params, source, scratch, budget
        self.split = split          # the data folder's halves (app.core.optimize.split), if one was given
        self.config = params.session
        self.rows: list[dict] = [source_row(source)]
        self.made: dict[str, str] = {"source": str(source)}     # kind -> the model file made in scratch
        self.reports: list[dict] = []
        self.tune: dict = {"skipped": True, "why": "not reached"}
        self.reuse = Reuse(params, source)     # candidates measured before, kept in the history
        self.run_tune = TUNE        # how tune runs: here, or spread over a cluster (app.core.optimize.spread)
        tune_s = params.budget_seconds * TUNE_SHARE
        self.reserve = tune_s if params.tune and tune_s >= TUNE_MIN_S else 0.0
        self.costs: list[float] = []

    def _add(self, row: dict) -> None:
        self.rows.append(row)
        self.budget.ctx.data("candidate", row)

    def screen(self, plan: list[tuple[str, str]]) -> None:
        to_make = [kind for kind, why in plan if not why]
        speed_s = min(self.params.screen_seconds,
                      max(0.2, 0.3 * (self.params.budget_seconds - self.reserve) / max(1, len(to_make))))
        for kind, why in plan:
            self.budget.ctx.check_cancel()
            if why:
                self._add(failed_row(kind, "skipped", why))
                continue
            guess = max(self.costs) if self.costs else speed_s + MAKE_GUESS_S
            if self.budget.ran_out or self.budget.left() - self.reserve < min(guess, MAKE_GUESS_S if not self.costs
                                                                              else guess):
                self._add(failed_row(kind, "skipped", "the budget was spent before it could be made"))
                continue
            started = self.budget.elapsed()
            self._add(self.make(kind, speed_s))
            self.costs.append(self.budget.elapsed() - started)

    def make(self, kind: str, speed_s: float) -> dict:
        output = self.scratch / f"{kind}{kind_info(kind).suffix}"
        options = candidates.kind_options(kind, self.config)
        if kind == "int8-static" and self.split:
            options["calibration"] = self.split["calibrate"]
        reused = self.reuse.find(kind, options)
        if reused:
            row, report, self.made[kind] = reused
            self.reports.append(report)
            return row
        convert = ConvertParams(kind=kind, input=str(self.source), output=str(output), force=True, options=options, tolerance=dict(self.params.tolerance),
                                session=self.config, speed_s=speed_s)
        try:
            with self.budget.sub(f"{kind}: making, checking and timing it") as sub:
                report = CONVERT(convert, sub)
            if report["check"] == "failed" and kind in KEEP_OPTION:
                report = self._repair(convert, report)
        except JobCancelled:
            if self.budget.ctx.cancelled:
                raise
            return failed_row(kind, "skipped", "the budget was spent while it was being made")
        except UserError as exc:
            return failed_row(kind, "refused", exc.message)
        except JobFailed as exc:
            return failed_row(kind, "refused", f"the conversion failed: {exc.message}")
        self.reports.append(report)
        self.made[kind] = report["output"]
        row = made_row(kind, report)
        if "calibration" in options and self.split:      # the half is scratch: name the user's folder
            row["options"]["calibration"] = f"{self.params.data} (the calibration half)"
        self.reuse.hold(kind, options, row, report)
        return row

    def _repair(self, convert: ConvertParams, report: dict) -> dict:
        """The repair loop once, with what is left of the screening budget; the failed report
        when there is too little left for a step."""
        left = self.budget.left() - self.reserve
        step = max(self.costs) if self.costs else MAKE_GUESS_S
        if left < 2 * step:
            report["repair_skipped"] = "too little of the budget was left to repair it"
            return report
        repair = RepairParams(convert=replace(convert, force=True), max_steps=REPAIR_STEPS, max_seconds=max(1.0, left - step))
        with self.budget.sub(f"{convert.kind}: repairing it") as sub:
            return REPAIR(repair, sub)

    def tune_best(self, best: dict) -> None:
        self.budget.ctx.check_cancel()
        left = self.budget.left()
        if not self.params.tune:
            self.tune = {"skipped": True, "why": "tuning was turned off"}
            return
        if left < TUNE_MIN_S:
            self.tune = {"skipped": True, "why": f"{max(0.0, left):.0f} s of the budget were left; tuning needs "
                                                 f"{TUNE_MIN_S:.0f} s at least"}
            return
        tune = TuneParams(path=self.made[best["kind"]], session=self.config,
                          limits={"providers": self.config.provider_names()}, budget_seconds=max(1.0, 0.35 * left),
                          finalists=1, confirm_seconds=min(2.0, max(0.5, 0.08 * left)))
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
        self.tune = {"kind": best["kind"], "clearly_faster": bool(result["clearly_faster"]),
                     "speedup": result["speedup"], "speedup_ci": result["speedup_ci"], "verdict": result["verdict"],
                     "note": result["note"], "session": result["best"]["session"], "seconds": result["seconds"]}


def _inputs(reports: list[dict]) -> list[dict]:
    for report in reports:
        rows = report.get("speed", {}).get("inputs") or report.get("fidelity", {}).get("inputs")
        if rows:
            return rows
    return []


def _data(params: OptimizeParams, split: dict | None) -> dict:
    if not split:
        return {"folder": None, "judged_on": "generated inputs (each input's row says where its values came from)"}
    return {"folder": str(Path(params.data).expanduser().absolute()), "samples": split["samples"],
            "calibrate_samples": split["calibrate_samples"], "check_samples": split["check_samples"],
            "note": split["note"], "judged_on": f"your data: {split['check_samples']} held-out samples"}


def _user_session(params: OptimizeParams, split: dict | None, session: dict | None = None) -> dict:
    """A session to show and ship (the user's, or tune's): its data folder is the user's,
    not the held-out half, which goes with the scratch folder."""
    session = params.session.to_dict() if session is None else session
    if split and isinstance(session.get("inputs"), dict):
        session["inputs"]["data"] = str(Path(params.data).expanduser().absolute())
    return session


def _machine(config) -> dict:
    import onnxruntime

    from app.core.session.machine_cpu import cpu_description

    return {"cpu": cpu_description()[0], "onnxruntime": onnxruntime.__version__,
            "available_providers": onnxruntime.get_available_providers(), "providers": config.provider_names()}


def optimize(params: OptimizeParams, ctx, place=None) -> dict:
    """`place`: where the candidates are made and measured when not here (a Ray cluster,
    app.core.optimize.spread.ClusterPlace: its screen, run_tune, target and machine)."""
    from app.core.model.intake import admit
    from app.core.optimize.ship import keep_candidates, prepare_folder, ship
    from app.core.optimize.split import split_data
    from app.core.session.data_folder import read_folder
    from app.core.session.machine_cpu import cpu_description

    source = Path(admit(params.model, onnx_only="optimize converts .onnx models").path)
    if not params.data and params.session.inputs.data:    # the Session tab's data folder: split it too
        params.data = params.session.inputs.data
    if params.data:
        read_folder(Path(params.data).expanduser())        # a bad folder is refused before anything is made
    folder = prepare_folder(Path(params.out_dir).expanduser(), params.force, source, params.keep_candidates)
    budget = Budget(params.budget_seconds, ctx)
    budget.label = "reading the model"
    budget.progress()
    shape = run_child(DETECT_TRANSFORMER, ModelPath(str(source)), ctx)
    plan = candidates.plan(params.kinds, params.session, shape, cpu_description()[1])
    partial = False
    with tempfile.TemporaryDirectory(prefix="ortune-optimize-") as scratch:
        split = split_data(Path(params.data).expanduser().absolute(), Path(scratch)) if params.data else None
        if split:
            params.session.inputs.data = split["check"]
        search = Search(params, source, Path(scratch), budget, split)
        if place is not None:
            search.run_tune = place.run_tune
        try:
            place.screen(search, plan) if place is not None else search.screen(plan)
            # a winner is measured again here only: over a cluster each ratio is formed on one worker
            search.tune_best(confirm_best(search, params.latency_limit_ms) if place is None
                             else choose(search.rows, params.latency_limit_ms))
        except JobCancelled:
            partial = True
        best = choose(search.rows, params.latency_limit_ms)
        explain(search.rows, best, params.latency_limit_ms)
        if "session" in search.tune:
            _user_session(params, split, search.tune["session"])
        result = {"model": str(source), "out_dir": str(folder), "objective": params.objective,
                  "objective_note": "throughput is judged as one stream's runs per second (1 / median latency)"
                                    if params.objective == "throughput" else "",
                  "latency_limit_ms": params.latency_limit_ms, "candidates": search.rows,
                  "tune": search.tune, "inputs": _inputs(search.reports),
                  "data": _data(params, split),
                  "session": _user_session(params, split), "budget_seconds": params.budget_seconds,
                  "partial": partial,
                  # this machine (a remote target names itself here, as elsewhere), or the cluster
                  "target": place.target() if place is not None else None,
                  "machine": place.machine() if place is not None else _machine(params.session)}
        if params.keep_candidates:
            folder.mkdir(exist_ok=True)
            keep_candidates(search.rows, search.made, folder, source)
        result["choice"] = ship(result, best, search.made[best["kind"]], folder, params.force, source,
                                budget.elapsed)
        result[ALSO] = search.reuse.to_keep(search.rows)     # kept by the history recorder, not shipped
    ctx.progress(1.0, "done")
    return result
