"""How a Ray task's failure reads, without a cluster (app.core.targets.cluster._answer)."""

from types import SimpleNamespace

import pytest

from app.core.jobs.errors import UserError
from app.core.targets.cluster import _answer

ray = pytest.importorskip("ray")


def _raising(error):
    def get(_ref):
        raise error
    return SimpleNamespace(get=get, exceptions=ray.exceptions)


def test_a_task_stopped_while_the_search_stops_is_no_lost_task_even_wrapped():
    # once, in CI: Ray wrapped the cancel in "RayTaskError(TaskCancelledError)", and a cancelled
    # cluster search failed with "a task on the Ray cluster … was lost: Task: … was cancelled."
    wrapped = ray.exceptions.RayTaskError("part", "traceback", ray.exceptions.TaskCancelledError()).as_instanceof_cause()
    assert type(wrapped).__name__ == "RayTaskError(TaskCancelledError)"
    for error in (wrapped, ray.exceptions.TaskCancelledError()):
        assert _answer(_raising(error), "ref", "127.0.0.1:1", stopping=True) is None


def test_a_task_cancelled_while_nobody_stops_the_search_is_a_lost_task():
    with pytest.raises(UserError, match="was lost"):
        _answer(_raising(ray.exceptions.TaskCancelledError()), "ref", "127.0.0.1:1", stopping=False)
