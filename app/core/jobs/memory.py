"""The memory budget a job child runs within: how it is written ("75%", "4G", "512M"), what it
comes to in bytes when the child starts, and how much a process holds now.

The parent enforces it (app.core.runner.process): it samples the child's resident memory and
ends the child past the budget with a message that says which inputs it ran on, instead of
leaving it to the system's out-of-memory killer, which ends whatever it likes, the window
included. The child knows its budget too, so the input probe can call a run too big before
the parent has to step in."""

from __future__ import annotations

import os
import re
import sys

from app.core.jobs.errors import UserError

#: the default budget: this share of the memory available when the child starts
DEFAULT_LIMIT = "75%"
_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_LIMIT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(%|[KMGT]?)(?:I?B)?\s*$", re.I)
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def parse_memory_limit(text: str, flag: str = "--memory-limit") -> tuple[float, str]:
    """(amount, unit): (75.0, "%") for a share of the available memory, (bytes, "B") otherwise."""
    match = _LIMIT.match(str(text))
    if not match:
        raise UserError("bad-option", f"{flag} expects a size such as 4G, 512M or 75%, not {text!r}")
    amount, unit = float(match.group(1)), match.group(2).upper()
    if unit == "%":
        if not 0 < amount <= 100:
            raise UserError("bad-option", f"{flag} as a share must be between 0 and 100 %, not {text!r}")
        return amount, "%"
    size = amount * _UNITS[unit]
    if size < 16 << 20:
        raise UserError("bad-option", f"{flag} must be at least 16M, not {text!r}")
    return size, "B"


def available_bytes() -> int:
    import psutil
    return int(psutil.virtual_memory().available)


def budget_bytes(limit: str | None = None) -> int:
    """The budget in bytes a child starting now gets under `limit` (DEFAULT_LIMIT if None)."""
    amount, unit = parse_memory_limit(limit or DEFAULT_LIMIT)
    return int(available_bytes() * amount / 100) if unit == "%" else int(amount)


def rss_bytes(pid: int | None = None) -> int | None:
    """Resident memory of process `pid` (this one if None); None once it is gone."""
    if sys.platform.startswith("linux"):
        try:
            with open(f"/proc/{pid or 'self'}/statm", "rb") as status:
                return int(status.read().split()[1]) * _PAGE
        except (OSError, ValueError, IndexError):
            return None
    import psutil
    try:
        return int(psutil.Process(pid).memory_info().rss)
    except (psutil.Error, OSError):
        return None


def gib(count: float) -> str:
    return f"{count / 2**30:.2f} GiB" if count < 10 * 2**30 else f"{count / 2**30:.0f} GiB"


def over_budget_message(budget: int, inputs: list[dict] | None) -> str:
    """What the user reads when a job went past its budget, with the inputs it ran on."""
    shown = ", ".join(f"{row['name']} {row['shape']}" for row in inputs or [])
    return (f"the job needed more than {gib(budget)}, its memory budget"
            + (f", with inputs {shown}" if shown else "")
            + "; set smaller dims (--dim NAME=N, or the Session tab's Inputs table) "
              "or raise the budget with --memory-limit")
