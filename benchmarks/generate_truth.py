"""Does `ortune generate` tell the truth? Its tokens per second against a bare onnxruntime
generation loop written here without any of ORTune's code, on a small random-weight
Llama-like decoder with grouped-query attention (and a GPT-2-like one with --gpt2), each in
a fresh process, alternating which goes first, `--rounds` rounds.

Target: the median decode tokens/s of the two within 10 % (`decode_ratio`, ORTune over the
bare loop, with each round's ratio listed), and the same greedy token ids (`same_tokens`).
With --sweep PAST,PAST,...: also `ortune bench --sweep past_sequence_length=...` on the same
model, whose best must be the cell fastest per token (`sweep.best_is_fastest_per_token`).
Prints one JSON object.

    python benchmarks/generate_truth.py [--rounds 6] [--prompt 128] [--new-tokens 64]
        [--hidden 256] [--layers 4] [--threads 1] [--gpt2] [--sweep 127,2047]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def repeated(generate, warmup: int, repeats: int) -> tuple[list[float], list[float], list]:
    """`generate()` (ttft ms, step ms, token ids) `warmup` times untimed, then `repeats` times:
    (every TTFT, every step, the first generation's tokens). A bare loop's own repetition,
    shared by the benchmarks that time one without ORTune's code."""
    for _ in range(warmup):
        generate()
    ttfts, all_steps, tokens = [], [], None
    for _ in range(repeats):
        ttft, steps, chosen = generate()
        ttfts.append(ttft)
        all_steps += steps
        tokens = tokens or chosen
    return ttfts, all_steps, tokens


def bare_loop(model: str, prompt_ids: list, new_tokens: int, threads: int, repeats: int, warmup: int) -> dict:
    """Greedy generation with plain InferenceSession.run calls, present fed back as past."""
    import numpy as np
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    inputs = {i.name: i for i in session.get_inputs()}
    outputs = [o.name for o in session.get_outputs()]
    pasts = [name for name in inputs if name.startswith("past_key_values")]
    ids = np.asarray(prompt_ids, np.int64)
    batch, prompt = ids.shape

    def generate() -> tuple[float, list[float], list[list[int]]]:
        feeds = {"input_ids": ids, "attention_mask": np.ones((batch, prompt), np.int64),
                 "position_ids": np.tile(np.arange(prompt, dtype=np.int64), (batch, 1))}
        for name in pasts:
            _, heads, _, size = inputs[name].shape
            feeds[name] = np.zeros((batch, heads, 0, size), np.float32)
        started = time.perf_counter_ns()
        result = dict(zip(outputs, session.run(None, feeds)))
        token = result["logits"][:, -1, :].argmax(-1)
        ttft = (time.perf_counter_ns() - started) / 1e6
        chosen, steps, context = [token], [], prompt
        for _ in range(new_tokens - 1):
            started = time.perf_counter_ns()
            context += 1
            feeds = {"input_ids": token.reshape(batch, 1), "attention_mask": np.ones((batch, context), np.int64),
                     "position_ids": np.full((batch, 1), context - 1, np.int64)}
            feeds.update({name: result[name.replace("past_key_values", "present")] for name in pasts})
            result = dict(zip(outputs, session.run(None, feeds)))
            token = result["logits"][:, -1, :].argmax(-1)
            steps.append((time.perf_counter_ns() - started) / 1e6)
            chosen.append(token)
        return ttft, steps, np.stack(chosen, axis=1).tolist()

    ttfts, all_steps, tokens = repeated(generate, warmup, repeats)
    decode_s = sum(all_steps) / 1000
    return {"ttft_ms": statistics.median(ttfts), "decode_p50_ms": statistics.median(all_steps),
            "tokens_per_s": {"decode": batch * len(all_steps) / decode_s,
                             "end_to_end": batch * new_tokens * repeats / (decode_s + sum(ttfts) / 1000)},
            "token_ids": tokens}


def ortune(model: str, args) -> dict:
    command = [sys.executable, "-m", "app", "generate", model, "--json", "--threads", str(args.threads),
               "--prompt-lengths", str(args.prompt), "--new-tokens", str(args.new_tokens),
               "--repeats", str(args.repeats), "--warmup", "1"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=True)
    return json.loads(done.stdout)


def bare(model: str, prompt_ids: list, args) -> dict:
    command = [sys.executable, __file__, "--bare", model, "--prompt-ids", json.dumps(prompt_ids),
               "--new-tokens", str(args.new_tokens), "--threads", str(args.threads), "--repeats", str(args.repeats)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=True)
    return json.loads(done.stdout)


def sweep(model: str, args) -> dict:
    command = [sys.executable, "-m", "app", "bench", model, "--json", "--threads", str(args.threads),
               "--sweep", f"past_sequence_length={args.sweep}", "--duration", "2", "--no-history"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=True)
    result = json.loads(done.stdout)
    cells = {cell["dim_value"]: cell for cell in result["cells"]}
    fastest = min(cells, key=lambda past: cells[past]["per_token_ms"]["p50"])
    return {"unit": result["unit"], "best_past": result["best"]["dim_value"], "fastest_past": fastest,
            "per_token_p50_ms": {past: cell["per_token_ms"]["p50"] for past, cell in cells.items()},
            "tokens_per_s": {past: cell["tokens_per_s"] for past, cell in cells.items()},
            "best_is_fastest_per_token": result["best"]["dim_value"] == fastest}


def workload_parser(description: str, bare: str) -> argparse.ArgumentParser:
    """The generation benchmarks' flags: the workload (rounds, prompt, new tokens, repeats, the
    decoder's size, threads), and the hidden pair a bare loop's own process is started with
    (--bare `bare`, --prompt-ids)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--prompt", type=int, default=128)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--bare", metavar=bare, help=argparse.SUPPRESS)
    parser.add_argument("--prompt-ids", help=argparse.SUPPRESS)
    return parser


def main() -> None:
    parser = workload_parser(__doc__.split("\n")[0], "MODEL")
    parser.add_argument("--gpt2", action="store_true", help="a GPT-2-like decoder instead of the GQA one")
    parser.add_argument("--sweep", metavar="PAST,PAST", help="also sweep these past lengths")
    args = parser.parse_args()
    if args.bare:
        print(json.dumps(bare_loop(args.bare, json.loads(args.prompt_ids), args.new_tokens, args.threads,
                                   args.repeats, 1)))
        return
    from tests.decoder_models import decoder
    from tests.models import save

    with tempfile.TemporaryDirectory() as folder:
        model = str(save(decoder(layers=args.layers, hidden=args.hidden, heads=8, kv_heads=8 if args.gpt2 else 2,
                                 vocab=2000, positions=4096), Path(folder) / "decoder.onnx"))
        rounds = []
        for number in range(args.rounds):
            if number % 2 == 0:
                ours = ortune(model, args)
                theirs = bare(model, ours["runs"][0]["prompt_ids"], args)
            else:
                prompt_ids = rounds[0]["prompt_ids"]
                theirs = bare(model, prompt_ids, args)
                ours = ortune(model, args)
            rounds.append({"prompt_ids": ours["runs"][0]["prompt_ids"], "ortune": ours, "bare": theirs})
        swept = sweep(model, args) if args.sweep else None
    ratios = [r["ortune"]["tokens_per_s"]["decode"] / r["bare"]["tokens_per_s"]["decode"] for r in rounds]
    e2e = [r["ortune"]["tokens_per_s"]["end_to_end"] / r["bare"]["tokens_per_s"]["end_to_end"] for r in rounds]
    ratio = statistics.median(ratios)
    print(json.dumps({
        "model": {"kind": "gpt2" if args.gpt2 else "llama-gqa", "hidden": args.hidden, "layers": args.layers,
                  "prompt": args.prompt, "new_tokens": args.new_tokens, "threads": args.threads},
        "ortune_decode_tokens_per_s": statistics.median(r["ortune"]["tokens_per_s"]["decode"] for r in rounds),
        "bare_decode_tokens_per_s": statistics.median(r["bare"]["tokens_per_s"]["decode"] for r in rounds),
        "decode_ratio": ratio, "decode_ratios": ratios, "end_to_end_ratio": statistics.median(e2e),
        "ortune_ttft_ms": statistics.median(r["ortune"]["ttft_ms"] for r in rounds),
        "bare_ttft_ms": statistics.median(r["bare"]["ttft_ms"] for r in rounds),
        "within_10_percent": abs(ratio - 1) <= 0.10,
        "same_tokens": all(r["ortune"]["runs"][0]["token_ids"] == r["bare"]["token_ids"] for r in rounds),
        **({"sweep": swept} if swept else {}),
    }, indent=2))


if __name__ == "__main__":
    main()
