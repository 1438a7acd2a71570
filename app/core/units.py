"""Numbers and messages as people read them."""

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


def first_line(text: str, limit: int = 300) -> str:
    """The first line of a message, its spaces collapsed, at most `limit` characters."""
    line = " ".join(str(text).strip().split("\n")[0].split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
