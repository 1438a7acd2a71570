"""int4 on decoders: how long `ortune convert int4` takes against ONNX Runtime's own
matmul_nbits_quantizer called directly, how the variant is judged (next-token agreement
over greedy steps, logit cosine beside it), and its decode-step speed against the source.

On small random-weight decoders built here (GPT-2-like and Llama-GQA-like from
tests/decoder_models.py; --hidden, --layers), for each method (rtn, k_quant):
- `direct_s`: a fresh process that imports the quantizer, loads, quantizes and saves (the
  same block size, symmetry and method), the median of --rounds;
- `ortune_s`: a fresh `ortune convert int4 --no-fidelity --no-speed` process, the median of
  --rounds, alternating which of the two goes first; `ratio` = ortune_s / direct_s
  (target: within 2);
- `checked`: one `ortune convert int4` with its check and its speed check
  (--speed-seconds): the check's verdict, next-token agreement, logit cosine, and the
  variant's decode-step speedup over the source with its 95 % interval and verdict.
Prints one JSON object.

    python benchmarks/int4_decoders.py [--rounds 3] [--hidden 256] [--layers 4] [--speed-seconds 4]
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

DIRECT = """
import sys, onnx
from onnxruntime.quantization import matmul_nbits_quantizer as nbits
model = onnx.load(sys.argv[1])
config = None
if sys.argv[3] == "k_quant":
    for index, node in enumerate(model.graph.node):
        node.name = node.name or f"{node.op_type}_{index}"
    config = nbits.KQuantWeightOnlyQuantConfig(op_types_to_quantize=("MatMul",))
quantizer = nbits.MatMulNBitsQuantizer(model, bits=4, block_size=32, is_symmetric=True,
                                       op_types_to_quantize=("MatMul",), algo_config=config)
quantizer.process()
quantizer.model.save_model_to_file(sys.argv[2], False)
"""


def timed(command: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    if done.returncode not in (0, 4):
        raise SystemExit(f"{' '.join(command[:4])} failed: {done.stderr[-400:]}")
    return time.perf_counter() - started


def ortune_command(source: Path, out: Path, method: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "app", "convert", "int4", str(source), "-o", str(out), "--force",
            "--method", method, "--block-size", "32", "--threads", "1", *extra]


def checked(source: Path, out: Path, method: str, speed_s: float) -> dict:
    done = subprocess.run(ortune_command(source, out, method, "--speed-seconds", str(speed_s), "--json"),
                          capture_output=True, text=True, cwd=ROOT)
    report = json.loads(done.stdout)
    fidelity, speed = report["fidelity"], report["speed"]
    tokens = fidelity.get("next_tokens") or {}
    logits = next((o for o in fidelity["outputs"] if o["name"] == "logits"), {})
    return {"check": report["check"], "policy": fidelity["tolerance"]["policy"],
            "next_tokens": {k: tokens.get(k) for k in ("agree", "steps", "rate", "first_disagreement", "required")},
            "logit_cosine": logits.get("cosine"), "size_bytes": [report["input_bytes"], report["output_bytes"]],
            "decode_step": {"speedup": speed.get("ratio"), "ci": speed.get("ratio_ci"), "verdict": speed.get("verdict"),
                            "source_p50_ms": speed.get("source_p50_ms"), "variant_p50_ms": speed.get("variant_p50_ms"),
                            "inputs": [f"{i['name']} {i['shape']}" for i in speed.get("inputs", [])[:3]]}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--speed-seconds", type=float, default=4.0)
    args = parser.parse_args()

    from tests.decoder_models import gpt2, llama_gqa
    from tests.models import save

    results = {}
    with tempfile.TemporaryDirectory() as folder:
        for name, make in (("gpt2", gpt2), ("llama_gqa", llama_gqa)):
            source = save(make(layers=args.layers, hidden=args.hidden, vocab=1000, seed=0),
                          Path(folder) / f"{name}.onnx")
            for method in ("rtn", "k_quant"):
                direct, ours = [], []
                for index in range(args.rounds):
                    runs = [("direct", [sys.executable, "-c", DIRECT, str(source), str(Path(folder) / "direct.onnx"),
                                        method]),
                            ("ours", ortune_command(source, Path(folder) / "ours.onnx", method, "--no-fidelity",
                                                    "--no-speed"))]
                    for which, command in (runs if index % 2 == 0 else runs[::-1]):
                        (direct if which == "direct" else ours).append(timed(command))
                results[f"{name}/{method}"] = {
                    "direct_s": statistics.median(direct), "ortune_s": statistics.median(ours),
                    "ratio": statistics.median(ours) / statistics.median(direct),
                    "direct_runs": direct, "ortune_runs": ours,
                    "checked": checked(source, Path(folder) / "checked.onnx", method, args.speed_seconds)}
    print(json.dumps({"hidden": args.hidden, "layers": args.layers, "target_ratio": 2.0,
                      "within_target": all(r["ratio"] <= 2.0 for r in results.values()), "models": results}, indent=1))


if __name__ == "__main__":
    main()
