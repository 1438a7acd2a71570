"""A job run on a remote target: the same face as app.core.runner.process.JobHandle (start,
events, cancel, send, wait, result, error), driven over ssh and `ortune worker`.

The one start function has checked the parameters; this handle connects, checks the worker's version, copies the
files the job names into the target's cache (once per content hash), sends the job and
relays its events. The job's children run on the target within the memory budget the
parent passes on; a result measured there comes back with the target's description (and
is stored in this machine's history by the one start function, app.core.launch.start).
A dropped connection, a worker of another version, a worker that answers out of turn or
a remote child that died each end the job with one line naming the cause; every failure
of the target itself (unreachable, lost, answering wrongly) is a UserError of its own
kind, exit 2: exit 1 stays for ORTune's own bugs. ssh's end closing makes the worker
cancel the job there, so nothing is left running."""

from __future__ import annotations

import base64
import json
import queue
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import app
from app.core.jobs.entry import Job
from app.core.jobs.errors import JobCancelled, JobFailed, UserError, error_from_dict
from app.core.jobs.params import Params
from app.core.text import printable
from app.core.runner.failure import signal_name
from app.core.runner.process import JobHandle
from app.core.targets import channel
from app.core.targets.ssh import SSH_FAILED, explain_ssh_failure, ssh_command
from app.core.targets.store import Target
from app.core.targets.download import fetch
from app.core.targets.upload import Bundle, bundle, folder_bundle, local_files, replaced

HELLO_TIMEOUT_S = 40.0
HELLO_LINE_BYTES = 1 << 20        # a hello is small: a longer first line is not one
EXCERPT_CHARS = 60
CANCEL_GRACE_S = 8.0


def excerpt(raw: bytes) -> str:
    """Text a peer sent, quoted with its control characters escaped and cut short."""
    return "'" + printable(raw.decode("utf-8", "replace").rstrip("\r\n"), EXCERPT_CHARS) + "'"


def lost_reason(target: Target, stderr: str, code: int | None) -> str:
    """Why ssh ended mid-job: its own failure (exit 255), this machine's ssh client ended
    by a signal (a negative code is the local process's, never the worker's), or the
    worker's exit status there."""
    if code == SSH_FAILED:
        return explain_ssh_failure(target, stderr, code)
    if code is None:
        return "the ssh client here stopped answering"
    if code < 0:
        return f"the ssh client on this machine was ended by {signal_name(-code)}"
    last = [line for line in stderr.splitlines() if line.strip()]
    return last[-1].strip() if last else f"the worker there exited with code {code}"


def describe_target(target: Target, hello: dict) -> dict:
    return {"name": target.name, "address": f"{target.address}:{target.port}", "version": hello.get("version"),
            "ort_version": hello.get("ort"), "machine": hello.get("machine") or {}}


class RemoteHandle:
    def __init__(self, target: Target, job: Job, params: Params, memory_limit: str | None = None):
        """The entry's output parameters name files the job writes: it writes them in a
        scratch folder there, and they are copied back here once it has succeeded, into
        place as a conversion's output is (the parameters' `force` to replace)."""
        self.target, self.job, self.memory_limit = target, job, memory_limit
        self.outputs: dict[str, str] = {}
        self.force = False
        self._fetched: dict[str, str] = {}       # the target's output path -> this machine's
        self.result: Any = None
        self.error: Exception | None = None
        self.done = False
        self.hello: dict | None = None
        self.remote_pid: int | None = None       # the job's child on the target, once it has one
        self._queue: queue.Queue = queue.Queue()
        self._process: subprocess.Popen | None = None
        self._write_lock = threading.Lock()
        self._cancel_at: float | None = None
        self._job_sent = False
        self._paths: dict[str, str] = {}        # local file -> the target's copy
        self._folders: dict[str, str] = {}      # local folder -> the target's copy
        self._to_send: dict[str, list] = {}     # field -> the files of the folder it names (Job.folders)
        self.params = params          # checked by the one start function, which sends here only what runs here
        try:
            given = params.to_dict()
            self.outputs = {key: str(given[key]) for key in job.outputs if given.get(key)}
            if job.default_output is not None and not self.outputs:
                # left unnamed, it would stay on the target: made in scratch there (removed when
                # the job ends) and brought back to where it would go here
                self.outputs[job.outputs[0]] = job.default_output(given)
            self._to_send = job.folders(given) if job.folders is not None else {}   # refused here, in one line
        except OSError as exc:
            self._finish(error=UserError("not-writable", f"cannot make the folder for the job's output here "
                                                         f"({exc.strerror or exc})"))
            return
        except UserError as exc:
            self._finish(error=exc)
            return
        self.force = bool(given.get("force"))

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    # starting ----------------------------------------------------------------
    def start(self) -> "RemoteHandle":
        if not self.done:
            threading.Thread(target=self._drive, name=f"ortune-target {self.target.name}", daemon=True).start()
        return self

    def _drive(self) -> None:
        try:
            self._queue.put(("outcome", self._run()))
        except BaseException as exc:            # every failure is a message, none escapes the thread
            self._queue.put(("outcome", exc))
        finally:
            self._close()

    def _run(self) -> Any:
        try:
            self._process = subprocess.Popen(ssh_command(self.target, ["worker"]), stdin=subprocess.PIPE,
                                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as exc:
            raise UserError("target-unreachable", f"ssh could not start: {exc}") from None
        self._stderr: list[str] = []
        threading.Thread(target=self._read_stderr, daemon=True).start()
        self.hello = self._read_hello()
        version = self.hello.get("version")
        if version != app.__version__:
            raise UserError("target-version", f"{self.target.describe()} runs ORTune {version}, this is "
                                              f"{app.__version__}: install the same version there with "
                                              f"`pip install ortune=={app.__version__}`")
        params = self.params.to_dict()
        # an output is written there and brought back, never sent: an existing file at its path is not an input
        self._paths = self._upload(local_files({k: v for k, v in params.items() if k not in self.outputs},
                                               self.job.text))
        with tempfile.TemporaryDirectory(prefix="ortune-send-") as scratch:
            for key, files in self._to_send.items():
                there = self._put(folder_bundle(files, Path(scratch) / key))
                self._folders[str(params[key])] = there.rsplit("/", 1)[0]
        params = replaced(params, self._paths | self._folders, self.job.text)
        if self.outputs:
            self._send({"scratch": True})
            folder = self._expect("scratch")["scratch"]
            for key, local in self.outputs.items():
                params[key] = self._fetched_as(f"{folder}/{Path(local).name}", local)
        self._send({"job": self.job.name, "params": params, "memory_limit": self.memory_limit})
        self._job_sent = True
        if self._cancel_at is not None:
            self._send({"cancel": True})
        while True:
            message = self._read()
            if "event" in message:
                kind, payload = message["event"]
                self._queue.put(("event", kind, payload))
            elif "child" in message:
                self.remote_pid = message["child"]
            elif "result" in message:
                return self._arrived(message["result"])
            elif "error" in message:
                raise error_from_dict(message["error"])

    def _arrived(self, result: Any) -> Any:
        """The result as if measured here: this machine's paths and the target named (the run
        that started it keeps it in this machine's history, app.core.launch.start)."""
        brought = dict(self._fetched)
        for remote, local in self._fetched.items():
            brought |= fetch(self, remote, Path(local), self.force)       # with the files beside it
        folders = {remote: local for local, remote in self._folders.items()}
        result = replaced(result, {remote: local for local, remote in self._paths.items()} | brought | folders,
                          self.job.text, folders)
        if isinstance(result, dict):
            result["target"] = describe_target(self.target, self.hello or {})
        if self.job.arrived is not None:
            self.job.arrived(result)
        return result

    def _upload(self, paths: list[str]) -> dict[str, str]:
        """Copy each file (with what it needs beside it) unless the target has it; the
        target's path of each."""
        return {path: self._put(bundle(Path(path))) for path in paths}

    def _put(self, found: Bundle) -> str:
        """Copy one bundle unless the target has it; the target's path of its main file."""
        if self._cancel_at is not None:
            raise JobCancelled()
        self._send({"have": found.sha, "name": found.main.name})
        answer = self._expect("have")
        if not answer.get("path"):
            self._send({"put": {"sha": found.sha, "name": found.main.name,
                                "files": [{"name": n, "sha": s} for n, _, s in found.files]}})
            sent, total = 0, max(found.size, 1)
            for name, local, _ in found.files:
                self._send({"file": name})
                with open(local, "rb") as handle:
                    for block in iter(lambda: handle.read(channel.CHUNK_BYTES), b""):
                        if self._cancel_at is not None:
                            raise JobCancelled()
                        self._send({"chunk": base64.b64encode(block).decode("ascii")})
                        sent += len(block)
                        self._queue.put(("event", "progress", {
                            "fraction": sent / total, "message": f"copying {found.main.name} to "
                                                                 f"{self.target.name}: {sent / total:.0%}"}))
            self._send({"end": True})
            answer = self._expect("stored")
        return answer["path"]

    def _fetched_as(self, remote: str, local: str) -> str:
        self._fetched[remote] = local
        return remote

    # the channel -------------------------------------------------------------
    def _send(self, message: dict) -> None:
        with self._write_lock:
            try:
                channel.write(self._process.stdin, message)
            except (OSError, ValueError):
                raise self._lost() from None

    def _read(self) -> dict:
        try:
            message = channel.read(self._process.stdout)
        except channel.ProtocolError as exc:
            raise UserError("target-protocol", f"{self.target.describe()} sent a line that is not ORTune's "
                                               f"protocol: {exc}") from None
        except (OSError, ValueError):
            message = None
        if message is None:
            raise self._lost()
        return message

    def _expect(self, key: str, message: dict | None = None) -> dict:
        message = self._read() if message is None else message
        if "error" in message:
            raise error_from_dict(message["error"])
        if key not in message:
            raise UserError("target-protocol", f"{self.target.describe()} answered out of turn "
                                               f"(expected {key!r}): is its ORTune the same version?")
        return message[key] if key == "hello" else message

    def _read_hello(self) -> dict:
        """The worker's first line. Text before it is the remote login shell's own (a banner,
        a startup file's echo), which the protocol cannot pass over: say so, quoting it."""
        try:
            line = self._process.stdout.readline(HELLO_LINE_BYTES)
        except (OSError, ValueError):
            line = b""
        if not line:
            raise self._lost()
        try:
            message = json.loads(line.decode("utf-8"))
        except ValueError:
            message = None
        if not isinstance(message, dict):
            raise UserError("target-protocol", f"the login shell on {self.target.describe()} printed text before "
                                               f"the worker started: {excerpt(line)}; make its startup files "
                                               f"print nothing when the session is not interactive")
        return self._expect("hello", message)

    def _lost(self) -> Exception:
        """Why the channel ended early, as the error the job ends with."""
        try:
            code = self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        time.sleep(0.1)                               # the stderr reader's last lines
        text = "\n".join(self._stderr)
        if self._cancel_at is not None:
            return JobCancelled()
        if self.hello is None:
            return UserError("target-unreachable", explain_ssh_failure(self.target, text, code))
        return UserError("target-lost", f"the connection to {self.target.describe()} ended before the job did: "
                                        f"{lost_reason(self.target, text, code)}")

    def _read_stderr(self) -> None:
        with self._process.stderr as stream:        # closed at its end: a window runs many jobs
            for line in stream:
                self._stderr.append(line.decode("utf-8", "replace").rstrip())
                del self._stderr[:-20]

    def _close(self) -> None:
        process = self._process
        if process is None:
            return
        for stream in (process.stdin,):
            try:
                stream.close()
            except OSError:
                pass
        try:
            process.wait(timeout=CANCEL_GRACE_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
        try:
            process.stdout.close()      # read by this thread only, which is done with it
        except OSError:
            pass

    # the JobHandle face ------------------------------------------------------
    def cancel(self) -> None:
        if self.done or self._cancel_at is not None:
            return
        self._cancel_at = time.monotonic()
        if self._job_sent:
            try:
                self._send({"cancel": True})
            except Exception:
                pass

    def send(self, message: Any) -> None:
        if not self.done and self._job_sent:
            try:
                self._send({"message": message})
            except Exception:
                pass

    def events(self, poll_s: float = 0.05) -> Iterator[tuple[str, dict]]:
        while not self.done:
            if (self._cancel_at is not None and time.monotonic() - self._cancel_at > CANCEL_GRACE_S
                    and self._process is not None and self._process.poll() is None):
                self._process.kill()               # the worker did not stop in time: drop the channel
            try:
                item = self._queue.get(timeout=poll_s)
            except queue.Empty:
                continue
            if item[0] == "event":
                yield item[1], item[2]
            elif isinstance(item[1], BaseException):
                self._finish(error=item[1] if isinstance(item[1], (UserError, JobCancelled, JobFailed))
                             else JobFailed("internal", f"{type(item[1]).__name__}: {item[1]}"))
            else:
                self._finish(result=item[1])

    def _finish(self, result: Any = None, error: Exception | None = None) -> None:
        self.result, self.error, self.done = result, error, True

    wait = JobHandle.wait          # the same drive-to-the-end over this handle's events, result and error
