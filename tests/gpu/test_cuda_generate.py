"""Generation on CUDA: the cache stays on the device (IO binding, each present bound as the
next past), only the logits come back, and the tokens chosen are the CPU's."""

import pytest

from app.core.generate.jobs import GENERATE
from app.core.jobs.protocol import JobContext
from app.core.session.config import ProviderSpec, SessionConfig
from tests.decoder_models import decoder
from tests.models import save

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cuda")]


def test_generate_on_cuda_keeps_the_cache_on_the_device_and_chooses_the_cpus_tokens(tmp_path):
    path = str(save(decoder(layers=4, hidden=256, heads=8, kv_heads=2, vocab=2000, positions=4096),
                    tmp_path / "llama.onnx"))
    params = {"path": path, "prompt_lengths": [128], "new_tokens": 32, "repeats": 2}
    cpu = GENERATE(params, JobContext())
    cuda = SessionConfig(providers=[ProviderSpec("CUDAExecutionProvider", {"use_tf32": "0"})]).to_dict()   # fp32 math: the same argmax
    gpu = GENERATE({**params, "session": cuda}, JobContext())
    assert gpu["providers"][0] == "CUDAExecutionProvider" and gpu["loop"]["io_binding"]
    assert gpu["runs"][0]["token_ids"] == cpu["runs"][0]["token_ids"]
    assert gpu["tokens_per_s"]["decode"] > 0 and gpu["ttft_ms"] > 0
