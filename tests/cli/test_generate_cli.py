"""`ortune generate`: one JSON object with the generation's figures, a readable table, and
one line (exit 2) for a model that does not generate or a context that would not fit."""

from tests.decoder_models import gpt2, llama_gqa
from tests.models import mlp, save


def test_generate_json_reports_ttft_per_token_percentiles_and_tokens_per_second(ortune, tmp_path):
    path = save(llama_gqa("dynamo"), tmp_path / "llama.onnx")
    result = ortune("generate", path, "--prompt-lengths", "8,24", "--new-tokens", "6", "--repeats", "1", "--json")
    assert result.code == 0, result.stderr
    report = result.json()
    assert report["ttft_ms"] > 0
    assert {"p50", "p90", "p99"} <= set(report["decode_latency_ms"])
    assert report["tokens_per_s"]["decode"] > 0 and report["tokens_per_s"]["end_to_end"] > 0
    assert [run["prompt_length"] for run in report["runs"]] == [8, 24]
    assert report["kv_cache_bytes_per_token"] == 2 * 2 * 2 * 8 * 4       # layers × k,v × kv heads × size × fp32
    assert len(report["runs"][0]["token_ids"][0]) == 6


def test_generate_text_names_the_figures(ortune, tmp_path):
    path = save(gpt2("legacy"), tmp_path / "gpt2.onnx")
    result = ortune("generate", path, "--prompt-lengths", "8", "--new-tokens", "5", "--repeats", "1")
    assert result.code == 0, result.stderr
    for text in ("TTFT", "token p50", "tokens/s decode", "KV cache:", "next tokens:", "per-token latency", "loop:"):
        assert text in result.stdout


def test_generate_refuses_in_one_line(ortune, tmp_path):
    result = ortune("generate", save(mlp(), tmp_path / "mlp.onnx"), "--json")
    assert result.code == 2 and result.json()["error"]["kind"] == "not-a-decoder"
    path = save(gpt2(), tmp_path / "gpt2.onnx")
    result = ortune("generate", path, "--batch", "4000", "--prompt-lengths", "400", "--new-tokens", "100",
                    "--memory-limit", "512M")
    assert result.code == 2 and len(result.stderr.strip().splitlines()) == 1 and "KV cache" in result.stderr
    result = ortune("generate", path, "--prompt-lengths", "0")
    assert result.code == 2 and len(result.stderr.strip().splitlines()) == 1


def test_bench_of_a_decoder_says_its_step_and_cache(ortune, tmp_path):
    path = save(llama_gqa(), tmp_path / "llama.onnx")
    result = ortune("bench", path, "--iterations", "5", "--past-length", "300")
    assert result.code == 0, result.stderr
    assert "decode step: 1 new token(s) after 300 past, batch 1: 1 token(s) a run" in result.stdout
    result = ortune("bench", path, "--iterations", "5", "--phase", "prefill", "--prompt-length", "40", "--json")
    step = result.json()["decoder"]
    assert (step["phase"], step["past"], step["new"], step["context"]) == ("prefill", 0, 40, 40)


def test_generate_against_a_reference_says_the_next_token_agreement(ortune, tmp_path):
    reference = save(gpt2(), tmp_path / "reference.onnx")
    variant = save(gpt2(), tmp_path / "variant.onnx")
    result = ortune("generate", variant, "--against", reference, "--prompt-lengths", "8", "--new-tokens", "5",
                    "--repeats", "1")
    assert result.code == 0, result.stderr
    assert "next-token agreement with reference.onnx: 100.0% of 5 tokens (every token the same)" in result.stdout
    result = ortune("generate", variant, "--against", tmp_path / "missing.onnx", "--json")
    assert result.code == 2 and result.json()["error"]["kind"] == "not-found"


def test_an_onnxruntime_genai_folder_opens_as_its_decoder(ortune, tmp_path):
    import json

    folder = tmp_path / "genai-model"
    folder.mkdir()
    save(llama_gqa("genai", positions=None), folder / "model.onnx")
    (folder / "genai_config.json").write_text(json.dumps(
        {"model": {"type": "llama", "context_length": 40, "decoder": {"filename": "model.onnx", "head_size": 8,
                                                                     "num_key_value_heads": 2}}}))
    result = ortune("generate", folder, "--prompt-lengths", "8", "--new-tokens", "4", "--repeats", "1", "--json")
    assert result.code == 0, result.stderr
    report = result.json()
    assert report["model"]["path"].endswith("model.onnx") and report["decoder"]["max_context"] == 40
    assert ortune("inspect", folder, "--json").json()["inputs"][0]["name"] == "input_ids"
    result = ortune("generate", folder, "--prompt-lengths", "38", "--new-tokens", "4", "--json")
    assert result.code == 2 and "past the 40 positions" in result.json()["error"]["message"]
    (folder / "genai_config.json").write_text(json.dumps({"model": {"decoder": {"filename": "../model.onnx"}}}))
    result = ortune("generate", folder, "--json")
    assert result.code == 2 and "is a folder" in result.json()["error"]["message"]
