"""Every job is started through its entry: typed parameters that survive JSON, and no
module that names a job by a string."""

import dataclasses
import json
import pickle
import re
import typing
from pathlib import Path

import pytest

from app.core.jobs.params import Params
from app.core.launch.registry import JOBS

ROOT = Path(__file__).resolve().parents[3]
#: "package.module:function": how jobs were named before the registry
JOB_BY_NAME = re.compile(r"""["'](?:app|tests)(?:\.\w+)+:\w+["']""")


def example(kind):
    """A value of an annotated type that is not its field's default."""
    origin = typing.get_origin(kind)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType")):
        return example(next(k for k in typing.get_args(kind) if k is not type(None)))
    if kind is str:
        return "model.onnx"
    if kind is bool:
        return True
    if kind is int:
        return 3
    if kind is float:
        return 2.5
    if origin is list:
        item = typing.get_args(kind)[0]
        return [example(item), example(item)]
    if origin is dict or kind is dict:
        return {"path": "a.onnx"} if typing.get_args(kind) == (str, str) else {}
    if kind is typing.Any:
        return "value"
    if isinstance(kind, type) and issubclass(kind, Params):
        return example_params(kind).to_dict()
    return kind().to_dict()            # a preset type of its own (SessionConfig)


#: fields with a format of their own, or whose last choice the other examples rule out: an example of it
FORMATTED = {"memory_limit": "2G", "intra_op_thread_affinities": "1;2",   # three threads: two groups
             "share": [1, 3], "kinds": ["fp16", "ort"],
             "device_policy": "none",       # a policy picks the providers: the example names some
             "min_cosine": 0.999, "min_top1": 0.9, "policy": "float16",     # a tolerance's, within its range
             "engine": "ort"}            # generate's genai engine refuses a reference (`against`), which the example names


def example_params(cls):
    hints = typing.get_type_hints(cls)
    data = {}
    for field in dataclasses.fields(cls):
        choices = field.metadata.get("choices")
        data[field.name] = (FORMATTED[field.name] if field.name in FORMATTED else choices[-1] if choices
                            else example(hints[field.name]))
    return cls.from_dict(data)


def test_entries_have_unique_names_and_typed_parameters():
    assert len({job.name for job in JOBS}) == len(JOBS) >= 18
    for job in JOBS:
        assert dataclasses.is_dataclass(job.params) and issubclass(job.params, Params), job.name
        assert job.func.__qualname__ == job.func.__name__, f"{job.name}: a job function lives at module level"


@pytest.mark.parametrize("job", JOBS, ids=lambda job: job.name)
def test_parameters_round_trip_through_json_and_pickle(job):
    params = example_params(job.params)
    again = job.params.from_dict(json.loads(json.dumps(params.to_dict())))
    assert again.to_dict() == params.to_dict()
    assert pickle.loads(pickle.dumps((job, params)))[1].to_dict() == params.to_dict()


@pytest.mark.parametrize("job", JOBS, ids=lambda job: job.name)
def test_unknown_parameters_are_refused(job):
    from app.core.jobs.errors import UserError

    with pytest.raises(UserError, match="unknown setting"):
        job.params.from_dict({**example_params(job.params).to_dict(), "no_such_setting": 1})


def test_no_module_names_a_job_by_string():
    offenders = []
    for folder in ("app", "tests", "benchmarks"):
        for path in (ROOT / folder).rglob("*.py"):
            if path == Path(__file__):
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if JOB_BY_NAME.search(line):
                    offenders.append(f"{path.relative_to(ROOT)}:{number}")
    assert not offenders


def test_the_pattern_finds_a_job_named_by_string():
    assert JOB_BY_NAME.search('run_job("app.core.bench.jobs:bench_job", {})')


def test_callers_in_the_app_leave_the_process_choice_to_the_entry():
    pattern = re.compile(r"\bisolate\s*=")
    runner = ROOT / "app/core/runner/process.py"
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "app").rglob("*.py")
                 if p != runner and pattern.search(p.read_text(encoding="utf-8"))]
    assert not offenders


def test_every_result_type_is_a_dict_or_a_typed_contract():
    for job in JOBS:
        assert job.result is dict or typing.is_typeddict(job.result), job.name


def _quick_params(job, tmp_path):
    from tests import models

    mlp = str(models.save(models.mlp(width=8, depth=1), tmp_path / "mlp.onnx"))
    quick = {"path": mlp, "session": {"intra_op_num_threads": 1}}
    return {
        "inspect": {"path": mlp},
        "inspect-with-cost": {"path": mlp},
        "diff": {"a": mlp, "b": mlp},
        "graph-layout": {"path": mlp},
        "probe-providers": {},
        "bench": {**quick, "run": {"warmup": 1, "iterations": 5}, "record": False},
        "compare": {"models": [{"path": mlp}, {"path": mlp}], "session": quick["session"],
                    "run": {"warmup": 1, "iterations": 5}, "record": False, "max_seconds": 1},
        "sweep": {**quick, "concurrency_values": [1, 2], "run": {"warmup": 1, "iterations": 5}, "record": False},
        "convert": {"kind": "fp16", "input": mlp, "output": str(tmp_path / "half.onnx")},
        "profile": {"model": mlp, "runs": 2, "out": str(tmp_path / "trace.json")},
        "tune": {**quick, "limits": {"max_threads": 1, "opt_levels": ["basic", "all"], "execution_modes": ["sequential"],
                                     "try_spinning": False, "try_dynamic_block_base": False, "try_io_binding": False,
                                     "try_cuda_graph": False},
                 "block_runs": 2, "final_blocks": 1, "grid_blocks": 1, "strategy": "grid", "warmup": 1},
        "diagnose": {**quick, "runs": 2, "timing_runs": 5, "timing_s": 0.2},
        "iobinding": {**quick, "provider": "cpu", "iterations": 3, "warmup": 1},
        "drift": {"source": mlp, "variant": mlp, "session": quick["session"]},
        "gate": {"new": mlp, "old": mlp, "new_session": quick["session"], "old_session": quick["session"],
                 "run": {"warmup": 1, "iterations": 5}, "max_seconds": 1, "record": False},
        "optimize": {"model": mlp, "out_dir": str(tmp_path / "ship"), "kinds": ["fp16"], "screen_seconds": 0.05,
                     "tune": False, "session": quick["session"]},
        "repair": {"convert": {"kind": "fp16", "input": mlp, "output": str(tmp_path / "kept.onnx"), "speed_s": 0},
                   "max_steps": 1},
    }.get(job.name)


@pytest.mark.parametrize("job", [j for j in JOBS if typing.is_typeddict(j.result) and j.name not in
                                 ("compare-member", "sweep-cell", "read-trace", "diagnose-evidence")],
                         ids=lambda job: job.name)   # parts: the jobs that run them are run here
def test_real_results_carry_every_promised_field(job, tmp_path):
    from app.core.runner.process import run_job

    params = _quick_params(job, tmp_path)
    assert params is not None, f"give {job.name} quick parameters here"
    result = run_job(job, params)
    missing = set(job.result.__required_keys__) - set(result)
    assert not missing, f"{job.name} lacks {sorted(missing)}"
