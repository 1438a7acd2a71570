"""The state of one conversion while it is tried, checked and repaired.

Each kind has a producer, which writes the variant to `work.target` following
`work.plan`, and a repairer, which reads a `Problem` (the library raised, or ORT could
not load or run the result) and changes the plan — or says no repair is known. Every
repair is recorded with its reason, so the report can say exactly what was kept in full
precision and why."""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from app.core.jobs.protocol import JobContext
from app.core.session.config import SessionConfig


@dataclass
class Problem:
    stage: str            # convert | load | run
    message: str

    def node_name(self) -> str:
        """The node ORT's (or a library's) message names, if any."""
        for pattern in (r"in node \(([^)]*)\)", r"of node \(([^)]*)\)", r"Name:'([^']*)'", r"node with name '([^']*)'",
                        r"Node \(([^)]*)\)", r"node ([^\s:]+) of type"):
            match = re.search(pattern, self.message)
            if match and match.group(1):
                return match.group(1)
        return ""

    def short(self) -> str:
        """ORT's reason without its error-code and file-path preamble."""
        text = re.sub(r"^\[ONNXRuntimeError\] : \d+ : \w+ : ", "", self.message)
        text = re.sub(r"^Load model from .*? failed:", "", text)
        return text.strip()

    def describe(self) -> str:
        where = {"convert": "the converter failed", "load": "ONNX Runtime could not load the result",
                 "run": "ONNX Runtime could not run the result"}[self.stage]
        from app.core.ort_messages import first_line
        return f"{where}: {first_line(self.short(), 500)}"


@dataclass
class Work:
    kind: str
    source: Path
    target: Path                     # the staged output file, under its final name
    options: dict
    summary: dict                    # the source's inspection
    ctx: JobContext
    config: SessionConfig            # the session the result is validated with
    large: bool                      # weights go to a data file beside the output
    reference: object = None         # fidelity.Reference, when the fidelity check runs
    tolerance: object = None         # fidelity.Tolerance the variant is held to
    plan: dict = field(default_factory=dict)        # what the repairs changed
    repairs: list = field(default_factory=list)     # {"what", "why"}
    kept: list = field(default_factory=list)        # {"what", "why"}: left in full precision
    warnings: list = field(default_factory=list)
    companions: list = field(default_factory=list)  # extra staged files to publish (configs)
    details: dict = field(default_factory=dict)     # kind-specific report fields
    preloaded: object = None         # the source as the intake parsed it, for the first try
    ops_after: dict = field(default_factory=dict)   # the variant's operator counts, once read

    def take_model(self):
        """The source as a ModelProto the library may change: the intake's on the first try."""
        model, self.preloaded = self.preloaded, None
        if model is None:
            from app.core.model.output import load_model
            model = load_model(self.source)
        return model

    def scratch(self, name: str) -> Path:
        """A temporary file in the staging folder (deleted with it)."""
        return self.target.parent / f"scratch-{name}"

    def repair(self, what: str, why: str) -> dict:
        fix = {"what": what, "why": why}
        self.repairs.append(fix)
        self.ctx.log(f"repair: {what} ({why})", "warning")
        return fix


@dataclass(frozen=True)
class Handler:
    produce: Callable[[Work], None]
    repair: Callable[[Work, Problem], dict | None]


def node_index(model) -> dict:
    """name -> (node, top-level node that holds it) for every named node, subgraphs included."""
    index = {}

    def walk(graph, top) -> None:
        for node in graph.node:
            if node.name:
                index.setdefault(node.name, (node, top or node))
            for attr in node.attribute:
                if attr.HasField("g"):
                    walk(attr.g, top or node)
                for sub in attr.graphs:
                    walk(sub, top or node)

    walk(model.graph, None)
    return index


def find_node(index: dict, reported: str):
    """The model's node behind a name ORT reports (ORT prefixes inlined subgraph nodes)."""
    if reported in index:
        return index[reported]
    candidates = [name for name in index if name and reported.endswith(name)]
    if candidates:
        return index[max(candidates, key=len)]
    candidates = [name for name in index if name and reported.startswith(name)]
    return index[max(candidates, key=len)] if candidates else None


@contextmanager
def working_folder(folder: Path):
    """Run the libraries inside the staging folder: some of them drop scratch files into the
    current folder (ORT's symbolic shape inference writes sym_shape_infer_temp.onnx and a
    data file there when it gives up), and those must go with the staging folder, not
    litter the user's. onnx also checks whether an external data file exists relative to the
    current folder, so each fuser saves from inside its own folder."""
    previous = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(previous)
