"""The graphics view around the canvas: drag to pan, wheel to zoom, click to choose a
node, double-click to open or close a control-flow node, hover to name it."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPointF, Qt, Signal
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QGraphicsScene, QGraphicsView, QToolTip

from app.gui.panels.graph.canvas import TEXT_SCALE, GraphCanvas

ZOOM = (0.01, 4.0)
#: a centred node is shown at least this large
READABLE = 0.9
CLICK_SLOP = 4


class GraphView(QGraphicsView):
    node_clicked = Signal(str)          # id, "" for the background
    node_activated = Signal(str)        # double-click

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setScene(QGraphicsScene(self))
        self.scene().setItemIndexMethod(QGraphicsScene.ItemIndexMethod.NoIndex)
        self.canvas: GraphCanvas | None = None
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.MinimalViewportUpdate)
        self.setOptimizationFlags(QGraphicsView.OptimizationFlag.DontAdjustForAntialiasing
                                  | QGraphicsView.OptimizationFlag.DontSavePainterState)
        self.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        self._pressed: QPointF | None = None

    def show_canvas(self, canvas: GraphCanvas, background: QColor) -> None:
        self.scene().clear()
        self.canvas = canvas
        self.scene().addItem(canvas)
        self.scene().setSceneRect(canvas.boundingRect())
        self.setBackgroundBrush(background)

    def clear(self) -> None:
        self.scene().clear()
        self.canvas = None

    # where the view looks --------------------------------------------------------------
    def scale_now(self) -> float:
        return self.transform().m11()

    def zoom_to(self, scale: float) -> None:
        scale = min(ZOOM[1], max(ZOOM[0], scale))
        factor = scale / self.scale_now()
        self.scale(factor, factor)

    def start_view(self) -> None:
        """Where a model is read from: its first input, at a zoom whose labels read (the
        whole width when that is as readable), the input near the top-left of the view."""
        if self.canvas is None:
            return
        rect = self.canvas.boundingRect()
        self.resetTransform()
        self.zoom_to(max(READABLE, min(1.0, (self.viewport().width() - 10) / max(rect.width(), 1))))
        scale, width, height = self.scale_now(), self.viewport().width(), self.viewport().height()
        entries = [r for r, n in zip(self.canvas.rects, self.canvas.nodes) if n["kind"] == "input"] or \
            self.canvas.rects[:1]
        start = min(entries, key=lambda r: (r.top(), r.left())) if entries else rect
        x = max(rect.left() + width / 2 / scale, start.center().x()) if rect.width() * scale > width else \
            rect.center().x()
        self.centerOn(x, max(rect.top(), start.top() - 20) + height / 2 / scale)

    def fit(self) -> None:
        """The whole drawing where its labels still read at that size; a drawing too tall for
        that (a long chain would be a thin line) fitted to its width at the smallest readable
        zoom instead, from the top."""
        if self.canvas is None:
            return
        rect = self.canvas.boundingRect()
        width, height = self.viewport().width(), self.viewport().height()
        whole = min(width / max(rect.width(), 1), height / max(rect.height(), 1))
        if whole >= TEXT_SCALE:
            self.fitInView(rect, Qt.AspectRatioMode.KeepAspectRatio)
            return
        self.resetTransform()
        self.zoom_to(max(whole, min(TEXT_SCALE, width / max(rect.width(), 1))))
        scale = self.scale_now()
        self.centerOn(rect.center().x(), rect.top() + height / 2 / scale)

    def centre_on(self, index: int) -> None:
        rect = self.canvas.rects[index]
        if self.scale_now() < READABLE:
            self.zoom_to(1.0)
        self.centerOn(rect.center())

    # input -------------------------------------------------------------------------------
    def wheelEvent(self, event) -> None:
        steps = event.angleDelta().y() / 120
        if steps:
            self.zoom_to(self.scale_now() * 1.15 ** steps)

    def mousePressEvent(self, event) -> None:
        self._pressed = event.position()
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        super().mouseReleaseEvent(event)
        pressed, self._pressed = self._pressed, None
        if pressed is None or self.canvas is None or event.button() != Qt.MouseButton.LeftButton:
            return
        if (event.position() - pressed).manhattanLength() <= CLICK_SLOP:
            index = self.canvas.node_at(self.mapToScene(event.position().toPoint()))
            self.node_clicked.emit("" if index is None else self.canvas.ids[index])

    def mouseDoubleClickEvent(self, event) -> None:
        if self.canvas is not None:
            index = self.canvas.node_at(self.mapToScene(event.position().toPoint()))
            if index is not None:
                self.node_activated.emit(self.canvas.ids[index])

    def viewportEvent(self, event) -> bool:
        if event.type() == QEvent.Type.ToolTip and self.canvas is not None:
            index = self.canvas.node_at(self.mapToScene(event.pos()))
            if index is None:
                QToolTip.hideText()
            else:
                node = self.canvas.nodes[index]
                QToolTip.showText(event.globalPos(), f"{node['op_type']} · {node['name']}", self)
            return True
        return super().viewportEvent(event)
