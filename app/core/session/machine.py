"""The machine a result was measured on, and what a process uses of it.

Every stored result carries `describe_machine()`, so a number from last month can
be told apart from one taken on another computer. GPU facts come from NVML
(nvidia-ml-py) only when it is installed and a driver answers."""

from __future__ import annotations

import os
import platform
import sys
from functools import lru_cache


def _cpu_model() -> str:
    if sys.platform.startswith("linux"):
        try:
            with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
                for line in handle:
                    if line.lower().startswith("model name"):
                        return line.split(":", 1)[1].strip()
        except OSError:
            pass
    if sys.platform == "darwin":
        import subprocess
        try:
            return subprocess.run(["sysctl", "-n", "machdep.cpu.brand_string"], capture_output=True,
                                  text=True, timeout=5).stdout.strip() or platform.processor()
        except (OSError, subprocess.SubprocessError):
            pass
    return platform.processor() or platform.machine()


class _Nvml:
    """NVML, opened once per process; `ok` is False without the package or a driver."""

    def __init__(self):
        self.ok = False
        try:
            import pynvml
            pynvml.nvmlInit()
            self.count = pynvml.nvmlDeviceGetCount()
        except Exception:  # no package, no library, no driver: all mean "no NVIDIA GPU to ask"
            return
        self.pynvml = pynvml
        self.ok = self.count > 0

    def handles(self):
        return [self.pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(self.count)]


@lru_cache(maxsize=1)
def _nvml() -> _Nvml:
    return _Nvml()


def gpus() -> list[dict]:
    """The NVIDIA GPUs NVML sees: name, total memory, driver."""
    nvml = _nvml()
    if not nvml.ok:
        return []
    result = []
    try:
        driver = nvml.pynvml.nvmlSystemGetDriverVersion()
        for handle in nvml.handles():
            name = nvml.pynvml.nvmlDeviceGetName(handle)
            result.append({"name": name.decode() if isinstance(name, bytes) else str(name),
                           "memory_bytes": int(nvml.pynvml.nvmlDeviceGetMemoryInfo(handle).total),
                           "driver": driver.decode() if isinstance(driver, bytes) else str(driver)})
    except Exception:  # a GPU that stops answering mid-way is reported as far as it answered
        return result
    return result


def gpu_memory_bytes(pid: int | None = None) -> int | None:
    """GPU memory this process holds, summed over GPUs; None without NVML."""
    nvml = _nvml()
    if not nvml.ok:
        return None
    pid = os.getpid() if pid is None else pid
    total = 0
    try:
        for handle in nvml.handles():
            for proc in nvml.pynvml.nvmlDeviceGetComputeRunningProcesses(handle):
                if proc.pid == pid and proc.usedGpuMemory is not None:
                    total += int(proc.usedGpuMemory)
    except Exception:  # some drivers refuse per-process queries (containers, WSL)
        return None
    return total


def peak_rss_bytes() -> int:
    """The largest resident set this process has had so far."""
    try:
        import resource
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return int(peak if sys.platform == "darwin" else peak * 1024)   # bytes on macOS, KiB elsewhere
    except ImportError:
        import psutil
        info = psutil.Process().memory_info()
        return int(getattr(info, "peak_wset", info.rss))


@lru_cache(maxsize=1)
def describe_machine() -> dict:
    import psutil
    return {
        "cpu": _cpu_model(),
        "physical_cores": psutil.cpu_count(logical=False),
        "logical_cores": psutil.cpu_count(logical=True),
        "memory_bytes": int(psutil.virtual_memory().total),
        "os": platform.platform(),
        "python": platform.python_version(),
        "gpus": gpus(),
    }


def machine_text(machine: dict) -> str:
    """One line for a person: 'AMD EPYC, 2 cores / 4 threads, 24.0 GB, NVIDIA A10'."""
    from app.core.formatting import human_bytes
    parts = [machine.get("cpu") or "unknown CPU",
             f"{machine.get('physical_cores')} cores / {machine.get('logical_cores')} threads",
             human_bytes(machine.get("memory_bytes"))]
    parts += [g["name"] for g in machine.get("gpus", [])]
    return ", ".join(parts)
