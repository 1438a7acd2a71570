"""How fast the Graph tab shows a large model, and how smoothly it pans.

For generated models of 1,000, 5,000 and 20,000 nodes (residual blocks of elementwise
operators: a main line, one to three branches per block, a merge; shaped like a deep CNN
or transformer), offscreen:
- time to first picture: from starting the drawing job (a child process, as the window
  does, with an empty cache) until the scene is built and painted; its parts: the layout
  as the job reports it, the scene build; and the same with the layout in the cache;
- the window while the job runs: the longest gap between ticks of a 10 ms timer in the
  window's thread (the layout itself runs in the child);
- frame times while panning a 1600x1000 view in 40-pixel steps, at 100 % (text drawn) and
  at 15 % (boxes only): each frame is a scroll and the paint it causes; of that, the
  drawing's own paint; and, for scale, the same pan over an empty scene.
Prints one JSON object. Goals: 5,000 nodes within 3 s, p99 pan frame at most 16 ms.

    nice -n 10 python benchmarks/graph_view.py [--sizes 1000 5000 20000] [--steps 200]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

UNARY = ["Relu", "Sigmoid", "Tanh", "Neg", "Abs", "Softsign"]


def generated_model(nodes: int, seed: int = 0):
    import onnx
    from onnx import TensorProto, helper

    rnd = random.Random(seed)
    made, current, count = [], "x", 0
    while count < nodes:
        block, ends = len(made), []
        for branch in range(rnd.choice([1, 2, 3])):
            tensor = current
            for step in range(rnd.randint(1, rnd.choice([3, 5, 8]))):
                out = f"b{block}_{branch}_{step}"
                made.append(helper.make_node(rnd.choice(UNARY), [tensor], [out], name=f"block{block}/{branch}/{step}"))
                tensor, count = out, count + 1
            ends.append(tensor)
        merged = f"b{block}_sum"
        made.append(helper.make_node("Sum", [current, *ends], [merged], name=f"block{block}/sum"))
        current, count = merged, count + 1
    value = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, 8])  # noqa: E731
    graph = helper.make_graph(made, "generated", [value("x")], [value(current)])
    return onnx.helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def first_picture(app, manager, path: Path, view) -> dict:
    """Start the drawing job, wait for its picture, build and paint the scene (`manager`: the
    window's JobManager, which lives as long as the window)."""
    from PySide6.QtCore import QElapsedTimer, QTimer
    from PySide6.QtGui import QColor

    from app.core.graph.jobs import DRAW
    from app.gui.panels.graph.canvas import GraphCanvas

    seen, gaps = {}, []
    clock, tick = QElapsedTimer(), QTimer()
    tick.setInterval(10)
    last = [0.0]

    def ticked() -> None:
        now = clock.nsecsElapsed() / 1e6
        gaps.append(now - last[0])
        last[0] = now

    def pictured(kind: str, payload: dict) -> None:
        if kind != "picture" or "built" in seen:
            return
        seen["arrived"] = clock.nsecsElapsed() / 1e6
        tick.stop()
        canvas = GraphCanvas(payload)
        view.show_canvas(canvas, QColor("white"))
        view.start_view()
        view.viewport().repaint()
        seen["built"] = clock.nsecsElapsed() / 1e6
        seen["payload"] = payload

    tick.timeout.connect(ticked)
    clock.start()
    tick.start()
    job = manager.start("draw", DRAW, {"path": str(path)}, on_data=pictured,
                        on_result=lambda _r: seen.setdefault("done", True),
                        on_error=lambda exc: seen.setdefault("error", str(exc)))
    while job.ended_at is None:
        app.processEvents()
        time.sleep(0.002)
    if "error" in seen:
        raise RuntimeError(seen["error"])
    payload = seen["payload"]
    return {"first_picture_s": round(seen["built"] / 1000, 3), "layout_s": payload["seconds"],
            "layout_cpu_s": payload.get("cpu_seconds"),
            "cached": payload["cached"], "scene_build_s": round((seen["built"] - seen["arrived"]) / 1000, 3),
            "window_longest_gap_while_laying_out_ms": round(max(gaps[1:] or [0.0]), 1),
            "drawn_nodes": len(payload["layout"]["ids"]), "arrows": payload["layout"]["arrow_count"]}


def pan_frames(app, view, scale: float, steps: int) -> dict:
    """Frames of a pan: a scroll and the paint it causes (and, of that, the canvas's own paint)."""
    canvas, painting = view.canvas, []
    paint = canvas.paint

    def timed(*args) -> None:
        started = time.perf_counter()
        paint(*args)
        painting.append((time.perf_counter() - started) * 1000)

    canvas.paint = timed
    view.start_view()
    view.zoom_to(scale)
    bar = view.verticalScrollBar()
    across = view.horizontalScrollBar()
    bar.setValue(bar.minimum())
    app.processEvents()
    times, direction = [], 1
    painting.clear()
    for step in range(steps):
        if not bar.minimum() < bar.value() + direction * 40 < bar.maximum():
            direction = -direction
        started = time.perf_counter()
        bar.setValue(bar.value() + direction * 40)
        if step % 5 == 4:                                   # a little sideways now and then
            across.setValue(across.value() + (20 if step % 10 == 4 else -20))
        app.processEvents()
        times.append((time.perf_counter() - started) * 1000)
    canvas.paint = paint
    return {"scale": scale, "frames": len(times), "p50_ms": round(_percentile(times, 0.5), 2),
            "p99_ms": round(_percentile(times, 0.99), 2), "max_ms": round(max(times), 2),
            "canvas_paint_p50_ms": round(_percentile(painting, 0.5), 2),
            "canvas_paint_p99_ms": round(_percentile(painting, 0.99), 2)}


def empty_scene_frames(app, steps: int) -> dict:
    """The same pan over a scene with one small item: what the platform and the machine
    cost per frame before the drawing paints anything."""
    from PySide6.QtCore import QRectF
    from PySide6.QtWidgets import QGraphicsScene, QGraphicsView

    scene = QGraphicsScene()
    scene.setSceneRect(QRectF(0, 0, 600, 200000))
    scene.addRect(0, 0, 10, 10)
    view = QGraphicsView(scene)
    view.resize(1600, 1000)
    view.show()
    app.processEvents()
    bar, times = view.verticalScrollBar(), []
    for _ in range(steps):
        started = time.perf_counter()
        bar.setValue(bar.value() + 40)
        app.processEvents()
        times.append((time.perf_counter() - started) * 1000)
    view.close()
    return {"frames": len(times), "p50_ms": round(_percentile(times, 0.5), 2),
            "p99_ms": round(_percentile(times, 0.99), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000, 20000])
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="ortune-graph-bench-"))
    os.environ["ORTUNE_CACHE_DIR"] = str(folder / "cache")      # empty: the first open lays out

    from PySide6.QtWidgets import QApplication

    import onnx

    from app.gui.panels.graph.view import GraphView
    from app.gui.shell.jobs import JobManager

    app = QApplication.instance() or QApplication([])
    manager = JobManager(app)
    view = GraphView()
    view.resize(1600, 1000)
    view.show()
    figures = []
    for size in args.sizes:
        path = folder / f"generated_{size}.onnx"
        onnx.save(generated_model(size), path)
        fresh = first_picture(app, manager, path, view)
        cached = first_picture(app, manager, path, view)
        figures.append({"nodes": size, **fresh,
                        "first_picture_cached_s": cached["first_picture_s"],
                        "pan": [pan_frames(app, view, scale, args.steps) for scale in (1.0, 0.15)]})
    five = next((f for f in figures if f["nodes"] == 5000), None)
    print(json.dumps({
        "benchmark": "graph_view", "viewport": [1600, 1000], "cpu_count": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()], "sizes": figures,
        "empty_scene_pan": empty_scene_frames(app, args.steps),
        "goals": {"first_picture_5000_s": 3.0, "pan_p99_ms": 16.0},
        "met": {"first_picture_5000": five is not None and five["first_picture_s"] <= 3.0,
                "pan_p99": all(p["p99_ms"] <= 16.0 for f in figures for p in f["pan"])},
    }, indent=2))
    manager.shutdown()


if __name__ == "__main__":
    main()
