"""Finished jobs are released: only the newest few keep their thread and result."""

import gc
import tracemalloc
import weakref

import shiboken6
from PySide6.QtCore import QCoreApplication, QEvent

from app.gui.shell.jobs import JobManager
from app.gui.shell.jobs_dock import JobsTable
from tests.sample_jobs import PAYLOAD, SampleParams

KEPT = 20
JOBS = 200
KIB = 64


def deferred_deletes() -> None:
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()


def test_two_hundred_jobs_leave_only_the_newest_behind(qtbot, no_dangling_qthreads):
    manager = JobManager(keep_finished=KEPT)
    table = JobsTable(manager)
    qtbot.addWidget(table)
    results, workers = [], []
    warm_up = manager.start("warm-up", PAYLOAD, SampleParams(kib=1))
    qtbot.waitUntil(lambda: warm_up.ended_at is not None, timeout=30000)   # imports are not results
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for batch in range(0, JOBS, 25):
            jobs = [manager.start(f"job {i}", PAYLOAD, SampleParams(kib=KIB),
                                  on_result=lambda result: results.append(weakref.ref(result)))
                    for i in range(batch, batch + 25)]
            workers += [weakref.ref(job.worker) for job in jobs]
            qtbot.waitUntil(lambda: all(job.ended_at is not None for job in jobs), timeout=60000)
            deferred_deletes()
        deferred_deletes()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    threads = [t for t in no_dangling_qthreads if shiboken6.isValid(t)]
    live_results = [r for r in results if r() is not None]
    print(f"\n{JOBS} jobs of {KIB} KiB, {KEPT} kept: {len(threads)} QThreads alive, {len(manager.jobs)} jobs kept, "
          f"{len(live_results)} results alive, {held / 2**20:.2f} MiB still allocated "
          f"(all results: {JOBS * KIB / 1024:.1f} MiB)")
    assert len(results) == JOBS and all(job.state == "done" for job in manager.jobs)
    assert len(manager.jobs) == KEPT and table.rowCount() == KEPT
    assert len(threads) <= KEPT
    assert len(live_results) <= KEPT
    assert all(w() is None for w in workers), "every worker is deleted once its thread ends"
    assert held < JOBS * KIB * 1024 / 4, "most of the results' memory is given back"
    newest = [job.title for job in manager.jobs]
    assert newest == [f"job {i}" for i in range(JOBS - KEPT, JOBS)]
    assert sorted(table.rows.values()) == list(range(KEPT))
    assert {table.item(row, 0).text() for row in range(KEPT)} == set(newest)


def test_a_result_a_tab_still_holds_outlives_its_job(qtbot):
    manager = JobManager(keep_finished=1)
    shown = []
    first = manager.start("shown", PAYLOAD, SampleParams(kib=1), on_result=shown.append)
    qtbot.waitUntil(lambda: first.ended_at is not None, timeout=30000)
    second = manager.start("next", PAYLOAD, SampleParams(kib=1))
    qtbot.waitUntil(lambda: second.ended_at is not None, timeout=30000)
    deferred_deletes()
    assert manager.jobs == [second] and first.result is None and first.thread is None
    assert len(shown[0].blob) == 1024
