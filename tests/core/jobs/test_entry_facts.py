"""A job's facts live on its entry: where it may run, how it spreads over a cluster,
whether history keeps its result, which parameters are files it writes, whether it
measures; and no code outside the entry asks a job its name to decide anything. Every job
is started through the one start function, which is the one place history is written."""

import dataclasses
import re
from pathlib import Path

import pytest

from app.core.jobs.entry import CLUSTER, HERE, TARGET
from app.core.registry import JOBS
from app.core.store.history import KINDS

ROOT = Path(__file__).resolve().parents[3]
#: a decision made on a job's name: `job.name == "convert"`, `self.job.name in MEASURING` …
NAME_BRANCH = re.compile(r"\bjob\.name\s*(==|!=|\bin\b|\bnot in\b)|(==|!=)\s*\w*job\.name\b")
NAME_TABLE = re.compile(r"\b(MEASURING|RECORDED)\b")
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
    assert job.runs and job.runs <= {HERE, TARGET, CLUSTER}, "where it may run"
    fields = {field.name for field in dataclasses.fields(job.params)}
    assert set(job.outputs) <= fields, "its outputs are fields of its parameters"
    assert job.records is None or job.records.kind in KINDS, "history keeps it under a kind it knows"
    assert not job.on_target or job.measures, "a target runs only jobs that measure"
    assert CLUSTER not in job.runs or job.on_target
    assert (CLUSTER in job.runs) == (job.spread is not None), "a job a cluster runs says how it spreads"


def test_the_facts_are_the_ones_the_targets_act_on():
    by_name = {job.name: job for job in JOBS}
    assert {"bench", "convert", "profile", "tune"} <= {name for name, job in by_name.items() if job.on_target}
    assert not {"netron", "graph-layout", "copy-trace", "inspect", "diff"} & {
        name for name, job in by_name.items() if job.on_target}
    assert by_name["convert"].outputs == ("output",) and by_name["copy-trace"].outputs == ("target",)
    recorded = {name: job.records.kind for name, job in by_name.items() if job.records}
    assert recorded == {"bench": "bench", "compare": "compare", "sweep": "sweep", "profile": "profile",
                        "tune": "tune", "convert": "convert", "drift": "drift", "optimize": "optimize"}
    assert not {"compare-member", "sweep-cell", "tune-race", "convert-make", "repair"} & set(recorded), \
        "the parts a job runs are not kept apart from it"


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


def test_history_is_written_in_one_place():
    """The store writes an entry; the one recorder, called by the one start function, is the
    only code that asks it to. A job only hands over the latencies for the chart."""
    found = [line for line in app_lines(HISTORY_WRITE) if not line.startswith(
        ("app/core/store/recording.py:", "app/core/store/history.py:"))]
    assert all("SAMPLES_KEY" in line and line.startswith("app/core/bench/jobs.py:") for line in found), \
        "\n".join(found)
    callers = app_lines(re.compile(r"\bkeep\(|recording import keep"))
    assert {line.split(":")[0] for line in callers} == {"app/core/targets/start.py"}, "\n".join(callers)


def test_every_job_is_started_through_the_one_start_function():
    """No handle is made, and no spread called, outside the runner, the start function and
    the jobs that run their parts (a comparison's members, a tuning race …)."""
    allowed = ("app/core/runner/", "app/core/targets/start.py", "app/core/targets/handle.py",
               "app/core/targets/cluster.py", "app/core/bench/alternate.py", "app/core/bench/jobs.py",
               "app/core/bench/spread.py", "app/core/tune/jobs.py", "app/core/tune/spread.py")
    found = [line for line in app_lines(HANDLE_MADE) if not line.startswith(allowed)]
    assert not found, "\n".join(found)
