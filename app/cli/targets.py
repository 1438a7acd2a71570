"""`ortune targets add|list|test|remove`: the remote machines jobs can run on (--target)."""

from __future__ import annotations

import os
import sys

from app.cli.printing import add_json_flag, format_table, output

from app.cli.running import run_job_cli
from app.core.jobs.errors import UserError

ORDER = 110


def render_list(info: dict) -> str:
    if not info["targets"]:
        return "no targets yet: add one with `ortune targets add NAME USER@HOST`"
    return format_table(["name", "address", "key", "command"],
                        [[t["name"], f"{t['address']}:{t['port']}", t["identity"] or "agent", t["command"]]
                         for t in info["targets"]])


def _rows(targets) -> dict:
    return {"targets": [{"name": t.name, "address": t.address, "port": t.port, "identity": t.identity,
                         "command": t.command} for t in targets.values()]}


def confirm_key(target, lines: list[str], trust: str | None) -> list[str]:
    """First contact: the user confirms one of the host's keys, on the terminal or with
    --trust. Returns that key's line alone: the keys nobody checked are never trusted."""
    from app.core.targets.ssh import fingerprint, fingerprints, keys_with_fingerprint, preferred_key

    shown = fingerprints(lines)
    if not shown:
        raise UserError("host-key", f"{target.describe()} offered no host key ORTune can read: not added")
    if trust:
        chosen = keys_with_fingerprint(lines, trust)
        if not chosen:
            raise UserError("host-key", f"{target.describe()} offers {', '.join(shown)}, not {trust}: not added")
        return chosen[:1]
    key = preferred_key(lines)
    if not sys.stdin.isatty():
        raise UserError("host-key", f"{target.describe()} offers the host key {', '.join(shown)}; confirm it on a "
                                    f"terminal, or pass --trust FINGERPRINT once you have checked it")
    sys.stderr.write(f"{target.describe()} offers the host key\n  {fingerprint(key)}"
                     "\nTrust it? Check it with the host's owner first. [y/N] ")
    sys.stderr.flush()
    if sys.stdin.readline().strip().lower() not in ("y", "yes"):
        raise UserError("host-key", "not added: the host key was not confirmed")
    return [key]


def run_add(args) -> int:
    from app.core.targets.ssh import scan_host_keys, trust_host_keys
    from app.core.targets.store import Target, checked, load_targets, parse_address, save_targets

    user, host, port = parse_address(args.address)
    # stored absolute: the target is used from any folder
    identity = os.path.abspath(os.path.expanduser(args.identity)) if args.identity else ""
    target = checked(Target(name=args.name, host=host, user=user, port=args.port or port or 22,
                            identity=identity, command=args.start_command or "ortune"))
    targets = load_targets()
    if target.name in targets and not args.force:
        raise UserError("bad-option", f"a target named {target.name!r} exists: remove it first, or add --force")
    lines = scan_host_keys(target)
    trust_host_keys(target, confirm_key(target, lines, args.trust))
    targets[target.name] = target
    save_targets(targets)
    return output(args, {"added": target.name, **_rows({target.name: target})},
                  lambda info: f"added {target.describe()}; check it with `ortune targets test {target.name}`")


def run_list(args) -> int:
    from app.core.targets.store import load_targets
    return output(args, _rows(load_targets()), render_list)


def render_test(info: dict) -> str:
    target = info["target"]
    from app.core.session.machine import machine_text
    rows = [[p["name"], "yes" if p["available"] else "no", p["reason"] or "starts and runs there"]
            for p in info["providers"]]
    return "\n".join([f"{target['name']} ({target['address']}): ORTune {target['version']}, ONNX Runtime "
                      f"{target['ort_version']}", machine_text(target.get("machine") or {}), "", format_table(["provider", "usable", "why"], rows)])


def run_test(args) -> int:
    from app.core.session.jobs import PROBE_PROVIDERS, ProbeParams
    return output(args, run_job_cli(PROBE_PROVIDERS, ProbeParams(), target=args.name), render_test)


def run_remove(args) -> int:
    from app.core.targets.ssh import forget_host_keys
    from app.core.targets.store import get_target, load_targets, save_targets

    target = get_target(args.name)
    targets = load_targets()
    del targets[target.name]
    save_targets(targets)
    if not any(t.host == target.host and t.port == target.port for t in targets.values()):
        forget_host_keys(target)
    return output(args, {"removed": target.name}, lambda info: f"removed {target.describe()}")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "targets", help="remote machines to measure on, over SSH",
        description="A target is a machine reached over SSH (keys or an agent, never a password) that has the "
                    "same version of ORTune. Jobs run there with --target NAME; their results are stored here.")
    commands = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = commands.add_parser("add", help="add a target: its host key is shown for you to confirm")
    add.add_argument("name")
    add.add_argument("address", metavar="USER@HOST[:PORT]")
    add.add_argument("--port", type=int)
    add.add_argument("--identity", metavar="KEY", help="a private key file (default: your agent's keys)")
    add.add_argument("--command", dest="start_command", help="how ORTune starts there (default: ortune)")
    add.add_argument("--trust", metavar="SHA256:…", help="the host key fingerprint you checked (no prompt)")
    add.add_argument("--force", action="store_true", help="replace a target of the same name")
    add.set_defaults(handler=run_add)
    listing = commands.add_parser("list", help="the saved targets")
    listing.set_defaults(handler=run_list)
    test = commands.add_parser("test", help="connect, check the version, list the providers that start there")
    test.add_argument("name")
    test.set_defaults(handler=run_test)
    remove = commands.add_parser("remove", help="forget a target and its host key")
    remove.add_argument("name")
    remove.set_defaults(handler=run_remove)
    for sub in (add, listing, test, remove):
        add_json_flag(sub)
