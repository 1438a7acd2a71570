"""First contact with a host that offers several keys: only the key whose fingerprint was
checked (given with --trust, or shown and confirmed on the terminal) is trusted; a key file
given as a relative path is stored absolute."""

import io
import os
from pathlib import Path

import pytest

from app.cli.main import main
from app.core.targets.store import known_hosts_file, load_targets
from tests.targets.sshd import SSHD, start_server


@pytest.fixture(scope="module")
def two_key_server(tmp_path_factory):
    if SSHD is None:
        pytest.skip("no OpenSSH server (sshd) on this machine: install openssh-server to run these")
    server = start_server(tmp_path_factory.mktemp("sshd2"), other_host_keys=("ecdsa",))
    yield server
    server.stop()


def _trusted_types(server) -> list[str]:
    """The key types trusted for this server's address."""
    return [line.split()[1] for line in known_hosts_file().read_text().splitlines()
            if line.startswith(f"[127.0.0.1]:{server.port} ")]


def test_trust_writes_only_the_checked_key(two_key_server, ortune):
    server = two_key_server
    done = ortune("targets", "add", "twokeys", f"{server.user}@127.0.0.1", "--port", server.port,
                  "--identity", server.client_key, "--trust", server.fingerprint(), "--force")
    assert done.code == 0, done.stderr
    assert _trusted_types(server) == ["ssh-ed25519"]             # the ECDSA key nobody checked is not trusted


def test_the_prompt_trusts_only_the_key_it_showed(two_key_server, monkeypatch, capsys):
    server = two_key_server

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr("sys.stdin", Terminal("y\n"))
    code = main(["targets", "add", "asked2", f"{server.user}@127.0.0.1", "--port", str(server.port),
                 "--identity", str(server.client_key), "--force"])
    assert code == 0
    shown = capsys.readouterr().err
    assert server.fingerprint() in shown and "ECDSA" not in shown
    assert _trusted_types(server) == ["ssh-ed25519"]


def test_a_relative_key_file_is_stored_absolute(two_key_server, ortune):
    server = two_key_server
    folder = Path(server.client_key).parent
    done = ortune("targets", "add", "relkey", f"{server.user}@127.0.0.1", "--port", server.port,
                  "--identity", Path(server.client_key).name, "--trust", server.fingerprint(), "--force",
                  cwd=folder)
    assert done.code == 0, done.stderr
    stored = load_targets()["relkey"].identity
    assert os.path.isabs(stored) and Path(stored).samefile(server.client_key)
