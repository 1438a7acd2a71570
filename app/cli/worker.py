"""`ortune worker`: the far end of a remote target, started by ssh, not by people. The
server itself (its cache, the job's scratch folder, what each request does) is
app.core.launch.worker; this command only hands it the process's standard streams."""

from __future__ import annotations

import os
import sys

ORDER = 200


def run(args) -> int:
    from app.core.launch.worker import Worker

    # The protocol owns the real standard output; anything else printed goes to stderr.
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    return Worker(sys.stdin.buffer, out).serve()


def register(subparsers) -> None:
    parser = subparsers.add_parser("worker", help="run jobs for a remote parent (started over ssh)",
                                   description="The far end of a remote target: started by ORTune over ssh, "
                                               "it runs the jobs it is sent and streams their events back.")
    parser.set_defaults(handler=run)
