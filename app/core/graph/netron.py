"""Netron, for users who want its view too: its own server, on this machine only, serving
one model to the user's browser. It runs as a job in a child process (it reads the
whole file into memory, which the window should not pay for) until the job is cancelled.
Netron is an optional extra: `pip install netron` (or `pip install ortune[netron]`)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from app.core.jobs.errors import JobCancelled, UserError
from app.core.jobs.protocol import JobContext

INSTALL_HINT = "Open in Netron needs the netron package: pip install netron"


def netron_installed() -> bool:
    return importlib.util.find_spec("netron") is not None


def serve_until_cancelled(path: str | Path, browse: bool, ctx: JobContext) -> dict:
    from app.core.model.intake import check_readable

    if not netron_installed():
        raise UserError("netron-missing", INSTALL_HINT)
    import netron

    path = check_readable(path)
    address = netron.start(str(path), ("localhost", 0), browse=browse)
    url = f"http://{address[0]}:{address[1]}"
    ctx.data("serving", {"url": url})
    ctx.log(f"Netron serves {path.name} at {url}")
    try:
        while True:
            try:
                ctx.receive(timeout=3600)
            except TimeoutError:
                continue
    except JobCancelled:
        netron.stop(address)
        raise
