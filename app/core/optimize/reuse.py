"""Candidates kept and reused: every candidate the search makes is stored in the history
(as the conversion it is, through the history recorder, app.core.store.recording) with a
copy of the model it made; a later search of the same model, with the same inputs, session
settings, timing length, tolerance, data (and input files, by size and time), ONNX Runtime version and
machine, takes that candidate's row and
model instead of making and measuring it again, and says so in the row. `fresh` (the
command line's --fresh) reuses none. A changed setting or model changes the key, so it is
measured anew."""

from __future__ import annotations

import hashlib
import json
import platform
import shutil
import time
from pathlib import Path

from app.core.jobs.entry import Records

FOLDER = "optimize-candidates"      # under the data folder: one sub-folder per candidate key
_KIND = "convert"                   # the history kind a candidate is kept under: it is a conversion


def _folder_identity(folder: str) -> list:
    """A data folder by its files' names, sizes and times (a changed sample changes it)."""
    if not folder:
        return []
    root = Path(folder).expanduser()
    return sorted([str(p.relative_to(root)), p.stat().st_size, p.stat().st_mtime_ns]
                  for p in root.rglob("*") if p.is_file()) if root.is_dir() else [str(root)]


def _date(created: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(created))


class Reuse:
    def __init__(self, params, source: Path):
        import onnxruntime

        from app.core.session.machine_cpu import cpu_description
        from app.core.store.history import History
        from app.core.targets.upload import local_files

        self.fresh, self.source = bool(params.fresh), source
        self.history = History()
        self.warnings: list[str] = []
        try:
            sha = self.history.model_identity(source)["sha256"]
        except OSError:
            sha = None
        session = params.session.to_dict()
        if isinstance(session.get("inputs"), dict):        # the held-out half is scratch: the folder is the user's
            session["inputs"] = {k: v for k, v in session["inputs"].items() if k != "data"}
        files = [[path, Path(path).stat().st_size, Path(path).stat().st_mtime_ns] for path in local_files(session)]
        self.base = {"model_sha256": sha, "session": session, "files": files, "tolerance": params.tolerance,
                     "screen_seconds": params.screen_seconds,
                     "data": _folder_identity(params.data), "onnxruntime": onnxruntime.__version__,
                     "machine": [platform.node(), cpu_description()[0]]}
        self.session = params.session.to_dict()

    def key(self, kind: str, options: dict) -> str:
        options = {k: v for k, v in options.items() if k != "calibration"}    # a scratch half: the data stands for it
        text = json.dumps(self.base | {"kind": kind, "options": options}, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()

    def find(self, kind: str, options: dict) -> tuple[dict, dict, str] | None:
        """The stored (row, report, model file) of this candidate made before, or None."""
        if self.fresh or self.base["model_sha256"] is None:
            return None
        key = self.key(kind, options)
        try:
            entries = self.history.entries(kind=_KIND)
        except Exception:       # an unusable store reuses nothing; the search measures anew
            return None
        for entry in entries:
            if entry["model_sha256"] != self.base["model_sha256"] or f"optimize: {kind}" not in entry["variant"]:
                continue
            report = self.history.get(entry["id"])["report"]
            kept = report.get("optimize_candidate") or {}
            if kept.get("key") != key or not Path(report.get("output", "")).is_file():
                continue
            row = dict(kept["row"], reused={"history_id": entry["id"], "created": entry["created"]})
            row["reason"] = f"{row['reason']} — reused from {_date(entry['created'])} (same model, inputs, settings " \
                            f"and ONNX Runtime on this machine; --fresh measures it anew)"
            return row, report, report["output"]
        return None

    def keep(self, kind: str, options: dict, row: dict, report: dict) -> None:
        """Store the candidate: its model copied under the data folder, its report in the history."""
        from app.core.store.paths import data_dir
        from app.core.store.recording import keep
        from app.core.targets.upload import bundle

        key = self.key(kind, options)
        folder = data_dir() / FOLDER / key
        try:
            folder.mkdir(parents=True, exist_ok=True)
            made = bundle(Path(report["output"]))
            for name, local, _ in made.files:
                shutil.copyfile(local, folder / name)
        except OSError as exc:
            self.warnings.append(f"the candidate {kind} could not be kept for reuse ({exc.strerror or exc})")
            return
        stored = dict(report, output=str(folder / made.main.name), created=time.time(),
                      optimize_candidate={"key": key, "row": row})
        facts = {"model": str(self.source), "variant": f"optimize: {kind} → {made.main.name}",
                 "p50_ms": row.get("latency_ms"), "session": self.session}
        kept = keep(Records(_KIND, lambda _params, _result: facts), None, stored, self.warnings.append)
        row["history_id"] = kept.get("history_id")
