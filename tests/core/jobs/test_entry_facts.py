"""A job's facts live on its entry: where it may run, how it spreads over a cluster,
whether history keeps its result, which parameters are files it writes, whether it
measures, what it checks before it starts; the one start function acts on those facts, not
on a name. Every job is started through it, and it is the one place history is written; and
the window starts every job on its parameters dataclass, never on a dict."""

import ast
import dataclasses
import re
from pathlib import Path

import pytest

from app.core.jobs.entry import CLUSTER, HERE, TARGET
from app.core.launch.registry import JOBS

ROOT = Path(__file__).resolve().parents[3]
#: a result written into the history, a job handle made by hand, a spread called by name
HISTORY_WRITE = re.compile(r"\.record\(|\bSAMPLES_KEY\b")
HANDLE_MADE = re.compile(r"\b(JobHandle|RemoteHandle)\(|\brun_spread\(|\bspread_(sweep|compare|tune)\(")


def app_lines(pattern: re.Pattern) -> list[str]:
    found = []
    for path in sorted((ROOT / "app").rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line) and not line.lstrip().startswith(("#", "def ")):
                found.append(f"{path.relative_to(ROOT).as_posix()}:{number}: {line.strip()}")
    return found


@pytest.mark.parametrize("job", JOBS, ids=lambda job: job.name)
def test_every_entry_declares_its_facts(job):
    assert HERE in job.runs and job.runs <= {HERE, TARGET, CLUSTER}, "where it may run: here, and perhaps elsewhere"
    fields = {field.name for field in dataclasses.fields(job.params)}
    assert set(job.outputs) <= fields, "its outputs are fields of its parameters"
    assert job.records is None or [other for other in JOBS if other.records and other.records.kind == job.records.kind] \
        == [job], "history keeps it under a kind of its own"
    assert not job.on_target or job.measures, "a target runs only jobs that measure"
    assert CLUSTER not in job.runs or job.on_target
    assert (CLUSTER in job.runs) == (job.spread is not None), "a job a cluster runs says how it spreads"


def test_where_a_run_may_go_follows_the_entry_not_its_name():
    """The one start function refuses a place by the entry's `runs`: the same entry told it
    runs here only is refused on a target and a cluster before either is looked up, and one
    told it runs anywhere gets past that check to the place itself."""
    from app.core.bench.jobs import BENCH
    from app.core.jobs.entry import ANYWHERE, LOCAL_ONLY
    from app.core.launch.start import Where, start

    params = {"path": "m.onnx"}
    for runs, refused in ((LOCAL_ONLY, True), (ANYWHERE, False)):
        entry = dataclasses.replace(BENCH, runs=runs)
        for where in (Where(TARGET, "no-such-target"), Where(CLUSTER, "127.0.0.1:1")):
            run = start(entry, params, where)          # not started: nothing is contacted
            said = str(run.handle.error or "")
            assert ("this machine only" in said or "not spread over a cluster" in said) == refused, (runs, said)


def test_parameters_are_checked_once_before_any_place_is_contacted():
    """Wrong parameters end the run with one UserError whatever the place: none is contacted."""
    from app.core.bench.jobs import BENCH
    from app.core.jobs.errors import UserError
    from app.core.launch.start import Where, start

    for where in (Where(), Where(TARGET, "no-such-target")):
        error = start(BENCH, {"path": "m.onnx", "no_such_setting": 1}, where).handle.error
        assert isinstance(error, UserError) and "unknown setting" in str(error)


def test_an_entrys_own_checks_run_before_it_starts(tmp_path):
    """A sweep over a dimension the model lacks is refused here, from its entry's check, before
    a target (not even saved) is looked up."""
    from app.core.bench.jobs import SWEEP
    from app.core.launch.start import Where, start
    from tests import models

    path = str(models.save(models.mlp(), tmp_path / "mlp.onnx"))
    for where in (Where(), Where(TARGET, "no-such-target")):
        run = start(SWEEP, {"path": path, "dim": "nosuchdim", "dim_values": [1, 2]}, where)
        assert "no symbolic dimension named nosuchdim" in str(run.handle.error), where


def test_the_history_kinds_are_the_registrys():
    from app.core.launch.registry import RECORDED, RECORDED_KINDS, recorded_entry

    assert RECORDED_KINDS == tuple(job.records.kind for job in JOBS if job.records)
    assert all(recorded_entry(job.records.kind) is job for job in RECORDED)
    assert recorded_entry("no-such-kind") is None


def test_the_runs_field_is_required():
    from app.core.jobs.entry import Job
    from app.core.session.jobs import NoParams
    with pytest.raises(TypeError):
        Job("x", lambda params, ctx: None, NoParams)


def test_history_is_written_in_one_place():
    """The store writes an entry; the one recorder, called by the one start function, is the
    only code that asks it to. A job only hands over the latencies for the chart."""
    found = [line for line in app_lines(HISTORY_WRITE) if not line.startswith(
        ("app/core/store/recording.py:", "app/core/store/history.py:"))]
    assert all("SAMPLES_KEY" in line and line.startswith("app/core/bench/jobs.py:") for line in found), \
        "\n".join(found)
    callers = app_lines(re.compile(r"\bkeep\(|recording import keep"))
    assert {line.split(":")[0] for line in callers} == {"app/core/launch/start.py"}, "\n".join(callers)


def test_every_job_is_started_through_the_one_start_function():
    """No handle is made, and no spread called, outside the runner, the start function and
    the jobs that run their parts (a comparison's members, a tuning race …)."""
    allowed = ("app/core/runner/", "app/core/launch/start.py", "app/core/targets/handle.py",
               "app/core/targets/cluster.py", "app/core/measure/alternate.py", "app/core/bench/jobs.py",
               "app/core/bench/spread.py", "app/core/tune/jobs.py", "app/core/tune/spread.py",
               "app/core/optimize/spread.py")
    found = [line for line in app_lines(HANDLE_MADE) if not line.startswith(allowed)]
    assert not found, "\n".join(found)


def _is_dict(node, dict_names: set[str], dict_methods: set[str]) -> bool:
    if isinstance(node, (ast.Dict, ast.DictComp)):
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in dict_methods:
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _is_dict(node.left, dict_names, dict_methods) or _is_dict(node.right, dict_names, dict_methods)
    if isinstance(node, ast.IfExp):
        return _is_dict(node.body, dict_names, dict_methods) or _is_dict(node.orelse, dict_names, dict_methods)
    return isinstance(node, ast.Name) and node.id in dict_names


def _returns_dict(function: ast.FunctionDef) -> bool:
    if isinstance(function.returns, ast.Name) and function.returns.id == "dict":
        return True
    return any(isinstance(node, ast.Return) and _is_dict(node.value, set(), set()) for node in ast.walk(function))


def dict_starts(source: str) -> list[int]:
    """The lines of `source` that start a job (`….jobs.start(title, entry, params)`) on a dict:
    a literal, dict(…), a local name bound to one, or a method of the module that returns one."""
    tree = ast.parse(source)
    functions = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    dict_methods = {function.name for function in functions if _returns_dict(function)}
    found = []
    for function in functions:
        dict_names = {target.id for node in ast.walk(function) if isinstance(node, ast.Assign)
                      and _is_dict(node.value, set(), dict_methods)
                      for target in node.targets if isinstance(target, ast.Name)}
        for node in ast.walk(function):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "start"):
                continue
            receiver = node.func.value
            if not (isinstance(receiver, ast.Attribute) and receiver.attr == "jobs"
                    or isinstance(receiver, ast.Name) and receiver.id == "jobs"):
                continue
            params = node.args[2] if len(node.args) > 2 else next(
                (keyword.value for keyword in node.keywords if keyword.arg == "params"), None)
            if params is not None and _is_dict(params, dict_names, dict_methods):
                found.append(node.lineno)
    return sorted(set(found))


def test_the_scan_finds_a_dict_parameter_start():
    source = """
class Panel:
    def params(self) -> dict:
        return {"path": self.path}

    def run(self, model):
        self.jobs.start("a", BENCH, {"path": model.path})
        self.context.jobs.start("b", BENCH, dict(path=model.path))
        params = {"path": model.path}
        self.jobs.start("c", BENCH, params, on_result=print)
        self.jobs.start("d", BENCH, self.params())
        jobs.start("e", BENCH, params={**params})
        self.jobs.start("fine", BENCH, BenchParams(path=model.path))
        self.thread.start()
"""
    assert dict_starts(source) == [7, 8, 10, 11, 12]


def test_the_window_starts_no_job_on_a_dict():
    found = []
    for path in sorted((ROOT / "app" / "gui").rglob("*.py")):
        found += [f"{path.relative_to(ROOT)}:{line}" for line in dict_starts(path.read_text(encoding="utf-8"))]
    assert not found, "jobs started on a dict, not on the entry's parameters:\n" + "\n".join(found)
