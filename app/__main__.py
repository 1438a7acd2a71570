"""Entry point: `python -m app`, the `ortune` and `ortune-gui` commands, and the frozen app."""

from __future__ import annotations

import multiprocessing
import sys


def main(argv: list[str] | None = None) -> int:
    multiprocessing.freeze_support()
    from app.cli.main import main as cli_main
    return cli_main(argv)


def main_gui() -> int:
    multiprocessing.freeze_support()
    from app.cli.main import main as cli_main
    return cli_main(["gui", *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
