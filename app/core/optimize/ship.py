"""The folder to ship: the chosen model (and its .data), preset.json (loads with --config),
session.py (plain onnxruntime, no ORTune), report.html (one offline page) and optimize.json
(the whole result). Written through the output rules (app.core.model.output): every file is
checked before the search starts, staged beside, and renamed into place; an existing file
is replaced only with force."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Callable

from app.core.jobs.errors import UserError
from app.core.jobs.results import json_safe
from app.core.model.output import Staging, check_replaceable, check_writable, data_file_name, load_model, save_model
from app.core.optimize.rows import answer
from app.core.store.migrations import stamp

MODEL_STEM = "model"
CANDIDATES = "candidates"       # the sub-folder every candidate made is kept in, with --keep-candidates
COMPANIONS = ("preset.json", "session.py", "report.html", "optimize.json")
_MODEL_FILES = (f"{MODEL_STEM}.onnx", data_file_name(f"{MODEL_STEM}.onnx"), f"{MODEL_STEM}.ort")


def prepare_folder(folder: Path, force: bool, source: Path, keep_candidates: bool = False) -> Path:
    """The output folder, checked before any work: it or its parent exists and takes a new
    file (a read-only file system is found now, not after the search), and no file the search
    will write is there already (without force) or is the source."""
    folder = folder.absolute()
    if folder.exists() and not folder.is_dir():
        raise UserError("bad-output", f"{folder}: is not a folder")
    if not folder.exists():
        if not folder.parent.is_dir():
            raise UserError("bad-output", f"{folder.parent}: the output folder's parent does not exist")
        check_writable(folder.parent, f"the folder to make {folder.name} in")
        return folder
    check_writable(folder)
    for name in (*_MODEL_FILES, *COMPANIONS):
        check_replaceable(folder / name, force, (source,))
    kept = folder / CANDIDATES
    if keep_candidates and kept.exists():
        if not kept.is_dir():
            raise UserError("bad-output", f"{kept}: is not a folder")
        for item in kept.iterdir():
            check_replaceable(item, force, (source,))
    return folder


def keep_candidates(rows: list[dict], made: dict, folder: Path, source: Path) -> None:
    """Copy every candidate made into DIR/candidates/<kind> (its weights file beside it) and
    note the path on its row, so each can be opened in Compare, Drift or the Graph."""
    kept = folder / CANDIDATES
    kept.mkdir(parents=True, exist_ok=True)
    for row in rows:
        if row["kind"] == "source" or row["kind"] not in made or row.get("provider"):
            continue        # a provider candidate is the source itself, on another provider
        chosen = Path(made[row["kind"]])
        target = kept / f"{row['kind']}{chosen.suffix}"
        with Staging(target, protected=(source,)) as stage:
            _stage_model(chosen, stage.path)
            stage.commit(True)
        row["model"] = str(target)


def _uses_external_data(path: Path) -> bool:
    import onnx
    from onnx.external_data_helper import uses_external_data

    model = onnx.load(str(path), load_external_data=False)
    return any(uses_external_data(t) for t in model.graph.initializer)


def _stage_model(chosen: Path, target: Path) -> None:
    """The chosen model under its shipped name; weights in a file beside it stay beside it,
    under the new name (the model records where they are)."""
    if chosen.suffix == ".onnx" and _uses_external_data(chosen):
        save_model(load_model(chosen), target, external=True)
    else:
        shutil.copyfile(chosen, target)


def ship(result: dict, best: dict, chosen: str, folder: Path, force: bool, source: Path,
         elapsed: Callable[[], float]) -> dict:
    """Write the folder; returns the choice block (also put into `result`)."""
    chosen_path = Path(chosen)
    folder.mkdir(exist_ok=True)
    target = folder / f"{MODEL_STEM}{'.ort' if chosen_path.suffix == '.ort' else '.onnx'}"
    choice = answer(best, result["tune"], target, folder / "preset.json", result["session"],
                    result.get("unmeasured", ""))
    result["choice"] = choice
    result["elapsed_seconds"] = elapsed()
    result["created"] = time.time()         # when it was found: the window's caption says it
    result["files"] = [str(target)] + [str(folder / name) for name in COMPANIONS]
    with Staging(target, protected=(source,)) as stage:
        _stage_model(chosen_path, stage.path)
        write_companions(result, stage.folder)
        stage.companions = [stage.folder / name for name in COMPANIONS]
        stage.commit(force)
    return choice


def write_companions(result: dict, folder: Path) -> None:
    """preset.json, session.py, report.html and optimize.json for `result`, in `folder`;
    optimize.json, as the history, holds the result's version (app.core.store.migrations)."""
    from app.core.optimize.report import report_html
    from app.core.optimize.session_code import session_script
    from app.core.session.config import SessionConfig

    choice = result["choice"]
    config = SessionConfig.from_dict(choice["settings"])
    (folder / "session.py").write_text(session_script(config, Path(choice["model"]).name, result["inputs"]),
                                       encoding="utf-8")
    (folder / "report.html").write_text(report_html(result), encoding="utf-8")
    (folder / "optimize.json").write_text(json.dumps(json_safe(stamp(result)), indent=2, default=str) + "\n",
                                          encoding="utf-8")
    config.save(folder / "preset.json")


def arrived(result: dict) -> None:
    """A search run on a target has come back with its folder: the files that name paths or
    the machine are written again as this machine sees them (the folder here, the target)."""
    if isinstance(result, dict) and result.get("choice") and Path(result["out_dir"]).is_dir():
        write_companions(result, Path(result["out_dir"]))
