"""The saved targets: a JSON file in the settings folder, and ORTune's own known-hosts file.

A target is a name for `user@host:port` with an optional key file and the command that
starts ORTune there. No password is ever stored: authentication is the SSH key or agent."""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from app.core.jobs.errors import UserError
from app.core.store.paths import config_dir

VERSION = 1
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
_HOST = re.compile(r"^[A-Za-z0-9_.:%\[\]-]{1,253}$")
_USER = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
LOCAL = "local"


@dataclass
class Target:
    name: str
    host: str
    user: str = ""
    port: int = 22
    identity: str = ""                 # a private key file; the agent's keys when empty
    command: str = "ortune"            # how ORTune is started there
    added: float = field(default_factory=time.time)

    @property
    def address(self) -> str:
        return f"{self.user}@{self.host}" if self.user else self.host

    def describe(self) -> str:
        return f"{self.name} ({self.address}" + (f":{self.port}" if self.port != 22 else "") + ")"


def parse_address(text: str) -> tuple[str, str, int | None]:
    """`user@host:port` (user and port optional) -> (user, host, port)."""
    user, _, rest = text.rpartition("@")
    host, port = rest, None
    if rest.count(":") == 1:                          # host:port (an IPv6 address has several)
        host, _, port_text = rest.partition(":")
        try:
            port = int(port_text)
        except ValueError:
            raise UserError("bad-option", f"the port in {text!r} is not a number") from None
    return user, host.strip("[]"), port


def checked(target: Target) -> Target:
    """The target, or a UserError naming the field that could not be passed to ssh safely."""
    if not _NAME.match(target.name) or target.name == LOCAL:
        raise UserError("bad-option", f"a target name uses letters, digits, '.', '_' and '-' "
                                      f"(and is not {LOCAL!r}), not {target.name!r}")
    if not _HOST.match(target.host) or target.host.startswith("-"):
        raise UserError("bad-option", f"{target.host!r} is not a host name or address")
    if target.user and (not _USER.match(target.user)):
        raise UserError("bad-option", f"{target.user!r} is not a user name")
    if not isinstance(target.port, int) or not 0 < target.port < 65536:
        raise UserError("bad-option", f"the port must be 1 to 65535, not {target.port!r}")
    if target.identity and not Path(target.identity).expanduser().is_file():
        raise UserError("bad-option", f"the key file {target.identity} does not exist")
    if not target.command.strip():
        raise UserError("bad-option", "the command that starts ORTune on the target is empty")
    return target


def targets_file() -> Path:
    return config_dir() / "targets.json"


def known_hosts_file() -> Path:
    """The host keys ORTune has been told to trust, one OpenSSH known_hosts line each."""
    return config_dir() / "known_hosts"


def load_targets() -> dict[str, Target]:
    path = targets_file()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise UserError("bad-targets", f"the targets file {path} cannot be read ({exc}); "
                                       f"move it aside to start with no targets") from None
    rows = data.get("targets", []) if isinstance(data, dict) else []
    found = {}
    for row in rows:
        try:
            target = Target(**{k: row[k] for k in row if k in Target.__dataclass_fields__})
        except TypeError:
            continue
        found[target.name] = target
    return found


def save_targets(targets: dict[str, Target]) -> None:
    path = targets_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    staging.write_text(json.dumps({"version": VERSION, "targets": [asdict(t) for t in targets.values()]},
                                  indent=1), encoding="utf-8")
    os.replace(staging, path)


def get_target(name: str) -> Target:
    targets = load_targets()
    if name not in targets:
        known = ", ".join(sorted(targets)) or "none yet"
        raise UserError("unknown-target", f"there is no target named {name!r} (targets: {known}; "
                                          f"add one with `ortune targets add`)")
    return targets[name]
