"""The jobs of the targets room that run here: asking a new target's host for its key."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.jobs.entry import LOCAL_ONLY, Job
from app.core.jobs.params import Params, setting


@dataclass
class HostParams(Params):
    """The SSH server to ask: its host name (or address) and port; the target's name and user,
    which the messages name it by."""
    host: str = ""
    port: int = setting(22, minimum=1, maximum=65535)
    name: str = ""
    user: str = ""


def scan_job(params: HostParams, ctx) -> dict:
    """The host's public keys as known_hosts lines (first contact), for the user to confirm."""
    from app.core.targets.ssh import scan_host_keys
    from app.core.targets.store import Target

    target = Target(name=params.name or params.host, host=params.host, user=params.user, port=params.port)
    return {"lines": scan_host_keys(target)}


# in a process of its own: closing the Targets dialog or quitting ends a scan at once, not after
# ssh-keyscan's time-out
SCAN_HOST_KEYS = Job("scan-host-keys", scan_job, HostParams, runs=LOCAL_ONLY, text=("name", "user"))
