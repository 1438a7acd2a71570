"""Transformer fusions on real PyTorch exports: each fuser alone and the default (both, the
better kept), with the fused operators, the fidelity check and the speed against the source.

The models are exported here, from randomly initialised Hugging Face configurations (no
download): BERT and GPT-2 through PyTorch's dynamo exporter and its older TorchScript one
(a GPT-2 the TorchScript exporter cannot take is written by hand in the classic style,
with its causal mask as a lower-triangular buffer). Needs torch and transformers
(`pip install torch==2.13.0 transformers`); or pass a FOLDER of .onnx files instead.

    python benchmarks/transformer_fusions.py [FOLDER] [--seconds 4]

Prints one JSON object: per model and fuser, the fused operators, the check, the speedup
(source p50 / variant p50) with its 95 % interval and verdict."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.convert.jobs import CONVERT  # noqa: E402
from app.core.jobs.errors import JobFailed, UserError  # noqa: E402
from app.core.runner.process import run_job  # noqa: E402


def export_models(folder: Path) -> list[Path]:
    import torch
    from transformers import BertConfig, BertModel, GPT2Config, GPT2Model

    torch.manual_seed(0)
    ids = torch.randint(0, 1000, (1, 32))
    bert = BertModel(BertConfig(num_hidden_layers=2, hidden_size=128, num_attention_heads=4,
                                intermediate_size=512, vocab_size=1000)).eval()
    gpt2 = GPT2Model(GPT2Config(n_layer=2, n_embd=128, n_head=4, n_positions=128, vocab_size=1000)).eval()

    class Bert(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = bert

        def forward(self, ids, mask):
            return self.inner(input_ids=ids, attention_mask=mask).last_hidden_state

    class Gpt2(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = gpt2

        def forward(self, ids):
            return self.inner(input_ids=ids, use_cache=False).last_hidden_state

    made = []
    for name, module, args, names in (("bert", Bert(), (ids, torch.ones_like(ids)), ["input_ids", "attention_mask"]),
                                      ("gpt2", Gpt2(), (ids,), ["input_ids"]), ("gpt2_classic", ClassicGpt2(), (ids,),
                                                                                 ["input_ids"])):
        for dynamo in (True, False):
            if name == "gpt2" and not dynamo:
                continue      # transformers' mask code has aten::diff, which the TorchScript exporter lacks
            if name == "gpt2_classic" and dynamo:
                continue
            path = folder / f"{name}_{'dynamo' if dynamo else 'torchscript'}.onnx"
            axes = {n: {0: "batch", 1: "sequence"} for n in names}
            with torch.no_grad(), contextlib.redirect_stdout(sys.stderr):     # the exporter prints its steps
                torch.onnx.export(module, args, str(path), input_names=names, output_names=["hidden"],
                                  dynamo=dynamo, **({} if dynamo else {"dynamic_axes": axes, "opset_version": 17}))
            made.append(path)
    return made


def _classic_gpt2_class():
    import torch

    class Block(torch.nn.Module):
        def __init__(self, width=128, heads=4, positions=128):
            super().__init__()
            self.heads, self.ln1, self.ln2 = heads, torch.nn.LayerNorm(width), torch.nn.LayerNorm(width)
            self.qkv, self.proj = torch.nn.Linear(width, 3 * width), torch.nn.Linear(width, width)
            self.up, self.down = torch.nn.Linear(width, 4 * width), torch.nn.Linear(4 * width, width)
            self.register_buffer("bias", torch.tril(torch.ones(positions, positions)).view(1, 1, positions, positions))

        def forward(self, x):
            b, t, c = x.size()
            q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
            q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
            scores = (q @ k.transpose(-2, -1)) / (c // self.heads) ** 0.5
            scores = scores.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf")).softmax(-1)
            x = x + self.proj((scores @ v).transpose(1, 2).contiguous().view(b, t, c))
            return x + self.down(torch.nn.functional.gelu(self.up(self.ln2(x)), approximate="tanh"))

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed, self.blocks = torch.nn.Embedding(1000, 128), torch.nn.Sequential(Block(), Block())

        def forward(self, ids):
            return self.blocks(self.embed(ids))

    return Model


def ClassicGpt2():  # noqa: N802 - a class made on demand (torch is imported only here)
    return _classic_gpt2_class()().eval()


def fuse(model: Path, fuser: str, seconds: float) -> dict:
    output = model.with_name(f"{model.stem}.{fuser}.onnx")
    params = {"kind": "transformers", "input": str(model), "output": str(output), "force": True,
              "options": {"fuser": fuser}, "speed_s": seconds}
    try:
        result = run_job(CONVERT, params)
    except (UserError, JobFailed) as exc:
        return {"error": str(exc)}
    speed = result.get("speed") or {}
    return {"kept": result["fuser"], "fused": result["fused_operators"], "check": result["check"],
            "model_type": result["model_type"], "heads": result["num_heads"],
            "speedup": speed.get("ratio"), "interval": speed.get("ratio_ci"), "verdict": speed.get("verdict"),
            "p50_ms": [speed.get("source_p50_ms"), speed.get("variant_p50_ms")], "rounds": speed.get("rounds"),
            "fusers": {n: o.get("fused_operators", o.get("problem")) for n, o in result["fusers"].items()},
            "operators_after": operator_counts(output), "fidelity": result.get("fidelity"),
            "warnings": result["warnings"]}


#: the exports' shape: layers, hidden size, feed-forward width, sequence length
LAYERS, HIDDEN, INNER, SEQUENCE = 2, 128, 512, 32


def hand_macs() -> int:
    """Per layer: the Q, K, V and output projections, the feed-forward pair, and the two
    attention products (scores and the weighted sum); embeddings and norms count none."""
    per_layer = SEQUENCE * HIDDEN * (4 * HIDDEN + 2 * INNER) + 2 * SEQUENCE * SEQUENCE * HIDDEN
    return LAYERS * per_layer


def counted_macs(model: Path) -> dict:
    """ORTune's count (inspect's) on the exports' sequence length, against the hand count."""
    from app.core.graph.jobs import SUMMARY

    summary = SUMMARY({"path": str(model), "inputs": {"mode": "zeros", "dims": {"batch": 1, "sequence": SEQUENCE}}},
                      None)
    macs = summary["macs"]
    return {"macs": macs, "lower_bound": summary["cost"].get("macs_is_lower_bound"),
            "hand_macs": hand_macs(), "ratio_to_hand": round(macs / hand_macs(), 4) if macs else None}


def operator_counts(model: Path) -> dict:
    """The model's operators by type, subgraphs included."""
    from app.core.model.inspect import inspect_model
    return inspect_model(str(model))["op_counts"]


def copied(folder: Path, scratch: Path) -> list[Path]:
    """The folder's models (a name without a second dot: not a variant) with their external
    data, copied to `scratch`, where the variants are written."""
    import shutil

    models = []
    for model in sorted(folder.glob("*.onnx")):
        if "." in model.stem:
            continue
        for part in [model] + sorted(folder.glob(f"{model.name}.*")):
            shutil.copy(part, scratch / part.name)
        models.append(scratch / model.name)
    return models


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path)
    parser.add_argument("--seconds", type=float, default=4.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        models = copied(args.folder, Path(scratch)) if args.folder else export_models(Path(scratch))
        report = {m.name: {"cost": counted_macs(m), "operators_before": operator_counts(m),
                           **{f: fuse(m, f, args.seconds) for f in ("onnxruntime", "onnxscript", "best")}}
                  for m in models}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
