"""The command line says what two decoders do as they generate: `compare` and `gate` print
a generation table (TTFT and tokens/s, each with its verdict), and `convert` of a decoder
prints its next-token agreement."""

from tests.decoder_models import gpt2
from tests.models import save

QUICK = ("--warmup", "2", "--iterations", "20", "--pairs", "1", "--max-seconds", "1", "--threads", "1",
         "--prompt-length", "16", "--past-length", "15")


def _pair(tmp_path):
    return (save(gpt2(layers=2, hidden=64, vocab=128, seed=0), tmp_path / "old.onnx"),
            save(gpt2(layers=2, hidden=64, vocab=128, seed=1), tmp_path / "new.onnx"))


def _generation_rows(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("model") and "ttft ms" in line)
    return lines[start + 2:start + 4]


def test_compare_and_gate_print_ttft_and_tokens_per_second(ortune, tmp_path):
    old, new = _pair(tmp_path)
    done = ortune("compare", old, new, *QUICK, "--no-history")
    assert done.code == 0, done.stderr
    assert "generation: decode: one new token after the past tokens of cache" in done.stdout
    reference, other = _generation_rows(done.stdout)
    assert reference.startswith("old.onnx") and "reference" in reference and other.startswith("new.onnx")
    gate = ortune("gate", new, "--against", old, "--max-slowdown", "50", *QUICK, "--no-history")
    assert "tokens/s verdict" in gate.stdout
    assert [row.split()[0] for row in _generation_rows(gate.stdout)] == ["old.onnx", "new.onnx"]


def test_convert_of_a_decoder_prints_its_next_token_agreement(ortune, tmp_path):
    old, _ = _pair(tmp_path)
    done = ortune("convert", "optimize", old, "-o", tmp_path / "opt.onnx", "--speed-seconds", "0")
    assert done.code == 0, done.stderr
    assert "next tokens agree on 16 of 16 greedy steps, from a prompt of 8" in done.stdout


def test_generate_takes_the_plans_prompt_length_and_refuses_its_one_step_choices(ortune, tmp_path):
    old, _ = _pair(tmp_path)
    done = ortune("generate", old, "--prompt-length", "12", "--new-tokens", "3", "--repeats", "1", "--json")
    assert done.code == 0, done.stderr
    assert done.json()["prompt_lengths"] == [12] and done.json()["runs"][0]["context"] == 15
    for given in (("--phase", "prefill"), ("--past-length", "40"), ("--prompt-length", "4", "--prompt-lengths", "8")):
        refused = ortune("generate", old, *given)
        assert refused.code == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
