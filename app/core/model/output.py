"""Writing a new model file safely: never over an existing file without consent, never
half-written, and with its weights in a file beside it when it is large.

Everything is written into a staging folder inside the target folder (same file
system, so the final rename is atomic) under the final names, then renamed into place
— companions first, the model last. Anything left in the staging folder is deleted,
whatever happens."""

from __future__ import annotations

import glob
import os
import shutil
import tempfile
from collections import Counter
from pathlib import Path

from app.core.jobs.errors import UserError

#: protobuf cannot serialise a message of 2 GiB or more; keep a margin
PROTOBUF_LIMIT = (2 << 30) - (64 << 20)


def data_file_name(model_name: str) -> str:
    """The external-data file that goes with a model file (the ORT tools use the same name)."""
    return f"{model_name}.data"


def check_target(source: Path, target: Path, force: bool, companions: tuple[str, ...] = ()) -> None:
    """Refuse an output that would replace the source, or an existing file without consent."""
    if target.exists() and target.is_dir():
        raise UserError("bad-output", f"{target}: is a folder; give a file name for the output")
    if target.resolve() == source.resolve():
        raise UserError("bad-output", f"{target}: is the source model itself; the source is never modified")
    folder = target.parent
    if not folder.is_dir():
        raise UserError("bad-output", f"{folder}: the output folder does not exist")
    if not os.access(folder, os.W_OK):
        raise UserError("bad-output", f"{folder}: the output folder is not writable")
    for name in (target.name, *companions):
        path = folder / name
        if path.exists() and not force:
            raise UserError("output-exists", f"{path}: already exists; use --force to replace it")


class Staging:
    """A private folder beside the output; `commit` moves the finished files into place.

    Its name holds the writing process's id: a job that was killed (a cancel that did not
    stop in time, a crash) cannot clean up, so the next one for the same output removes
    the folders whose process is gone."""

    def __init__(self, target: Path):
        self.target = target
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
            final = self.target.parent / item.name
            if final.exists() and not force:
                raise UserError("output-exists", f"{final}: already exists; use --force to replace it")
        published = []
        for item in staged:
            final = self.target.parent / item.name
            os.replace(item, final)
            published.append(final)
        return published


def save_model(model, path: Path, external: bool) -> None:
    """Save with all weights in one data file beside the model when `external`."""
    import onnx

    if external:
        onnx.save_model(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                        location=data_file_name(path.name), size_threshold=1024)
    else:
        onnx.save_model(model, str(path))


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
