"""GroupQueryAttention and rotary embeddings from `ortune convert transformers` on a Llama decoder
laid out as PyTorch's dynamo exporter writes one (tests/rope_models.py: RMSNorm, rotary position
embeddings, grouped key/value heads, a KV cache; random weights, built here, no download),
and the fused decoder's speed on the generation workload against its source.

- `convert`: what each fuser fused, the kept one, the attention per layer ("GroupQueryAttention
  in 4 of 4 layers"), the rotations fused, the check (fidelity policy, next-token agreement) and
  the conversion's own decode-step speed check (its ratio, 95 % interval and verdict);
- `decode` (per past length): `ortune compare SOURCE FUSED --past-length P`, the two in
  alternation, each in its own process: per-token latency of each, the fused one's speedup
  (source p50 / fused p50) with its 95 % interval and verdict; the prefill (time to the first
  token, a prompt of P + 1) from the same comparison, in an alternation of its own.

Prints one JSON object.

    python benchmarks/gqa_fusion.py [--layers 4] [--hidden 256] [--heads 8] [--kv-heads 2]
                                    [--past 127 1023] [--seconds 4] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def ortune(*args: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "app", *args, "--json"], capture_output=True, text=True, cwd=ROOT)
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        return {"error": done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]}


def converted(source: Path, fused: Path, seconds: float, threads: int) -> dict:
    report = ortune("convert", "transformers", str(source), "-o", str(fused), "--force",
                    "--speed-seconds", str(seconds), "--threads", str(threads))
    if "error" in report:
        return report
    speed, tokens = report.get("speed") or {}, report["fidelity"].get("next_tokens") or {}
    return {"fuser": report["fuser"], "fused_operators": report["fused_operators"],
            "fusers": {n: o.get("fused_operators", o.get("problem")) for n, o in report["fusers"].items()},
            "attention_layers": report.get("attention_layers"), "rotary": report.get("rotary"),
            "check": report["check"], "max_abs_diff": report["fidelity"]["max_abs_diff"],
            "next_tokens": {k: tokens.get(k) for k in ("agree", "steps", "rate")},
            "speed_check": {"speedup": speed.get("ratio"), "ci": speed.get("ratio_ci"),
                            "verdict": speed.get("verdict"), "p50_ms": [speed.get("source_p50_ms"),
                                                                         speed.get("variant_p50_ms")]},
            "warnings": report["warnings"]}


def compared(source: Path, fused: Path, past: int, seconds: float, threads: int) -> dict:
    report = ortune("compare", str(source), str(fused), "--past-length", str(past), "--prompt-length", str(past + 1),
                    "--duration", str(seconds),
                    "--threads", str(threads), "--no-history")
    if "error" in report:
        return report
    source_row, fused_row = report["generation"]["models"]
    phases = {}
    for phase, latency in (("decode", "per_token_ms"), ("prefill", "ttft_ms")):
        mine, theirs = fused_row.get(phase) or {}, source_row.get(phase) or {}
        phases[phase] = {f"source_{latency}": theirs.get(latency), f"fused_{latency}": mine.get(latency),
                         "speedup": mine.get("speedup"), "ci": mine.get("speedup_ci"),
                         "verdict": mine.get("verdict"), "rounds": mine.get("rounds")}
        if phase == "prefill":
            phases[phase]["prompt_tokens"] = mine.get("prompt_tokens")
    phases["decode"]["tokens_per_s"] = [source_row["decode"].get("tokens_per_s"),
                                        fused_row["decode"].get("tokens_per_s")]
    return phases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--kv-heads", type=int, default=2)
    parser.add_argument("--past", type=int, nargs="+", default=[127, 1023])
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()

    from tests.models import save
    from tests.rope_models import llama_rope

    with tempfile.TemporaryDirectory() as folder:
        source = save(llama_rope(layers=args.layers, hidden=args.hidden, heads=args.heads, kv_heads=args.kv_heads,
                                 vocab=1000, mlp=int(args.hidden * 2.75)), Path(folder) / "llama.onnx")
        fused = Path(folder) / "llama.fused.onnx"
        report = {"model": {"layers": args.layers, "hidden": args.hidden, "heads": args.heads,
                            "kv_heads": args.kv_heads, "threads": args.threads},
                  "convert": converted(source, fused, args.seconds, args.threads)}
        if fused.exists():
            report["by_past"] = {str(p): compared(source, fused, p, args.seconds, args.threads) for p in args.past}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
