"""`ortune worker` does only what a target is for: measuring jobs, on files in its cache,
writing only in the job's scratch folder; it checks every upload against its hash, sweeps
what dead workers left, keeps one copy of one content, and refuses a line outside the
protocol with one line and exit 2."""

import io
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.core.launch import worker
from app.core.targets import channel
from app.core.targets.upload import bundle, content_key
from tests import models


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ORTUNE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(worker.Worker, "hello", lambda self: None)
    return tmp_path / "data" / "target-cache"


def _serve(*messages) -> tuple[int, list[dict]]:
    out = io.BytesIO()
    code = worker.Worker(io.BytesIO(b"".join(channel.encode(m) for m in messages)), out).serve()
    return code, [channel.read(io.BytesIO(line + b"\n")) for line in out.getvalue().splitlines()]


def _upload(path):
    found = bundle(path)
    messages = [{"put": {"sha": found.sha, "name": found.main.name,
                         "files": [{"name": n, "sha": s} for n, _, s in found.files]}}]
    for name, local, _ in found.files:
        messages += [{"file": name}, {"chunk": __import__("base64").b64encode(local.read_bytes()).decode()}]
    return found, messages + [{"end": True}]


def test_a_job_that_does_not_measure_is_refused_by_name(cache, tmp_path):
    model = models.save(models.mlp(), tmp_path / "m.onnx")
    for job in ("netron", "graph-layout", "copy-trace"):
        code, answers = _serve({"job": job, "params": {"path": str(model)}})
        assert code == 2 and len(answers) == 1
        assert answers[0]["error"]["kind"] == "target-refused" and repr(job) in answers[0]["error"]["message"]


def test_copy_trace_outside_the_cache_leaves_the_file_alone(cache, tmp_path):
    victim = tmp_path / "precious.txt"
    victim.write_text("mine")
    source = tmp_path / "trace.json"
    source.write_text("[]")
    code, answers = _serve({"job": "copy-trace", "params": {"source": str(source), "target": str(victim)}})
    assert code == 2 and "error" in answers[-1]
    assert victim.read_text() == "mine"


def test_a_conversion_writes_only_in_its_scratch_folder(cache, tmp_path):
    found, messages = _upload(models.save(models.mlp(), tmp_path / "m.onnx"))
    outside = tmp_path / "elsewhere" / "out.onnx"
    code, answers = _serve(*messages, {"job": "convert", "params": {
        "kind": "fp16", "input": str(cache / found.sha / "m.onnx"), "output": str(outside)}})
    assert code == 2 and answers[-1]["error"]["kind"] == "target-refused"
    assert "scratch" in answers[-1]["error"]["message"] and not outside.parent.exists()


def test_an_input_outside_the_cache_is_refused(cache, tmp_path):
    model = models.save(models.mlp(), tmp_path / "m.onnx")
    link = tmp_path / "data" / "target-cache" / "link.onnx"
    link.parent.mkdir(parents=True)
    link.symlink_to(model)                        # inside by name, outside once resolved
    for path in (model, link):
        code, answers = _serve({"job": "bench", "params": {"path": str(path)}})
        assert code == 2 and "outside its cache" in answers[-1]["error"]["message"]


def test_a_put_whose_hash_is_not_its_files_is_refused(cache, tmp_path):
    good, _ = _upload(models.save(models.mlp(), tmp_path / "m.onnx"))
    other = models.save(models.mlp(width=7), tmp_path / "other.onnx")
    _, messages = _upload(other)
    messages[0]["put"]["sha"] = good.sha           # the bytes of one model under the other's hash
    code, answers = _serve(*messages, {"have": good.sha, "name": "m.onnx"})
    assert code == 0 and "hash" in answers[0]["error"]["message"]
    assert answers[-1] == {"have": good.sha, "path": None}
    assert not (cache / good.sha).exists()


def test_a_file_that_differs_from_its_listed_hash_is_not_published(cache, tmp_path):
    found, messages = _upload(models.save(models.mlp(), tmp_path / "m.onnx"))
    messages[2]["chunk"] = "aGVsbG8="
    code, answers = _serve(*messages, {"have": found.sha, "name": "m.onnx"})
    assert "damaged" in answers[0]["error"]["message"] and answers[-1]["path"] is None
    assert not any(p.name.startswith(found.sha) for p in cache.iterdir())


def test_two_names_of_one_model_are_stored_once(cache, tmp_path):
    a = models.save(models.mlp(), tmp_path / "a.onnx")
    b = tmp_path / "b.onnx"
    b.write_bytes(a.read_bytes())
    found, messages = _upload(a)
    assert bundle(b).sha == found.sha
    code, answers = _serve(*messages, {"have": found.sha, "name": "b.onnx"})
    stored, have = answers
    assert stored["path"].endswith("a.onnx") and have["path"].endswith("b.onnx")
    assert os.path.samefile(stored["path"], have["path"])      # one copy, two names
    assert [p.name for p in cache.iterdir()] == [found.sha]


def test_puts_without_their_end_leave_nothing(cache, tmp_path):
    puts = [{"put": {"sha": content_key([("m.onnx", sha)]), "name": "m.onnx",
                     "files": [{"name": "m.onnx", "sha": sha}]}} for sha in ("cd" * 32, "ef" * 32)]
    assert _serve(*puts)[0] == 0
    assert not any(cache.iterdir())


def test_partial_uploads_of_dead_workers_are_swept_at_start(cache):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    dead = cache / f".{'ab' * 32}.partial-{gone.pid}"
    dead_scratch = cache / "outputs" / f"job-{gone.pid}-x1"
    live = cache / f".{'cd' * 32}.partial-{os.getpid()}"           # a worker running now keeps its own
    for folder in (dead, dead_scratch, live):
        folder.mkdir(parents=True)
        (folder / "m.onnx").write_bytes(b"half")
    assert _serve()[0] == 0
    assert not dead.exists() and not dead_scratch.exists() and live.exists()


@pytest.mark.parametrize("line", [b"[" * 200_000 + b"]" * 200_000, b'{"a":' * 100 + b"1" + b"}" * 100],
                         ids=["deep-array", "deep-object"])    # the line as an id outgrew an environment variable
def test_a_line_nested_too_deep_is_one_protocol_error(tmp_path, line):
    done = subprocess.run([sys.executable, "-m", "app", "worker"], input=line + b"\n", capture_output=True,
                          env={**os.environ, "ORTUNE_DATA_DIR": str(tmp_path / "data")}, timeout=120)
    assert done.returncode == 2
    assert done.stderr.decode().count("\n") == 1 and "nested deeper" in done.stderr.decode()
    lines = done.stdout.splitlines()
    assert "hello" in channel.read(io.BytesIO(lines[0] + b"\n"))
    assert channel.read(io.BytesIO(lines[1] + b"\n"))["error"]["kind"] == "target-protocol"


def test_the_client_bounds_the_workers_lines_too():
    with pytest.raises(channel.ProtocolError):
        channel.read(io.BytesIO(b"[" * 200_000 + b"\n"))
    with pytest.raises(channel.ProtocolError):
        channel.read(io.BytesIO(b'"' + b"x" * (channel.MAX_LINE_BYTES + 1) + b'"\n'))
    brackets_in_text = b'{"chunk": "' + b"[" * 500 + b'"}\n'
    assert channel.read(io.BytesIO(brackets_in_text)) == {"chunk": "[" * 500}


def test_a_relative_path_is_read_from_the_jobs_scratch_folder(cache, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "up").mkdir()
    models.save(models.mlp(), tmp_path / "m.onnx")
    code, answers = _serve({"job": "bench", "params": {"path": "../../../../m.onnx"}})
    assert code == 2 and "outside its cache" in answers[-1]["error"]["message"]
    code, answers = _serve({"job": "bench", "params": {"path": "m.onnx"}})   # not there: the job says so
    assert code == 0 and "error" in answers[-1] and answers[-1]["error"]["kind"] != "target-refused"


def test_the_parent_sends_only_what_the_entry_allows_and_brings_back_its_outputs(tmp_path):
    from app.core.convert.jobs import CONVERT
    from app.core.graph.jobs import NETRON
    from app.core.jobs.entry import TARGET
    from app.core.jobs.errors import UserError
    from app.core.launch.start import Where, start
    from app.core.targets.handle import RemoteHandle
    from app.core.targets.store import Target

    refused = start(NETRON, {"path": str(tmp_path / "m.onnx")}, Where(TARGET, "nowhere")).handle   # never looked up
    assert refused.done and isinstance(refused.error, UserError) and "this machine only" in str(refused.error)
    nowhere = Target("nowhere", "127.0.0.1", port=1)
    out = str(tmp_path / "out.onnx")
    convert = RemoteHandle(nowhere, CONVERT, CONVERT.make_params({"kind": "fp16", "input": "m.onnx", "output": out,
                                                                  "force": True}))
    assert convert.outputs == {"output": out} and convert.force


def test_over_ssh_a_copy_outside_the_cache_is_refused_and_the_file_kept(loop_target, tmp_path):
    from app.core.targets.ssh import ssh_command
    from app.core.targets.store import get_target

    victim = tmp_path / "authorized_keys"
    victim.write_text("mine")
    source = tmp_path / "trace.json"
    source.write_text("[]")
    request = channel.encode({"job": "copy-trace", "params": {"source": str(source), "target": str(victim)}})
    done = subprocess.run(ssh_command(get_target(loop_target), ["worker"]), input=request, capture_output=True,
                          timeout=120)
    answers = [channel.read(io.BytesIO(line + b"\n")) for line in done.stdout.splitlines()]
    assert done.returncode == 2 and "hello" in answers[0] and len(answers) == 2
    assert answers[1]["error"]["kind"] == "target-refused" and "'copy-trace'" in answers[1]["error"]["message"]
    assert victim.read_text() == "mine"


def test_a_profiles_trace_is_written_in_scratch_there_and_copied_back_here(loop_target, ortune, tmp_path):
    model = models.save(models.mlp(), tmp_path / "mlp.onnx")
    out = tmp_path / "here" / "trace.json"
    out.parent.mkdir()
    out.write_text("an older trace, which is replaced here, not uploaded there")
    done = ortune("profile", model, "--runs", "3", "--out", out, "--force", "--target", loop_target, "--json")
    assert done.code == 0, done.stderr
    assert done.json()["trace"] == str(out) and out.is_file() and out.read_text().startswith("[")


def test_a_label_is_never_taken_for_a_path(tmp_path):
    from app.core.bench.jobs import COMPARE
    from app.core.jobs.errors import UserError
    from app.core.targets.confine import check_request

    cache, scratch = tmp_path / "cache", tmp_path / "scratch"
    cache.mkdir()
    scratch.mkdir()
    model = str(cache / "m.onnx")
    for label in ("a/m.onnx", "/etc/passwd", "../../x"):
        check_request(COMPARE, {"models": [{"path": model, "label": label}]}, cache, [scratch])
    with pytest.raises(UserError, match="outside its cache"):
        check_request(COMPARE, {"models": [{"path": "/etc/passwd", "label": "m"}]}, cache, [scratch])


def test_models_of_one_name_in_two_folders_are_compared_there(loop_target, ortune, tmp_path):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        models.save(models.mlp(), tmp_path / folder / "m.onnx")
    done = ortune("compare", "a/m.onnx", "b/m.onnx", "--iterations", "20", "--max-seconds", "5",
                  "--target", loop_target, "--json", cwd=tmp_path)
    assert done.code == 0, done.stderr
    assert [row["label"] for row in done.json()["models"]] == ["a/m.onnx", "b/m.onnx"]


def test_a_profile_without_out_brings_its_trace_here_and_leaves_nothing_there(loop_target, ortune, sshd, tmp_path):
    from app.core.store.paths import data_dir

    model = models.save(models.mlp(), tmp_path / "mlp.onnx")
    done = ortune("profile", model, "--runs", "3", "--target", loop_target, "--json")
    assert done.code == 0, done.stderr
    trace = Path(done.json()["trace"])
    assert trace.parent == data_dir() / "traces" and trace.read_text().startswith("[")
    there = sshd.remote_home / "data"
    assert not list(there.glob("traces/mlp*.json"))           # not in the target's traces folder
    deadline = time.monotonic() + 60          # the worker there removes its scratch as it ends, after our end
    while list(there.glob("target-cache/outputs/*/*")) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not list(there.glob("target-cache/outputs/*/*"))
