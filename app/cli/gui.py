"""`ortune gui [MODEL ...]`: open the window."""

from __future__ import annotations

ORDER = 0
DESCRIPTION = "Open the ORTune window, optionally on some models."


def open_window(paths: list[str], demo: bool = False) -> int:
    from app.gui.shell.application import run_application
    return run_application(paths, demo=demo)


def _add_arguments(parser) -> None:
    parser.add_argument("models", nargs="*", metavar="MODEL", help=".onnx or .ort files to open")
    parser.add_argument("--demo", action="store_true", help="also open the bundled demo model")


def build_gui_parser():
    from app.cli.parser import CommandParser
    parser = CommandParser(prog="ortune gui", description=DESCRIPTION)
    _add_arguments(parser)
    return parser


def register(subparsers) -> None:
    parser = subparsers.add_parser("gui", help="open the window (the default without a command)",
                                   description=DESCRIPTION)
    _add_arguments(parser)
    parser.set_defaults(handler=lambda args: open_window(args.models, demo=args.demo))


def main(argv: list[str]) -> int:
    """`ortune gui ARGS` without building the whole command line."""
    if all(arg == "--demo" or not arg.startswith("-") for arg in argv):
        # The usual case needs no argparse (start-up time); anything else gets the full parser.
        return open_window([arg for arg in argv if arg != "--demo"], demo="--demo" in argv)
    try:
        args = build_gui_parser().parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0) if isinstance(exc.code, int) else 0
    except Exception as exc:
        from app.cli.running import report_failure
        return report_failure(exc, False)
    return open_window(args.models, demo=args.demo)
