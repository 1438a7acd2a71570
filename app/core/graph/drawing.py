"""The drawing job: the model's structure and its layout first (sent as a `picture` data
event, so the window can show the graph while the rest is worked out), then every node's
details as the result.

Both are kept in the user's cache folder, named by the model file's content hash: the
picture per set of expanded control-flow nodes, the details per input plan. Opening the
same model again (or a copy of it) costs a read of the file to hash it. A cache file
that cannot be read is made again."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

from app.core.jobs.protocol import JobContext

#: raise when what is cached, or how it is made (the layout's settings), changes: older
#: files are then simply not found
CACHE_VERSION = 3
_CHUNK = 1 << 22
#: a smaller file is parsed whole (protobuf's own parser is quicker than the weightless scan,
#: which pays off when the weights are what makes the file large)
PARSE_WHOLE_BELOW = 64 << 20


def content_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()[:32]


def cache_file(kind: str, *key: str) -> Path:
    from app.core.store.paths import cache_dir
    name = hashlib.sha256(json.dumps([CACHE_VERSION, kind, *key]).encode()).hexdigest()[:40]
    return cache_dir() / "graph" / f"{kind}-{name}.json"


def read_cached(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_cached(path: Path, value: dict) -> None:
    """Write beside and rename into place: an interrupted write leaves no half file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        part = path.with_name(f"{path.name}.{os.getpid()}.part")
        part.write_text(json.dumps(value), encoding="utf-8")
        os.replace(part, path)
    except OSError:
        pass                                    # a cache that cannot be written only costs time


def _cpu_seconds() -> float:
    """CPU time of this process and of the programs it ran (dot): what the layout cost,
    whatever else the machine was doing."""
    spent = os.times()
    return spent.user + spent.system + spent.children_user + spent.children_system


def picture(path: Path, digest: str, expanded: set[str], ctx: JobContext) -> dict:
    """The structure and layout for `expanded`, from the cache or made now."""
    from app.core.graph.layout import lay_out
    from app.core.graph.structure import read_structure
    from app.core.model.intake import load_onnx

    target = cache_file("picture", digest, *sorted(expanded))
    cached = read_cached(target)
    if cached is not None:
        return {**cached, "cached": True}
    started, cpu = time.perf_counter(), _cpu_seconds()
    structure = read_structure(load_onnx(path, weights=path.stat().st_size < PARSE_WHOLE_BELOW))
    ctx.check_cancel()
    ctx.progress(0.1, f"laying out {len(structure['nodes']):,} nodes")
    made = {"structure": structure, "layout": lay_out(structure, expanded),
            "seconds": round(time.perf_counter() - started, 3), "cpu_seconds": round(_cpu_seconds() - cpu, 3)}
    write_cached(target, made)
    return {**made, "cached": False}


def draw_model(params, ctx: JobContext | None = None) -> dict:
    """picture (data event), then {key, details}: see the module docstring."""
    from app.core.graph.details import node_details
    from app.core.model.intake import check_readable

    ctx = ctx or JobContext()
    path = check_readable(params.path)
    digest = content_hash(path)
    shown = picture(path, digest, set(params.expanded), ctx)
    ctx.data("picture", {**shown, "key": digest, "path": str(path)})
    if not params.details:
        return {"key": digest, "details": None}
    plan = json.dumps(params.inputs.to_dict(), sort_keys=True, default=str)
    target = cache_file("details", digest, plan)
    details = read_cached(target)
    if details is None:
        ctx.progress(0.4, "inferring shapes and reading the weights")
        details = node_details(path, params.inputs, ctx)
        write_cached(target, details)
    ctx.progress(1.0, "done")
    return {"key": digest, "details": details}
