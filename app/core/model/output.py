"""Writing a new model file safely: never over an existing file without consent, never
half-written, and with its weights in a file beside it when it is large.

Everything is written into a staging folder inside the target folder (same file
system, so the final rename is atomic) under the final names, then renamed into place
— companions first, the model last. Anything left in the staging folder is deleted,
whatever happens."""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import stat
import tempfile
from collections import Counter
from pathlib import Path

from app.core.jobs.disk import check_space, is_disk_full, no_space  # noqa: F401 (re-exported)
from app.core.jobs.errors import UserError
from app.core.model.intake import file_kind

#: protobuf cannot serialise a message of 2 GiB or more; keep a margin
PROTOBUF_LIMIT = (2 << 30) - (64 << 20)


def data_file_name(model_name: str) -> str:
    """The external-data file that goes with a model file (the ORT tools use the same name)."""
    return f"{model_name}.data"


def check_target(source: Path, target: Path, force: bool, companions: tuple[str, ...] = (),
                 depends: tuple[Path, ...] = ()) -> None:
    """Refuse an output that would replace the source or a file it needs (`depends`: its
    external data), anything but a regular file, or an existing file without consent."""
    folder = target.parent
    if not folder.is_dir():
        raise UserError("bad-output", f"{folder}: the output folder does not exist")
    check_writable(folder)
    for name in (target.name, *companions):
        check_replaceable(folder / name, force, (source, *depends))


def check_writable(folder: Path, what: str = "the output folder") -> None:
    """Refuse a folder no file can be made in, by making (exclusively) and removing one: a
    read-only file system, or permissions root is not exempt from, say so only when tried."""
    try:
        handle, probe = tempfile.mkstemp(prefix=".ortune-", suffix=".probe", dir=folder)
    except OSError as exc:
        raise UserError("bad-output", f"{folder}: {what} is not writable ({exc.strerror})") from None
    os.close(handle)
    os.unlink(probe)


def write_text_file(path: Path, text: str, force: bool = True, protected: tuple[Path, ...] = ()) -> None:
    """A text file written whole or not at all: staged under a fresh name made exclusively in
    the target folder (never through a link, folder or FIFO planted at a name of our own),
    then renamed into place once `path` has been checked again."""
    handle, staged = tempfile.mkstemp(prefix=".ortune-", suffix=".partial", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.chmod(staged, file_mode())
        check_replaceable(path, force, protected)
        os.replace(staged, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(staged)
        raise


def check_replaceable(path: Path, force: bool, protected: tuple[Path, ...] = ()) -> None:
    """Refuse to put a new file at `path` where that would destroy what is there.

    A folder, device, FIFO or socket is never replaced, even with `force` (a rename onto
    /dev/null would replace the device with a regular file), and neither is a file the
    source is made of (`protected`, compared as files: a link or a hard link to one counts).
    An existing file, or a link to nothing, needs `force`."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise UserError("bad-output", f"{path}: cannot be checked ({exc.strerror})") from None
    if stat.S_ISLNK(info.st_mode):
        try:
            info = os.stat(path)
        except OSError:
            if not force:
                raise UserError("output-exists", f"{path}: is a link to a missing file; use --force to replace "
                                                 "the link") from None
            return
    kind = file_kind(info.st_mode)
    if kind:
        raise UserError("bad-output", f"{path}: is {kind}; an output only ever replaces a regular file, "
                                      "even with --force")
    for index, other in enumerate(protected):
        if same_file(path, other):
            what = "the source model itself" if index == 0 else f"the source model's external data ({other.name})"
            raise UserError("bad-output", f"{path}: is {what}; the source is never modified")
    if not force:
        raise UserError("output-exists", f"{path}: already exists; use --force to replace it")


def same_file(path: Path, other: Path) -> bool:
    """Whether two paths name one file (a link or a hard link to it counts)."""
    try:
        return os.path.samefile(path, other)
    except OSError:
        return os.path.realpath(path) == os.path.realpath(other)


def file_mode() -> int:
    """The permissions a new file gets from open(): 0666 less the umask."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)   # no way to read it without setting it elsewhere
    os.umask(mask)
    return 0o666 & ~mask


class Staging:
    """A private folder beside the output; `commit` moves the finished files into place.

    Its name holds the writing process's id: a job that was killed (a cancel that did not
    stop in time, a crash) cannot clean up, so the next one for the same output removes
    the folders whose process is gone. `protected`: the files the source is made of, which
    the commit checks again as it publishes."""

    def __init__(self, target: Path, protected: tuple[Path, ...] = ()):
        self.target = target
        self.protected = protected
        self._sweep()
        self.folder = Path(tempfile.mkdtemp(prefix=f".{target.name}.{os.getpid()}.", suffix=".partial",
                                            dir=target.parent))
        self.path = self.folder / target.name
        self.companions: list[Path] = []   # files that travel with the model (configs)

    def _sweep(self) -> None:
        prefix = f".{self.target.name}."
        for folder in self.target.parent.glob(f"{glob.escape(prefix)}*.partial"):
            import psutil  # only when there is something to sweep

            pid = folder.name[len(prefix):].split(".", 1)[0]
            if pid.isdigit() and not psutil.pid_exists(int(pid)):
                shutil.rmtree(folder, ignore_errors=True)

    def __enter__(self) -> "Staging":
        return self

    def __exit__(self, *exc_info) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def files(self) -> list[Path]:
        """The staged files to publish, the model last."""
        data = self.folder / data_file_name(self.target.name)
        extra = [p for p in [data, *self.companions] if p.exists()]
        return extra + [self.path]

    def commit(self, force: bool) -> list[Path]:
        if not self.path.exists():
            raise RuntimeError("the conversion finished without writing its output")
        staged = self.files()
        for item in staged:
            check_replaceable(self.target.parent / item.name, force, self.protected)
        published = []
        mode = file_mode()
        for item in staged:
            final = self.target.parent / item.name
            os.chmod(item, mode)   # some writers (onnx's external data) make their files private
            os.replace(item, final)
            published.append(final)
        return published


def save_model(model, path: Path, external: bool) -> None:
    """Save with all weights in one data file beside the model when `external`; the space it
    needs is checked first, and a disk that fills meanwhile is named as such."""
    import onnx

    needed = model.ByteSize()
    check_space(path.parent, needed)
    try:
        if external:
            onnx.save_model(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                            location=data_file_name(path.name), size_threshold=1024)
        else:
            onnx.save_model(model, str(path))
    except OSError as exc:
        if is_disk_full(exc):
            raise no_space(path.parent, needed) from None
        raise


def load_model(path: Path):
    """The whole model, weights included (the intake already checked where they live)."""
    import onnx
    return onnx.load(str(path))


def op_counts(path: Path) -> Counter:
    """Operator counts of an .onnx or .ort file, subgraphs included."""
    if path.suffix.lower() == ".ort":
        from app.core.model.ort_format import read_ort_model
        return Counter(read_ort_model(path)["op_counts"])
    from app.core.model.intake import load_onnx

    return op_counts_of(load_onnx(path, weights=False))


def op_counts_of(model) -> Counter:
    from app.core.model.intake import iter_graphs

    counts: Counter = Counter()
    for graph in iter_graphs(model.graph):
        for node in graph.node:
            counts[node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"] += 1
    return counts


def op_changes(before: dict, after: dict) -> dict:
    """What a conversion added and removed, by operator type, and the sentence for it."""
    added = {op: after[op] - before.get(op, 0) for op in after if after[op] > before.get(op, 0)}
    removed = {op: before[op] - after.get(op, 0) for op in before if before[op] > after.get(op, 0)}
    parts = [f"{op} ×{n} added" for op, n in sorted(added.items(), key=lambda kv: -kv[1])]
    parts += [f"{op} ×{n} removed" for op, n in sorted(removed.items(), key=lambda kv: -kv[1])]
    return {"added": added, "removed": removed, "before": dict(before), "after": dict(after),
            "text": ", ".join(parts) if parts else "no operator changes"}
