"""Print statement coverage per package of app (one line each: app/core/bench, app/gui/shell,
app/cli, ...) from combined coverage data, then the total. Files no test imported count as
wholly missed. No threshold: the figures are for reading.

    python -m coverage run -m pytest && python -m coverage combine && python tests/coverage_by_package.py
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import coverage
from coverage.exceptions import NoSource, NotPython

ROOT = Path(__file__).resolve().parents[1]


def package_figures(data_file: str | None = None, root: Path = ROOT) -> dict[str, tuple[int, int]]:
    """{package folder relative to root: (statements, statements run)} over the .py files under app;
    folders with no statements (docstring-only __init__) are left out."""
    # Coverage(data_file=None) would mean "no data file", so pass it only when given.
    options = {"data_file": data_file} if data_file else {}
    cov = coverage.Coverage(config_file=str(root / "pyproject.toml"), **options)
    cov.load()
    figures: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for path in sorted((root / "app").rglob("*.py")):
        try:
            _, statements, _, missing, _ = cov.analysis2(str(path))
        except (NoSource, NotPython):
            continue
        package = path.parent.relative_to(root).as_posix()
        figures[package][0] += len(statements)
        figures[package][1] += len(statements) - len(missing)
    return {package: (total, run) for package, (total, run) in sorted(figures.items()) if total}


def format_figures(figures: dict[str, tuple[int, int]]) -> str:
    width = max(len(package) for package in figures)
    lines = [f"{'package':<{width}}  statements   run  cover"]
    for package, (total, run) in figures.items():
        lines.append(f"{package:<{width}}  {total:>10}  {run:>4}  {_percent(run, total)}")
    total = sum(t for t, _ in figures.values())
    run = sum(r for _, r in figures.values())
    lines.append(f"{'total':<{width}}  {total:>10}  {run:>4}  {_percent(run, total)}")
    return "\n".join(lines)


def _percent(run: int, total: int) -> str:
    return f"{100 * run / total:5.1f}%" if total else "    -"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-file", help="combined coverage data (default: .coverage)")
    args = parser.parse_args(argv)
    figures = package_figures(args.data_file)
    if not any(run for _, run in figures.values()):
        print("no coverage data: run `coverage run -m pytest` and `coverage combine` first", file=sys.stderr)
        return 1
    print(format_figures(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
