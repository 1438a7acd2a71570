"""The hostile-file and hostile-peer cases benchmarks/robustness.py measures (issue #22):
each run as a user or a peer would, through `python -m app`, on files made here.

- terminal: models whose producer, metadata, names and dim names hold escape sequences,
  and a file name holding one, through inspect, bench and an error line: control bytes a
  terminal would act on (below 0x20 but newline and tab, DEL, C1) in stdout and stderr,
  and the longest line printed for a 1 MB metadata value.
- worker: `ortune worker` sent what a hostile parent would send: a copy-trace and a convert
  aimed outside its cache, a non-measuring job, a `put` whose hash does not match, a JSON
  line nested 200,000 deep, and uploads left without `end`: files written outside their
  place, jobs run that a target must not run, poisoned cache entries, exit codes, leftovers.
- data: `--data` folders an attacker would hand over (an object array in an .npz, a
  labels.csv that is not UTF-8, a PNG whose header claims 900 megapixels, a 200-byte .npy
  claiming 200 GB, a labels.csv with a header): exit codes and seconds.
- settings: a FIFO at settings.json (a hang), a symbolic link planted at settings.tmp.
- strings: compare on a model whose output is a string tensor.
- ci: what CI reads of gate, optimize and history, with a model named to forge it
  (benchmarks/robustness_ci.py).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import signal
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import numpy as np

from benchmarks import robustness_ci
from benchmarks.robustness_cases import Tool

ESC = "\x1b[2J\x1b]0;owned\x07\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\x9b31m\x7f"
#: bytes a terminal acts on: C0 but for newline and tab, DEL; C1 as UTF-8 (U+0080..U+009F)
_ALLOWED = {0x0A, 0x09}


def control_bytes(data: bytes) -> int:
    text = data.decode("utf-8", "replace")
    return sum(1 for ch in text if (ord(ch) < 0x20 and ord(ch) not in _ALLOWED) or 0x7F <= ord(ch) <= 0x9F)


def _raw_run(tool: Tool, args, cwd: Path, timeout: float = 120, stdin: bytes | None = None, env=None) -> dict:
    started = time.monotonic()
    process = subprocess.Popen(tool.command(args), cwd=cwd, env=env or tool.env, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = process.communicate(stdin, timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        timed_out = True
    return {"code": process.returncode, "stdout": out, "stderr": err, "timed_out": timed_out,
            "traceback": b"Traceback (most recent call last)" in err, "seconds": round(time.monotonic() - started, 2)}


# terminal -----------------------------------------------------------------------------------

def evil_model(path: Path, metadata_chars: int = 0) -> Path:
    import onnx
    from onnx import TensorProto, helper

    name = f"x{ESC}"
    node = helper.make_node("Relu", [name], [f"y{ESC}"], name=f"relu{ESC}")
    graph = helper.make_graph([node], f"g{ESC}",
                              [helper.make_tensor_value_info(name, TensorProto.FLOAT, [f"batch{ESC}", 4])],
                              [helper.make_tensor_value_info(f"y{ESC}", TensorProto.FLOAT, [f"batch{ESC}", 4])])
    model = helper.make_model(graph, producer_name=f"evil{ESC}", doc_string=f"doc{ESC}",
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    helper.set_model_props(model, {f"key{ESC}": f"value{ESC}", "big": "A" * metadata_chars if metadata_chars else ESC})
    onnx.save(model, str(path))
    return path


def terminal(tool: Tool) -> dict:
    folder = tool.folder / "terminal"
    folder.mkdir()
    evil_model(folder / "evil.onnx")
    evil_model(folder / "big.onnx", metadata_chars=1_000_000)
    bad_name = folder / "bad\x1b[2J\x1b]0;owned\x07.onnx"     # a file name cannot hold "/"
    bad_name.write_bytes(b"not a model")
    cases = {"inspect": ["inspect", "evil.onnx"],
             "bench": ["bench", "evil.onnx", "--iterations", "3", "--warmup", "1", "--dim", f"batch{ESC}=1"],
             "error line": ["inspect", bad_name.name],
             "big metadata": ["inspect", "big.onnx"]}
    runs = {name: _raw_run(tool, args, folder) for name, args in cases.items()}
    json_run = _raw_run(tool, ["inspect", "evil.onnx", "--json"], folder)
    try:
        exact = json.loads(json_run["stdout"])["producer"] == f"evil{ESC}"
    except (ValueError, KeyError, TypeError):
        exact = False
    return {"cases": {name: {"code": run["code"], "control_bytes": control_bytes(run["stdout"] + run["stderr"]),
                             "longest_line": max(map(len, (run["stdout"] + run["stderr"]).splitlines() or [b""]))}
                      for name, run in runs.items()},
            "raw_control_bytes": sum(control_bytes(run["stdout"] + run["stderr"]) for run in runs.values()),
            "json_keeps_exact_text": exact}


# worker -------------------------------------------------------------------------------------

def _lines(*messages) -> bytes:
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages)


def worker(tool: Tool) -> dict:
    folder = tool.folder / "worker"
    folder.mkdir()
    data = folder / "data"
    env = dict(tool.env, ORTUNE_DATA_DIR=str(data))
    model = tool.model(folder)
    victim = folder / "victim.txt"
    victim.write_text("keep me")
    outside = folder / "written-by-convert.onnx"
    cache = data / "target-cache"
    real = model.read_bytes()
    real_sha = hashlib.sha256(real).hexdigest()
    other = hashlib.sha256(b"other").hexdigest()
    cases = {
        "copy-trace outside the cache": _lines({"job": "copy-trace", "params": {"source": str(model), "target": str(victim)}}),
        "convert outside the cache": _lines({"job": "convert", "params": {"kind": "optimize", "input": str(model),
                                                                           "output": str(outside), "fidelity": False,
                                                                           "speed_s": 0}}),
        "non-measuring job": _lines({"job": "netron", "params": {"model": str(model)}}),
        "put with a wrong hash": _lines({"put": {"sha": other, "name": "m.onnx", "files": [{"name": "m.onnx", "sha": real_sha}]}},
                                        {"file": "m.onnx"}, {"chunk": base64.b64encode(real).decode()}, {"end": True},
                                        {"have": other, "name": "m.onnx"}),
        "deep JSON": b"[" * 200_000 + b"]" * 200_000 + b"\n",
        "uploads without end": _lines({"put": {"sha": real_sha, "name": "m.onnx", "files": [{"name": "m.onnx", "sha": real_sha}]}},
                                      {"put": {"sha": real_sha, "name": "m.onnx", "files": [{"name": "m.onnx", "sha": real_sha}]}}),
    }
    runs = {}
    for name, stdin in cases.items():
        runs[name] = _raw_run(tool, ["worker"], folder, timeout=90, stdin=stdin, env=env)
    # one more start sweeps what an earlier one left, if the worker does
    _raw_run(tool, ["worker"], folder, timeout=60, stdin=b"", env=env)
    answers = [json.loads(line) for line in runs["put with a wrong hash"]["stdout"].splitlines() if line.startswith(b"{")]
    poisoned = any(a.get("have") == other and a.get("path") for a in answers)
    ran = {name: any(b'"result"' in line for line in run["stdout"].splitlines()) for name, run in runs.items()}
    return {"files_written_outside": int(victim.read_bytes() != b"keep me") + int(outside.exists()),
            "refused_jobs_run": sum(ran[name] for name in ("copy-trace outside the cache", "convert outside the cache",
                                                           "non-measuring job")),
            "poisoned_cache": int(poisoned),
            "partial_uploads_left": len(list(cache.glob(".*.partial-*"))) if cache.exists() else 0,
            "exit_1": sum(1 for run in runs.values() if run["code"] == 1),
            "tracebacks": sum(1 for run in runs.values() if run["traceback"]),
            "hangs": sum(1 for run in runs.values() if run["timed_out"]),
            "codes": {name: run["code"] for name, run in runs.items()}}


# data folders -------------------------------------------------------------------------------

def _png_header_only(path: Path, width: int, height: int) -> None:
    """A PNG that claims width × height pixels: a valid header, one tiny image chunk."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 64))
                     + chunk(b"IEND", b""))


def _npy_claiming(path: Path, shape: tuple) -> None:
    header = {"descr": "<f4", "fortran_order": False, "shape": shape}
    with open(path, "wb") as handle:
        np.lib.format.write_array_header_1_0(handle, header)
        handle.write(b"\0" * 64)


def data_folders(tool: Tool) -> dict:
    folder = tool.folder / "data-folders"
    folder.mkdir()
    model = tool.model(folder)
    width = 16

    def make(name: str, fill) -> Path:
        sub = folder / name
        sub.mkdir()
        fill(sub)
        return sub

    good = np.zeros((1, width), np.float32)
    cases = {
        "object array in an .npz": make("npz-object", lambda d: np.savez(d / "a.npz", x=np.array([{"a": 1}], dtype=object))),
        "labels.csv not UTF-8": make("labels-latin1", lambda d: (np.save(d / "s0.npy", good),
                                                                  (d / "labels.csv").write_bytes(b"s0,caf\xe9\n"))),
        "900-megapixel PNG": make("bomb", lambda d: _png_header_only(d / "bomb.png", 30000, 30000)),
        "npy header claiming 200 GB": make("npy-claim", lambda d: _npy_claiming(d / "huge.npy", (50_000_000_000,))),
    }
    from tests import models
    cnn = models.save(models.cnn(), folder / "cnn.onnx")          # images feed a 4-D float input
    runs = {name: tool.run(["bench", (cnn if "PNG" in name else model).name, "--data", str(path), "--iterations", "3",
                            "--warmup", "1", "--json"], cwd=folder, timeout=120) for name, path in cases.items()}
    header = make("labels-header", lambda d: (np.save(d / "s0.npy", good), (d / "labels.csv").write_text("sample,label\ns0,1\n")))
    with_header = tool.run(["bench", model.name, "--data", str(header), "--iterations", "3", "--warmup", "1", "--json"],
                           cwd=folder, timeout=120)
    return {"cases": {name: {"code": run["code"], "seconds": run["seconds"], "stderr": run["stderr"][-200:]}
                      for name, run in runs.items()},
            "not_exit_2": sum(1 for run in runs.values() if run["code"] != 2),
            "exit_1": sum(1 for run in runs.values() if run["code"] == 1),
            "hangs": sum(1 for run in runs.values() if run["timed_out"]),
            "csv_header_accepted": with_header["code"] == 0}


# settings -----------------------------------------------------------------------------------

def settings(tool: Tool) -> dict:
    folder = tool.folder / "settings"
    config = folder / "config"
    config.mkdir(parents=True)
    model = tool.model(folder)
    os.mkfifo(config / "settings.json")
    env = dict(tool.env, ORTUNE_CONFIG_DIR=str(config))
    fifo = _raw_run(tool, ["bench", model.name, "--iterations", "3", "--warmup", "1"], folder, timeout=60, env=env)
    # a link planted where the settings are staged: a save must not write through it
    config2 = folder / "config2"
    config2.mkdir()
    planted = folder / "planted.txt"
    planted.write_text("keep me")
    (config2 / "settings.tmp").symlink_to(planted)
    script = ("import sys; sys.path.insert(0, sys.argv[1]);"
              "from app.core.store.settings import Settings, save_settings; save_settings(Settings())")
    subprocess.run([sys.executable, "-c", script, str(Path(__file__).resolve().parents[1])],
                   env=dict(tool.env, ORTUNE_CONFIG_DIR=str(config2)), capture_output=True, timeout=60)
    return {"fifo_hang": int(fifo["timed_out"]), "fifo_code": fifo["code"],
            "written_through_link": int(planted.read_bytes() != b"keep me")}


# string outputs -----------------------------------------------------------------------------

def strings(tool: Tool) -> dict:
    import onnx
    from onnx import TensorProto, helper

    folder = tool.folder / "strings"
    folder.mkdir()
    graph = helper.make_graph([helper.make_node("Identity", ["s"], ["t"])], "strings",
                              [helper.make_tensor_value_info("s", TensorProto.STRING, [2])],
                              [helper.make_tensor_value_info("t", TensorProto.STRING, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(folder / "s.onnx"))
    run = tool.run(["compare", "s.onnx", "s.onnx", "--iterations", "10"], cwd=folder, timeout=180)
    return {"code": run["code"], "exit_1": int(run["code"] == 1), "stderr": run["stderr"][-200:]}


def hostile(tool: Tool) -> dict:
    return {"terminal": terminal(tool), "worker": worker(tool), "data": data_folders(tool),
            "settings": settings(tool), "strings": strings(tool), "ci": robustness_ci.ci(tool)}


def figures(report: dict) -> dict:
    """The issues' figures, all 0 when the product holds (but the CI cases' tries and held)."""
    ci = report["ci"]
    return {"exit_1_on_bad_input": report["worker"]["exit_1"] + report["data"]["exit_1"] + report["strings"]["exit_1"]
            + ci["exit_1"],
            "files_written_outside_their_place": report["worker"]["files_written_outside"]
            + report["settings"]["written_through_link"] + ci["writes_outside_the_output"],
            "raw_control_bytes_printed": report["terminal"]["raw_control_bytes"],
            "hangs": report["worker"]["hangs"] + report["data"]["hangs"] + report["settings"]["fifo_hang"] + ci["hangs"],
            "forged_command_lines": ci["forged_command_lines"], "markup_from_names": ci["markup_from_names"],
            "ci_cases": f"{ci['held']} of {ci['tries']} held"}
