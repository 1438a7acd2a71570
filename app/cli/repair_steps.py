"""The repair loop's flags and its steps as text, shared by `ortune convert --repair` and
`ortune drift --repair`."""

from __future__ import annotations

from app.cli.printing import format_table
from app.cli.session_args import whole_number
from app.core.verdict import verdict_words
from app.core.drift.step_text import added_text, outputs_text
from app.core.jobs.errors import UserError


def add_repair_arguments(parser, what: str) -> None:
    group = parser.add_argument_group("repair loop")
    group.add_argument("--repair", action="store_true",
                       help=f"{what}; while its outputs fail the check, find the node where the drift starts "
                            "(ortune drift), keep it in float32 (fp16) or out of quantization (int8), and convert "
                            "again, until they pass or a bound is reached; each step reports its accuracy and its "
                            "speed against the source")
    group.add_argument("--repair-steps", metavar="N", default="8", help="at most this many conversions (default 8)")
    group.add_argument("--repair-seconds", metavar="S", default="600",
                       help="no new step starts after this many seconds (default 600)")


def repair_bounds(args) -> dict:
    try:
        seconds = float(args.repair_seconds)
    except ValueError:
        raise UserError("bad-option", f"--repair-seconds expects a number, not {args.repair_seconds!r}") from None
    return {"max_steps": whole_number(args.repair_steps, "--repair-steps", 1), "max_seconds": seconds}


def _number(value, spec: str) -> str:
    return "–" if value is None else format(value, spec)


def _speed(speed: dict) -> str:
    if speed.get("skipped"):
        return "not measured"
    low, high = speed["ratio_ci"]
    interval = f" [{low:.2f}–{high:.2f}]" if low is not None and high is not None else ""
    verdict = verdict_words(speed["verdict"])
    return f"{speed['ratio']:.2f}×{interval} {verdict}"


def _drift(step: dict) -> str:
    first = step["first_drift"] or step["first_nonfinite"]
    return "–" if first is None else f"{first['tensor']} ({first['node']}, {first['op_type']})"


def render_repair(repair: dict) -> list[str]:
    """The steps as a table, then the outcome."""
    rows = [[step["step"], added_text(step), _number(step["cosine"], ".6f"),
             _number(step["max_abs_diff"], ".3g"), _speed(step["speed"]), _drift(step), outputs_text(step)]
            for step in repair["steps"]]
    kept = ", ".join(repair["kept"]) or "nothing"
    outcome = "PASSED" if repair["passed"] else "NOT PASSED"
    return ["repair steps (speed: the source's p50 over the variant's, 95 % interval):",
            format_table(["step", "kept (new)", "cosine", "max |Δ|", "speed vs source", "first drift", "outputs"],
                         rows),
            f"repair {outcome} after {len(repair['steps'])} step(s), {repair['seconds']:.0f} s: stopped because "
            f"{repair['stopped']}; kept ({repair['option']}): {kept}"]
