"""The search spread over a Ray cluster (`optimize --cluster ADDRESS`, app.core.targets.cluster).

The candidates to make are dealt out in shares, one share a task, and each task makes,
checks and times its candidates on one worker against the source on that same worker: a
ratio is never formed across machines. The made models come back with the rows; the best
one's session is tuned over the cluster the way `tune --cluster` is (each share raced
against the user's settings on one worker); the folder is shipped here."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

from app.core.jobs.entry import LOCAL_ONLY, Job
from app.core.jobs.errors import UserError
from app.core.optimize.params import OptimizeParams
from app.core.optimize.rows import failed_row

NOTE = ("each task made, checked and timed its share of the candidates on one worker against the source on that "
        "same worker; speedups are never formed across workers")


def shares(kinds: list[str], tasks: int) -> list[list[str]]:
    """`kinds` dealt out round-robin into at most `tasks` non-empty shares, so the kinds most
    likely to help (first in the search's order) go to different workers."""
    count = max(1, min(tasks, len(kinds)))
    return [kinds[index::count] for index in range(count)] if kinds else []


def merge(plan: list[tuple[str, str]], answers: list[dict]) -> list[dict]:
    """The rows in the plan's order: each made on a worker with that worker named on it, each
    kind not made (its skip reason) as a skipped row. `answers`: run_spread's, each
    {node, host, result: part_job's}."""
    made = {}
    for answer in answers:
        where = {"node": answer["node"], "host": answer["host"]}
        for row in answer["result"]["rows"]:
            made[row["kind"]] = dict(row, measured_on=where)
    rows = []
    for kind, why in plan:
        if why:
            rows.append(failed_row(kind, "skipped", why))
        else:
            rows.append(made.get(kind) or failed_row(kind, "skipped", "no worker reported it"))
    return rows


def part_job(params: OptimizeParams, ctx) -> dict:
    """On a worker: make, check and time the share `params.kinds` against the source there
    (the worker's own provider and CPU say what can help); the rows, and each made model's
    files as bytes to travel back."""
    from app.core.convert.jobs import DETECT_TRANSFORMER
    from app.core.model.intake import admit
    from app.core.model.jobs import ModelPath
    from app.core.optimize import candidates
    from app.core.optimize.budget import Budget
    from app.core.optimize.search import Search, _inputs, _machine
    from app.core.runner.process import run_child
    from app.core.session.machine_cpu import cpu_description
    from app.core.targets.upload import bundle

    source = Path(admit(params.model, onnx_only="optimize converts .onnx models").path)
    shape = run_child(DETECT_TRANSFORMER, ModelPath(str(source)), ctx)
    plan = [item for item in candidates.plan(params.kinds, params.session, shape, cpu_description()[1])
            if item[0] in params.kinds]
    with tempfile.TemporaryDirectory(prefix="ortune-optimize-part-") as scratch:
        search = Search(replace(params, tune=False), source, Path(scratch), Budget(params.budget_seconds, ctx))
        search.screen(plan)
        files = {}
        for kind, path in search.made.items():
            if kind != "source":
                found = bundle(Path(path))
                files[kind] = [(name, local.read_bytes()) for name, local, _ in found.files]
    return {"rows": search.rows[1:], "files": files, "inputs": _inputs(search.reports),
            "machine": _machine(params.session)}


OPTIMIZE_PART = Job("optimize-part", part_job, OptimizeParams, child=False, runs=LOCAL_ONLY)   # a Ray task's share


class ClusterPlace:
    """The search's place when spread over the cluster at `address` (app.core.optimize.search)."""

    def __init__(self, address: str, tasks: int | None = None):
        self.address, self.tasks = address, tasks
        self.cluster: dict = {}
        self.machines: list[dict] = []
        self.config = None

    def screen(self, search, plan: list[tuple[str, str]]) -> None:
        from app.core.targets.cluster import connect, run_spread, workers

        self.config = search.config
        to_make = [kind for kind, why in plan if not why]
        count = self.tasks or len(workers(connect(self.address)))
        left = max(1.0, search.budget.left() - search.reserve)
        given = search.params.to_dict()
        parts = [given | {"kinds": share, "tune": False, "budget_seconds": left} for share in shares(to_make, count)]
        search.budget.label = f"making {len(to_make)} candidates over {len(parts)} Ray task(s)"
        search.budget.progress()
        answers, self.cluster = run_spread(self.address, OPTIMIZE_PART, parts) if parts else ([], {})
        for index, answer in enumerate(answers):
            self.machines.append(answer["result"]["machine"])
            for kind, files in answer["result"]["files"].items():
                folder = search.scratch / f"task-{index}"
                folder.mkdir(exist_ok=True)
                for name, data in files:
                    (folder / name).write_bytes(data)
                search.made[kind] = str(folder / files[0][0])
            if answer["result"]["inputs"]:
                search.reports.append({"speed": {"inputs": answer["result"]["inputs"]}})
        for row in merge(plan, answers):
            search._add(row)

    def run_tune(self, params, sub) -> dict:
        from app.core.tune.jobs import TUNE
        from app.core.tune.spread import spread_tune
        return spread_tune(TUNE, params, self.address, self.tasks)

    def target(self) -> dict:
        return {"cluster": True, "name": f"Ray cluster {self.address}", "address": self.address,
                "note": NOTE} | self.cluster

    def machine(self) -> dict:
        """A worker's (the workers are alike, or spreading is not valid); this machine's when
        no candidate was made."""
        from app.core.optimize.search import _machine
        return self.machines[0] if self.machines else _machine(self.config)


def check_elsewhere(params: OptimizeParams) -> None:
    """Before a search on a target or a cluster: no data folder is named (a folder is not sent
    there yet), and the folder here can take what comes back (checked before any work)."""
    from app.core.optimize.ship import prepare_folder

    if params.data or params.session.inputs.data:
        raise UserError("bad-option", "a data folder is not sent to a target or a cluster yet: leave out --data "
                                      "(and the session's data folder) there, or run optimize on this machine")
    model = Path(params.model).expanduser()
    if not model.is_file():
        raise UserError("not-found", f"{model}: no such model file")
    prepare_folder(Path(params.out_dir).expanduser(), params.force, model, params.keep_candidates)


def spread_optimize(job: Job, params: OptimizeParams, address: str, tasks: int | None = None) -> dict:
    """The optimize entry's spread: the search, its candidates made and measured on the workers."""
    from app.core.jobs.protocol import JobContext
    from app.core.optimize.search import optimize

    check_elsewhere(params)
    return optimize(params, JobContext(), ClusterPlace(address, tasks))
