"""The drawn model as one scene item that paints only what is exposed.

One item for the whole drawing, not one per node: a 20,000-node model would otherwise
cost 45,000 Python items to make and a Python paint call per item each frame. The
boxes and arrows live in numpy arrays; a paint finds the exposed ones with a mask, fills
boxes of one colour in one call, and draws text (from cached QStaticText) only where it
is readable. Zoomed out past TEXT_SCALE (level of detail): plain boxes, straight arrows,
no text and no antialiasing."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainterPath, QPen, QStaticText, QTransform
from PySide6.QtWidgets import QGraphicsItem

#: below this scale (screen pixels per point) the drawing drops text, curves and antialiasing
TEXT_SCALE = 0.45
#: ... and below this one the body frames' titles
TITLE_SCALE = 0.2

FAMILIES = {
    "compute": {"Conv", "ConvTranspose", "Gemm", "MatMul", "MatMulNBits", "MatMulInteger", "QLinearConv",
                "QLinearMatMul", "Attention", "MultiHeadAttention", "GroupQueryAttention", "FusedConv",
                "FusedMatMul", "FusedGemm", "QGemm", "LSTM", "GRU", "RNN", "Einsum"},
    "activation": {"Relu", "LeakyRelu", "PRelu", "Sigmoid", "Tanh", "Gelu", "FastGelu", "BiasGelu", "Elu",
                   "Selu", "HardSigmoid", "HardSwish", "Softplus", "Mish", "Erf", "Clip", "QuickGelu"},
    "normalise": {"BatchNormalization", "LayerNormalization", "InstanceNormalization", "GroupNormalization",
                  "SkipLayerNormalization", "SimplifiedLayerNormalization", "SkipSimplifiedLayerNormalization",
                  "RMSNormalization", "Softmax", "LogSoftmax", "LpNormalization"},
    "pool": {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "ReduceMean", "ReduceSum",
             "ReduceMax", "ReduceMin", "LpPool", "ArgMax", "ArgMin", "TopK"},
    "shape": {"Reshape", "Transpose", "Concat", "Gather", "Slice", "Squeeze", "Unsqueeze", "Shape", "Flatten",
              "Identity", "Cast", "Expand", "Split", "Constant", "ConstantOfShape", "Pad", "Tile", "Range",
              "GatherElements", "GatherND", "Resize", "Upsample", "Size", "DepthToSpace", "SpaceToDepth"},
    "control": {"If", "Loop", "Scan"},
}
WORDS = {"compute": "Conv, MatMul, Gemm…", "activation": "activations", "normalise": "normalisation, Softmax",
         "pool": "pooling, reductions", "shape": "shape and data movement", "control": "If, Loop, Scan",
         "other": "other operators", "io": "graph inputs and outputs"}
LIGHT = {"compute": "#c9dcf2", "activation": "#f5d3cc", "normalise": "#d3ebd3", "pool": "#e3d9f1",
         "shape": "#e8e8e8", "control": "#f9e3a6", "other": "#f1e6d2", "io": "#ffffff"}
DARK = {"compute": "#2f4a6b", "activation": "#6b3a33", "normalise": "#35593a", "pool": "#4d3f66",
        "shape": "#44474c", "control": "#6b5a26", "other": "#5a4d3a", "io": "#23262b"}


def family(node: dict) -> str:
    if node["kind"] != "op":
        return "io"
    return next((name for name, ops in FAMILIES.items() if node["op_type"] in ops), "other")


def _route(points: list) -> QPainterPath:
    """The arrow's curve (dot's cubic B-spline pieces) with a small head along its last tangent."""
    path = QPainterPath()
    path.moveTo(*points[0])
    for i in range(1, len(points) - 2, 3):
        path.cubicTo(*points[i], *points[i + 1], *points[i + 2])
    (x0, y0), (x1, y1) = points[-2], points[-1]
    if (x0, y0) != (x1, y1):
        angle = math.atan2(y0 - y1, x0 - x1)
        for turn in (-0.45, 0.45):
            path.moveTo(x1, y1)
            path.lineTo(x1 + 6 * math.cos(angle + turn), y1 + 6 * math.sin(angle + turn))
    return path


def _straight(points: list) -> list[QLineF]:
    """The arrow's stand-in for the zoomed-out drawing: start, middle and end joined."""
    a, b, c = points[0], points[len(points) // 2], points[-1]
    return [QLineF(*a, *b), QLineF(*b, *c)]


class GraphCanvas(QGraphicsItem):
    def __init__(self, picture: dict, dark: bool = False):
        super().__init__()
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption)
        from app.core.graph.layout import unpack

        self.picture = picture                  # what a copy made for a picture export is made from
        structure, layout = picture["structure"], picture["layout"]
        by_id = {n["id"]: n for n in structure["nodes"]}
        self.dark = dark
        self.expanded = set(layout["expanded"])
        self.ids = list(layout["ids"])
        self.index = {node_id: i for i, node_id in enumerate(self.ids)}
        self.nodes = [by_id[i] for i in self.ids]
        packed = unpack(layout)
        boxes = packed["boxes"].astype(np.float64)
        self.bounds = np.column_stack([boxes[:, 0] - boxes[:, 2] / 2, boxes[:, 1] - boxes[:, 3] / 2,
                                       boxes[:, 0] + boxes[:, 2] / 2, boxes[:, 1] + boxes[:, 3] / 2])
        self.rects = [QRectF(x0, y0, x1 - x0, y1 - y0) for x0, y0, x1, y1 in self.bounds.tolist()]
        colours = DARK if dark else LIGHT
        self.palette = [QColor(colours[name]) for name in colours]
        names = list(colours)
        self.base_fill = np.array([names.index(family(n)) for n in self.nodes], dtype=np.int32)
        self.fill = self.base_fill.copy()
        self.points, self.offsets = packed["points"].astype(np.float64), packed["offsets"]
        self.dashed = packed["dashed"].astype(bool)
        self._paths: dict[int, QPainterPath] = {}          # made when first painted
        self._lines: dict[int, list[QLineF]] = {}
        # a cubic piece stays inside its control points' box; the head adds its 6 points
        starts = self.offsets[:-1]
        if starts.size:
            low = np.minimum.reduceat(self.points, starts, axis=0) - 6
            high = np.maximum.reduceat(self.points, starts, axis=0) + 6
            self.edge_bounds = np.column_stack([low, high])
        else:
            self.edge_bounds = np.zeros((0, 4))
        self.frames = [(QRectF(*c["rect"]), c["label"]) for c in layout["clusters"]]
        width, height = layout["size"] or [0, 0]
        extent = QRectF(0, 0, width, height)
        for frame, _ in self.frames:
            extent = extent.united(frame)
        self._rect = extent.adjusted(-20, -20, 20, 20)
        self.selected: int | None = None
        self.marked: set[int] = set()
        self.op_font, self.name_font = QFont(), QFont()
        self.op_font.setPixelSize(11)
        self.op_font.setBold(True)
        self.name_font.setPixelSize(8)
        self._texts: dict[int, tuple] = {}
        ink = QColor("#e6e6e6" if dark else "#202020")
        self.ink, self.edge_pen = ink, QPen(QColor("#8c96a0" if dark else "#7a8490"), 0)
        self.light_ink = QColor("#f4f4f4") if not dark else ink
        self.outline = QPen(QColor("#9aa3ad" if dark else "#6c7580"), 0)

    # what the panel sets ---------------------------------------------------------------
    def set_fill(self, fill: np.ndarray | None, palette: list[QColor] | None = None) -> None:
        """Colour index per node into `palette` (None: the operator families' colours)."""
        if fill is None:
            colours = DARK if self.dark else LIGHT
            self.palette, self.fill = [QColor(colours[n]) for n in colours], self.base_fill.copy()
        else:
            self.palette, self.fill = list(palette), np.asarray(fill, dtype=np.int32)
        self.update()

    def select(self, index: int | None) -> None:
        self.selected = index
        self.update()

    def mark(self, indices) -> None:
        self.marked = set(indices)
        self.update()

    def node_at(self, point: QPointF) -> int | None:
        b = self.bounds
        hit = np.nonzero((b[:, 0] <= point.x()) & (b[:, 2] >= point.x()) & (b[:, 1] <= point.y())
                         & (b[:, 3] >= point.y()))[0]
        return int(hit[-1]) if hit.size else None

    # painting --------------------------------------------------------------------------
    def boundingRect(self) -> QRectF:
        return self._rect

    def _points(self, i: int) -> list:
        return self.points[self.offsets[i]:self.offsets[i + 1]].tolist()

    def _text(self, i: int) -> tuple:
        if i not in self._texts:
            node = self.nodes[i]
            width = self.rects[i].width() - 6
            if node["kind"] == "op":
                top = QStaticText(node["op_type"] + (" ▸" if node["bodies"] and node["id"] not in self.expanded
                                                     else " ▾" if node["bodies"] else ""))
                name = QFontMetricsF(self.name_font).elidedText(node["name"], Qt.TextElideMode.ElideMiddle, width)
                self._texts[i] = (top, QStaticText(name))
            else:
                label = QFontMetricsF(self.op_font).elidedText(node["name"], Qt.TextElideMode.ElideMiddle, width)
                self._texts[i] = (QStaticText(label), None)
            for text, font in zip(self._texts[i], (self.op_font, self.name_font)):
                if text is not None:
                    text.setPerformanceHint(QStaticText.PerformanceHint.AggressiveCaching)
                    text.prepare(QTransform(), font)
        return self._texts[i]

    def paint(self, painter, option, widget=None) -> None:
        exposed = option.exposedRect
        scale = option.levelOfDetailFromTransform(painter.worldTransform())
        x0, y0, x1, y1 = exposed.left(), exposed.top(), exposed.right(), exposed.bottom()
        b, e = self.bounds, self.edge_bounds
        shown = np.nonzero((b[:, 2] >= x0) & (b[:, 0] <= x1) & (b[:, 3] >= y0) & (b[:, 1] <= y1))[0]
        routes = np.nonzero((e[:, 2] >= x0) & (e[:, 0] <= x1) & (e[:, 3] >= y0) & (e[:, 1] <= y1))[0]
        detailed = scale >= TEXT_SCALE
        painter.setRenderHint(painter.RenderHint.Antialiasing, detailed)
        self._paint_frames(painter, exposed, scale)
        painter.setPen(self.edge_pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        if detailed:
            dashed = QPen(self.edge_pen)
            dashed.setStyle(Qt.PenStyle.DashLine)
            for i in routes.tolist():
                if i not in self._paths:
                    self._paths[i] = _route(self._points(i))
                painter.setPen(dashed if self.dashed[i] else self.edge_pen)
                painter.drawPath(self._paths[i])
        elif routes.size:
            lines = self._lines
            for i in routes.tolist():
                if i not in lines:
                    lines[i] = _straight(self._points(i))
            painter.drawLines([line for i in routes.tolist() for line in lines[i]])
        painter.setPen(self.outline if scale >= TITLE_SCALE else Qt.PenStyle.NoPen)
        fills = self.fill[shown]
        for colour in np.unique(fills).tolist():
            painter.setBrush(self.palette[colour])
            painter.drawRects([self.rects[i] for i in shown[fills == colour].tolist()])
        if detailed:
            self._paint_text(painter, shown)
        self._paint_marks(painter, scale)

    def _paint_frames(self, painter, exposed: QRectF, scale: float) -> None:
        painter.setPen(QPen(QColor("#b08a2e"), 0, Qt.PenStyle.DashLine))
        painter.setBrush(QColor(176, 138, 46, 18))
        for frame, label in self.frames:
            if frame.intersects(exposed):
                painter.drawRect(frame)
                if scale >= TITLE_SCALE:
                    painter.setFont(self.name_font)
                    painter.drawText(frame.adjusted(6, 3, -6, 0), Qt.AlignmentFlag.AlignLeft, label)

    def _paint_text(self, painter, shown: np.ndarray) -> None:
        """Operator lines, then the names: one font change per pass, not per node; light
        text on the dark colours of a palette, dark text on the others."""
        dark_fill = np.array([colour.lightness() < 120 for colour in self.palette])
        light = dark_fill[self.fill[shown]] if shown.size else np.zeros(0, dtype=bool)
        texts = [(i, *self._text(i)) for i in shown.tolist()]
        for font, line in ((self.op_font, 1), (self.name_font, 2)):
            painter.setFont(font)
            for inked, pen in ((False, self.ink), (True, self.light_ink)):
                painter.setPen(pen)
                for (i, top, name), on_dark in zip(texts, light.tolist()):
                    if on_dark != inked:
                        continue
                    rect = self.rects[i]
                    if line == 1:
                        size = top.size()
                        y = rect.top() + 3 if name is not None else rect.center().y() - size.height() / 2
                        painter.drawStaticText(QPointF(rect.center().x() - size.width() / 2, y), top)
                    elif name is not None:
                        size = name.size()
                        painter.drawStaticText(QPointF(rect.center().x() - size.width() / 2,
                                                       rect.bottom() - size.height() - 3), name)

    def _paint_marks(self, painter, scale: float) -> None:
        painter.setBrush(Qt.BrushStyle.NoBrush)
        width = max(2.0, 2.5 / max(scale, 1e-3))
        if self.marked:
            painter.setPen(QPen(QColor("#e69a28"), width))
            painter.drawRects([self.rects[i].adjusted(-2, -2, 2, 2) for i in self.marked])
        if self.selected is not None:
            painter.setPen(QPen(QColor("#1f6fb2" if not self.dark else "#4f9dde"), width * 1.4))
            painter.drawRect(self.rects[self.selected].adjusted(-4, -4, 4, 4))
