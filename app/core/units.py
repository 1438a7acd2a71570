"""Numbers as people read them."""

from __future__ import annotations


def human_bytes(count: float | None) -> str:
    if count is None:
        return "?"
    value = float(count)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(value) < 1024 or unit == "TB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TB"


def shape_text(shape) -> str:
    if shape is None:
        return "(unknown rank)"
    return "[" + ", ".join(str(d) for d in shape) + "]"
