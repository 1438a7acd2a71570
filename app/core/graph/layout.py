"""Where each box and arrow of the drawn model goes: Graphviz's dot (layered drawing, top
to bottom), as graphviz-pure ships it: one self-contained program in a wheel, no system
install on Windows or Linux.

Measured against grandalf (pure Python Sugiyama) on generated DNN-like graphs (residual
blocks) on a shared 2-core machine: 1,000 nodes 0.4 s in dot, 1.0 s in grandalf; 5,000
nodes 14 s in dot with its defaults, 31 s in grandalf. Dot's time goes into the network
simplex that straightens the x positions (11 s of the 14), and each of its iterations
costs more the larger the graph. Past STRAIGHTEN_UP_TO nodes `nslimit=0` skips it: 5,000
nodes then take about 1 s of CPU, 20,000 about 2.5 s. Ranks and orders are unchanged;
the main line runs straight down the left and branches hang to its right, where the
straightened drawing centres them.

Boxes are sized here (points; dot's inches are 72 points), so dot only places them; the
window draws the text. The positions come back in dot's plain format, y flipped to grow
downwards like the window's.

The layout travels (to the window, into the cache) as packed arrays, base64 text of
little-endian numbers (see `unpack`): a 20,000-node drawing as lists of lists would be a
million Python objects, and building them in the window holds its interpreter for a
second or more."""

from __future__ import annotations

import base64
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np

from app.core.jobs.errors import UserError

#: box height, the width per character of an operator's name (bold) and of a node's name
#: (small), the room around them and the narrowest and widest box (points)
BOX_HEIGHT = 34
CHAR_WIDTH = (6.6, 4.6)
BOX_PADDING = 16
BOX_WIDTH = (60, 190)
#: past this many drawn nodes dot skips straightening the x positions (see the module docstring)
STRAIGHTEN_UP_TO = 1500
PROGRAM = "graphviz-pure"


def program() -> str:
    """The dot program of graphviz-pure: at the top of a frozen bundle, beside this Python's
    scripts, or on PATH."""
    name = PROGRAM + (".exe" if sys.platform == "win32" else "")
    frozen = getattr(sys, "_MEIPASS", None)
    beside = Path(frozen) / name if frozen else Path(sysconfig.get_path("scripts")) / name
    found = str(beside) if beside.is_file() else shutil.which(PROGRAM)
    if not found:
        raise UserError("layout-missing", "drawing the graph needs graphviz-pure: pip install graphviz-pure")
    return found


def box_size(node: dict) -> tuple[float, float]:
    if node["kind"] == "op":
        text = max(CHAR_WIDTH[0] * (len(node["op_type"]) + 2), CHAR_WIDTH[1] * len(node["name"]))
    else:
        text = CHAR_WIDTH[0] * len(node["name"])
    width = min(BOX_WIDTH[1], max(BOX_WIDTH[0], BOX_PADDING + text))
    return width, BOX_HEIGHT if node["kind"] == "op" else BOX_HEIGHT * 0.75


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def cluster_label(structure_by_id: dict, body: str) -> str:
    owner_id, attr = body.rstrip("/").rsplit("/", 1)
    owner = structure_by_id[owner_id]
    return f"{owner['op_type']} {owner['name']} · {attr}"


def dot_source(shown: list[dict], arrows: list[dict], by_id: dict) -> tuple[str, list[str]]:
    """The dot text, and the drawn ids in the order dot names them (n0, n1, ...)."""
    ids = [n["id"] for n in shown]
    dot_name = {node_id: f"n{i}" for i, node_id in enumerate(ids)}
    members: dict[str, list[dict]] = {}
    for node in shown:
        members.setdefault(node["body"], []).append(node)
    count = len(shown)
    lines = ["digraph G {",
             "graph [rankdir=TB, nodesep=0.22, ranksep=0.32, compound=true, fontsize=10, fontname=Arimo"
             + (", nslimit=0" if count > STRAIGHTEN_UP_TO else "") + "];",
             'node [shape=box, fixedsize=true, label=""];', "edge [arrowhead=none];"]

    def emit(body: str, depth: int) -> None:
        for node in members.get(body, []):
            width, height = box_size(node)
            lines.append(f"{dot_name[node['id']]} [width={width / 72:.3f}, height={height / 72:.3f}];")
            for inner in node["bodies"]:
                if inner in members:
                    lines.append(f"subgraph cluster_{len(lines)} {{ label={_quoted(cluster_label(by_id, inner))}; "
                                 "labeljust=l; margin=10;")
                    emit(inner, depth + 1)
                    lines.append("}")

    emit("", 0)
    for arrow in arrows:
        style = " [style=dashed, weight=4]" if arrow["kind"] == "body" else ""
        lines.append(f"{dot_name[arrow['tail']]} -> {dot_name[arrow['head']]}{style};")
    lines.append("}")
    return "\n".join(lines), ids


def run_dot(text: str, timeout: float | None = None) -> str:
    done = subprocess.run([program(), "-Tplain"], input=text, capture_output=True, text=True, timeout=timeout,
                          encoding="utf-8")
    if done.returncode != 0:
        raise RuntimeError(f"dot failed: {done.stderr.strip().splitlines()[-1:] or done.returncode}")
    return done.stdout


def parse_plain(text: str, ids: list[str]) -> tuple[dict[str, list[float]], dict[tuple[str, str], list], list]:
    """{id: [x, y, w, h]} (centre, points, y down), {(tail, head): [[x, y], ...] spline control
    points}, and the drawing's [width, height]."""
    boxes: dict[str, list[float]] = {}
    routes: dict[tuple[str, str], list] = {}
    height = size = 0.0
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "graph":
            size = [float(parts[2]) * 72, float(parts[3]) * 72]
            height = size[1]
        elif parts[0] == "node":
            x, y, w, h = (float(v) * 72 for v in parts[2:6])
            boxes[ids[int(parts[1][1:])]] = [round(x, 1), round(height - y, 1), round(w, 1), round(h, 1)]
        elif parts[0] == "edge":
            count = int(parts[3])
            values = [float(v) * 72 for v in parts[4:4 + 2 * count]]
            key = (ids[int(parts[1][1:])], ids[int(parts[2][1:])])
            routes[key] = [[round(values[i], 1), round(height - values[i + 1], 1)] for i in range(0, len(values), 2)]
    return boxes, routes, size


def _owner_body(by_id: dict, body: str) -> str:
    """The body that holds the control-flow node owning `body` ("" at the top)."""
    return by_id[body.rstrip("/").rsplit("/", 1)[0]]["body"]


def clusters(shown: list[dict], boxes: dict, by_id: dict) -> list[dict]:
    """The box around each drawn body: its members' extent, nested bodies included, with a
    margin that grows with the nesting below it and room for the label on top."""
    extent: dict[str, list[float]] = {}
    below: dict[str, int] = {}                  # how many levels of bodies a body holds
    for node in shown:
        x, y, w, h = boxes[node["id"]]
        body, depth = node["body"], 0
        while body:
            left, top, right, bottom = extent.get(body, [x - w / 2, y - h / 2, x + w / 2, y + h / 2])
            extent[body] = [min(left, x - w / 2), min(top, y - h / 2), max(right, x + w / 2), max(bottom, y + h / 2)]
            below[body] = max(below.get(body, 0), depth)
            body, depth = _owner_body(by_id, body), depth + 1
    found = []
    for body, (left, top, right, bottom) in sorted(extent.items()):
        pad = 6 + 8 * below[body]
        found.append({"body": body, "label": cluster_label(by_id, body),
                      "rect": [left - pad, top - pad - 16 * (below[body] + 1), right - left + 2 * pad,
                               bottom - top + 2 * pad + 16 * (below[body] + 1)]})
    return found


def _pack(values, dtype: str) -> str:
    return base64.b64encode(np.asarray(values, dtype=dtype).tobytes()).decode("ascii")


#: the packed arrays of a layout and their element types
PACKED = {"boxes": "<f4", "tails": "<i4", "heads": "<i4", "dashed": "u1", "offsets": "<i4", "points": "<f4"}


def unpack(layout: dict) -> dict[str, np.ndarray]:
    """boxes (n, 4: centre x, centre y, width, height), and per arrow its tail and head (indices
    into `ids`), whether it is dashed (a body's), and its points: points[offsets[i]:offsets[i + 1]]
    (k, 2)."""
    found = {key: np.frombuffer(base64.b64decode(layout[key]), dtype=dtype) for key, dtype in PACKED.items()}
    found["boxes"] = found["boxes"].reshape(-1, 4)
    found["points"] = found["points"].reshape(-1, 2)
    return found


def lay_out(structure: dict, expanded: set[str], timeout: float | None = None) -> dict:
    """Positions for the nodes drawn with `expanded` open (see app.core.graph.structure):
    ids in drawing order, the packed arrays (`unpack`), the bodies' frames and the size."""
    from app.core.graph.structure import arrows, visible

    by_id = {n["id"]: n for n in structure["nodes"]}
    shown = visible(structure, expanded)
    joins = arrows(structure, shown, expanded)
    text, ids = dot_source(shown, joins, by_id)
    boxes, routes, size = parse_plain(run_dot(text, timeout), ids)
    index = {node_id: i for i, node_id in enumerate(ids)}
    drawn = [(a, routes[(a["tail"], a["head"])]) for a in joins if len(routes.get((a["tail"], a["head"]), [])) >= 2]
    offsets = np.cumsum([0] + [len(points) for _, points in drawn])
    return {"expanded": sorted(expanded), "ids": ids, "clusters": clusters(shown, boxes, by_id), "size": size,
            "arrow_count": len(drawn),
            "boxes": _pack([boxes[i] for i in ids], "<f4"),
            "tails": _pack([index[a["tail"]] for a, _ in drawn], "<i4"),
            "heads": _pack([index[a["head"]] for a, _ in drawn], "<i4"),
            "dashed": _pack([a["kind"] == "body" for a, _ in drawn], "u1"),
            "offsets": _pack(offsets, "<i4"),
            "points": _pack([p for _, points in drawn for p in points], "<f4")}
