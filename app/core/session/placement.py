"""Node placement: which execution provider runs each node of the optimised graph.

A GPU provider that cannot run an operator hands it to the CPU without a word, and
every such hand-over copies tensors between devices. This shows the split. The
source is ORT's own graph-assignment record where this ORT has it
(`session.record_ep_graph_assignment_info`); otherwise the provider named in each
node event of a one-run profile."""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path

from app.core.jobs.protocol import JobContext
from app.core.session.providers import GPU_PROVIDERS

RECORD_KEY = "session.record_ep_graph_assignment_info"
#: a GPU provider with less than this share of the nodes earns a warning
WARN_SHARE = 0.5
DISPLAY = {"CPUExecutionProvider": "CPU", "CUDAExecutionProvider": "CUDA", "TensorrtExecutionProvider": "TensorRT",
           "DmlExecutionProvider": "DirectML", "OpenVINOExecutionProvider": "OpenVINO"}


def display_name(provider: str) -> str:
    return DISPLAY.get(provider, provider.replace("ExecutionProvider", ""))


def assignment_info_supported() -> bool:
    import onnxruntime as ort

    from app.core.session.config import supported_config_keys
    return RECORD_KEY in supported_config_keys() and hasattr(ort.InferenceSession, "get_provider_graph_assignment_info")


def _from_assignment(path: str, config) -> list[dict]:
    from app.core.session.create import create_session

    session = create_session(path, config, customize=lambda options: options.add_session_config_entry(RECORD_KEY, "1"))
    return [{"name": node.name, "op_type": node.op_type, "domain": node.domain, "provider": subgraph.ep_name}
            for subgraph in session.get_provider_graph_assignment_info() for node in subgraph.get_nodes()]


def _from_profile(path: str, config) -> list[dict]:
    from app.core.session.create import create_session
    from app.core.session.probe import prepare_feeds

    with tempfile.TemporaryDirectory(prefix="ortune-placement-") as folder:
        def customize(options) -> None:
            options.enable_profiling = True
            options.profile_file_prefix = str(Path(folder) / "placement")

        session = create_session(path, config, customize=customize)
        prepare_feeds(path, session, config.inputs)
        trace = Path(session.end_profiling())
        events = json.loads(trace.read_text(encoding="utf-8"))
    nodes, seen = [], set()
    for event in events:
        args = event.get("args") or {}
        name = event.get("name", "")
        if event.get("cat") != "Node" or "provider" not in args or not name.endswith("_kernel_time"):
            continue
        name = name[: -len("_kernel_time")]
        key = (name, args.get("node_index"))
        if key in seen:        # a node runs once per run; keep one event per node
            continue
        seen.add(key)
        nodes.append({"name": name, "op_type": args.get("op_name", ""), "domain": "", "provider": args["provider"]})
    return nodes


def summarize(nodes: list[dict], requested: list[str]) -> dict:
    """Counts per provider, a one-line summary and warnings about silent CPU fallback."""
    total = len(nodes)
    by_provider: dict[str, dict] = {}
    for node in nodes:
        entry = by_provider.setdefault(node["provider"], {"nodes": 0, "op_types": Counter()})
        entry["nodes"] += 1
        entry["op_types"][node["op_type"]] += 1
    order = [p for p in requested if p in by_provider] + sorted(p for p in by_provider if p not in requested)
    parts = []
    for provider in order:
        entry = by_provider[provider]
        text = f"{display_name(provider)}: {entry['nodes']} node{'s' if entry['nodes'] != 1 else ''}"
        if provider != requested[0] and entry["op_types"]:
            ops = [op for op, _ in entry["op_types"].most_common()]
            text += ": " + ", ".join(ops[:5]) + (" …" if len(ops) > 5 else "")
        parts.append(text)
    warnings = []
    for provider in requested:
        if provider == "CPUExecutionProvider" or total == 0:
            continue
        share = by_provider.get(provider, {"nodes": 0})["nodes"] / total
        if share < WARN_SHARE:
            others = [display_name(p) for p in order if p != provider]
            cost = ("with copies between devices at each hand-over" if provider in GPU_PROVIDERS else
                    "so the graph runs in pieces, handed over between providers")
            warnings.append(f"{display_name(provider)} runs only {share:.0%} of the nodes; the rest falls back to "
                            f"{', '.join(others) or 'other providers'}, {cost}.")
    return {
        "by_provider": {p: {"nodes": by_provider[p]["nodes"], "share": by_provider[p]["nodes"] / total,
                            "op_types": dict(by_provider[p]["op_types"].most_common())} for p in order},
        "summary": ", ".join(parts) if parts else "no nodes",
        "warnings": warnings,
    }


def placement(path: str, config, ctx: JobContext | None = None, method: str = "auto") -> dict:
    """method: auto (ORT's record where available), assignment, or profiling."""
    import onnxruntime as ort

    from app.core.jobs.errors import UserError
    from app.core.model.inspect import inspect_model

    ctx = ctx or JobContext()
    summary = inspect_model(path)
    ctx.check_cancel()
    ort_format = summary.get("format") == "ort"
    notes = []
    if method == "auto":
        method = "assignment" if assignment_info_supported() and not ort_format else "profiling"
        if ort_format:
            notes.append("the nodes come from one profiled run: ONNX Runtime keeps no graph-assignment record for "
                         "a model it reads in ORT format")
    if method == "assignment" and ort_format:
        raise UserError("unsupported", f"{Path(path).name}: ONNX Runtime keeps no graph-assignment record for a "
                                       "model in ORT format; use the profiling method")
    if method == "assignment" and not assignment_info_supported():
        raise UserError("unsupported", f"ONNX Runtime {ort.__version__} cannot report graph assignment; "
                                       "use the profiling method")
    if method not in ("assignment", "profiling"):
        raise UserError("bad-option", f"placement method must be auto, assignment or profiling, not {method!r}")
    ctx.progress(None, "creating the session" if method == "assignment" else "profiling one run")
    nodes = _from_assignment(summary["path"], config) if method == "assignment" else _from_profile(summary["path"], config)
    return {"path": summary["path"], "method": method, "providers": config.provider_names(), "nodes": nodes,
            "node_count": len(nodes), "ort_version": ort.__version__, "notes": notes,
            **summarize(nodes, config.provider_names())}
