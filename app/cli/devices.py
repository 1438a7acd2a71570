"""`ortune devices`: the execution providers, available or not, and why not."""

from __future__ import annotations

from app.cli.common import add_json_flag, format_table, output, run_job_cli
from app.core.session.jobs import PROBE_PROVIDERS

ORDER = 20


def render(info: dict) -> str:
    rows = [[p["name"], "yes" if p["available"] else "no", p["reason"] or "starts and runs here"]
            for p in info["providers"]]
    lines = [f"ONNX Runtime {info['ort_version']} ({info['package']})", "",
             format_table(["provider", "usable", "why"], rows)]
    if info.get("devices"):
        lines += ["", format_table(["device", "type", "vendor", "provider"],
                                   [[f"{d['vendor_id']:04x}:{d['device_id']:04x}", d["type"], d["vendor"],
                                     d["provider"]] for d in info["devices"]])]
    return "\n".join(lines)


def run(args) -> int:
    return output(args, run_job_cli(PROBE_PROVIDERS, {}), render)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "devices", help="which execution providers start on this machine, and why not",
        description="Try each execution provider of this ONNX Runtime build on a tiny model and report "
                    "which ones really run here; for the others, say why.")
    add_json_flag(parser)
    parser.set_defaults(handler=run)
