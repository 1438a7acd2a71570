"""`ortune history`: the stored results (benchmarks, comparisons, sweeps, profiles, tuning
runs, conversions, drift searches, optimize runs and gates: every kind of the job registry)."""

from __future__ import annotations

import argparse
import time

from app.cli.printing import add_json_flag, format_table, output
from app.core.formatting import duration_column, shared_decimals

ORDER = 90
#: SQLite's ids are signed 64-bit integers
LARGEST_ID = 2 ** 63 - 1


def entry_id(text: str) -> int:
    """An argparse type: a stored result's id, a whole number SQLite can hold."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a result's id (a whole number), not {text!r}") from None
    if not 1 <= value <= LARGEST_ID:
        raise argparse.ArgumentTypeError(f"there is no stored result number {text} (ids run from 1)")
    return value


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


def renderers() -> dict:
    """How each job's stored result prints, keyed by its entry: as the command that makes it
    prints it (one for each entry in app.core.launch.registry.RECORDED; a test holds the two
    together). Read only to show one: it imports those commands and every job they run."""
    from app.cli import bench, compare, convert, drift, gate, optimize, profile, tune
    from app.core.bench.jobs import BENCH, COMPARE, SWEEP
    from app.core.convert.jobs import CONVERT
    from app.core.drift.jobs import DRIFT
    from app.core.gate.jobs import GATE
    from app.core.optimize.jobs import OPTIMIZE
    from app.core.profile.jobs import PROFILE
    from app.core.tune.jobs import TUNE

    return {BENCH: bench.render, SWEEP: bench.render_sweep, COMPARE: compare.render, PROFILE: profile.render_profile,
            TUNE: tune.render, CONVERT: convert.render, DRIFT: drift.render, OPTIMIZE: optimize.render,
            GATE: gate.render}


def _renderer(entry: dict):
    """The renderer of a stored result's job; a kind this version does not know (a store
    another version wrote) is one line."""
    from app.core.jobs.errors import UserError
    from app.core.launch.registry import recorded_entry

    render = renderers().get(recorded_entry(entry["kind"]))
    if render is None:
        raise UserError("bad-option", f"stored result #{entry['id']} is of a kind this version does not know "
                                      f"({entry['kind']!r}): --json prints it")
    return render


def _check_kind(kind: str) -> None:
    """A kind the registry records (read only when one is given: the registry imports every job)."""
    from app.core.jobs.errors import UserError
    from app.core.launch.registry import RECORDED_KINDS

    if kind not in RECORDED_KINDS:
        raise UserError("bad-option", f"--kind {kind!r}: not a kind of stored result (one of "
                                      f"{', '.join(RECORDED_KINDS)})")


def run(args) -> int:
    from app.core.store.history import History

    history = History()
    if args.kind:
        _check_kind(args.kind)
    if args.delete:
        for entry_id in args.delete:
            history.require(entry_id)       # one that is not there is named before any is deleted
        removed = [str(folder) for entry_id in args.delete for folder in history.delete(entry_id)]
        return output(args, {"deleted": args.delete, "removed_copies": removed, "history_warnings": history.warnings},
                      lambda result: f"deleted {len(result['deleted'])} result(s)"
                                     + (f" and {len(removed)} kept candidate model(s)" if removed else ""))
    if args.show is not None:
        entry = history.get(args.show)
        return output(args, entry["report"], (lambda report: report) if args.json else _renderer(entry))
    entries = history.entries(model=args.model, kind=args.kind, limit=args.limit)
    return output(args, {"results": entries, "history_warnings": history.warnings},
                  lambda result: render_list(result["results"]))


def register(subparsers) -> None:
    parser = subparsers.add_parser("history", help="list stored results: benchmarks, comparisons, sweeps, "
                                                   "profiles, tuning runs, conversions, drift, optimize runs "
                                                   "and gates",
                                   description="List the stored results, newest first, or show one in full.")
    parser.add_argument("--model", metavar="TEXT", help="only results whose model path contains TEXT")
    parser.add_argument("--kind", metavar="KIND", help="only this kind of result (a word of the listing's "
                                                         "kind column)")
    parser.add_argument("--limit", type=int, default=50, metavar="N", help="at most N results (default 50)")
    parser.add_argument("--show", type=entry_id, metavar="ID", help="print one stored result in full")
    parser.add_argument("--delete", type=entry_id, nargs="+", metavar="ID",
                        help="delete these stored results (with the candidate model optimize kept for each)")
    add_json_flag(parser)
    parser.set_defaults(handler=run)
