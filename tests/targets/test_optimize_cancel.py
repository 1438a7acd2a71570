"""A search spread over Ray workers, cancelled partway (the window's Cancel, which cancels the
run from another thread; Ctrl+C or SIGTERM on the command line): the outstanding tasks stop,
every candidate already measured is kept, and the partial result says it was cancelled."""

import hashlib
import json
import os
import signal
import subprocess
import sys
import time

from app.core.jobs.entry import CLUSTER
from app.core.optimize.jobs import OPTIMIZE
from app.core.session.config import SessionConfig
from app.core.store import kept
from app.core.launch.start import Where, start
from tests import models
from tests.cli.conftest import ROOT

KINDS = ["optimize", "ort", "int8-dynamic"]


def test_cancel_from_another_thread_stops_the_tasks_and_keeps_what_was_measured(ray_cluster, tmp_path):
    model = models.save(models.mlp(width=22, depth=1), tmp_path / "cancelled.onnx")
    params = {"model": str(model), "out_dir": str(tmp_path / "ship"), "kinds": KINDS, "tune": False, "fresh": True,
              "budget_seconds": 120, "screen_seconds": 0.3, "session": SessionConfig(intra_op_num_threads=1).to_dict()}
    # three tasks on two single-CPU workers: the third waits for a worker, and is stopped
    run = start(OPTIMIZE, params, Where(CLUSTER, ray_cluster.address, 3)).start()
    measured = []
    for kind, payload in run.events():
        if kind == "data" and payload["kind"] == "candidate" and payload["payload"]["speedup"] is not None:
            measured.append(payload["payload"]["kind"])
            run.cancel()        # as the window's Cancel does, from a thread that is not the spread's
    assert run.error is None, run.error
    result = run.result
    assert result["partial"] is True and result["status"] == "cancelled"
    assert result["target"]["cancelled"]
    rows = {r["kind"]: r for r in result["candidates"] if r["kind"] in KINDS}
    assert measured and all(rows[k]["status"] == "passed" and rows[k]["history_id"] for k in measured), \
        "every candidate measured before the cancel is kept, and kept in the history"
    stopped = [k for k, r in rows.items() if r["status"] == "skipped" and (
        "cancelled before a worker measured it" in r["reason"] or "the search was stopped" in r["reason"])]
    assert not set(stopped) & set(measured)
    # the waiting task is stopped, unless a quick worker answered it before the cancel arrived
    assert bool(stopped) == (result["target"]["tasks_stopped"] > 0)
    shipped = json.loads((tmp_path / "ship" / "optimize.json").read_text())
    assert shipped["status"] == "cancelled" and "Partial" in (tmp_path / "ship" / "report.html").read_text()


def _kept_for(sha: str) -> bool:
    for note in kept.root().glob(f"*/{kept.NOTE}"):
        try:
            if json.loads(note.read_text())["model_sha256"] == sha:
                return True
        except (OSError, ValueError):
            pass
    return False


def test_sigterm_cancels_a_cluster_search_and_writes_the_partial_result(ray_cluster, tmp_path):
    model = models.save(models.mlp(width=26, depth=1), tmp_path / "stopped.onnx")
    sha = hashlib.sha256(model.read_bytes()).hexdigest()
    out = tmp_path / "ship"
    process = subprocess.Popen([sys.executable, "-m", "app", "optimize", str(model), "-o", str(out), "--kinds",
                                ",".join(KINDS), "--cluster", ray_cluster.address, "--cluster-tasks", "3",
                                "--no-tune", "--fresh",
                                "--budget-seconds", "120", "--screen-seconds", "0.3", "--threads", "1"],
                               env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    # three tasks on two workers, as above: the third starts only when the first has answered, so
    # the signal sent on that answer finds work under way (with one task a worker, the other
    # task's answer could come in the moments the signal took, and the search end whole)
    try:
        deadline = time.monotonic() + 240
        while not _kept_for(sha) and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)     # polling for the first candidate to come back: it has no event to wait on
        assert process.poll() is None, process.stderr.read()
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 3, stderr
    assert stderr.strip().splitlines()[-1] == "ortune: cancelled"   # after Ray's own note that SIGTERM came
    result = json.loads((out / "optimize.json").read_text())
    assert result["partial"] is True and result["status"] == "cancelled"
    made = [r for r in result["candidates"] if r["kind"] in KINDS and r["speedup"] is not None]
    assert made and all(r["status"] == "passed" for r in made), "what was measured is written"
