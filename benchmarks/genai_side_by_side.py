"""ORTune's generation loop beside onnxruntime-genai's generator on one genai model folder (a
small random-weight Llama-like decoder with grouped-query attention and its
genai_config.json, made here): the same prompt tokens, greedy. Three members, each round in
fresh processes, the order rotated every round, `--rounds` rounds:

- `ortune`: `ortune generate FOLDER` (ORTune's present->past loop on an ONNX Runtime session);
- `genai`: a bare onnxruntime-genai generator written here without any of ORTune's code;
- `ortune_genai`: `ortune generate FOLDER --engine genai` (genai's generator timed by ORTune).

Figures: each member's median TTFT and decode tokens/s; `genai_speedup`: genai's decode
tokens/s over ORTune loop's, as the ratio of the members' median per-token p50s with a 95 %
bootstrap interval over the rounds (and the same for TTFT); `engine_overhead`: the bare
generator's per-token p50 over ORTune's genai engine's (about 1 where ORTune times genai
truly); `same_tokens`: whether all three chose the same greedy tokens in every round.
Prints one JSON object.

    python benchmarks/genai_side_by_side.py [--rounds 6] [--prompt 128] [--new-tokens 64]
        [--hidden 256] [--layers 4] [--threads 1]
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.generate_truth import repeated, workload_parser  # noqa: E402


def bare_genai(folder: str, prompt_ids: list, new_tokens: int, threads: int, repeats: int, warmup: int) -> dict:
    """Greedy generation with onnxruntime-genai's Generator, timed around its own calls."""
    import numpy as np
    import onnxruntime_genai as og

    config = og.Config(folder)
    config.clear_providers()
    config.overlay(json.dumps({"model": {"decoder": {"session_options": {"intra_op_num_threads": threads}}}}))
    model = og.Model(config)
    ids = np.asarray(prompt_ids, np.int32)
    longest = ids.shape[1] + new_tokens

    def generate() -> tuple[float, list[float], list[list[int]]]:
        params = og.GeneratorParams(model)
        params.set_search_options(max_length=longest, min_length=longest, do_sample=False, top_k=1,
                                  batch_size=ids.shape[0])
        started = time.perf_counter_ns()
        generator = og.Generator(model, params)
        generator.append_tokens(ids)
        generator.generate_next_token()
        chosen = [np.asarray(generator.get_next_tokens()).copy()]
        ttft = (time.perf_counter_ns() - started) / 1e6
        steps = []
        for _ in range(new_tokens - 1):
            started = time.perf_counter_ns()
            generator.generate_next_token()
            chosen.append(np.asarray(generator.get_next_tokens()).copy())
            steps.append((time.perf_counter_ns() - started) / 1e6)
        return ttft, steps, np.stack(chosen, axis=1).tolist()

    ttfts, all_steps, tokens = repeated(generate, warmup, repeats)
    return {"ttft_ms": statistics.median(ttfts), "decode_p50_ms": statistics.median(all_steps),
            "tokens_per_s": batch_rate(len(ids), all_steps), "token_ids": tokens}


def batch_rate(batch: int, steps: list[float]) -> float:
    return batch * len(steps) / (sum(steps) / 1000)


def ortune(folder: str, args, engine: str) -> dict:
    command = [sys.executable, "-m", "app", "generate", folder, "--json", "--threads", str(args.threads),
               "--prompt-lengths", str(args.prompt), "--new-tokens", str(args.new_tokens),
               "--repeats", str(args.repeats), "--warmup", "1", "--engine", engine]
    report = json.loads(subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=True).stdout)
    run = report["runs"][0]
    return {"ttft_ms": run["ttft_ms"], "decode_p50_ms": run["decode_latency_ms"]["p50"],
            "tokens_per_s": run["tokens_per_s"]["decode"], "token_ids": run["token_ids"],
            "prompt_ids": run["prompt_ids"]}


def bare(folder: str, prompt_ids: list, args) -> dict:
    command = [sys.executable, __file__, "--bare", folder, "--prompt-ids", json.dumps(prompt_ids),
               "--new-tokens", str(args.new_tokens), "--threads", str(args.threads), "--repeats", str(args.repeats)]
    return json.loads(subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=True).stdout)


def ratio(rounds: list[dict], slower: str, faster: str, figure: str) -> dict:
    """`slower`'s median `figure` over `faster`'s (above 1: `faster` is quicker), with a 95 %
    interval from resampling the rounds (one value per member per round)."""
    from app.core.measure.stats import median_ratio

    speedup, low, high = median_ratio([[r[slower][figure]] for r in rounds], [[r[faster][figure]] for r in rounds])
    return {"ratio": round(speedup, 4), "interval_95": [round(low, 4), round(high, 4)],
            "per_round": [round(r[slower][figure] / r[faster][figure], 4) for r in rounds]}


def main() -> None:
    args = workload_parser(__doc__.split("\n")[0], "FOLDER").parse_args()
    if args.bare:
        print(json.dumps(bare_genai(args.bare, json.loads(args.prompt_ids), args.new_tokens, args.threads,
                                    args.repeats, 1)))
        return
    import onnxruntime_genai as og

    from tests.decoder_models import genai_folder

    members = ("ortune", "genai", "ortune_genai")
    with tempfile.TemporaryDirectory() as scratch:
        folder = str(genai_folder(Path(scratch) / "genai-model", layers=args.layers, hidden=args.hidden, heads=8,
                                  kv_heads=2, vocab=2000, context=4096))
        prompt_ids = ortune(folder, args, "ort")["prompt_ids"]
        rounds = []
        for number in range(args.rounds):
            order = members[number % 3:] + members[:number % 3]
            found = {}
            for member in order:
                found[member] = (bare(folder, prompt_ids, args) if member == "genai" else
                                 ortune(folder, args, "genai" if member == "ortune_genai" else "ort"))
            rounds.append(found)
    print(json.dumps({
        "model": {"kind": "llama-gqa genai folder", "hidden": args.hidden, "layers": args.layers, "heads": 8,
                  "kv_heads": 2, "vocab": 2000, "prompt": args.prompt, "new_tokens": args.new_tokens,
                  "threads": args.threads, "repeats": args.repeats, "rounds": args.rounds},
        "onnxruntime_genai": og.__version__,
        **{f"{member}_decode_tokens_per_s": statistics.median(r[member]["tokens_per_s"] for r in rounds)
           for member in members},
        **{f"{member}_ttft_ms": statistics.median(r[member]["ttft_ms"] for r in rounds) for member in members},
        "genai_speedup": {"decode_per_token": ratio(rounds, "ortune", "genai", "decode_p50_ms"),
                          "ttft": ratio(rounds, "ortune", "genai", "ttft_ms")},
        "engine_overhead": ratio(rounds, "genai", "ortune_genai", "decode_p50_ms"),
        "same_tokens": all(r["ortune"]["token_ids"] == r["genai"]["token_ids"] == r["ortune_genai"]["token_ids"]
                           for r in rounds),
    }, indent=2))


if __name__ == "__main__":
    main()
