"""The argument parser every command uses: its errors are UserErrors, so a wrong
option is one line on stderr, exit 2, and a JSON error object with --json; and the
arguments several commands share."""

from __future__ import annotations

import argparse

from app.core.jobs.errors import UserError


class CommandParser(argparse.ArgumentParser):
    def error(self, message: str):  # noqa: D401  (argparse's name)
        command = self.prog.removeprefix("ortune").strip()   # the line already starts with "ortune:"
        raise UserError("bad-option", f"{message} (see ortune {command} --help)" if command else message)


def add_cluster_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cluster", metavar="ADDRESS",
                        help="spread the work over the Ray cluster at ADDRESS (host:port; pip install "
                             "'ortune[cluster]'): one task to a worker at a time, each forming its own ratios")
    parser.add_argument("--cluster-tasks", type=positive_int, metavar="N",
                        help="split the work into N Ray tasks (default one per worker); tasks beyond the workers "
                             "wait for one, so a cancel loses less of what was under way")


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number of at least 1, not {value}")
    return value
