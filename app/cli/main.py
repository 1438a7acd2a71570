"""`ortune`: argument parsing and dispatch to the sub-command modules of app.cli.

Each sub-command module defines ORDER (its place in --help) and register(subparsers);
the parser it adds sets `handler`, a function(args) -> exit code."""

from __future__ import annotations

import importlib
import sys

import app
from app.cli.parser import CommandParser
from app.cli.running import report_failure

DESCRIPTION = """\
ORTune makes ONNX models run fast on ONNX Runtime.

Run without a command (or with `gui`) to open the window. Every command below
prints readable text, or exactly one JSON object with --json.
Exit codes: 0 success, 1 internal error, 2 bad input, 3 cancelled; convert: 4 check
failed; gate: 5 regression, 6 undecided."""


#: command -> the module of app.cli that registers it, so that running one command imports
#: only its own module (a test checks this against what the modules register)
COMMAND_MODULES = {
    "gui": "gui", "inspect": "inspect", "devices": "devices", "bench": "bench", "convert": "convert",
    "compare": "compare", "placement": "placement", "profile": "profile", "profile-diff": "profile",
    "iobinding": "iobinding", "tune": "tune", "diagnose": "diagnose", "history": "history",
    "diff": "diff", "drift": "drift", "optimize": "optimize", "targets": "targets", "worker": "worker", "gate": "gate",
    "generate": "generate",
}


def _command_modules(argv: list[str]) -> list:
    """The module of the command in argv, or every sub-command module (for --help, and to
    name the choices when the command is unknown)."""
    if argv and argv[0] in COMMAND_MODULES:
        return [importlib.import_module(f"app.cli.{COMMAND_MODULES[argv[0]]}")]
    import pkgutil

    import app.cli as cli_package

    modules = [importlib.import_module(f"app.cli.{info.name}") for info in pkgutil.iter_modules(cli_package.__path__)]
    return [module for module in modules if hasattr(module, "register")]


def build_parser(argv: list[str] | None = None) -> CommandParser:
    parser = CommandParser(prog="ortune", description=DESCRIPTION,
                           formatter_class=__import__("argparse").RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"ORTune {app.__version__}")
    parser.add_argument("--demo", action="store_true", help="open the window on the bundled demo model")
    parser.add_argument("--self-test", action="store_true",
                        help="check that this installation works end to end, then exit")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=CommandParser)
    for module in sorted(_command_modules(argv or []), key=lambda m: getattr(m, "ORDER", 100)):
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in argv
    try:
        parser = build_parser(argv)
        args = parser.parse_args(argv)
        if args.self_test:
            from app.cli.selftest import run_self_test
            return run_self_test()
        if args.command is None:
            from app.cli.gui import open_window
            return open_window([], demo=args.demo)
        return int(args.handler(args) or 0)
    except SystemExit as exc:  # --help and --version end here
        return int(exc.code or 0) if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:
        sys.stderr.write("ortune: cancelled\n")
        return 3
    except BaseException as exc:
        return report_failure(exc, as_json)
