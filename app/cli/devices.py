"""`ortune devices`: the execution providers, available or not, and why not; the plugin
libraries loaded; and each device the providers list."""

from __future__ import annotations

from app.cli.printing import add_json_flag, format_table, output

from app.cli.running import run_job_cli
from app.core.session.jobs import PROBE_PROVIDERS, ProbeParams
from app.core.text import printable

ORDER = 20
#: metadata keys worth a column's room (a device lists many more in --json)
SHOWN_METADATA = ("ov_device", "FULL_DEVICE_NAME", "OPTIMIZATION_CAPABILITIES", "version")


def device_rows(devices: list[dict]) -> list[list[str]]:
    rows = []
    for d in devices:
        details = "; ".join(f"{key}={printable(str(d['metadata'][key]))}" for key in SHOWN_METADATA
                            if d.get("metadata", {}).get(key))
        rows.append([printable(d["provider"]), d["type"], printable(d["vendor"]),
                     f"{d['vendor_id']:04x}:{d['device_id']:04x}",
                     "yes" if d.get("available", True) else "no", details or printable(d.get("reason", ""))])
    return rows


def render(info: dict) -> str:
    rows = [[printable(p["name"]), "yes" if p["available"] else "no", printable(p["reason"]) or "starts and runs here"]
            for p in info["providers"]]
    lines = [f"ONNX Runtime {info['ort_version']} ({info['package']})", "",
             format_table(["provider", "usable", "why"], rows)]
    if info.get("plugins"):
        lines += ["", format_table(["plugin", "version", "providers", "loaded"],
                                   [[printable(p["package"] or p["registration"]), printable(p["version"] or p["path"]),
                                     printable(", ".join(p["providers"])), printable(p["error"]) or "yes"]
                                    for p in info["plugins"]])]
    if info.get("devices"):
        lines += ["", format_table(["device of", "type", "vendor", "id", "usable", "details"],
                                   device_rows(info["devices"]))]
    return "\n".join(lines)


def run(args) -> int:
    from app.cli.session_args import _key_value

    libraries = dict(_key_value(text, "--ep-library") for text in args.ep_library)
    return output(args, run_job_cli(PROBE_PROVIDERS, ProbeParams(ep_libraries=libraries)), render)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "devices", help="which execution providers start on this machine, and why not",
        description="Try each execution provider of this ONNX Runtime build and of the installed plugin packages "
                    "(onnxruntime-ep-*) on a tiny model and report which ones really run here; for the others, say "
                    "why. Lists each device the providers see.")
    parser.add_argument("--ep-library", action="append", default=[], metavar="NAME=PATH",
                        help="also load this execution provider plugin library (repeatable)")
    add_json_flag(parser)
    parser.set_defaults(handler=run)
