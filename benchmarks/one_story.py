"""One source and one variant through every command that reports a fact about the pair:
convert's check, compare, gate, optimize and drift. Do they tell one story? The same speed
verdict everywhere (the one rule, app.core.verdict), the same fidelity policy named, and
95 % intervals that overlap pairwise; on a quiet machine and again while a second process
burns a core in spells (benchmarks/burner.py).

The variant is made once by `ortune convert KIND` (its check and speed are the first
account); each other command then reads the very same two files.

    python benchmarks/one_story.py [--source MODEL --flags "--shape x=1,3,48,192"] [--kind fp16]
        [--busy 3] [--seconds 3]

Without --source it makes one: a 4-layer MLP of width 512 at batch 8. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shlex
import subprocess
import sys
import tempfile
import time
from itertools import combinations
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.burner import burning  # noqa: E402


def ortune(args: list[str]) -> tuple[dict | None, str]:
    """One ortune command in a fresh process: (its JSON, or None, with why)."""
    done = subprocess.run([sys.executable, "-m", "app", *map(str, args), "--json"], cwd=ROOT, capture_output=True,
                          text=True)
    try:
        return json.loads(done.stdout), f"exit {done.returncode}"
    except json.JSONDecodeError:
        return None, f"exit {done.returncode}: {done.stderr[-400:]}"


def _account(name: str, ratio, interval, verdict, policy, passed, note="") -> dict:
    return {"command": name, "speedup": ratio, "speedup_ci": interval, "verdict": verdict, "policy": policy,
            "fidelity_passed": passed, **({"note": note} if note else {})}


def accounts(source: Path, variant: Path, convert: dict, flags: list[str], seconds: float, scratch: Path) -> list:
    """What each command says about (source, variant)."""
    speed, fidelity = convert["speed"], convert["fidelity"]
    rows = [_account("convert", speed.get("ratio"), speed.get("ratio_ci"), speed.get("verdict"),
                     fidelity["tolerance"]["policy"], fidelity["passed"])]
    compare, why = ortune(["compare", source, variant, "--duration", seconds, "--no-history", *flags])
    if compare and "models" in compare:
        row = compare["models"][1]
        rows.append(_account("compare", row["speedup"], row["speedup_ci"], row["verdict"],
                             row["fidelity"]["tolerance"]["policy"], row["fidelity"]["passed"]))
    else:
        rows.append({"command": "compare", "failed": why})
    # the gate measures as compare does: the same time per model, and its default cap for more pairs
    gate, why = ortune(["gate", variant, "--against", source, "--max-slowdown", "100", "--duration", seconds,
                        "--no-history", *flags])
    if gate and "criteria" in gate:
        speed_row = next(c for c in gate["criteria"] if c["name"] == "speed")["figures"]
        outputs = next(c for c in gate["criteria"] if c["name"] == "outputs")
        rows.append(_account("gate", speed_row["speedup"], speed_row["speedup_ci"], speed_row["compare_verdict"],
                             outputs["limit"]["policy"] if outputs["limit"] else None,
                             outputs["verdict"] == "pass", outputs["summary"][:200]))
    else:
        rows.append({"command": "gate", "failed": why})
    kind = convert["kind"]
    optimize, why = ortune(["optimize", source, "-o", scratch / "shipped", "--force", "--kinds", kind, "--no-tune",
                            "--fresh", "--try-expected-slower", "--budget-seconds", 20 * seconds, *flags])
    row = next((r for r in (optimize or {}).get("candidates", []) if r["kind"] == kind), None)
    if row is not None and row.get("speedup") is not None:
        rows.append(_account("optimize", row["speedup"], row["speedup_ci"], row["verdict"],
                             (row["fidelity"] or {}).get("tolerance", {}).get("policy"),
                             (row["fidelity"] or {}).get("passed"), row["reason"][:200]))
    else:
        rows.append({"command": "optimize", "failed": why if optimize is None else (row or {}).get("reason", "no row")})
    drift, why = ortune(["drift", source, variant, *flags])
    if drift and "tolerance" in drift:
        rows.append(_account("drift", None, None, None, drift["tolerance"]["policy"], drift["first_drift"] is None))
    else:
        rows.append({"command": "drift", "failed": why})
    return rows


def _overlap(a: list, b: list) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def judge(rows: list[dict]) -> dict:
    timed = [r for r in rows if r.get("speedup_ci") and None not in r["speedup_ci"]]
    verdicts = sorted({r["verdict"] for r in timed})
    policies = sorted({r["policy"] for r in rows if r.get("policy")})
    apart = [f"{a['command']}–{b['command']}" for a, b in combinations(timed, 2)
             if not _overlap(a["speedup_ci"], b["speedup_ci"])]
    return {"verdicts": verdicts, "one_verdict": len(verdicts) == 1, "policies": policies,
            "one_policy": len(policies) == 1, "intervals_apart": apart, "all_overlap": not apart,
            "failed": [r["command"] for r in rows if "failed" in r]}


def story(source: Path, flags: list[str], kind: str, seconds: float, scratch: Path) -> dict:
    variant = scratch / f"variant.{kind}.onnx"
    convert, why = ortune(["convert", kind, source, "-o", variant, "--force", "--speed-seconds", 2 * seconds, *flags])
    if not convert or "speed" not in convert:
        return {"failed": f"convert: {why}"}
    rows = accounts(source, variant, convert, flags, seconds, scratch)
    return {"accounts": rows, **judge(rows)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, help="the source model (default: a generated MLP)")
    parser.add_argument("--flags", default="", help="the input flags for it, as one string")
    parser.add_argument("--kind", default="fp16", help="the conversion that makes the variant")
    parser.add_argument("--seconds", type=float, default=3.0, help="each measurement's time per model")
    parser.add_argument("--busy", type=float, default=3.0, metavar="SPELL",
                        help="the busy run's burner spells, in seconds (0: quiet only)")
    args = parser.parse_args()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="one-story-") as folder:
        scratch = Path(folder)
        source, flags = args.source, shlex.split(args.flags)
        if source is None:
            from tests import models
            source = models.save(models.mlp(width=512, depth=4), scratch / "mlp512.onnx")
            flags = ["--dim", "batch=8", "--threads", "1"]
        phases = {"quiet": story(source, flags, args.kind, args.seconds, scratch)}
        if args.busy:
            with burning(args.busy) if args.busy else contextlib.nullcontext():
                phases["busy"] = story(source, flags, args.kind, args.seconds, scratch)
    met = all(p.get("one_verdict") and p.get("one_policy") and p.get("all_overlap") and not p.get("failed")
              for p in phases.values())
    print(json.dumps({"benchmark": "one_story", "source": str(args.source or "generated mlp512"), "kind": args.kind,
                      "phases": phases, "met": met,
                      "goal": "one speed verdict, one fidelity policy and pairwise-overlapping 95 % intervals across "
                              "convert, compare, gate, optimize and drift, quiet and busy",
                      "seconds": round(time.monotonic() - started, 1)}, indent=1))


if __name__ == "__main__":
    main()
