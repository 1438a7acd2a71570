"""`ortune tune MODEL`: search session settings with a noise-aware race."""

from __future__ import annotations

from app.cli.parser import add_cluster_argument

from app.cli.printing import add_json_flag, format_table, output, render_inputs

from app.cli.running import run_job_cli
from app.cli.param_args import add_param_arguments, params_from_args
from app.cli.session_args import add_session_arguments, session_config_from_args, whole_number
from app.core.session.settings_text import settings_text
from app.core.tune.confirm import trials_text
from app.core.tune.jobs import TUNE, TuneParams
from app.core.tune.space import SearchLimits
from app.core.formatting import duration_text

ORDER = 70


def render(result: dict) -> str:
    remeasured = [t for t in result["trials"] if t["remeasured"]]
    lines = [f"{trials_text(result)} in "
             f"{result['race_seconds']:.0f} s ({result['strategy']}, all in one process)"
             + (" — cancelled" if result["cancelled"] else ""), result.get("stop_reason", "")]
    if remeasured:
        lines.append(f"then the best {len(remeasured)} and your settings measured again, each alone in its own "
                     f"process, in alternation ({result['alternation']['rounds_run']} rounds)")
    default, best = result["default"], result["best"]
    lines.append(f"default  {duration_text(default['latency_ms'], 4)}  your settings: "
                 f"{settings_text(default['session'])}")
    if result["clearly_faster"]:
        low, high = result["speedup_ci"]
        lines.append(f"best     {duration_text(best['latency_ms'], 4)}  {best['label']}  (speedup ×{result['speedup']:.2f}, "
                     f"95 % interval {low:.2f}–{high:.2f}, {result['verdict']})")
    else:
        lines.append(f"best     your settings: {best['label']}")
    lines.append(result["note"])
    rows = []
    for trial in result["trials"][:15]:
        ci = trial["ci_ms"]
        alone = trial["speedup_ci"]
        mark = "* " if result["clearly_faster"] and trial["label"] == best["label"] else "  "
        rows.append([mark + trial["label"], f"{trial['latency_ms']:.3f}",
                     f"{ci[0]:.3f}–{ci[1]:.3f}" if ci else "", trial["blocks"],
                     "yes" if trial["alive"] else f"dropped in round {trial['eliminated_in_round'] + 1}",
                     f"×{trial['speedup']:.2f}" if trial["remeasured"] else "",
                     f"{alone[0]:.2f}–{alone[1]:.2f}" if trial["remeasured"] else "", trial["verdict"] or ""])
    lines += ["", format_table(["setting (what it changes in yours)", "race ms", "race 95%", "blocks", "still in",
                                "alone", "alone 95%", "verdict"], rows),
              "race: in one process beside the other settings (ranks only); alone: each in its own process, "
              "speedup over your settings" + ("; * the best" if result["clearly_faster"] else "")]
    dropped = [t for t in result["trials"][:15] if t.get("dropped_because") and not t["error"]]
    if dropped:
        reasons = dict.fromkeys(t["dropped_because"] for t in dropped)
        lines.append("dropped: " + "; or ".join(reasons))
    if result["merged"]:
        first = result["merged"][0]
        lines += ["", f"{len(result['merged'])} setting(s) left out as the same as another, e.g. "
                      f"{first['label']} = {first['same_as']}"]
    broke = [row for row in result["failed"] if not row.get("unfaithful")]
    drifted = [row for row in result["failed"] if row.get("unfaithful")]
    if broke:
        lines += ["", f"{len(broke)} setting(s) could not run, e.g. {broke[0]['label']}: {broke[0]['error']}"]
    if drifted:        # faster or not, other answers: never offered
        lines += ["", f"{len(drifted)} setting(s) gave other answers than yours and were left out, e.g. "
                      f"{drifted[0]['label']}: {drifted[0]['error']}"]
    saved = result.get("saved_preset")
    if saved:
        lines += ["", f"Saved {'the best' if result['clearly_faster'] else 'your settings'} as a preset in "
                      f"{saved}; reuse it with --config {saved}."]
    else:
        lines += ["", "Save the best as a preset with --save-best FILE.json; reuse it with --config FILE.json."]
    cluster = result.get("cluster")
    if cluster:
        lines += ["", f"spread over the Ray cluster at {cluster['address']} ({len(cluster['workers'])} workers): "
                      f"{cluster['note']}"]
        lines += [f"  {t['host']} ({t['node']}): best of its {t['space_size']} settings: {t['best']}, "
                  f"{t['speedup']:.3g}× [{t['speedup_ci'][0]:.3g}–{t['speedup_ci'][1]:.3g}], {t['verdict']}"
                  for t in cluster["tasks"]]
    lines += [""] + render_inputs(result.get("inputs", []))
    return "\n".join(lines)


def run(args) -> int:
    from app.core.session.config import SessionConfig, check_preset_target

    config = session_config_from_args(args)
    if args.save_best:
        check_preset_target(args.save_best)      # before the search, not after it
    threads = whole_number(args.max_threads, "--max-threads", 1) if args.max_threads is not None else 0
    limits = SearchLimits(providers=config.provider_names(), max_threads=threads)
    params = params_from_args(args, TuneParams, {"path": args.model, "session": config, "limits": limits})
    result = run_job_cli(TUNE, params, memory_limit=args.memory_limit, target=args.target, cluster=args.cluster,
                         tasks=args.cluster_tasks)
    if args.save_best:
        SessionConfig.from_dict(result["best"]["session"]).save(args.save_best)
        result["saved_preset"] = args.save_best
    return output(args, result, render)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "tune", help="search session settings for the lowest latency",
        description="Race session settings (provider, optimisation level, execution mode, threads, "
                    "spinning, dynamic block base, IO binding) against each other, measuring each in "
                    "alternation with your own settings so machine noise cancels out; then measure the "
                    "race's best again, each alone in its own process, and offer one only if it was faster "
                    "there. The settings given with the session flags are the baseline; --provider limits "
                    "the providers tried.")
    parser.add_argument("model", metavar="MODEL")
    add_param_arguments(parser, TuneParams)
    parser.add_argument("--max-threads", metavar="N", help="never try more than N intra-op threads")
    parser.add_argument("--save-best", metavar="FILE.json",
                        help="write the best setting as a session preset (your own settings when nothing "
                             "measured was faster)")
    add_session_arguments(parser)
    add_cluster_argument(parser)
    add_json_flag(parser)
    parser.set_defaults(handler=run)
