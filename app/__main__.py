"""Entry point: `python -m app`, the `ortune` and `ortune-gui` commands, and the frozen app."""

from __future__ import annotations

import os
import sys


def _wants_window(argv: list[str]) -> bool:
    return not argv or argv == ["--demo"] or argv[0] == "gui"


def _freeze_support() -> None:
    # Only a frozen (PyInstaller) build needs this; it costs start-up time elsewhere.
    if getattr(sys, "frozen", False):
        import multiprocessing
        multiprocessing.freeze_support()


def _give_windowless_process_streams() -> None:
    """A windowed Windows program (the installed ortune-gui.exe, pip's ortune-gui) starts with no
    stdout/stderr, and so does every job process of the frozen one (they start through main()).
    Code that prints, or redirects descriptors 1 and 2 to capture ORT's logs, needs real ones."""
    missing = [(fd, name) for fd, name in ((1, "stdout"), (2, "stderr")) if getattr(sys, name) is None]
    if not missing:
        return
    null = os.open(os.devnull, os.O_RDWR)  # may itself land on 1 or 2 when they are closed
    for fd, name in missing:
        if fd != null:
            os.dup2(null, fd)
        setattr(sys, name, open(fd, "w", encoding="utf-8", closefd=False))
    if null not in (fd for fd, _ in missing):
        os.close(null)


def _stop_on_sigterm() -> None:
    """SIGTERM (`kill`, a service manager) stops a command as Ctrl+C does: its job is
    cancelled, so the job's process removes what it was writing, and the exit code is 3."""
    import signal

    def stop(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)


def main(argv: list[str] | None = None) -> int:
    _give_windowless_process_streams()  # before freeze_support: job processes start there
    _freeze_support()
    argv = list(sys.argv[1:] if argv is None else argv)
    if _wants_window(argv):
        # The window's own path skips importing every sub-command (start-up time).
        from app.cli.gui import main as gui_main
        return gui_main(argv[1:] if argv and argv[0] == "gui" else argv)
    _stop_on_sigterm()
    from app.cli.main import main as cli_main
    return cli_main(argv)


def main_gui() -> int:
    return main(["gui", *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
