"""How a command prints its result: text whose names from files are escaped and whose lines no CI
runner reads as a command, or exactly one JSON object; a warning line on stderr once; tables;
and the files --output, --csv and the like write, checked before any measuring."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable

from app.core.ci_lines import runner_safe
from app.core.jobs.errors import UserError
from app.core.jobs.results import json_safe
from app.core.session.inputs import origin_word
from app.core.text import printable, printable_values


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")


#: the warnings this command has printed, so a result's own list does not repeat them
_warned: set[str] = set()


#: how long one warning or error line may be before it is cut
LINE_LIMIT = 2000


def warn(message: str, level: str = "warning") -> None:
    """One line on stderr, once. Messages carry names from files and peers: they are made
    printable whole, so a name cannot drive the terminal or start a line of its own."""
    if message not in _warned:
        _warned.add(message)
        sys.stderr.write(runner_safe(f"{level}: {printable(message, LINE_LIMIT)}") + "\n")


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(json_safe(obj), indent=2, default=str) + "\n")
    sys.stdout.flush()


def output(args: argparse.Namespace, result: Any, render: Callable[[Any], str]) -> int:
    if isinstance(result, dict):
        for message in result.get("history_warnings", []):
            warn(message)
    if getattr(args, "json", False):
        print_json(result)
    else:
        # rendered from a printable copy, so each value from a file is escaped before it is
        # put into our lines; the whole text once more, for what a render adds from elsewhere,
        # and no line a CI runner would read as a command (a table's first column is a name)
        shown = printable_values(result)
        text = render(shown).rstrip("\n") + "\n" + _target_line(shown)
        sys.stdout.write(runner_safe(printable(text, None, lines=True)))
    return 0


def check_output_file(path: str | None, force: bool, inputs: tuple[Path, ...] = ()) -> Path | None:
    """A file a command is asked to write (a report, a CSV table), refused before any work
    when its folder is missing or cannot be written, when it is a folder, FIFO or device,
    when it is one of the job's `inputs` (even with --force), or when it would replace a
    file without --force."""
    from app.core.model.output import check_replaceable, check_writable, same_file

    if not path:
        return None
    target = Path(path).absolute()
    if not target.parent.is_dir():
        raise UserError("bad-output", f"{target.parent}: the folder for {target.name} does not exist")
    check_writable(target.parent, f"the folder for {target.name}")
    for given in inputs:
        if same_file(target, given):
            raise UserError("bad-output", f"{target}: is one of this command's inputs; an input is never "
                                          "written, even with --force")
    check_replaceable(target, force)
    return target


def distinct_outputs(outputs: dict[str, Path | None]) -> None:
    """Refuse two options naming one file: the second would silently replace the first."""
    from app.core.model.output import same_file

    seen: dict[Path, str] = {}
    for flag, path in outputs.items():
        if path is None:
            continue
        for other_path, other in seen.items():
            if same_file(path, other_path):
                raise UserError("bad-output", f"{path}: named by both {other} and {flag}; give each its own file")
        seen[path] = flag


def write_output_file(path: Path, text: str, force: bool = True, inputs: tuple[Path, ...] = ()) -> None:
    """Staged under a fresh name beside and renamed into place: an interrupted write leaves
    nothing half-written, and no name planted beside it is written through."""
    from app.core.model.output import write_text_file

    write_text_file(path, text, force, inputs)


def write_csv_table(path: Path | None, table: tuple[list[str], list[list]]) -> None:
    """A table (headers, rows) as the window exports it, to the file --csv named (if any)."""
    from app.core.tables import rows_to_csv

    if path is not None:
        write_output_file(path, rows_to_csv(*table))


def cluster_lines(result: dict, name: Callable[[dict], str]) -> list[str]:
    """Which Ray worker measured what, for a result spread over a cluster."""
    cluster = result.get("cluster")
    if not cluster:
        return []
    rows = cluster["tasks"]
    lines = [f"spread over the Ray cluster at {cluster['address']} ({len(cluster['workers'])} workers, "
             f"{cluster['cpus_per_task']:g} CPUs a task): {cluster['note']}"]
    items = result.get("cells") or result.get("models") or []
    for task in rows:
        mine = [name(item) for item in items if item.get("measured_on") == {"node": task["node"], "host": task["host"]}]
        lines.append(f"  {task['host']} ({task['node']}): {', '.join(mine)}")
    return lines


def _target_line(result: Any) -> str:
    """Where a result was measured, when that was not this machine."""
    target = result.get("target") if isinstance(result, dict) else None
    if not target:
        return ""
    if target.get("cluster"):      # a search spread over Ray workers (a partial one may not know them yet)
        workers = target.get("workers") or []
        return (f"spread over the Ray cluster at {target['address']}"
                + (f" ({len(workers)} worker{'' if len(workers) == 1 else 's'})" if workers else "") + "\n")
    from app.core.session.machine import machine_text
    version = f", ONNX Runtime {target['ort_version']}" if target.get("ort_version") else ""
    return (f"measured on target {target['name']} ({target['address']}{version}): "
            f"{machine_text(target.get('machine') or {})}\n")


def format_table(headers: list[str], rows: list[list[Any]]) -> str:
    cells = [[str(c) for c in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def render_inputs(inputs: list[dict]) -> list[str]:
    """The inputs a result ran on, as lines: a table, and a warning where they were guessed."""
    if not inputs:
        return []
    rows = [[i["name"], i["dtype"], "×".join(map(str, i["shape"])) or "scalar", origin_word(i), i["reason"]]
            for i in inputs]
    lines = ["inputs:", format_table(["input", "dtype", "shape", "from", "why"], rows)]
    guessed = [i["name"] for i in inputs if i["source"] == "default"]
    if guessed:
        lines.append(f"note: the shape of {', '.join(guessed)} was chosen by default; set it with --dim NAME=N or "
                     "--shape INPUT=D1,D2 if the model is used with other sizes")
    return lines
