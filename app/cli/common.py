"""What every sub-command shares: running a job with a progress line, printing
results as text or one JSON object, and turning failures into exit codes."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from app.core.jobs.errors import JobCancelled, UserError
from app.core.jobs.results import json_safe
from app.core.runner.failure import describe_failure
from app.core.session.inputs import origin_word
from app.cli.parser import CommandParser  # noqa: F401  (re-exported)
from app.core.jobs.entry import Job
from app.core.ci_lines import runner_safe
from app.core.launch.start import Where, start
from app.core.text import printable, printable_values
from app.core.formatting import human_bytes  # noqa: F401  (re-exported for the sub-commands)


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


class ProgressLine:
    """A one-line progress bar on stderr, drawn only when stderr is a terminal; the job's
    warnings, one line each, wherever stderr goes."""

    def __init__(self, enabled: bool | None = None):
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._shown = False

    def __call__(self, kind: str, payload: dict) -> None:
        if kind == "log" and payload.get("level") in ("warning", "error"):
            self.clear()
            warn(payload["message"], payload["level"])
        if not self.enabled:
            return
        if kind == "progress":
            fraction = payload.get("fraction")
            message = printable((payload.get("message") or "")[:50])
            if fraction is None:
                bar = "working"
            else:
                filled = int(max(0.0, min(1.0, fraction)) * 20)
                bar = "[" + "#" * filled + " " * (20 - filled) + f"] {fraction * 100:3.0f}%"
            sys.stderr.write(f"\r{bar} {message:<50}")
            sys.stderr.flush()
            self._shown = True

    def clear(self) -> None:
        if self._shown:
            sys.stderr.write("\r" + " " * 80 + "\r")
            sys.stderr.flush()
            self._shown = False


def run_job_cli(job: Job, params, on_event: Callable[[str, dict], None] | None = None,
                memory_limit: str | None = None, target: str | None = None, cluster: str | None = None,
                tasks: int | None = None) -> Any:
    """Run a job with a progress line; Ctrl+C cancels it (and exits 3). `memory_limit`:
    the job's memory budget (--memory-limit; the settings' when None). `target`: the name
    of a remote target to run it on (--target; this machine when None or "local"); the
    files the job writes there are copied back as its entry says. `cluster`: the Ray
    cluster to spread it over (--cluster), in `tasks` Ray tasks (--cluster-tasks; one per
    worker when None). `params`: the entry's parameters dataclass, never a dict. Started, and
    its result kept, as every job is (app.core.launch.start)."""
    if not isinstance(params, job.params):     # a dict's misspelt key would be found only when the job runs
        raise TypeError(f"{job.name} takes {job.params.__name__}, not {type(params).__name__}")
    if tasks is not None and not cluster:
        raise UserError("bad-option", "--cluster-tasks is for a search spread over a cluster: give --cluster too")
    progress = ProgressLine()
    where = Where.of(target, cluster)
    if tasks is not None:
        where = replace(where, tasks=tasks)
    handle = start(job, params, where, memory_limit=memory_limit, fork=True).start()

    def forward(kind: str, payload: dict) -> None:
        progress(kind, payload)
        if on_event is not None:
            on_event(kind, payload)

    interrupted: list[bool] = []

    def on_ctrl_c(_signum, _frame) -> None:
        # a cancel asked, not a KeyboardInterrupt: one raised inside reading an event from the
        # job's pipe left half a message there, the next read waited for ever and the job,
        # never ended by the cancel's grace, ran on after the test that pressed Ctrl+C
        interrupted.append(True)
        handle.cancel()

    previous = _on_sigint(on_ctrl_c)
    try:
        result = handle.wait(forward)
    except Exception:
        if interrupted:             # the job's own Ctrl+C (one process group) may end it as an error
            raise JobCancelled("cancelled by Ctrl+C") from None
        raise
    except KeyboardInterrupt:       # where no handler could be set (not the main thread)
        handle.cancel()
        for _ in handle.events():
            pass
        raise JobCancelled("cancelled by Ctrl+C") from None
    finally:
        _on_sigint(previous)
        progress.clear()
    if interrupted:                 # it finished before the cancel reached it: Ctrl+C still means no result
        raise JobCancelled("cancelled by Ctrl+C")
    return result


def _on_sigint(handler):
    """Set SIGINT's handler (None: leave it), returning the one it had; None off the main thread."""
    import signal

    if handler is None:
        return None
    try:
        return signal.signal(signal.SIGINT, handler)
    except ValueError:              # signal handlers can only be set in the main thread
        return None


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


def report_failure(exc: BaseException, as_json: bool) -> int:
    """Print one line (and the JSON error object when asked) and return the exit code."""
    failure = describe_failure(exc)
    if as_json:
        print_json({"error": failure.to_dict()})
    sys.stderr.write(runner_safe(f"ortune: {printable(failure.line, LINE_LIMIT)}") + "\n")
    return failure.exit_code
