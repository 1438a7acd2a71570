"""A local Ray cluster of two single-CPU nodes for the cluster tests, each node started in
the foreground (--block) so that stopping the test's processes stops exactly this cluster."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.targets.sshd import ROOT, free_port

RAY = shutil.which("ray", path=str(Path(sys.executable).parent)) or shutil.which("ray")


class Cluster:
    def __init__(self, folder: Path):
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        # A token file in ~/.ray (left by any Ray session of this user) turns token authentication on for
        # the head but not for the clients: this throwaway cluster and its drivers here run without it
        os.environ.setdefault("RAY_AUTH_MODE", "disabled")
        env = dict(os.environ, PYTHONPATH=str(ROOT), RAY_USAGE_STATS_ENABLED="0")
        # Under `coverage run` every Python process inheriting this would write a data file: each
        # Ray worker and each `ray status` poll. The jobs' own children are what is measured.
        env.pop("COVERAGE_PROCESS_CONFIG", None)
        env.pop("COVERAGE_PROCESS_START", None)
        self.env = env
        common = ["--num-cpus=1", "--block", "--disable-usage-stats"]
        with open(folder / "ray.log", "wb") as log:       # each Ray process holds its own copy
            # Ray's sockets live under its temp dir and a socket's path has at most 107 characters: a
            # pytest folder (deeper still in an xdist worker) is too long, so a short one of our own
            self.temp_dir = tempfile.mkdtemp(prefix="ortune-ray-")
            head = [RAY, "start", "--head", f"--port={self.port}", "--include-dashboard=false",
                    f"--temp-dir={self.temp_dir}", *common]
            self.processes = [subprocess.Popen(head, env=env, stdout=log, stderr=log)]
            self._wait(1)
            self.processes.append(subprocess.Popen([RAY, "start", f"--address={self.address}", *common], env=env,
                                                   stdout=log, stderr=log))
            self._wait(2)

    def _wait(self, nodes: int, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            done = subprocess.run([RAY, "status", f"--address={self.address}"], capture_output=True, text=True,
                                  env=self.env)
            if done.returncode == 0 and done.stdout.count("node_") >= nodes:
                return
            time.sleep(1)   # polling a cluster that is starting: there is no event to wait on
        raise RuntimeError(f"the local Ray cluster did not get {nodes} nodes in {timeout} s")

    def stop(self) -> None:
        for process in reversed(self.processes):
            process.terminate()
        for process in self.processes:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(self.temp_dir, ignore_errors=True)
