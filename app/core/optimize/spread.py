"""The search spread over a Ray cluster (`optimize --cluster ADDRESS`, app.core.targets.cluster).

The candidates to make are dealt out in shares, one share a task, and each task makes,
checks and times its candidates on one worker against the source on that same worker: a
ratio is never formed across machines. The data folder (the user's, or the samples made
here) travels to the workers, and each halves it as the search does, so every candidate
is calibrated and judged on the same halves. The made models come back with the rows, as
each task ends; they are kept in this machine's history keyed by the worker's machine, so
the same search again reuses them (a share the history holds whole is not sent at all).
The best one's session is tuned over the cluster the way `tune --cluster` is; the folder
is shipped here. Cancelled, the outstanding tasks stop and what came back is kept."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

from app.core.jobs.entry import Job
from app.core.jobs.errors import JobCancelled, UserError
from app.core.optimize.params import OptimizeParams
from app.core.optimize.rows import failed_row

NOTE = ("each task made, checked and timed its share of the candidates on one worker against the source on that "
        "same worker; speedups are never formed across workers")


def shares(kinds: list[str], tasks: int) -> list[list[str]]:
    """`kinds` dealt out round-robin into at most `tasks` non-empty shares, so the kinds most
    likely to help (first in the search's order) go to different workers."""
    count = max(1, min(tasks, len(kinds)))
    return [kinds[index::count] for index in range(count)] if kinds else []


def merge(plan: list[tuple[str, str]], answers: list[dict], cancelled: bool = False) -> list[dict]:
    """The rows in the plan's order: each made on a worker with that worker named on it, each
    kind not made (its skip reason) as a skipped row. `answers`: run_spread's, each
    {node, host, result: part_job's}."""
    made = {}
    for answer in answers:
        where = {"node": answer["node"], "host": answer["host"]}
        for row in answer["result"]["rows"]:
            made[row["kind"]] = dict(row, measured_on=row.get("measured_on") or where)
    missing = "the search was cancelled before a worker measured it" if cancelled else "no worker reported it"
    rows = []
    for kind, why in plan:
        if why:
            rows.append(failed_row(kind, "skipped", why))
        else:
            rows.append(made.get(kind) or failed_row(kind, "skipped", missing))
    return rows


def part_job(params: OptimizeParams, ctx) -> dict:
    """On a worker: make, check and time the share `params.kinds` against the source there
    (the worker's own provider and CPU say what can help), on the halves of the data folder
    sent; the rows, each made model's report and files as bytes to travel back. Cancelled,
    the rows measured so far."""
    from app.core.convert.jobs import DETECT_TRANSFORMER
    from app.core.model.intake import admit
    from app.core.model.jobs import ModelPath
    from app.core.optimize import candidates
    from app.core.optimize.budget import Budget
    from app.core.optimize.machine import machine_facts
    from app.core.optimize.search import STOPPED, Search, _inputs
    from app.core.optimize.split import split_data
    from app.core.runner.process import run_child
    from app.core.session.machine_cpu import cpu_description
    from app.core.targets.upload import bundle

    source = Path(admit(params.model, onnx_only="optimize converts .onnx models").path)
    shape = run_child(DETECT_TRANSFORMER, ModelPath(str(source)), ctx)
    plan = [item for item in candidates.plan(params.kinds, params.session, shape, cpu_description()[1],
                                                params.try_expected_slower)
            if item[0] in params.kinds]
    with tempfile.TemporaryDirectory(prefix="ortune-optimize-part-") as scratch:
        split = None
        if params.data:             # halved here as the search halves it: the same halves on every worker
            split = split_data(Path(params.data), Path(scratch)) | {"name": params.data}
            params.session.inputs.data = split["check"]
        search = Search(replace(params, tune=False, fresh=True), source, Path(scratch),
                        Budget(params.budget_seconds, ctx), split)
        search.reuse.keeps = False      # kept where the search was started, keyed by this worker
        search.judge_decoder(bool(shape.get("kv_cache")))
        cut = False
        try:
            search.screen(plan)
        except JobCancelled:
            cut = True
        # cut short: a kind of its share left unmade or untimed (a cancel that came after the
        # last of them stopped nothing)
        cut = cut or any(row.get("reason", "").startswith(STOPPED) for row in search.rows[1:])
        files = {}
        for kind, path in search.made.items():
            if kind != "source":
                found = bundle(Path(path))
                files[kind] = [(name, local.read_bytes()) for name, local, _ in found.files]
    return {"rows": search.rows[1:], "files": files, "reports": search.reuse.handed, "inputs": _inputs(search.reports),
            "machine": machine_facts(params.session), "cancelled": cut}


def data_folders(given: dict) -> dict:
    """The data folder, with the files of it that travel to a target or a cluster's workers."""
    from app.core.session.data_files import folder_files
    return {"data": folder_files(given["data"])} if given.get("data") else {}


class ClusterPlace:
    """The search's place when spread over the cluster at `address` (app.core.optimize.search)."""

    def __init__(self, address: str, part: Job, tasks: int | None = None):
        """`part`: the entry of a task's share (app.core.optimize.jobs.OPTIMIZE_PART)."""
        self.address, self.part, self.tasks = address, part, tasks
        self.cluster: dict = {}
        self.machines: list[dict] = []
        self.config = None

    def screen(self, search, plan: list[tuple[str, str]]) -> None:
        from app.core.optimize.reuse import machine_key
        from app.core.targets.cluster import on_each_worker, run_spread

        self.config, ctx = search.config, search.budget.ctx
        nodes = on_each_worker(self.address, machine_key)
        to_make = [kind for kind, why in plan if not why]
        given = search.params.to_dict()
        given["session"]["inputs"]["data"] = ""      # the folder travels whole; each worker halves it
        given |= {"tune": False, "budget_seconds": max(1.0, search.budget.left() - search.reserve),
                  "data": search.split["folder"] if search.split else ""}
        answers, parts, places = [], [], []
        for index, share in enumerate(shares(to_make, self.tasks or len(nodes))):
            node = nodes[index % len(nodes)]
            reused = {kind: self._reused(search, kind, node) for kind in share}
            if any(reused.values()):
                answers.append({"node": node["node"], "host": node["host"],
                                "result": {"rows": [row for row in reused.values() if row]}})
            if not all(reused.values()):
                parts.append(given | {"kinds": [kind for kind in share if not reused[kind]]})
                places.append(index % len(nodes))
        for answer in answers:
            for row in answer["result"]["rows"]:
                ctx.data("candidate", row)
        search.budget.label = f"making {len(to_make)} candidates over {len(parts)} Ray task(s)"
        search.budget.progress()
        if parts:
            came, self.cluster = run_spread(self.address, self.part, parts, ctx, places=places, partial=True,
                                            on_answer=lambda answer: self._arrived(search, answer, nodes))
            answers += came
        else:
            self.cluster = {"address": self.address, "workers": [{k: v for k, v in n.items() if k != "answer"}
                                                                 for n in nodes],
                            "measured_on": "no worker this time: every candidate was reused from the history"}
        search.rows[1:] = merge(plan, answers, ctx.cancelled)
        if ctx.cancelled:
            raise JobCancelled()

    def _reused(self, search, kind: str, node: dict) -> dict | None:
        from app.core.optimize.candidates import kind_options

        found = search.reuse.find(kind, kind_options(kind, search.config), node["answer"])
        if found is None:
            return None
        row, report, search.made[kind] = found
        search.reports.append(report)
        return dict(row, measured_on=row.get("measured_on") or {"node": node["node"], "host": node["host"]})

    def _arrived(self, search, answer: dict, nodes: list[dict]) -> None:
        """A task's answer, as it comes: its models written here, each candidate kept for reuse
        keyed by the worker that made it, each row shown."""
        from app.core.optimize.candidates import kind_options

        result, where = answer["result"], {"node": answer["node"], "host": answer["host"]}
        worker = next((n["answer"] for n in nodes if n["node"] == answer["node"]), None)
        self.machines.append(result["machine"])
        for kind, files in result["files"].items():
            folder = search.scratch / f"task-{answer['part']}"
            folder.mkdir(exist_ok=True)
            for name, data in files:
                (folder / name).write_bytes(data)
            search.made[kind] = str(folder / files[0][0])
        if result["inputs"]:
            search.reports.append({"speed": {"inputs": result["inputs"]}})
        for index, row in enumerate(result["rows"]):
            row = result["rows"][index] = dict(row, measured_on=where)
            if "calibration" in row.get("options", {}) and search.split:     # the halves are the worker's
                row["options"]["calibration"] = f"{search.split['name']} (the calibration half)"
            report = result["reports"].get(row["kind"])
            if report is not None and row["kind"] in search.made and worker is not None:
                search.reuse.hold(row["kind"], kind_options(row["kind"], search.config), row,
                                  dict(report, output=search.made[row["kind"]]), worker)
            search.budget.ctx.data("candidate", row)

    def run_tune(self, params, sub) -> dict:
        from app.core.tune.jobs import TUNE
        from app.core.tune.spread import spread_tune
        return spread_tune(TUNE, params, self.address, self.tasks, sub)

    def target(self) -> dict:
        return {"cluster": True, "name": f"Ray cluster {self.address}", "address": self.address,
                "note": NOTE} | self.cluster

    def machine(self) -> dict:
        """A worker's (the workers are alike, or spreading is not valid); this machine's when
        no candidate was made."""
        from app.core.optimize.machine import machine_facts
        return self.machines[0] if self.machines else machine_facts(self.config)


def check_elsewhere(params: OptimizeParams) -> None:
    """Before a search on a target or a cluster: the data folder (the search's, or the
    Session tab's, which becomes the search's) can travel there, and the folder here can
    take what comes back (checked before any work)."""
    from app.core.optimize.ship import prepare_folder
    from app.core.session.data_files import folder_files

    if not params.data and params.session.inputs.data:
        params.data, params.session.inputs.data = params.session.inputs.data, ""
    if params.data:
        params.data = str(Path(params.data).expanduser().absolute())
        folder_files(params.data)
    model = Path(params.model).expanduser()
    if not model.is_file():
        raise UserError("not-found", f"{model}: no such model file")
    prepare_folder(Path(params.out_dir).expanduser(), params.force, model, params.keep_candidates)


def spread_optimize(job: Job, part: Job, params: OptimizeParams, address: str, tasks: int | None = None,
                    ctx=None) -> dict:
    """The optimize entry's spread: the search, its candidates made and measured on the workers,
    each task's share run by `part` (its checks, check_elsewhere, made by the one start function first)."""
    from app.core.jobs.protocol import JobContext
    from app.core.optimize.search import optimize

    return optimize(params, ctx or JobContext(), ClusterPlace(address, part, tasks))
