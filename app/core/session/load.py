"""Was the machine busy while something was timed? The CPU time other processes took
during a span, from the system's CPU times less this process's own.

A profile taken while another program computes says more about that program than about
the model: an operator that waits for a core looks slow, runs vary from one to the next.
So the diagnosis watches the load while it profiles and times, and a busy machine gets a
finding of its own instead of the operators and settings being blamed."""

from __future__ import annotations

import time
from dataclasses import dataclass

#: other processes' average use, in cores, past which the figures are disturbed: at least
#: half a core, or a tenth of the machine's logical cores on a large one
BUSY_CORES = 0.5
BUSY_SHARE = 0.1
_IDLE_FIELDS = ("idle", "iowait", "guest", "guest_nice")   # guest time is counted in user already


def _busy_seconds(times) -> float:
    return sum(getattr(times, name) for name in times._fields if name not in _IDLE_FIELDS)


def _own_seconds(times) -> float:
    """This process's own threads (its children, such as a spinner a test starts, are others)."""
    return times.user + times.system


@dataclass
class Load:
    seconds: float          # wall time watched
    other_cores: float      # other processes' CPU time over it
    own_cores: float        # this process's
    cores: int              # logical cores

    @property
    def busy(self) -> bool:
        return self.other_cores >= max(BUSY_CORES, BUSY_SHARE * self.cores)

    def to_dict(self) -> dict:
        return {"seconds": self.seconds, "other_cores": self.other_cores, "own_cores": self.own_cores,
                "cores": self.cores, "busy": self.busy}


class LoadWatch:
    """Started on creation; `stop()` gives the Load since then."""

    def __init__(self):
        import psutil

        self._psutil = psutil
        self._process = psutil.Process()
        self._wall = time.monotonic()
        self._system = _busy_seconds(psutil.cpu_times())
        self._own = _own_seconds(self._process.cpu_times())

    def stop(self) -> Load:
        wall = max(time.monotonic() - self._wall, 1e-6)
        system = _busy_seconds(self._psutil.cpu_times()) - self._system
        own = _own_seconds(self._process.cpu_times()) - self._own
        return Load(wall, max(0.0, system - own) / wall, own / wall, self._psutil.cpu_count() or 1)


def busy_note(load: dict | None) -> str:
    """One sentence for a result timed while other programs kept the machine busy (its
    "load", Load.to_dict), the same wherever a time is shown; "" on a quiet machine."""
    if not load or not load.get("busy"):
        return ""
    return (f"the machine was busy: other programs used {load['other_cores']:.1f} of {load['cores']} logical cores "
            f"while this was timed, so these times include waits for a core and can differ from another tab's")
