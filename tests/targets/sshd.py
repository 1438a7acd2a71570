"""A throwaway OpenSSH server on 127.0.0.1 for the remote-target tests: its own host key,
one client key made for the run, public keys only, and ORTune on the far side started with
its own settings and data folders (a second machine, as far as ORTune can tell).

CI installs Debian's openssh-server (.ci/run); on a developer's machine without sshd the
tests that need it are skipped, saying why, and in CI (CI set) they fail instead."""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SSHD = shutil.which("sshd") or next((p for p in ("/usr/sbin/sshd", "/usr/local/sbin/sshd") if Path(p).exists()),
                                    None)


@dataclass
class Server:
    port: int
    user: str
    client_key: Path
    host_key_pub: Path
    remote_home: Path          # the far side's settings and data folders live here
    process: subprocess.Popen

    def command(self, python: str = sys.executable) -> str:
        """How the far side starts ORTune: this checkout, with folders of its own."""
        env = (f"PYTHONPATH={ROOT} ORTUNE_CONFIG_DIR={self.remote_home / 'config'} "
               f"ORTUNE_DATA_DIR={self.remote_home / 'data'}")
        return f"env {env} {python} -m app"

    def fingerprint(self) -> str:
        done = subprocess.run(["ssh-keygen", "-lf", str(self.host_key_pub)], capture_output=True, text=True,
                              check=True)
        return done.stdout.split()[1]

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(folder: Path, other_host_keys: tuple[str, ...] = ()) -> Server:
    """`other_host_keys`: key types ("ecdsa", "rsa") the server offers beside its ED25519 key."""
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    for name in ("host_key", "client_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(folder / name)], check=True)
    for kind in other_host_keys:
        subprocess.run(["ssh-keygen", "-q", "-t", kind, "-N", "", "-f", str(folder / f"host_key_{kind}")], check=True)
    (folder / "authorized_keys").write_text((folder / "client_key.pub").read_text())
    os.chmod(folder / "authorized_keys", 0o600)
    port = free_port()
    config = folder / "sshd_config"
    config.write_text("\n".join([
        f"Port {port}", "ListenAddress 127.0.0.1", f"HostKey {folder / 'host_key'}",
        *[f"HostKey {folder / f'host_key_{kind}'}" for kind in other_host_keys],
        f"AuthorizedKeysFile {folder / 'authorized_keys'}", f"PidFile {folder / 'sshd.pid'}",
        "PasswordAuthentication no", "KbdInteractiveAuthentication no", "PubkeyAuthentication yes",
        "PermitRootLogin prohibit-password", "UsePAM no", "StrictModes no", "LogLevel ERROR",
        "AllowTcpForwarding no", "X11Forwarding no", "PrintMotd no"]) + "\n")
    if os.geteuid() == 0:
        Path("/run/sshd").mkdir(parents=True, exist_ok=True)       # privilege separation
    with open(folder / "sshd.log", "wb") as log:        # the server holds its own copy
        process = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stdout=subprocess.DEVNULL,
                                   stderr=log)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"sshd ended: {(folder / 'sshd.log').read_text()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
        except OSError:
            time.sleep(0.1)
    return Server(port, getpass.getuser(), folder / "client_key", folder / "host_key.pub", folder / "remote",
                  process)
