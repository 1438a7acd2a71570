"""Candidates kept and reused: every candidate the search makes is stored in the history
(as the conversion it is, by the history recorder, app.core.store.recording, when the
search's result is kept) with a
copy of the model it made; a later search of the same model, with the same inputs, session
settings, timing length, tolerance, data (and input files, by size and time), ONNX Runtime version and
machine, takes that candidate's row and
model instead of making and measuring it again, and says so in the row. `fresh` (the
command line's --fresh) reuses none. A changed setting or model changes the key, so it is
measured anew. A candidate made on a cluster's worker is kept here too, keyed by that
worker's machine and ONNX Runtime (`where`), so the same cluster search reuses it. The
copies are bounded and go with their entries (app.core.store.kept)."""

from __future__ import annotations

import hashlib
import json
import platform
import shutil
import time
from pathlib import Path

from app.core.jobs.errors import UserError
from app.core.optimize.rows import measured_reason


_KIND = "convert"                   # the history kind a candidate is kept under: it is a conversion


def _folder_identity(folder: str) -> list:
    """A data folder by its files' names, sizes and times (a changed sample changes it)."""
    if not folder:
        return []
    root = Path(folder).expanduser()
    return sorted([str(p.relative_to(root)), p.stat().st_size, p.stat().st_mtime_ns]
                  for p in root.rglob("*") if p.is_file()) if root.is_dir() else [str(root)]


def machine_key() -> dict:
    """The machine and ONNX Runtime in a candidate's key: this one's (run on a cluster's
    worker, that worker's)."""
    import onnxruntime

    from app.core.session.machine_cpu import cpu_description
    return {"onnxruntime": onnxruntime.__version__, "machine": [platform.node(), cpu_description()[0]]}


def _date(created: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(created))


def _measured(row: dict) -> bool:
    """A candidate that passed its check but whose speed could not be measured is made again:
    what stopped its speed check (a fault since fixed, a worker lost) may be gone."""
    return not (row.get("status") == "passed" and row.get("speedup") is None)


class Reuse:
    def __init__(self, params, source: Path):
        """`keeps`: copy each candidate made for the history (a search spread over a cluster
        keeps them where it was started: its parts only hand them over, in `handed`)."""
        from app.core.store.history import History
        from app.core.targets.upload import local_files

        self.fresh, self.source = bool(params.fresh), source
        self.history = History()
        self.warnings: list[str] = []
        self.pending: list[dict] = []      # candidates made, for the history recorder to keep
        try:
            sha = self.history.model_identity(source)["sha256"]
        except OSError:
            sha = None
        session = params.session.to_dict()
        if isinstance(session.get("inputs"), dict):        # the held-out half is scratch: the folder is the user's
            session["inputs"] = {k: v for k, v in session["inputs"].items() if k != "data"}
        files = [[path, Path(path).stat().st_size, Path(path).stat().st_mtime_ns] for path in local_files(session)]
        self.base = {"model_sha256": sha, "session": session, "files": files, "tolerance": params.tolerance.to_dict(),
                     "screen_seconds": params.screen_seconds, "data": _folder_identity(params.data)} | machine_key()
        self.session = params.session.to_dict()
        self.keeps = True
        self.handed: dict[str, dict] = {}      # kind -> its report, when this search does not keep them

    def key(self, kind: str, options: dict, where: dict | None = None) -> str:
        """`where`: the machine and ONNX Runtime it was made and measured on, when not this
        one (a cluster's worker: {"machine", "onnxruntime"})."""
        options = {k: v for k, v in options.items() if k != "calibration"}    # a scratch half: the data stands for it
        text = json.dumps(self.base | (where or {}) | {"kind": kind, "options": options}, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()

    def find(self, kind: str, options: dict, where: dict | None = None) -> tuple[dict, dict, str] | None:
        """The stored (row, report, model file) of this candidate made before, or None."""
        if self.fresh or self.base["model_sha256"] is None:
            return None
        key = self.key(kind, options, where)
        try:
            entries = self.history.entries(kind=_KIND)
        except Exception:       # an unusable store reuses nothing; the search measures anew
            return None
        for entry in entries:
            if entry["model_sha256"] != self.base["model_sha256"] or f"optimize: {kind}" not in entry["variant"]:
                continue
            try:
                report = self.history.get(entry["id"])["report"]
            except UserError:       # stored by a newer ORTune, or damaged: not reused
                continue
            kept = report.get("optimize_candidate") or {}
            if kept.get("key") != key or not Path(report.get("output", "")).is_file() or not _measured(kept["row"]):
                continue
            row = dict(kept["row"], reused={"history_id": entry["id"], "created": entry["created"]})
            row["reason"] = (
                f"{measured_reason(row)} — reused from {_date(entry['created'])} (same model, inputs, settings and "
                f"ONNX Runtime on {'that worker' if where else 'this machine'}; --fresh measures it anew)")
            row.pop("measured_reason", None)        # this search's answer words come after what follows
            return row, report, report["output"]
        return None

    def hold(self, kind: str, options: dict, row: dict, report: dict, where: dict | None = None) -> None:
        """Keep the candidate: its model copied under the data folder now (the copies kept
        within their bounds), its report for the history once the search's result is kept
        (`to_keep`)."""
        from app.core.store import kept
        from app.core.targets.upload import bundle

        if not self.keeps:
            self.handed[kind] = report
            return
        key = self.key(kind, options, where)
        folder = kept.root() / key
        try:
            folder.mkdir(parents=True, exist_ok=True)
            made = bundle(Path(report["output"]))
            for name, local, _ in made.files:
                shutil.copyfile(local, folder / name)
            kept.note(folder, self.base["model_sha256"])
            self._bound(folder)
        except OSError as exc:
            self.warnings.append(f"the candidate {kind} could not be kept for reuse ({exc.strerror or exc})")
            return
        stored = dict(report, output=str(folder / made.main.name), created=time.time(),
                      optimize_candidate={"key": key, "row": row})
        facts = {"model": str(self.source), "variant": f"optimize: {kind} → {made.main.name}",
                 "p50_ms": row.get("latency_ms"), "session": self.session}
        self.pending.append({"kind": _KIND, "facts": facts, "report": stored, "candidate": kind})

    def _bound(self, folder: Path) -> None:
        from app.core.store import kept
        try:
            named = self.history.outputs()
        except Exception:       # an unusable store: no copy counts as unnamed
            named = None
        kept.bound(named, keep=folder)

    def to_keep(self, rows: list[dict]) -> list[dict]:
        """What the history recorder (app.core.store.recording) keeps of the candidates made:
        each with the path of its row, which gets the stored entry's id."""
        where = {row["kind"]: i for i, row in enumerate(rows)}
        return [dict(part, into=["candidates", where[part["candidate"]]]) for part in self.pending
                if part["candidate"] in where]
