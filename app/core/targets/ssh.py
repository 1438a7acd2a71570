"""The system's OpenSSH client: the command lines ORTune runs, first contact with a host
(its key shown to the user, who confirms it), and what ssh's failures mean in one line.

Host keys are checked strictly against ORTune's own known-hosts file, which holds only
the keys the user confirmed (one per host, the one whose fingerprint was checked);
~/.ssh/known_hosts and the system's file are not read. A key is never accepted silently;
ssh never asks for a password (BatchMode): keys and agents only."""

from __future__ import annotations

import base64
import hashlib
import shlex
import shutil
import subprocess
from pathlib import Path

import app
from app.core.jobs.errors import UserError
from app.core.targets.store import Target, known_hosts_file

CONNECT_TIMEOUT_S = 10
SSH_FAILED = 255          # ssh's own exit status: the connection, not the remote command, failed
NOT_FOUND = 127           # the remote shell's: no such command


def ssh_program() -> str:
    found = shutil.which("ssh")
    if not found:
        raise UserError("no-ssh", "remote targets need the OpenSSH client (`ssh`), which is not on PATH")
    return found


def host_pattern(target: Target) -> str:
    """How known_hosts names the host: `host`, or `[host]:port` off the default port."""
    return target.host if target.port == 22 else f"[{target.host}]:{target.port}"


def ssh_command(target: Target, remote: list[str]) -> list[str]:
    """The ssh command line that runs `remote` (words, quoted for the remote shell) on `target`."""
    argv = [ssh_program(), "-T", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
            "-o", f"UserKnownHostsFile={known_hosts_file()}", "-o", "GlobalKnownHostsFile=/dev/null",
            "-o", f"ConnectTimeout={CONNECT_TIMEOUT_S}", "-o", "ServerAliveInterval=5",
            "-o", "ServerAliveCountMax=3", "-o", "LogLevel=ERROR", "-p", str(target.port)]
    if target.identity:
        argv += ["-i", str(Path(target.identity).expanduser()), "-o", "IdentitiesOnly=yes"]
    return argv + ["--", target.address, " ".join([target.command] + [shlex.quote(w) for w in remote])]


def explain_ssh_failure(target: Target, stderr: str, code: int | None) -> str:
    """ssh's failure as one line that says what to do."""
    text = stderr.strip()
    low = text.lower()
    where = target.describe()
    if "host identification has changed" in low or "host key for" in low and "changed" in low:
        return (f"the host key of {where} has changed since it was confirmed: someone may be intercepting the "
                f"connection, or the host was reinstalled; if you expected this, remove the target and add it again")
    if "host key verification failed" in low or "no host key is known" in low:
        return f"the host key of {where} is not confirmed: add the target again with `ortune targets add`"
    if "permission denied" in low:
        return f"{where} refused the login: check the user name and that your SSH key or agent is accepted there"
    if "could not resolve hostname" in low or "name or service not known" in low:
        return f"{where}: the host name cannot be resolved"
    if "connection refused" in low:
        return f"{where} refused the connection: no SSH server listens on port {target.port}"
    if "timed out" in low or "no route to host" in low or "network is unreachable" in low:
        return f"{where} cannot be reached: {_last_line(text)}"
    if code == NOT_FOUND or "command not found" in low or "no such file" in low:
        return ORTUNE_MISSING.format(where=where, command=target.command, version=app.__version__)
    if not text and code == SSH_FAILED:
        return (f"the SSH connection to {where} ended without a message (ssh exit 255): the connection dropped, "
                f"or the worker there was killed")
    return f"the SSH connection to {where} failed: {_last_line(text) or f'ssh exited with {code}'}"


ORTUNE_MISSING = ("ORTune is not installed on {where} (`{command}` was not found there): install it there with "
                  "`pip install ortune=={version}`, or give the target the command that starts it (--command)")


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def scan_host_keys(target: Target, timeout_s: int = 10) -> list[str]:
    """The host's public keys as known_hosts lines, fetched with ssh-keyscan (first contact)."""
    keyscan = shutil.which("ssh-keyscan")
    if not keyscan:
        raise UserError("no-ssh", "adding a target needs `ssh-keyscan` (OpenSSH), which is not on PATH")
    try:
        done = subprocess.run([keyscan, "-T", str(timeout_s), "-p", str(target.port), "--", target.host],
                              capture_output=True, text=True, timeout=timeout_s + 5)
    except subprocess.TimeoutExpired:
        raise UserError("unreachable", f"{target.describe()} did not answer within {timeout_s} s") from None
    lines = [line for line in done.stdout.splitlines() if line.strip() and not line.startswith("#")]
    if not lines:
        raise UserError("unreachable", f"{target.describe()} gave no SSH host key: "
                                       f"{_last_line(done.stderr) or 'no SSH server answered'}")
    return lines


#: how ssh-keygen names each key type in a fingerprint line
_KEY_TYPES = {"ssh-ed25519": "ED25519", "ssh-rsa": "RSA", "ssh-dss": "DSA", "sk-ssh-ed25519@openssh.com": "ED25519-SK",
              "sk-ecdsa-sha2-nistp256@openssh.com": "ECDSA-SK"}
#: the key shown for confirmation when a host offers several: the strongest first
_PREFERRED = ("ED25519", "ECDSA", "RSA")


def fingerprint(line: str) -> str | None:
    """`SHA256:… (TYPE)` of one `host type base64` line, as ssh-keygen -l prints it; None
    when the line holds no key."""
    parts = line.split()
    if len(parts) < 3:
        return None
    try:
        blob = base64.b64decode(parts[2], validate=True)
    except ValueError:
        return None
    kind = _KEY_TYPES.get(parts[1], "ECDSA" if parts[1].startswith("ecdsa-") else parts[1].upper())
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode("ascii").rstrip("=") + f" ({kind})"


def fingerprints(lines: list[str]) -> list[str]:
    """`SHA256:…` fingerprints of known_hosts lines, with their key types."""
    return [f for f in map(fingerprint, lines) if f]


def keys_with_fingerprint(lines: list[str], wanted: str) -> list[str]:
    """The scanned lines whose key has the fingerprint `wanted` (`SHA256:…`)."""
    return [line for line in lines if (fingerprint(line) or "").split(" ", 1)[0] == wanted.strip()]


def preferred_key(lines: list[str]) -> str:
    """The one key to show for confirmation: ED25519, else ECDSA, else RSA, else the first."""
    kinds = [(fingerprint(line) or " ()").rsplit("(", 1)[1].rstrip(")") for line in lines]
    for kind in _PREFERRED:
        if kind in kinds:
            return lines[kinds.index(kind)]
    return next(line for line in lines if fingerprint(line))


def trust_host_keys(target: Target, lines: list[str]) -> None:
    """Add the confirmed keys (only those: never the rest of a scan) under the host's
    known_hosts name, replacing what it had."""
    path = known_hosts_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    pattern = host_pattern(target)
    kept = [line for line in (path.read_text(encoding="utf-8").splitlines() if path.exists() else [])
            if line.split(" ", 1)[0] != pattern]
    keys = [pattern + " " + line.split(None, 1)[1] for line in lines if len(line.split(None, 1)) == 2]
    path.write_text("\n".join(kept + keys) + "\n", encoding="utf-8")


def forget_host_keys(target: Target) -> None:
    path = known_hosts_file()
    if path.exists():
        pattern = host_pattern(target)
        kept = [line for line in path.read_text(encoding="utf-8").splitlines() if line.split(" ", 1)[0] != pattern]
        path.write_text("\n".join(kept) + ("\n" if kept else ""), encoding="utf-8")
