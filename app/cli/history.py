"""`ortune history`: the stored benchmarks, comparisons and sweeps."""

from __future__ import annotations

import time

from app.cli.bench import ms
from app.cli.common import add_json_flag, format_table, output

ORDER = 90


def render_list(entries: list[dict]) -> str:
    if not entries:
        return "no stored results"
    rows = [[e["id"], time.strftime("%Y-%m-%d %H:%M", time.localtime(e["created"])), e["kind"], e["model_path"],
             e["variant"], e["providers"], e.get("target", "local"), ms(e["p50_ms"]), ms(e["p99_ms"]),
             "–" if e["throughput_per_s"] is None else f"{e['throughput_per_s']:,.1f}"] for e in entries]
    return format_table(["id", "time", "kind", "model", "variant", "providers", "measured on", "p50 ms", "p99 ms", "runs/s"], rows)


def run(args) -> int:
    from app.core.store.history import History

    history = History()
    if args.show is not None:
        entry = history.get(args.show)
        report = entry["report"]
        if entry["kind"] == "bench":
            from app.cli.bench import render
        elif entry["kind"] == "compare":
            from app.cli.compare import render
        else:
            from app.cli.bench import render_sweep as render
        return output(args, report, render)
    entries = history.entries(model=args.model, kind=args.kind, limit=args.limit)
    return output(args, {"results": entries, "history_warnings": history.warnings},
                  lambda result: render_list(result["results"]))


def register(subparsers) -> None:
    from app.core.store.history import KINDS

    parser = subparsers.add_parser("history", help="list stored benchmark, comparison and sweep results",
                                   description="List the stored results, newest first, or show one in full.")
    parser.add_argument("--model", metavar="TEXT", help="only results whose model path contains TEXT")
    parser.add_argument("--kind", choices=list(KINDS), help="only this kind of result")
    parser.add_argument("--limit", type=int, default=50, metavar="N", help="at most N results (default 50)")
    parser.add_argument("--show", type=int, metavar="ID", help="print one stored result in full")
    add_json_flag(parser)
    parser.set_defaults(handler=run)
