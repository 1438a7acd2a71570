"""Every tab runs its job through one JobControl: Start and Cancel, a progress bar that never
says 100 % while work remains, the time left from the work measured, one line on why a job
stopped, the result to the view, and the caption greyed while a run is on. Real jobs run
here (tests.sample_jobs), in child processes as a tab's do."""

import time

import pytest

from app.core.jobs.errors import JobCancelled
from app.gui.shell.job_control import JobControl, RunOf, eta_text, progress_percent
from app.gui.shell.jobs import JobManager
from app.gui.widgets.run_caption import RunCaption
from tests.sample_jobs import COOPERATIVE, ECHO, USER_ERROR, SampleParams


@pytest.fixture
def manager(qtbot):
    jobs = JobManager()
    yield jobs
    jobs.shutdown()


def control_in(qtbot, manager, caption=None, start=lambda: None):
    control = JobControl(manager, start, "Measure", caption=caption)
    for widget in (control.start_button, control.cancel_button, control.progress, control.status):
        qtbot.addWidget(widget)
    return control


def test_a_finished_job_goes_to_the_view_with_what_it_ran_on(qtbot, manager):
    control = control_in(qtbot, manager)
    shown = []
    run = RunOf("m.onnx", "m")
    with qtbot.waitSignal(control.ended, timeout=60000):
        job = control.run("Echo", ECHO, SampleParams(value="hi"), lambda result, ran: shown.append((result, ran)),
                          subject=run)
        assert control.running and control.job is job
        assert not control.start_button.isEnabled() and control.cancel_button.isEnabled()
        assert not control.progress.isHidden()
    assert [(result["echo"], ran) for result, ran in shown] == [("hi", run)]
    assert not control.running and control.start_button.isEnabled() and not control.cancel_button.isEnabled()
    assert control.progress.isHidden()
    assert control.progress.value() == 66, "the last progress the job sent (2/3), not a made-up 100"


def test_start_waits_for_the_view_to_be_ready_and_for_the_job_to_end(qtbot, manager):
    control = control_in(qtbot, manager)
    control.set_ready(False)
    assert not control.start_button.isEnabled()
    control.set_ready(True)
    with qtbot.waitSignal(control.ended, timeout=60000):
        control.run("Echo", ECHO, SampleParams(), lambda *_: None)
        control.set_ready(True)
        assert not control.start_button.isEnabled(), "one job at a time"
        assert control.run("Echo again", ECHO, SampleParams(), lambda *_: None) is None
    assert control.start_button.isEnabled()


def test_start_button_calls_the_views_start(qtbot, manager):
    started = []
    control = control_in(qtbot, manager, start=lambda: started.append(True))
    control.start_button.click()
    assert started == [True]


def test_cancel_stops_the_job_and_leaves_the_earlier_result_greyed(qtbot, manager):
    caption = RunCaption("nothing yet")
    qtbot.addWidget(caption)
    caption.show_run("m.onnx", "earlier", [])
    control = control_in(qtbot, manager, caption)
    stopped = []
    control.stopped.connect(lambda exc, ran: stopped.append((exc, ran)))
    control.run("Wait", COOPERATIVE, SampleParams(), lambda *_: pytest.fail("a cancelled job has no result"),
                subject=RunOf("m.onnx", "new run"))
    assert caption.state == "running" and "new run" in caption.text()
    qtbot.waitUntil(lambda: control.progress.maximum() == 0, timeout=60000)    # no known end: a busy bar
    with qtbot.waitSignal(control.ended, timeout=60000):
        control.cancel_button.click()
    [(exc, ran)] = stopped
    assert isinstance(exc, JobCancelled) and ran.label == "new run"
    assert control.status.text() == "Cancelled."
    assert caption.state == "earlier", "the earlier result stays, greyed, as an earlier run's"


def test_a_failed_job_says_why_in_one_line(qtbot, manager):
    control = control_in(qtbot, manager)
    with qtbot.waitSignal(control.ended, timeout=60000):
        control.run("Fail", USER_ERROR, SampleParams(), lambda *_: pytest.fail("no result"))
    assert control.status.text() == "Stopped: the value is wrong"
    assert control.status.styleSheet().startswith("color:"), "in the colour of a failure"
    control.say("Ready.")
    assert control.status.styleSheet() == ""


def test_the_bar_never_says_100_while_work_remains():
    assert progress_percent(0.37) == 37
    assert progress_percent(0.999) == 99
    assert progress_percent(1.0) == 100
    assert progress_percent(1.7) == 100 and progress_percent(-0.1) == 0


def test_the_time_left_is_said_in_the_unit_it_reads_best_in():
    assert eta_text(30.4) == "about 30 s left"
    assert eta_text(0.2) == "about 1 s left"
    assert eta_text(300.0) == "about 5 min left"
    assert eta_text(32400.0) == "about 9.0 h left"
    assert eta_text(None) == "", "no rate to go by yet"


def test_the_time_left_comes_from_the_work_measured():
    from app.gui.shell.jobs import RunningJob

    job = RunningJob("t", ECHO, worker=None, thread=None, started_at=time.monotonic() - 40.0)
    job.fraction = 0.01
    assert job.eta_s() is None, "too little done to go by"
    job.fraction = 0.25
    assert 119 < job.eta_s() < 130, "a quarter done in 40 s: three quarters in about 120 s"
    job.state = "done"
    assert job.eta_s() is None
