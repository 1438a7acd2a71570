"""`ortune gui [MODEL ...]`: open the window."""

from __future__ import annotations

ORDER = 0


def open_window(paths: list[str], demo: bool = False) -> int:
    from app.gui.application import run_application
    return run_application(paths, demo=demo)


def register(subparsers) -> None:
    parser = subparsers.add_parser("gui", help="open the window (the default without a command)",
                                   description="Open the ORTune window, optionally on some models.")
    parser.add_argument("models", nargs="*", metavar="MODEL", help=".onnx or .ort files to open")
    parser.add_argument("--demo", action="store_true", help="also open the bundled demo model")
    parser.set_defaults(handler=lambda args: open_window(args.models, demo=args.demo))
