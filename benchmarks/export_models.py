"""Random-weight transformers models exported as their users export them, for
benchmarks/real_exports.py: BERT through TorchScript (its default SDPA attention and the eager
one) and dynamo; GPT-2 and a grouped-query Llama with a KV cache (past/present), through
TorchScript and dynamo; a Qwen2 decoder (grouped-query, biased projections) through dynamo; ViT
through both; the Llama's Hugging Face folder with a word-level tokenizer, which
onnxruntime-genai's model builder turns into its fp32 and int4 folders. Needs PyTorch,
transformers and onnxscript (and onnxruntime-genai for the builder); nothing is downloaded.

    python benchmarks/export_models.py OUT_DIR [--hidden 256] [--layers 4]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path


def decoder(model, layers: int, kv_heads: int, head: int, path: Path, dynamo: bool) -> None:
    """A decoder with its cache as flat past/present tensors, as Optimum and the genai builder name them."""
    import torch
    from transformers import DynamicCache

    class Flat(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model.eval()

        def forward(self, input_ids, attention_mask, position_ids, *past):
            cache = DynamicCache()
            for i in range(layers):
                cache.update(past[2 * i], past[2 * i + 1], i)
            out = self.model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                             past_key_values=cache, use_cache=True)
            return (out.logits, *[t for layer in out.past_key_values.layers for t in (layer.keys, layer.values)])

    batch, new, past_len = 1, 4, 6
    args = (torch.randint(0, 500, (batch, new)), torch.ones(batch, past_len + new, dtype=torch.int64),
            torch.arange(past_len, past_len + new).unsqueeze(0),
            *[torch.randn(batch, kv_heads, past_len, head) for _ in range(2 * layers)])
    names = ["input_ids", "attention_mask", "position_ids"] + [f"past_key_values.{i}.{kv}" for i in range(layers)
                                                              for kv in ("key", "value")]
    outputs = ["logits"] + [f"present.{i}.{kv}" for i in range(layers) for kv in ("key", "value")]
    if dynamo:
        b, s, p, t = (torch.export.Dim(n) for n in ("batch", "seq", "past", "total"))
        shapes = {"input_ids": {0: b, 1: s}, "attention_mask": {0: b, 1: t}, "position_ids": {0: b, 1: s},
                  "past": tuple({0: b, 2: p} for _ in range(2 * layers))}
        torch.onnx.export(Flat(), args, dynamo=True, input_names=names, output_names=outputs,
                          dynamic_shapes=shapes).save(str(path))
    else:
        axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "total"},
                "position_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"},
                **{n: {0: "batch", 2: "past"} for n in names[3:]}, **{n: {0: "batch", 2: "total"} for n in outputs[1:]}}
        torch.onnx.export(Flat(), args, str(path), dynamo=False, input_names=names, output_names=outputs,
                          dynamic_axes=axes, opset_version=17)


def bert(config, path: Path, dynamo: bool) -> None:
    import torch
    import transformers

    class Encoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = transformers.BertModel(config).eval()

        def forward(self, input_ids, attention_mask, token_type_ids):
            out = self.model(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return out.last_hidden_state, out.pooler_output

    ids = torch.randint(0, config.vocab_size, (1, 128))
    args, names = (ids, torch.ones_like(ids), torch.zeros_like(ids)), ["input_ids", "attention_mask", "token_type_ids"]
    outputs = ["last_hidden_state", "pooler_output"]
    if dynamo:
        b, s = torch.export.Dim("batch"), torch.export.Dim("seq")
        torch.onnx.export(Encoder(), args, dynamo=True, input_names=names, output_names=outputs,
                          dynamic_shapes={n: {0: b, 1: s} for n in names}).save(str(path))
    else:
        torch.onnx.export(Encoder(), args, str(path), dynamo=False, opset_version=17, input_names=names,
                          output_names=outputs, dynamic_axes={n: {0: "batch", 1: "seq"} for n in names + outputs[:1]})


def image_classifier(config, path: Path, dynamo: bool) -> None:
    import torch
    import transformers

    class Classifier(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = transformers.ViTForImageClassification(config).eval()

        def forward(self, pixel_values):
            return self.model(pixel_values=pixel_values).logits

    args = (torch.randn(1, 3, config.image_size, config.image_size),)
    if dynamo:
        torch.onnx.export(Classifier(), args, dynamo=True, input_names=["pixel_values"], output_names=["logits"],
                          dynamic_shapes={"pixel_values": {0: torch.export.Dim("batch")}}).save(str(path))
    else:
        torch.onnx.export(Classifier(), args, str(path), dynamo=False, opset_version=17, input_names=["pixel_values"],
                          output_names=["logits"], dynamic_axes={"pixel_values": {0: "batch"}})


def hf_folder(config, folder: Path) -> None:
    """The Llama as a Hugging Face folder, with a word-level tokenizer the builder can copy."""
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers

    transformers.LlamaForCausalLM(config).save_pretrained(folder)
    words = Tokenizer(models.WordLevel({f"w{i}": i for i in range(config.vocab_size)} | {"<unk>": 0}, unk_token="<unk>"))
    words.pre_tokenizer = pre_tokenizers.Whitespace()
    transformers.PreTrainedTokenizerFast(tokenizer_object=words, unk_token="<unk>", bos_token="w1",
                                         eos_token="w2").save_pretrained(folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    args = parser.parse_args()
    import torch
    import transformers

    torch.manual_seed(0)
    out, hidden, layers, heads = args.out, args.hidden, args.layers, 4
    out.mkdir(parents=True, exist_ok=True)
    made = {}

    def make(name: str, build) -> None:
        started = time.perf_counter()
        try:
            build()
            made[name] = round(time.perf_counter() - started, 1)
        except Exception as exc:  # an exporter that fails is a finding, reported with the others
            made[name] = f"failed: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
        print(f"{name}: {made[name]}", file=sys.stderr, flush=True)

    for attention in ("sdpa", "eager"):
        config = transformers.BertConfig(hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
                                         intermediate_size=4 * hidden, vocab_size=8000)
        config._attn_implementation = attention
        make(f"bert-{attention}-torchscript", lambda c=config, a=attention: bert(c, out / f"bert-{a}-torchscript.onnx", False))
    default = transformers.BertConfig(hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
                                      intermediate_size=4 * hidden, vocab_size=8000)
    make("bert-dynamo", lambda: bert(default, out / "bert-dynamo.onnx", True))
    gpt2 = transformers.GPT2Config(n_embd=hidden, n_layer=layers, n_head=heads, vocab_size=8000, n_positions=2048)
    llama = transformers.LlamaConfig(hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
                                     num_key_value_heads=heads // 2, intermediate_size=688 * hidden // 256,
                                     vocab_size=8000, max_position_embeddings=2048)
    head = hidden // heads
    for dynamo in (False, True):
        way = "dynamo" if dynamo else "torchscript"
        make(f"gpt2-{way}", lambda d=dynamo, w=way: decoder(transformers.GPT2LMHeadModel(gpt2), layers, heads, head,
                                                            out / f"gpt2-{w}.onnx", d))
        make(f"llama-{way}", lambda d=dynamo, w=way: decoder(transformers.LlamaForCausalLM(llama), layers, heads // 2,
                                                             head, out / f"llama-{w}.onnx", d))
    qwen2 = transformers.Qwen2Config(hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
                                     num_key_value_heads=heads // 2, intermediate_size=688 * hidden // 256,
                                     vocab_size=8000, max_position_embeddings=2048)
    make("qwen2-dynamo", lambda: decoder(transformers.Qwen2ForCausalLM(qwen2), layers, heads // 2, head,
                                         out / "qwen2-dynamo.onnx", True))
    vit = transformers.ViTConfig(hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
                                 intermediate_size=4 * hidden, image_size=224)
    for dynamo in (False, True):
        make(f"vit-{'dynamo' if dynamo else 'torchscript'}",
             lambda d=dynamo: image_classifier(vit, out / f"vit-{'dynamo' if d else 'torchscript'}.onnx", d))
    make("llama-hf", lambda: hf_folder(llama, out / "llama-hf"))
    for precision in ("fp32", "int4"):
        def build(p=precision):
            done = subprocess.run([sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", str(out / "llama-hf"),
                                   "-o", str(out / f"genai-{p}"), "-p", p, "-e", "cpu", "-c", str(out / "cache")],
                                  capture_output=True, text=True)
            if done.returncode:
                raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed")
        make(f"genai-{precision}", build)
    print(__import__("json").dumps(made))


if __name__ == "__main__":
    main()
