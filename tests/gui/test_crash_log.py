"""A native fault in the window leaves the stack of every thread in logs/crash.log."""

import os
import subprocess
import sys

from tests.cli.conftest import ROOT

CRASH = "from app.gui.shell.application import keep_crash_log; keep_crash_log(); import faulthandler; faulthandler._sigsegv()"


def test_a_fault_in_native_code_is_written_to_the_crash_log(tmp_path):
    env = {**os.environ, "ORTUNE_DATA_DIR": str(tmp_path / "data")}
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", CRASH], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=60)
        assert done.returncode != 0
    log = (tmp_path / "data" / "logs" / "crash.log").read_text()
    assert log.count("--- ORTune window started") == 2, "each start appends"
    assert log.count("Fatal Python error: Segmentation fault") == 2 and "<module>" in log


def test_a_log_folder_that_cannot_be_written_is_no_reason_not_to_start(tmp_path):
    (tmp_path / "data").write_text("a file where the folder should be")
    env = {**os.environ, "ORTUNE_DATA_DIR": str(tmp_path / "data")}
    done = subprocess.run([sys.executable, "-c", "from app.gui.shell.application import keep_crash_log; "
                           "keep_crash_log(); print('started')"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "started", done.stderr


def test_a_crash_log_past_its_size_starts_again(tmp_path):
    from app.gui.shell.application import CRASH_LOG_BYTES
    (tmp_path / "data" / "logs").mkdir(parents=True)
    log = tmp_path / "data" / "logs" / "crash.log"
    log.write_text("x" * (CRASH_LOG_BYTES + 1))
    env = {**os.environ, "ORTUNE_DATA_DIR": str(tmp_path / "data")}
    subprocess.run([sys.executable, "-c", "from app.gui.shell.application import keep_crash_log; keep_crash_log()"],
                   cwd=ROOT, env=env, check=True, timeout=60)
    assert log.read_text().startswith("--- ORTune window started") and log.stat().st_size < 200
