"""The results history: every benchmark, comparison, sweep, profile, tuning run,
conversion, drift search and optimize run, kept in SQLite.

Each entry holds what is needed to trust and repeat it: the model (path and content
hash), the variant, the full session preset and run settings, the report, the ORT
version, the machine, the time, and the latencies themselves (for the chart).

A store that cannot be used never costs a result: a damaged database is moved aside
(renamed with the time) and a fresh one started; one that is locked, read-only or has no
folder leaves the result unstored, with one warning, and the job goes on."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any, Callable

from app.core.store.migrations import decoded, stamp
from app.core.store.paths import data_dir

SCHEMA_VERSION = 1
MAX_STORED_SAMPLES = 1_000_000   # beyond this, every n-th sample is kept for the chart
#: a result's latencies for the chart, kept by the history and taken out of the result it
#: returns: {"warmup_ms": [...], "samples_ms": [...]} (app.core.store.recording)
SAMPLES_KEY = "history_samples"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    created REAL NOT NULL,
    model_path TEXT NOT NULL,
    model_sha256 TEXT NOT NULL,
    variant TEXT NOT NULL DEFAULT '',
    providers TEXT NOT NULL DEFAULT '',
    p50_ms REAL,
    p99_ms REAL,
    throughput_per_s REAL,
    session_json TEXT NOT NULL,
    run_json TEXT NOT NULL,
    report_json TEXT NOT NULL,
    ort_version TEXT NOT NULL,
    machine_json TEXT NOT NULL,
    warmup BLOB,
    samples BLOB
);
CREATE INDEX IF NOT EXISTS results_model ON results (model_path);
CREATE TABLE IF NOT EXISTS model_hashes (
    path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, sha256 TEXT NOT NULL
);
"""
_SUMMARY = ("id", "kind", "created", "model_path", "model_sha256", "variant", "providers", "p50_ms", "p99_ms",
            "throughput_per_s", "ort_version")


def history_path() -> Path:
    return data_dir() / "history.sqlite"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _as_blob(values) -> bytes | None:
    if values is None:
        return None
    import numpy as np
    data = np.asarray(values, dtype=np.float32)
    if data.size > MAX_STORED_SAMPLES:
        data = data[:: -(-data.size // MAX_STORED_SAMPLES)]
    return data.tobytes()


def _from_blob(blob: bytes | None):
    import numpy as np
    return np.frombuffer(blob, dtype=np.float32).astype(np.float64) if blob else np.zeros(0)


def _is_full(exc: sqlite3.DatabaseError) -> bool:
    """SQLite's word for a disk (or a quota) that took no more."""
    name = getattr(exc, "sqlite_errorname", "")
    return name.startswith("SQLITE_FULL") if name else str(exc) == "database or disk is full"


def _is_damage(exc: sqlite3.DatabaseError) -> bool:
    """The file is not, or no longer, a whole database (SQLite's names are there from Python 3.11)."""
    name = getattr(exc, "sqlite_errorname", "")
    if name:
        return name.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT"))
    return str(exc) in ("file is not a database", "database disk image is malformed")


def _field(path: str) -> str:
    """SQL for one field of an entry's report; NULL where the stored text is damaged (not
    JSON), so one damaged result neither hides the others nor stops its own deletion."""
    return f"CASE WHEN json_valid(report_json) THEN json_extract(report_json, '{path}') END"


def _not_found(entry_id: int) -> Exception:
    from app.core.jobs.errors import UserError
    return UserError("not-found", f"there is no stored result number {entry_id}")


class History:
    #: how long a write waits for another program's lock before the store is given up
    LOCK_TIMEOUT_S = 30.0

    def __init__(self, path: str | os.PathLike | None = None, warn: Callable[[str], None] | None = None):
        """`warn` gets each warning line (they are also kept in `warnings`)."""
        self.path = Path(path) if path is not None else history_path()
        self.warn = warn
        self.warnings: list[str] = []
        self._problem = ""       # why the store cannot be used; once set, it is not tried again

    def _warn(self, message: str) -> None:
        self.warnings.append(message)
        if self.warn is not None:
            self.warn(message)

    def _use(self, action: Callable[[sqlite3.Connection], Any], needed: int = 0) -> Any:
        """action(db) on the store; raises a UserError saying why the store cannot be used.
        A full disk is named with the `needed` bytes the action writes; SQLite rolls the
        action back, so what the store held stays whole."""
        from app.core.jobs.disk import is_disk_full, no_space
        from app.core.jobs.errors import UserError

        for attempt in (1, 2):
            if self._problem:
                raise UserError("history-unavailable", self._problem)
            try:
                with self._connect() as db:
                    return action(db)
            except sqlite3.DatabaseError as exc:
                if attempt == 1 and _is_damage(exc):
                    self._move_aside(exc)
                    continue
                self._problem = no_space(self.path.parent, needed).message if _is_full(exc) else \
                    f"the results history {self.path} cannot be used ({exc})"
            except OSError as exc:
                self._problem = no_space(self.path.parent, needed).message if is_disk_full(exc) else \
                    f"the results history {self.path} cannot be used ({exc.strerror or exc})"
        raise UserError("history-unavailable", self._problem)

    def _move_aside(self, exc: Exception) -> None:
        moved = self.path.with_name(f"{self.path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
        try:
            os.replace(self.path, moved)
            for suffix in ("-wal", "-shm"):      # the journal of the damaged file goes with it
                if self.path.with_name(self.path.name + suffix).exists():
                    os.replace(self.path.with_name(self.path.name + suffix), moved.with_name(moved.name + suffix))
        except OSError as error:
            self._problem = f"the results history {self.path} is damaged ({exc}) and cannot be moved aside " \
                            f"({error.strerror})"
            return
        self._warn(f"the results history {self.path} was damaged ({exc}); it was moved to {moved.name} and a "
                   "new one started")

    def _stored_or_warn(self, action: Callable[[sqlite3.Connection], Any], needed: int = 0) -> Any:
        """action(db), or None with one warning (the first time) when the store cannot be used."""
        from app.core.jobs.errors import UserError

        first = not self._problem
        try:
            return self._use(action, needed)
        except UserError as exc:
            if first:
                self._warn(f"{exc.message}; this result is not stored")
            return None

    @contextlib.contextmanager
    def _connect(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(self.path, timeout=self.LOCK_TIMEOUT_S)
        connection.row_factory = sqlite3.Row
        try:
            if connection.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                connection.execute("PRAGMA journal_mode=WAL")
                connection.executescript(_SCHEMA)
                connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            with connection:
                yield connection
        finally:
            connection.close()

    # model identity -----------------------------------------------------------
    def model_identity(self, path: str | os.PathLike) -> dict:
        """{path, sha256, size_bytes}; the hash is cached per (path, size, mtime)."""
        path = Path(path).resolve()
        info = path.stat()
        key = (str(path), info.st_size, info.st_mtime_ns)
        row = self._stored_or_warn(lambda db: db.execute(
            "SELECT sha256 FROM model_hashes WHERE path = ? AND size = ? AND mtime_ns = ?", key).fetchone())
        if row is not None:
            return {"path": str(path), "sha256": row[0], "size_bytes": info.st_size}
        digest = _sha256(path)
        self._stored_or_warn(lambda db: db.execute("INSERT OR REPLACE INTO model_hashes VALUES (?, ?, ?, ?)",
                                                   (*key, digest)))
        return {"path": str(path), "sha256": digest, "size_bytes": info.st_size}

    # writing ------------------------------------------------------------------
    def record(self, kind: str, report: dict, warmup_ms=None, samples_ms=None, facts: dict | None = None) -> int | None:
        """Store one result; `report` holds model, session, run, ort_version and machine.
        `facts` (an entry's Records.facts, with `model` as model_identity gives it) say what
        the report itself does not: variant, providers, p50_ms, p99_ms, throughput_per_s,
        session, run.

        The report is stored with its version (app.core.store.migrations), which it keeps.
        Returns its id, or None (with a warning) when the store cannot be used."""
        facts = facts or {}
        stamp(report)
        model = facts.get("model") or report["model"]
        summary = report.get("summary", report)
        latency = summary.get("latency_ms") or {}
        latency = latency if isinstance(latency, dict) else {}
        row = (kind, report.get("created", time.time()), model["path"], model["sha256"],
               facts.get("variant", report.get("variant", "")),
               ", ".join(facts.get("providers", report.get("providers")) or []),
               facts.get("p50_ms", latency.get("p50")), facts.get("p99_ms", latency.get("p99")),
               facts.get("throughput_per_s", summary.get("throughput_per_s")),
               json.dumps(facts.get("session", report.get("session", {}))),
               json.dumps(facts.get("run", report.get("run", {}))), json.dumps(report),
               report.get("ort_version", ""), json.dumps(report.get("machine", {})),
               _as_blob(warmup_ms), _as_blob(samples_ms))
        return self._stored_or_warn(lambda db: int(db.execute(
            "INSERT INTO results (kind, created, model_path, model_sha256, variant, providers, p50_ms, p99_ms,"
            " throughput_per_s, session_json, run_json, report_json, ort_version, machine_json, warmup, samples)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row).lastrowid),
            needed=sum(len(value) for value in row if isinstance(value, (str, bytes))))

    def delete(self, entry_id: int) -> list[Path]:
        """Delete one entry, and the model copy the history kept for it (app.core.store.kept)
        unless another entry names it. Returns the copies removed."""
        from app.core.store import kept

        output = self._use(lambda db: db.execute(f"SELECT {_field('$.output')} FROM results "
                                                 "WHERE id = ?", (entry_id,)).fetchone())
        self._use(lambda db: db.execute("DELETE FROM results WHERE id = ?", (entry_id,)))
        folder = kept.folder_of(output[0]) if output and isinstance(output[0], str) else None
        if folder is None or any(kept.folder_of(path) == folder for path in self.outputs()):
            return []
        return [folder] if kept.remove(folder) else []

    def outputs(self) -> set[str]:
        """Every output file the entries name (a conversion's, a kept candidate's)."""
        return self._use(lambda db: {row[0] for row in db.execute(
            f"SELECT {_field('$.output')} FROM results WHERE kind = 'convert'") if row[0]})

    # reading ------------------------------------------------------------------
    def entries(self, model: str | None = None, kind: str | None = None, limit: int = 500) -> list[dict]:
        """Newest first, with the inputs each ran on; `model` matches a path (or part of one)."""
        where, args = [], []
        if model:
            where.append("model_path LIKE ?")
            args.append(f"%{model}%")
        if kind:
            where.append("kind = ?")
            args.append(kind)
        sql = (f"SELECT {', '.join(_SUMMARY)}, {_field('$.inputs')} AS inputs, "
               f"COALESCE({_field('$.target.name')}, {_field('$.cluster.measured_on')})"
               " AS target FROM results")
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY created DESC, id DESC LIMIT ?"
        rows = self._use(lambda db: [dict(row) for row in db.execute(sql, (*args, limit))])
        for row in rows:     # the input plan's rows (name, shape, source …); [] for kinds that keep none
            row["inputs"] = json.loads(row["inputs"]) if row["inputs"] else []
            row["target"] = row["target"] or "local"     # the machine that measured it (app.core.targets)
        return rows

    def models(self) -> list[str]:
        return self._use(lambda db: [row[0] for row in
                                     db.execute("SELECT DISTINCT model_path FROM results ORDER BY model_path")])

    def require(self, entry_id: int) -> None:
        """A UserError naming `entry_id` when there is no such entry (its report is not read:
        one stored by a newer ORTune, or damaged, can still be deleted)."""
        if self._use(lambda db: db.execute("SELECT 1 FROM results WHERE id = ?", (entry_id,)).fetchone()) is None:
            raise _not_found(entry_id)

    def get(self, entry_id: int) -> dict:
        """The whole entry: report (in this version's shape: app.core.store.migrations), session,
        run, machine, and the latencies as arrays. One stored by a newer ORTune, or damaged, is
        refused with a UserError that says so."""
        row = self._use(lambda db: db.execute("SELECT * FROM results WHERE id = ?", (entry_id,)).fetchone())
        if row is None:
            raise _not_found(entry_id)
        entry = {key: row[key] for key in _SUMMARY}
        entry.update(session=json.loads(row["session_json"]), run=json.loads(row["run_json"]),
                     report=decoded(row["report_json"], f"stored result {entry_id}"),
                     machine=json.loads(row["machine_json"]),
                     warmup_ms=_from_blob(row["warmup"]), samples_ms=_from_blob(row["samples"]))
        return entry
