"""The drawing saved as a picture: PNG (at the drawing's own size, smaller where that would
be too large an image) or SVG (QSvgGenerator: the boxes, arrows and text as vectors).
Each is written beside the target and renamed into place."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter

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


def export_png(scene, source: QRectF, path: str | os.PathLike, background: QColor) -> QSize:
    path = Path(path)
    scale = min(2.0, LONGEST / max(source.width(), source.height(), 1),
                (MOST_PIXELS / max(source.width() * source.height(), 1)) ** 0.5)
    size = QSize(max(1, int(source.width() * scale)), max(1, int(source.height() * scale)))
    image = QImage(size, QImage.Format.Format_ARGB32)
    image.fill(background)
    _render(scene, QPainter(image), source, QRectF(0, 0, size.width(), size.height()))
    part = _part(path)
    if not image.save(str(part), "PNG"):
        raise OSError(f"could not write {path}")
    os.replace(part, path)
    return size


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
