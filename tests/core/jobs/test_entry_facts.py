"""A job's facts live on its entry: where it may run, whether history keeps its result,
which parameters are files it writes, whether it measures; and no code outside the entry
asks a job its name to decide anything; and the window starts every job on its
parameters dataclass, never on a dict."""

import ast
import dataclasses
import re
from pathlib import Path

import pytest

from app.core.jobs.entry import CLUSTER, HERE, TARGET
from app.core.registry import JOBS

ROOT = Path(__file__).resolve().parents[3]
#: a decision made on a job's name: `job.name == "convert"`, `self.job.name in MEASURING` …
NAME_BRANCH = re.compile(r"\bjob\.name\s*(==|!=|\bin\b|\bnot in\b)|(==|!=)\s*\w*job\.name\b")
NAME_TABLE = re.compile(r"\b(MEASURING|RECORDED)\b")


@pytest.mark.parametrize("job", JOBS, ids=lambda job: job.name)
def test_every_entry_declares_its_facts(job):
    assert job.runs and job.runs <= {HERE, TARGET, CLUSTER}, "where it may run"
    fields = {field.name for field in dataclasses.fields(job.params)}
    assert set(job.outputs) <= fields, "its outputs are fields of its parameters"
    assert job.records in (None, "bench", "compare", "sweep")
    assert not job.on_target or job.measures, "a target runs only jobs that measure"
    assert CLUSTER not in job.runs or job.on_target


def test_the_facts_are_the_ones_the_targets_act_on():
    by_name = {job.name: job for job in JOBS}
    assert {"bench", "convert", "profile", "tune"} <= {name for name, job in by_name.items() if job.on_target}
    assert not {"netron", "graph-layout", "copy-trace", "inspect", "diff"} & {
        name for name, job in by_name.items() if job.on_target}
    assert by_name["convert"].outputs == ("output",) and by_name["copy-trace"].outputs == ("target",)
    assert by_name["bench"].records == "bench" and by_name["convert"].records is None


def test_the_runs_field_is_required():
    from app.core.jobs.entry import Job
    from app.core.session.jobs import NoParams
    with pytest.raises(TypeError):
        Job("x", lambda params, ctx: None, NoParams)


def test_no_app_code_branches_on_a_jobs_name():
    found = []
    for path in sorted((ROOT / "app").rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if NAME_BRANCH.search(line) or NAME_TABLE.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
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
