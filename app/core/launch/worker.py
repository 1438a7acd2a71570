"""The worker server: the far end of a remote target (`ortune worker`, started over ssh by
app.core.targets.handle on this machine's side).

It speaks the JSON-lines protocol of app.core.targets.channel on its standard input and
output (started by ssh, not by people): says hello with its version and machine, keeps the
files it is sent in a cache keyed by content hash (each checked against that hash before it
is published), runs one job as this machine's job runner would (a child process, within the
memory budget it is given) and relays its events. It runs only the jobs whose entry allows
a target, with paths only inside its cache and the job's scratch folder
(app.core.targets.confine); anything else, or a line outside the protocol, ends it with
one line and exit 2. When its input ends (the connection dropped, the parent was killed) it
cancels the job, so nothing is left running."""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import sys
import threading
from pathlib import Path

MAIN = ".ortune-main"           # in a cached bundle: the name of its model file


def cache_dir() -> Path:
    from app.core.store.paths import data_dir
    return data_dir() / "target-cache"


class Worker:
    def __init__(self, inp, out):
        self.inp, self.out = inp, out
        self.lock = threading.Lock()
        self.handle = None
        self.job_thread: threading.Thread | None = None
        self.upload: dict | None = None
        self.scratch: list[Path] = []             # folders the job writes its outputs in, removed at the end
        self.home: str | None = None              # the folder the worker started in, while the job runs in scratch
        self.temp: tuple = (None, None)           # the temporary folder it had then (tempfile's, TMPDIR)

    def write(self, message: dict) -> None:
        from app.core.targets import channel
        with self.lock:
            try:
                channel.write(self.out, message)
            except (OSError, ValueError):
                pass                                # the parent is gone; the job is cancelled below

    def hello(self) -> None:
        import onnxruntime

        import app
        from app.core.session.machine import describe_machine
        self.write({"hello": {"version": app.__version__, "ort": onnxruntime.__version__,
                              "machine": describe_machine()}})

    # files ---------------------------------------------------------------------
    def have(self, message: dict) -> None:
        sha, name = _safe(str(message["have"])), Path(str(message.get("name", ""))).name
        path = _cached(cache_dir() / sha, name) if name else None
        self.write({"have": sha, "path": str(path) if path else None})

    def put(self, message: dict) -> None:
        from app.core.targets.upload import content_key
        self.abandon()                              # a put without its end is dropped, not left behind
        spec = message["put"]
        sha = _safe(str(spec["sha"]))
        files = [(str(f["name"]), _safe(str(f["sha"]))) for f in spec["files"]]
        name = Path(str(spec["name"])).name
        if not files or files[0][0] != name or any(n.startswith(MAIN) for n, _ in files):
            raise ValueError("an upload lists its model first and names no file of ORTune's own")
        if content_key(files) != sha:
            raise ValueError("the upload's hash is not the hash of the files it lists")
        staging = cache_dir() / f".{sha}.partial-{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        self.upload = {"sha": sha, "name": name, "staging": staging, "files": dict(files),
                       "arrived": set(), "current": None}

    def file(self, message: dict) -> None:
        name = str(message["file"])
        target = (self.upload["staging"] / name).resolve()
        if name not in self.upload["files"] or not target.is_relative_to(self.upload["staging"].resolve()):
            raise ValueError(f"{name!r} is not a file of this upload")
        target.parent.mkdir(parents=True, exist_ok=True)
        self._close_current()
        self.upload["current"] = (name, open(target, "wb"), hashlib.sha256())

    def chunk(self, message: dict) -> None:
        _, handle, digest = self.upload["current"]
        block = base64.b64decode(message["chunk"])
        handle.write(block)
        digest.update(block)

    def end(self) -> None:
        """Publish the upload, once every file it lists arrived with the hash it was listed
        with (and so the bundle has the hash it is stored under)."""
        self._close_current()
        upload = self.upload
        missing = set(upload["files"]) - upload["arrived"]
        if missing:
            raise ValueError(f"{sorted(missing)[0]} never arrived")
        (upload["staging"] / MAIN).write_text(upload["name"], encoding="utf-8")
        final = cache_dir() / upload["sha"]
        if not final.exists():
            os.replace(upload["staging"], final)
        self.abandon()
        path = _cached(final, upload["name"])
        if path is None:
            raise ValueError(f"{upload['name']} is the name of another file of that model")
        self.write({"stored": upload["sha"], "path": str(path)})

    def _close_current(self) -> None:
        current = self.upload["current"]
        if current is None:
            return
        name, handle, digest = current
        handle.close()
        self.upload["current"] = None
        if digest.hexdigest() != self.upload["files"][name]:
            raise ValueError(f"{name} arrived damaged (its content hash differs)")
        self.upload["arrived"].add(name)

    def abandon(self) -> None:
        if self.upload is not None:
            if self.upload["current"] is not None:
                self.upload["current"][1].close()
            shutil.rmtree(self.upload["staging"], ignore_errors=True)
            self.upload = None

    # outputs -------------------------------------------------------------------
    def make_scratch(self) -> None:
        self.write({"scratch": str(self.new_scratch())})

    def new_scratch(self) -> Path:
        import tempfile
        (cache_dir() / "outputs").mkdir(parents=True, exist_ok=True)
        folder = Path(tempfile.mkdtemp(prefix=f"job-{os.getpid()}-", dir=cache_dir() / "outputs"))
        self.scratch.append(folder)
        return folder

    def send_back(self, message: dict) -> None:
        """A file the job wrote in its scratch folder, and the files beside it that it needs; or a
        folder it wrote, with every file in it."""
        from app.core.targets.channel import CHUNK_BYTES
        from app.core.targets.upload import bundle
        path = Path(str(message["get"])).resolve()
        if not any(path.is_relative_to(folder.resolve()) for folder in self.scratch) or not (
                path.is_file() or path.is_dir()):
            raise ValueError(f"{path} is not an output of this job")
        if path.is_dir():          # a folder the job wrote (optimize's folder to ship): every file in it
            files = [(str(f.relative_to(path)), f) for f in sorted(path.rglob("*")) if f.is_file() and not f.is_symlink()]
        else:
            files = [(name, local) for name, local, _ in bundle(path).files]
        self.write({"files": [{"name": name, "size": local.stat().st_size} for name, local in files],
                    "folder": path.is_dir()})
        for name, local in files:
            self.write({"file": name})
            with open(local, "rb") as handle:
                for block in iter(lambda: handle.read(CHUNK_BYTES), b""):
                    self.write({"chunk": base64.b64encode(block).decode("ascii")})
        self.write({"end": True})

    # the job -------------------------------------------------------------------
    def start_job(self, message: dict) -> None:
        from app.core.launch.registry import entry_named
        from app.core.launch.start import start
        from app.core.targets.confine import check_request

        job, params = entry_named(message["job"]), message.get("params")
        if job is None:
            self.write({"error": {"kind": "target-version", "user": True,
                                  "message": f"this worker has no job named {message['job']!r}"}})
            return
        self.home = os.getcwd()
        folder = self.new_scratch()
        os.chdir(folder)                      # a relative name the job writes (an engine cache) lands in scratch
        import tempfile                       # and so do its temporary files, its children's too
        self.temp = (tempfile.tempdir, os.environ.get("TMPDIR"))
        os.environ["TMPDIR"] = tempfile.tempdir = str(folder)
        check_request(job, params, cache_dir(), self.scratch)
        # as a run started on this machine: its result is kept in this machine's history too
        self.handle = start(job, params, memory_limit=message.get("memory_limit")).start()
        self.job_thread = threading.Thread(target=self.relay, daemon=True)
        self.job_thread.start()

    def relay(self) -> None:
        from app.core.jobs.errors import UserError
        handle, told = self.handle, False
        for kind, payload in handle.events():
            if not told and handle.pid:
                self.write({"child": handle.pid})
                told = True
            self.write({"event": [kind, payload]})
        if handle.error is not None:
            info = handle.error.to_dict() if hasattr(handle.error, "to_dict") else {
                "kind": "internal", "message": str(handle.error)}
            self.write({"error": dict(info, user=isinstance(handle.error, UserError),
                                      traceback=getattr(handle.error, "traceback", ""))})
        else:
            self.write({"result": handle.result})

    def serve(self) -> int:
        from app.core.jobs.errors import UserError
        from app.core.targets import channel
        from app.core.targets.confine import sweep
        sweep(cache_dir())
        self.hello()
        while True:
            try:
                message = channel.read(self.inp)
            except channel.ProtocolError as exc:
                return self.refuse(UserError("target-protocol", f"this worker refuses the request: {exc}"))
            except (OSError, ValueError):
                message = None
            if message is None:                        # the parent is gone, or done
                self.stop()
                return 0
            try:
                self.dispatch(message)
            except UserError as exc:                   # a job or a path it may not have
                return self.refuse(exc)
            except (OSError, ValueError, KeyError, TypeError) as exc:
                self.abandon()
                self.write({"error": {"kind": "target-copy", "user": True,
                                      "message": f"the target could not store or send a file: {exc}"}})

    def refuse(self, error) -> int:
        """One line to the parent and one on stderr, then the worker ends (exit 2)."""
        self.write({"error": dict(error.to_dict(), user=True)})
        sys.stderr.write(f"ortune worker: {error}\n")
        self.stop()
        return 2

    def stop(self) -> None:
        self.abandon()
        if self.handle is not None:
            self.handle.cancel()
            self.job_thread.join(30)
        if self.home is not None:
            import tempfile
            os.chdir(self.home)
            tempfile.tempdir = self.temp[0]
            if self.temp[1] is None:
                os.environ.pop("TMPDIR", None)
            else:
                os.environ["TMPDIR"] = self.temp[1]
        for folder in self.scratch:
            shutil.rmtree(folder, ignore_errors=True)

    def dispatch(self, message: dict) -> None:
        if "have" in message:
            self.have(message)
        elif "put" in message:
            self.put(message)
        elif "file" in message:
            self.file(message)
        elif "chunk" in message:
            self.chunk(message)
        elif "end" in message:
            self.end()
        elif "scratch" in message:
            self.make_scratch()
        elif "get" in message:
            self.send_back(message)
        elif "job" in message and self.handle is None:
            self.start_job(message)
        elif "cancel" in message and self.handle is not None:
            self.handle.cancel()
        elif "message" in message and self.handle is not None:
            self.handle.send(message["message"])


def _cached(folder: Path, name: str) -> Path | None:
    """The bundle's model in the cache under `name`: a link to the one stored copy when it
    was first sent under another name; None if not cached (or `name` is another of its files)."""
    try:
        main = folder / (folder / MAIN).read_text(encoding="utf-8")
        path = folder / Path(name).name
        if not path.exists():
            try:
                os.link(main, path)
            except OSError:
                shutil.copyfile(main, path)
        return path if path.is_file() and (path.samefile(main) or _same_bytes(path, main)) else None
    except (OSError, ValueError):
        return None


def _same_bytes(a: Path, b: Path) -> bool:
    from app.core.targets.upload import file_sha
    return file_sha(a) == file_sha(b)


def _safe(sha: str) -> str:
    if not sha or not all(c in "0123456789abcdef" for c in sha):
        raise ValueError("a content hash is hexadecimal")
    return sha
