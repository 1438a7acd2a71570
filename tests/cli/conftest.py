import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


class CliResult:
    def __init__(self, done: subprocess.CompletedProcess):
        self.code = done.returncode
        self.stdout = done.stdout
        self.stderr = done.stderr

    def json(self):
        return json.loads(self.stdout)


@pytest.fixture
def ortune():
    """Run `python -m app ARGS` as a user would; returns code, stdout, stderr."""
    def run(*args, timeout=300, cwd=None):
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        done = subprocess.run([sys.executable, "-m", "app", *map(str, args)], capture_output=True, text=True,
                              timeout=timeout, cwd=cwd or ROOT, env=env)
        return CliResult(done)
    return run
