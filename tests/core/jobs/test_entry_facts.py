"""A job's facts live on its entry: where it may run, whether history keeps its result,
which parameters are files it writes, whether it measures; and no code outside the entry
asks a job its name to decide anything."""

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
    assert job.records in (None, "bench", "compare", "sweep", "gate")
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
