"""`ortune history`: the stored results (benchmarks, comparisons, sweeps, profiles, tuning
runs, conversions, drift searches and optimize runs)."""

from __future__ import annotations

import time

from app.cli.common import add_json_flag, format_table, output
from app.core.units import duration_column, shared_decimals

ORDER = 90
#: how each kind of stored result is printed: the command that makes it prints it so
RENDERERS = {"bench": ("app.cli.bench", "render"), "compare": ("app.cli.compare", "render"),
             "sweep": ("app.cli.bench", "render_sweep"), "profile": ("app.cli.profile", "render_profile"),
             "tune": ("app.cli.tune", "render"), "convert": ("app.cli.convert", "render"),
             "drift": ("app.cli.drift", "render"), "optimize": ("app.cli.optimize", "render")}


def render_list(entries: list[dict]) -> str:
    if not entries:
        return "no stored results"
    # one unit and one number format per column
    p50_unit, p50 = duration_column([e["p50_ms"] for e in entries])
    p99_unit, p99 = duration_column([e["p99_ms"] for e in entries])
    decimals = shared_decimals([e["throughput_per_s"] for e in entries], most=2)
    rows = [[e["id"], time.strftime("%Y-%m-%d %H:%M", time.localtime(e["created"])), e["kind"], e["model_path"],
             e["variant"], e["providers"], e.get("target", "local"), p50[i], p99[i],
             "–" if e["throughput_per_s"] is None else f"{e['throughput_per_s']:,.{decimals}f}"]
            for i, e in enumerate(entries)]
    return format_table(["id", "time", "kind", "model", "variant", "providers", "measured on", f"p50 {p50_unit}", f"p99 {p99_unit}",
                         "runs/s"], rows)


def run(args) -> int:
    from app.core.store.history import History

    history = History()
    if args.delete:
        for entry_id in args.delete:
            history.get(entry_id)           # one that is not there is named before any is deleted
        removed = [str(folder) for entry_id in args.delete for folder in history.delete(entry_id)]
        return output(args, {"deleted": args.delete, "removed_copies": removed, "history_warnings": history.warnings},
                      lambda result: f"deleted {len(result['deleted'])} result(s)"
                                     + (f" and {len(removed)} kept candidate model(s)" if removed else ""))
    if args.show is not None:
        import importlib

        entry = history.get(args.show)
        module, name = RENDERERS[entry["kind"]]
        return output(args, entry["report"], getattr(importlib.import_module(module), name))
    entries = history.entries(model=args.model, kind=args.kind, limit=args.limit)
    return output(args, {"results": entries, "history_warnings": history.warnings},
                  lambda result: render_list(result["results"]))


def register(subparsers) -> None:
    from app.core.store.history import KINDS

    parser = subparsers.add_parser("history", help="list stored results: benchmarks, comparisons, sweeps, "
                                                   "profiles, tuning runs, conversions, drift and optimize runs",
                                   description="List the stored results, newest first, or show one in full.")
    parser.add_argument("--model", metavar="TEXT", help="only results whose model path contains TEXT")
    parser.add_argument("--kind", choices=list(KINDS), help="only this kind of result")
    parser.add_argument("--limit", type=int, default=50, metavar="N", help="at most N results (default 50)")
    parser.add_argument("--show", type=int, metavar="ID", help="print one stored result in full")
    parser.add_argument("--delete", type=int, nargs="+", metavar="ID",
                        help="delete these stored results (with the candidate model optimize kept for each)")
    add_json_flag(parser)
    parser.set_defaults(handler=run)
