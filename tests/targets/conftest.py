import os

import pytest

from tests.cli.conftest import ortune  # noqa: F401  (the command-line fixture)
from tests.targets.sshd import SSHD, start_server


@pytest.fixture(scope="session")
def sshd(tmp_path_factory):
    if SSHD is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install openssh-server for the remote-target tests (see .ci/run)")
        pytest.skip("no OpenSSH server (sshd) on this machine: install openssh-server to run these")
    server = start_server(tmp_path_factory.mktemp("sshd"))
    yield server
    server.stop()


@pytest.fixture
def loop_target(sshd, ortune):
    """A target named `loop` for the throwaway server, its host key confirmed."""
    done = ortune("targets", "add", "loop", f"{sshd.user}@127.0.0.1", "--port", sshd.port, "--identity",
                  sshd.client_key, "--command", sshd.command(), "--trust", sshd.fingerprint(), "--force")
    assert done.code == 0, done.stderr
    return "loop"


@pytest.fixture(scope="session")
def ray_cluster(tmp_path_factory):
    from tests.targets.ray_cluster import RAY, Cluster
    if RAY is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install Ray (the test extra) for the cluster tests")
        pytest.skip("Ray is not installed: pip install -e '.[test]' brings it")
    cluster = Cluster(tmp_path_factory.mktemp("ray"))
    yield cluster
    cluster.stop()
