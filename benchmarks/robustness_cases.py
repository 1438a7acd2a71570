"""The cases benchmarks/robustness.py measures, and the tool that runs `ortune` for them."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: root with these capabilities dropped is held back by file permissions like any user
WITHOUT_OVERRIDES = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search,-fowner"]
_RAW_ORT_LINE = re.compile(r"\x1b\[|\[[VIWEF]:onnxruntime")


class Tool:
    """Runs `python -m app ARGS` with its data and settings in a private temporary folder."""

    def __enter__(self) -> "Tool":
        self.folder = Path(tempfile.mkdtemp(prefix="ortune-robust-"))
        self.env = dict(os.environ, PYTHONPATH=str(ROOT), ORTUNE_DATA_DIR=str(self.folder / "data"),
                        ORTUNE_CONFIG_DIR=str(self.folder / "config"))
        self.env.pop("ORTUNE_CHILD_OUTPUT", None)
        return self

    def __exit__(self, *exc_info) -> None:
        for path in self.folder.rglob("*"):
            if path.is_dir() and not path.is_symlink():
                path.chmod(0o755)
        shutil.rmtree(self.folder, ignore_errors=True)

    def command(self, args) -> list[str]:
        return [sys.executable, "-m", "app", *map(str, args)]

    def run(self, args, cwd: Path, timeout: float = 120, data: Path | None = None, prefix: tuple = ()) -> dict:
        env = dict(self.env, **({"ORTUNE_DATA_DIR": str(data)} if data else {}))
        started = time.monotonic()
        process = subprocess.Popen([*prefix, *self.command(args)], cwd=cwd, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            stdout, stderr = process.communicate(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            stdout, stderr = process.communicate()
            timed_out = True
        lines = [line for line in stderr.splitlines() if line.strip()]
        return {"code": process.returncode, "stdout": stdout, "stderr": stderr, "timed_out": timed_out,
                "traceback": "Traceback (most recent call last)" in stderr,
                "error_lines": sum(1 for line in lines if not line.startswith("warning: ")),
                "warning_lines": sum(1 for line in lines if line.startswith("warning: ")),
                "seconds": round(time.monotonic() - started, 2)}

    def start(self, args, cwd: Path) -> subprocess.Popen:
        return subprocess.Popen(self.command(args), cwd=cwd, env=self.env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)

    @staticmethod
    def model(folder: Path, name: str = "mlp.onnx", width: int = 16, external: bool = False, seed: int = 0) -> Path:
        import onnx

        from tests import models

        path = folder / name
        if external:
            onnx.save_model(models.mlp(width=width, seed=seed), str(path), save_as_external_data=True,
                            all_tensors_to_one_file=True, location=f"{name}.data", size_threshold=0)
        else:
            models.save(models.mlp(width=width, seed=seed), path)
        return path


# files destroyed --------------------------------------------------------------------------

def _snapshot(folder: Path) -> dict:
    import hashlib

    entries = {}
    for path in folder.iterdir():
        info = os.lstat(path)
        kind = stat.S_IFMT(info.st_mode)
        entry = [kind, info.st_ino, info.st_rdev]
        if stat.S_ISLNK(info.st_mode):
            entry.append(os.readlink(path))
        elif stat.S_ISREG(info.st_mode):
            entry.append(hashlib.sha256(path.read_bytes()).hexdigest())
        elif stat.S_ISDIR(info.st_mode):
            entry.append(sorted(p.name for p in path.iterdir()))
        entries[path.name] = entry
    return entries


def _output_cases(root: bool) -> dict:
    """case -> (make(folder) -> the output's name, extra flags)"""
    def fifo(folder):
        os.mkfifo(folder / "fifo.onnx")
        return "fifo.onnx"

    def device(folder):
        os.mknod(folder / "null.onnx", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        return "null.onnx"

    def sock(folder):
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(str(folder / "socket.onnx"))
        _SOCKETS.append(listener)
        return "socket.onnx"

    def a_folder(folder):
        (folder / "folder.onnx").mkdir()
        (folder / "folder.onnx" / "inside.txt").write_text("keep me")
        return "folder.onnx"

    def link(name, to):
        def make(folder):
            os.symlink(to, folder / name)
            return name
        return make

    def hard(folder):
        os.link(folder / "src.onnx.data", folder / "hard.onnx")
        return "hard.onnx"

    def data_fifo(folder):
        os.mkfifo(folder / "out.onnx.data")
        return "out.onnx"

    cases = {
        "FIFO": (fifo, ["--force"]),
        "socket": (sock, ["--force"]),
        "folder": (a_folder, ["--force"]),
        "the source": (lambda folder: "src.onnx", ["--force"]),
        "the source's .data": (lambda folder: "src.onnx.data", ["--force"]),
        "a symlink to the source's .data": (link("link.onnx", "src.onnx.data"), ["--force"]),
        "a symlink to the source": (link("srclink.onnx", "src.onnx"), ["--force"]),
        "a hard link to the source's .data": (hard, ["--force"]),
        "a FIFO where the output's .data goes": (data_fifo, ["--force"]),
        "a dangling symlink, no --force": (link("dangling.onnx", "nowhere.onnx"), []),
    }
    if root:
        cases["a character device"] = (device, ["--force"])
    return cases


_SOCKETS: list = []


def files_destroyed(tool: Tool) -> dict:
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    results, destroyed = {}, 0
    for index, (case, (make, extra)) in enumerate(_output_cases(root).items()):
        folder = tool.folder / f"out{index}"
        folder.mkdir()
        tool.model(folder, "src.onnx", external=True)
        target = make(folder)
        before = _snapshot(folder)
        run = tool.run(["convert", "optimize", "src.onnx", "-o", target, *extra, "--no-speed", "--no-fidelity"],
                       cwd=folder, timeout=60)
        after = _snapshot(folder)
        changed = sorted(name for name in before if after.get(name) != before[name])
        destroyed += len(changed)
        results[case] = {"code": run["code"], "changed": changed, "message": run["stderr"].strip()[-200:]}
    for listener in _SOCKETS:
        listener.close()
    results.update(_other_outputs(tool))
    destroyed += sum(len(r["changed"]) for key, r in results.items() if key.startswith(("tune", "profile")))
    if not root:
        results["a character device"] = "not measured: mknod needs root"
    return {"destroyed": destroyed, "cases": results}


def _other_outputs(tool: Tool) -> dict:
    """The other commands that write a file: profile --out and tune --save-best, onto a FIFO."""
    results = {}
    for name, args in (("profile --out FIFO", ["profile", "src.onnx", "--runs", "2", "--out", "fifo.json", "--force"]),
                       ("tune --save-best FIFO", ["tune", "src.onnx", "--budget-trials", "2", "--budget-seconds", "1",
                                                  "--finalists", "1", "--confirm-seconds", "0.2",
                                                  "--save-best", "fifo.json"])):
        folder = tool.folder / name.split()[0]
        folder.mkdir()
        tool.model(folder, "src.onnx")
        os.mkfifo(folder / "fifo.json")
        before = _snapshot(folder)
        run = tool.run(args, cwd=folder, timeout=120)
        after = _snapshot(folder)
        results[name] = {"code": run["code"], "changed": sorted(n for n in before if after.get(n) != before[n]),
                         "message": run["stderr"].strip()[-200:]}
    return results


# measurements lost ------------------------------------------------------------------------

def _kept(run: dict, command: str) -> bool:
    try:
        result = json.loads(run["stdout"])
    except ValueError:
        return False
    if command == "bench":
        return bool((result.get("latency_ms") or {}).get("p50"))
    return bool(result.get("models")) and all((m.get("latency_ms") or {}).get("p50") for m in result["models"])


def measurements_lost(tool: Tool, workers: int = 2) -> dict:
    folder = tool.folder / "history"
    folder.mkdir()
    tool.model(folder, "a.onnx")
    tool.model(folder, "b.onnx", seed=1)
    template = folder / "template"
    made = tool.run(["bench", "a.onnx", "--iterations", "5", "--json"], cwd=folder, data=template)
    database = (template / "history.sqlite").read_bytes()
    root = hasattr(os, "geteuid") and os.geteuid() == 0

    def damaged(data):
        data.mkdir()
        (data / "history.sqlite").write_bytes(b"this is not a database" * 200)

    def truncated(data):
        data.mkdir()
        (data / "history.sqlite").write_bytes(database[: len(database) // 2])

    def zeroed(data):
        data.mkdir()
        (data / "history.sqlite").write_bytes(bytes(len(database)))

    def read_only(data):
        data.mkdir()
        (data / "history.sqlite").write_bytes(database)
        (data / "history.sqlite").chmod(0o444)
        data.chmod(0o555)

    def data_is_file(data):
        data.write_text("a file where the data folder should be")

    def missing(data):
        pass

    cases = {"damaged": damaged, "truncated": truncated, "zeroed": zeroed, "read-only": read_only,
             "data folder is a file": data_is_file, "missing folder": missing, "locked": None}

    def measure(index: int, case: str, command: str) -> dict:
        make = cases[case]
        data = folder / f"data{index}-{command}" / "nested"
        data.parent.mkdir()
        lock = None
        if make is None:              # another program holds the database's write lock meanwhile
            data.mkdir()
            (data / "history.sqlite").write_bytes(database)
            lock = sqlite3.connect(data / "history.sqlite")
            lock.execute("BEGIN EXCLUSIVE")
        else:
            make(data)
        args = ["bench", "a.onnx"] if command == "bench" else ["compare", "a.onnx", "b.onnx"]
        try:
            run = tool.run([*args, "--iterations", "5", "--json"], cwd=folder, data=data,
                           prefix=WITHOUT_OVERRIDES if case == "read-only" and root else ())
        finally:
            if lock is not None:
                lock.close()
        return {"code": run["code"], "kept": run["code"] == 0 and _kept(run, command),
                "warning_lines": run["warning_lines"], "seconds": run["seconds"],
                "stderr": run["stderr"].strip()[-240:]}

    runs = [(index, case, command) for index, case in enumerate(cases) for command in ("bench", "compare")]
    with ThreadPoolExecutor(workers) as pool:
        measured = list(pool.map(lambda run: measure(*run), runs))
    results = {"made the template": made["code"],
               **{f"{case}, {command}": result for (_, case, command), result in zip(runs, measured)}}
    return {"lost": sum(not result["kept"] for result in measured),
            "not_one_warning": [f"{case}, {command}" for (_, case, command), result in zip(runs, measured)
                                if result["warning_lines"] != (0 if case == "missing folder" else 1)],
            "read_only_as": "root without its override capabilities" if root else "this user", "cases": results}


# leftovers --------------------------------------------------------------------------------

def _process_table() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, state), read from /proc."""
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                text = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = text.rsplit(")", 1)[1].split()
            table[int(entry)] = (int(fields[1]), fields[0])
    return table


def _descendants(pid: int) -> set[int]:
    table = _process_table()
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, (parent, _) in table.items() if parent in frontier} - found
        found |= frontier
    return found


def _alive(pids: set[int]) -> set[int]:
    table = _process_table()
    return {pid for pid in pids if pid in table and table[pid][1] != "Z"}


def leftovers(tool: Tool) -> dict:
    results, orphans, left_after = {}, 0, 0
    for command in ("convert", "bench"):
        for how in (signal.SIGTERM, signal.SIGKILL):
            folder = tool.folder / f"kill-{command}-{how.name}"
            folder.mkdir()
            tool.model(folder, "m.onnx", width=256)
            args = (["convert", "int8-static", "m.onnx", "-o", "q.onnx", "--calibration-count", "1000000"]
                    if command == "convert" else ["bench", "m.onnx", "--duration", "120"])
            process = tool.start(args, folder)
            children: set[int] = set()
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline:
                children |= _descendants(process.pid)
                if children and (command == "bench" or list(folder.glob(".q.onnx.*.partial"))):
                    break
                time.sleep(0.1)
            time.sleep(1.0)
            children |= _descendants(process.pid)
            process.send_signal(how)
            process.wait(15)
            deadline = time.monotonic() + 5
            while _alive(children) and time.monotonic() < deadline:
                time.sleep(0.1)
            alive = _alive(children)
            for pid in alive:
                os.kill(pid, signal.SIGKILL)
            right_after = len(list(folder.glob(".*.partial")))
            tool.run(["inspect", "m.onnx"], cwd=folder)
            after_next = len(list(folder.glob(".*.partial")))
            orphans += len(alive)
            left_after += after_next
            results[f"{command}, {how.name}"] = {"job_processes": len(children), "alive_after_5_s": len(alive),
                                                 "staging_right_after": right_after,
                                                 "staging_after_next_command": after_next, "exit": process.returncode}
    return {"orphans": orphans, "staging_after_next_command": left_after, "cases": results}


# ONNX Runtime's log -----------------------------------------------------------------------

def ort_log(tool: Tool) -> dict:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper

    folder = tool.folder / "ortlog"
    folder.mkdir()
    unused = helper.make_tensor("unused_weight", TensorProto.FLOAT, [4], np.zeros(4, np.float32))
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Add", ["x", "x"], ["y"])], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], [unused]), opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(folder / "unused.onnx"))
    (folder / "warn.json").write_text('{"log_severity_level": 2}')
    results, raw = {}, 0
    for name, args in (("bench, warning level", ["bench", "unused.onnx", "--config", "warn.json", "--iterations", "3"]),
                       ("profile, warning level", ["profile", "unused.onnx", "--config", "warn.json", "--runs", "2"]),
                       ("convert, warning level", ["convert", "optimize", "unused.onnx", "-o", "o.onnx",
                                                   "--config", "warn.json", "--no-speed"])):
        run = tool.run(args, cwd=folder)
        lines = run["stderr"].splitlines()
        raw_lines = [line for line in lines if _RAW_ORT_LINE.search(line)]
        raw += len(raw_lines)
        results[name] = {"code": run["code"], "raw_lines": len(raw_lines),
                         "shown_as_warnings": sum(1 for line in lines if line.startswith("warning: ")
                                                  and "unused_weight" in line)}
    return {"raw_lines": raw, "shown": sum(1 for r in results.values() if r["shown_as_warnings"] == 1),
            "cases": results}
