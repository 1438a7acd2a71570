"""The argument parser every command uses: its errors are UserErrors, so a wrong
option is one line on stderr, exit 2, and a JSON error object with --json."""

from __future__ import annotations

import argparse

from app.core.jobs.errors import UserError


class CommandParser(argparse.ArgumentParser):
    def error(self, message: str):  # noqa: D401  (argparse's name)
        command = self.prog.removeprefix("ortune").strip()   # the line already starts with "ortune:"
        raise UserError("bad-option", f"{message} (see ortune {command} --help)" if command else message)
