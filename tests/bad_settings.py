"""Wrong presets and flags, one per way a setting can be wrong (issue #14's list and its
neighbours). Each case makes what it needs in a folder and returns the extra command-line
arguments, and names the words the one-line refusal must hold (the field or flag, or the
file)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

Case = tuple[Callable[[Path], list[str]], str]

DEEP = 100_000
HUGE = str(2 ** 70)


def _preset(text: str) -> Callable[[Path], list[str]]:
    def make(folder: Path) -> list[str]:
        path = folder / f"preset-{len(list(folder.glob('preset-*')))}.json"
        path.write_text(text, encoding="utf-8")
        return ["--config", path.name]
    return make


def _fifo_preset(folder: Path) -> list[str]:
    os.mkfifo(folder / "fifo.json")
    return ["--config", "fifo.json"]


def _folder_preset(folder: Path) -> list[str]:
    (folder / "folder.json").mkdir(exist_ok=True)
    return ["--config", "folder.json"]


def _objects_npz(folder: Path) -> list[str]:
    import numpy as np
    np.savez(folder / "objects.npz", x=np.array([{"a": 1}, None], dtype=object))
    return ["--input", "objects.npz"]


def _objects_npy(folder: Path) -> list[str]:
    import numpy as np
    np.save(folder / "objects.npy", np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    return ["--input", "x=objects.npy"]


def _garbage_npy(folder: Path) -> list[str]:
    (folder / "garbage.npy").write_bytes(b"\x93NUMPY\x01\x00garbage" * 3)
    return ["--input", "x=garbage.npy"]


def _flags(*args: str) -> Callable[[Path], list[str]]:
    return lambda folder: list(args)


#: preset fields (--config FILE)
BAD_PRESETS: dict[str, Case] = {
    "providers: 5": (_preset('{"providers": 5}'), "providers"),
    "providers: [{name: 5}]": (_preset('{"providers": [{"name": 5}]}'), "providers[0].name"),
    "free_dimension_overrides: [1]": (_preset('{"free_dimension_overrides": [1]}'), "free_dimension_overrides"),
    "free_dimension_overrides: {batch: 0}": (_preset('{"free_dimension_overrides": {"batch": 0}}'), "batch"),
    "config_entries: [1]": (_preset('{"config_entries": [1]}'), "config_entries"),
    "config_entries: {key: {}}": (_preset('{"config_entries": {"session.disable_prepacking": {}}}'),
                                  "session.disable_prepacking"),
    "enable_mem_pattern: no": (_preset('{"enable_mem_pattern": "no"}'), "enable_mem_pattern"),
    "intra_op_num_threads: 1000000": (_preset('{"intra_op_num_threads": 1000000}'), "intra_op_num_threads"),
    "intra_op_num_threads: 1.5": (_preset('{"intra_op_num_threads": 1.5}'), "intra_op_num_threads"),
    "inter_op_num_threads: 1000000, parallel": (
        _preset('{"execution_mode": "parallel", "inter_op_num_threads": 1000000}'), "inter_op_num_threads"),
    "log_severity_level: 9": (_preset('{"log_severity_level": 9}'), "log_severity_level"),
    "inputs: x": (_preset('{"inputs": "x"}'), "inputs"),
    "inputs.seed: x": (_preset('{"inputs": {"seed": "x"}}'), "inputs.seed"),
    "inputs.shapes: {image: 5}": (_preset('{"inputs": {"shapes": {"image": 5}}}'), "inputs.shapes.image"),
    "inputs.dims: {batch: 2^70}": (_preset('{"inputs": {"dims": {"batch": %s}}}' % HUGE), "inputs.dims.batch"),
    "inputs.vocab_size: 0": (_preset('{"inputs": {"vocab_size": 0}}'), "inputs.vocab_size"),
    "unknown key": (_preset('{"no_such_setting": 1}'), "no_such_setting"),
    "schema: other": (_preset('{"schema": "something/9"}'), "schema"),
    "a list": (_preset("[1, 2]"), "preset"),
    "not JSON": (_preset("{this is not json"), "not valid JSON"),
    "100,000-deep list": (_preset("[" * DEEP + "]" * DEEP), "nested too deeply"),
    "100,000-deep object": (_preset('{"a": ' * DEEP + "1" + "}" * DEEP), "nested too deeply"),
    "--config FIFO": (_fifo_preset, "fifo.json"),
    "--config folder": (_folder_preset, "folder.json"),
    "--config missing": (_flags("--config", "missing.json"), "missing.json"),
}

#: command-line flags
BAD_FLAGS: dict[str, Case] = {
    "--threads 99999999999999999999": (_flags("--threads", "99999999999999999999"), "--threads"),
    "--threads 1000000": (_flags("--threads", "1000000"), "--threads"),
    "--threads -1": (_flags("--threads", "-1"), "--threads"),
    "--threads abc": (_flags("--threads", "abc"), "--threads"),
    "--inter-threads 1000000, parallel": (_flags("--execution-mode", "parallel", "--inter-threads", "1000000"),
                                          "--inter-threads"),
    "--inter-threads 2^70, parallel": (_flags("--execution-mode", "parallel", "--inter-threads", HUGE),
                                       "--inter-threads"),
    "--vocab-size 2^70": (_flags("--vocab-size", HUGE), "--vocab-size"),
    "--vocab-size 0": (_flags("--vocab-size", "0"), "--vocab-size"),
    "--seed x": (_flags("--seed", "x"), "--seed"),
    "--seed 2^70": (_flags("--seed", HUGE), "--seed"),
    "--dim batch=10^14": (_flags("--dim", "batch=100000000000000"), "--dim"),
    "--dim batch=10^9": (_flags("--dim", "batch=1000000000"), "choose smaller dimensions"),
    "--dim batch=2^70": (_flags("--dim", f"batch={HUGE}"), "--dim"),
    "--shape x=10^5,10^5,10^5": (_flags("--shape", "x=100000,100000,100000"), "shape of x"),
    "--shape x=a,b": (_flags("--shape", "x=a,b"), "--shape"),
    "--free-dim batch=0": (_flags("--free-dim", "batch=0"), "--free-dim"),
    "--free-dim batch=2^70": (_flags("--free-dim", f"batch={HUGE}"), "--free-dim"),
    "--value x=abc": (_flags("--value", "x=abc"), "--value"),
    "--session-config nokey": (_flags("--session-config", "nokey"), "--session-config"),
    "--session-config unknown key": (_flags("--session-config", "session.no_such_key=1"), "session.no_such_key"),
    "--provider-option on the CPU": (_flags("--provider-option", "device_id=1"), "device_id"),
    "--memory-limit abc": (_flags("--memory-limit", "abc"), "--memory-limit"),
    "--memory-limit 0": (_flags("--memory-limit", "0"), "--memory-limit"),
    "--iterations 2^70": (_flags("--iterations", HUGE), "--iterations"),
    "--duration nan": (_flags("--duration", "nan"), "--duration"),
    "--duration 1e308": (_flags("--duration", "1e308"), "--duration"),
    "--concurrency 1000000": (_flags("--concurrency", "1000000"), "concurrency"),
    "--warmup -1": (_flags("--warmup", "-1"), "--warmup"),
    "--input objects.npz": (_objects_npz, "objects.npz"),
    "--input objects.npy": (_objects_npy, "objects.npy"),
    "--input garbage.npy": (_garbage_npy, "garbage.npy"),
    "--input missing.npy": (_flags("--input", "x=missing.npy"), "missing.npy"),
    "--provider nonsense": (_flags("--provider", "nonsense"), "nonsense"),
}

#: the flags of a measurement, which only bench (of inspect, bench and convert) takes
BENCH_ONLY = {"--iterations 2^70", "--duration nan", "--duration 1e308", "--concurrency 1000000", "--warmup -1"}
#: the cases only the job can find, as it reads what this ONNX Runtime has (its providers,
#: its session settings) and what the input files hold, and learns the memory the inputs
#: need; the rest are refused before any process starts
READ_IN_THE_JOB = {"--dim batch=10^9", "--input objects.npz", "--input objects.npy", "--input garbage.npy",
                   "--provider nonsense", "--session-config unknown key"}
