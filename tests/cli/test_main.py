import argparse
import importlib
import pkgutil
import subprocess
import sys

import app.cli as cli_package
from app.cli.main import COMMAND_MODULES
from tests.cli.conftest import ROOT


def registered_commands() -> dict:
    """command -> module, from what each sub-command module registers."""
    found = {}
    for info in pkgutil.iter_modules(cli_package.__path__):
        module = importlib.import_module(f"app.cli.{info.name}")
        if hasattr(module, "register"):
            subparsers = argparse.ArgumentParser().add_subparsers()
            module.register(subparsers)
            found.update({name: info.name for name in subparsers.choices})
    return found


def test_the_command_table_matches_what_the_modules_register():
    assert COMMAND_MODULES == registered_commands()


def test_a_command_imports_only_its_own_module():
    code = ("import sys; from app.cli.main import main; main(['convert', '--help']); "
            "print(sorted(m for m in sys.modules if m.startswith('app.cli.')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    loaded = eval(done.stdout.strip().splitlines()[-1])
    assert "app.cli.convert" in loaded
    assert not {f"app.cli.{m}" for m in COMMAND_MODULES.values() if m != "convert"} & set(loaded)


def test_an_unknown_command_lists_every_command(ortune):
    result = ortune("nonsense")
    assert result.code == 2
    for command in ("convert", "bench", "profile-diff", "history"):
        assert command in result.stderr
