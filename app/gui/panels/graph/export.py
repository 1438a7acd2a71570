"""The drawing saved as a picture: PNG (at the drawing's own size, smaller where that would
be too large an image) or SVG (QSvgGenerator: the boxes, arrows and text as vectors).
Each is written beside the target and renamed into place.

A PNG of a large model takes seconds to paint and compress, so it is made in a thread of
its own (PngExport), from a copy of the drawing: the window's canvas keeps painting the
view meanwhile, and a QImage may be painted outside the GUI thread."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QRectF, QSize, Qt, QThread, Signal
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QStyleOptionGraphicsItem

#: the longest side and the most pixels a PNG gets
LONGEST = 16000
MOST_PIXELS = 120_000_000


def _render(scene, painter, source: QRectF, target: QRectF) -> None:
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    scene.render(painter, target, source, Qt.AspectRatioMode.KeepAspectRatio)
    painter.end()


def _part(path: Path) -> Path:
    return path.with_name(f".{path.stem}.{os.getpid()}.part{path.suffix}")


def png_size(source: QRectF) -> tuple[QSize, float]:
    scale = min(2.0, LONGEST / max(source.width(), source.height(), 1),
                (MOST_PIXELS / max(source.width() * source.height(), 1)) ** 0.5)
    return QSize(max(1, int(source.width() * scale)), max(1, int(source.height() * scale))), scale


def export_png(canvas, path: str | os.PathLike, background: QColor) -> QSize:
    """Paint `canvas` (a GraphCanvas no view shows) into a PNG at `path`."""
    path = Path(path)
    source = canvas.boundingRect()
    size, scale = png_size(source)
    image = QImage(size, QImage.Format.Format_ARGB32)
    image.fill(background)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    painter.scale(scale, scale)
    painter.translate(-source.left(), -source.top())
    option = QStyleOptionGraphicsItem()
    option.exposedRect = source
    canvas.paint(painter, option)
    painter.end()
    part = _part(path)
    if not image.save(str(part), "PNG"):
        raise OSError(f"could not write {path}")
    os.replace(part, path)
    return size


class PngExport(QThread):
    """export_png of a copy of the shown drawing (same picture, colours and selection), in
    this thread; `saved` or `failed` say how it went, in the GUI thread."""
    saved = Signal(str)
    failed = Signal(str)

    def __init__(self, shown, path: str, background: QColor):
        super().__init__()
        self.picture, self.dark = shown.picture, shown.dark
        self.fill, self.palette = shown.fill.copy(), [QColor(c) for c in shown.palette]
        self.path, self.background = str(path), QColor(background)

    def run(self) -> None:
        from app.gui.panels.graph.canvas import GraphCanvas

        try:
            canvas = GraphCanvas(self.picture, dark=self.dark)
            canvas.set_fill(self.fill, self.palette)
            export_png(canvas, self.path, self.background)
        except OSError as exc:
            self.failed.emit(str(exc))
        else:
            self.saved.emit(self.path)


def export_svg(scene, source: QRectF, path: str | os.PathLike, title: str) -> None:
    from PySide6.QtSvg import QSvgGenerator

    path = Path(path)
    part = _part(path)
    generator = QSvgGenerator()
    generator.setFileName(str(part))
    generator.setSize(QSize(int(source.width()), int(source.height())))
    generator.setViewBox(QRectF(0, 0, source.width(), source.height()))
    generator.setTitle(title)
    _render(scene, QPainter(generator), source, QRectF(0, 0, source.width(), source.height()))
    if not part.is_file():
        raise OSError(f"could not write {path}")
    os.replace(part, path)
