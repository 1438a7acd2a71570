"""What the CPU can do for int8: VNNI (x86) or dot-product instructions (Arm)."""

from __future__ import annotations

import platform
from pathlib import Path

INT8_FLAGS = ("avx512_vnni", "avx_vnni", "amx_int8", "asimddp", "i8mm")


def cpu_description() -> tuple[str, set[str]]:
    """(model name, instruction-set flags); flags are empty where the OS does not tell."""
    name, flags = platform.processor() or platform.machine(), set()
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return name, flags
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip().lower()
        if key == "model name" and value.strip():
            name = value.strip()
        elif key in ("flags", "features"):
            flags.update(value.split())
    return name, flags


def int8_acceleration(flags: set[str]) -> list[str]:
    return [flag for flag in INT8_FLAGS if flag in flags]
