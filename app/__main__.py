"""Entry point: `python -m app`, the `ortune` and `ortune-gui` commands, and the frozen app."""

from __future__ import annotations

import sys


def _wants_window(argv: list[str]) -> bool:
    return not argv or argv == ["--demo"] or argv[0] == "gui"


def _freeze_support() -> None:
    # Only a frozen (PyInstaller) build needs this; it costs start-up time elsewhere.
    if getattr(sys, "frozen", False):
        import multiprocessing
        multiprocessing.freeze_support()


def main(argv: list[str] | None = None) -> int:
    _freeze_support()
    argv = list(sys.argv[1:] if argv is None else argv)
    if _wants_window(argv):
        # The window's own path skips importing every sub-command (start-up time).
        from app.cli.gui import main as gui_main
        return gui_main(argv[1:] if argv and argv[0] == "gui" else argv)
    from app.cli.main import main as cli_main
    return cli_main(argv)


def main_gui() -> int:
    return main(["gui", *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
