"""`ortune generate --engine genai`: onnxruntime-genai's generator on a genai model folder,
timed as ORTune's own loop is, choosing the same greedy tokens from the same prompt; and
one line (exit 2) where genai cannot run what is asked."""

import pytest

from tests.decoder_models import genai_folder, gpt2
from tests.models import save

GENERATE = ("--prompt-lengths", "8,20", "--new-tokens", "12", "--batch", "2", "--repeats", "1", "--warmup", "0",
            "--json")


def _genai():
    return pytest.importorskip("onnxruntime_genai", reason="onnxruntime-genai is not installed (the genai engine "
                                                           "needs it: pip install onnxruntime-genai)")


def test_genai_and_ortunes_loop_choose_the_same_tokens(ortune, tmp_path):
    _genai()
    folder = genai_folder(tmp_path / "genai-model", vocab=200)
    ours = ortune("generate", folder, *GENERATE)
    theirs = ortune("generate", folder, "--engine", "genai", *GENERATE)
    assert ours.code == 0, ours.stderr
    assert theirs.code == 0, theirs.stderr
    ours, theirs = ours.json(), theirs.json()
    assert theirs["engine"]["engine"] == "genai" and ours["engine"] == {"engine": "ort"}
    assert "onnxruntime-genai" in theirs["loop"]["how"]
    for mine, genai in zip(ours["runs"], theirs["runs"], strict=True):
        assert genai["prompt_ids"] == mine["prompt_ids"]
        assert len(genai["token_ids"]) == 2 and len(genai["token_ids"][0]) == 12
        assert genai["token_ids"] == mine["token_ids"]
        assert genai["ttft_ms"] > 0 and genai["tokens_per_s"]["decode"] > 0


def test_genai_engine_refuses_in_one_line(ortune, tmp_path):
    _genai()
    plain = save(gpt2(), tmp_path / "gpt2.onnx")
    result = ortune("generate", plain, "--engine", "genai", "--json")
    assert result.code == 2 and "genai_config.json" in result.json()["error"]["message"]
    folder = genai_folder(tmp_path / "genai-model")
    result = ortune("generate", folder, "--engine", "genai", "--against", plain)
    assert result.code == 2 and len(result.stderr.strip().splitlines()) == 1 and "--against" in result.stderr
    result = ortune("generate", folder, "--engine", "genai", "--provider", "openvino", "--json")
    assert result.code == 2 and "runs on the CPU here" in result.json()["error"]["message"]


def test_without_onnxruntime_genai_the_engine_says_what_to_install(tmp_path, monkeypatch):
    import sys

    from app.core.generate.genai_engine import genai_module, genai_unusable
    from app.core.jobs.errors import UserError

    folder = genai_folder(tmp_path / "genai-model")
    monkeypatch.setitem(sys.modules, "onnxruntime_genai", None)        # as if it were not installed
    assert genai_unusable(folder) == "onnxruntime-genai is not installed"
    with pytest.raises(UserError, match="pip install onnxruntime-genai") as refused:
        genai_module()
    assert refused.value.kind == "engine-unavailable"
