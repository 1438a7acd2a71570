"""ORTune on models exported as users export them (benchmarks/export_models.py: transformers'
BERT, GPT-2 and a grouped-query Llama, random weights, through PyTorch's TorchScript and
dynamo exporters, and onnxruntime-genai's model builder), not on graphs written by hand:
- every export: `ortune convert transformers` — attention fused in how many layers, the
  check, the speed against the source (the decode step for a decoder), and whether the
  warning names the export that fuses;
- every decoder export: `ortune convert int4` — MatMulNBits made (Gemm layers rewritten),
  the next-token check, the decode step's speed, its time (a process without its checks)
  against ONNX Runtime's own quantizer called directly in a process; `ortune generate` — TTFT and tokens/s;
- each genai folder: `ortune generate` through ORTune's loop and through onnxruntime-genai.
Prints one JSON object.

    python benchmarks/real_exports.py [--export-python PY] [--models DIR] [--speed-seconds 3]

--export-python names an interpreter with PyTorch, transformers, onnxscript and onnxruntime-
genai (default: this one); --models reuses a folder export_models.py made.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DIRECT_INT4 = """
import sys, onnx
from onnxruntime.quantization import matmul_nbits_quantizer as nbits
quantizer = nbits.MatMulNBitsQuantizer(onnx.load(sys.argv[1]), bits=4, block_size=32, is_symmetric=True,
                                       op_types_to_quantize=("MatMul",))
quantizer.process()
quantizer.model.save_model_to_file(sys.argv[2], False)
"""


def ortune(*args: str) -> tuple[dict | None, str, float]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "app", *args, "--json"], capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - started
    try:
        return json.loads(done.stdout), done.stderr, seconds
    except json.JSONDecodeError:
        return None, (done.stderr.strip().splitlines() or ["no output"])[-1], seconds


def speed(report: dict) -> dict:
    found = report.get("speed") or {}
    return {"speedup": found.get("ratio"), "ci": found.get("ratio_ci"), "verdict": found.get("verdict"),
            "p50_ms": [found.get("source_p50_ms"), found.get("variant_p50_ms")]}


def fused(model: Path, out: Path, seconds: str) -> dict:
    report, stderr, _ = ortune("convert", "transformers", str(model), "-o", str(out / f"{model.stem}-fused.onnx"),
                               "--force", "--threads", "1", "--speed-seconds", seconds)
    if report is None:
        return {"error": stderr}
    layers = report.get("attention_layers") or {}
    return {"attention": f"{layers.get('fused', 0)} of {layers.get('of', 0)}", "ops": layers.get("ops"),
            "check": report["check"], "speed": speed(report),
            "names_the_export_that_fuses": any("dynamo=True" in w for w in report.get("warnings", []))}


def int4(model: Path, out: Path, seconds: str) -> dict:
    report, stderr, ortune_s = ortune("convert", "int4", str(model), "-o", str(out / f"{model.stem}-int4.onnx"),
                                      "--force", "--threads", "1", "--block-size", "32", "--speed-seconds", seconds)
    if report is None:
        return {"error": stderr}
    # the same work in two fresh processes, in turn: ORTune's without its checks, and the quantizer called directly
    _, _, bare_s = ortune("convert", "int4", str(model), "-o", str(out / f"{model.stem}-bare.onnx"), "--force",
                          "--block-size", "32", "--no-fidelity", "--speed-seconds", "0")
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", DIRECT_INT4, str(model), str(out / f"{model.stem}-direct.onnx")],
                   capture_output=True, check=True)
    direct_s = time.perf_counter() - started
    tokens = report["fidelity"].get("next_tokens") or {}
    return {"matmulnbits": report["op_changes"]["added"].get("com.microsoft.MatMulNBits", 0),
            "gemm_rewritten": report.get("gemm_as_matmul", 0), "check": report["check"],
            "next_tokens": f"{tokens.get('agree')} of {tokens.get('steps')}", "size_mb": [
                round(report["input_bytes"] / 2 ** 20, 1), round(report["output_bytes"] / 2 ** 20, 1)],
            "decode_step": speed(report), "convert_s": round(report["seconds"], 2),
            "checked_process_s": round(ortune_s, 2), "unchecked_process_s": round(bare_s, 2),
            "ort_quantizer_process_s": round(direct_s, 2), "time_ratio": round(bare_s / direct_s, 2)}


def generated(model: Path, *extra: str) -> dict:
    report, stderr, _ = ortune("generate", str(model), "--prompt-lengths", "64", "--new-tokens", "64", "--repeats", "3",
                               "--threads", "1", *extra)
    if report is None:
        return {"error": stderr}
    run = report["runs"][0]
    return {"ttft_ms": round(run["ttft_ms"], 3), "token_p50_ms": round(run["decode_latency_ms"]["p50"], 3),
            "tokens_per_s_decode": round(run["tokens_per_s"]["decode"], 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--export-python", default=sys.executable)
    parser.add_argument("--models", type=Path)
    parser.add_argument("--speed-seconds", default="3")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ortune-exports-") as scratch:
        folder, out = args.models or Path(scratch) / "models", Path(scratch) / "out"
        out.mkdir()
        exported = None
        if args.models is None:
            done = subprocess.run([args.export_python, str(ROOT / "benchmarks" / "export_models.py"), str(folder)],
                                  capture_output=True, text=True)
            if done.returncode:
                raise SystemExit(f"the exports failed: {done.stderr[-600:]}")
            exported = json.loads(done.stdout.strip().splitlines()[-1])
        result = {"exported_s": exported, "models": {}}
        for model in sorted(folder.glob("*.onnx")):
            row = {"transformers": fused(model, out, args.speed_seconds)}
            if model.stem.startswith(("gpt2", "llama", "qwen2")):
                row["int4"] = int4(model, out, args.speed_seconds)
                row["generate"] = generated(model)
            result["models"][model.stem] = row
            print(f"{model.stem}: {json.dumps(row)}", file=sys.stderr, flush=True)
        for genai in sorted(folder.glob("genai-*")):
            result["models"][genai.name] = {"generate_ort_loop": generated(genai),
                                            "generate_genai": generated(genai, "--engine", "genai")}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
