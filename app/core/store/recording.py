"""The one place a finished job's result is kept in the history: its entry's Records say
under which kind and file it (app.core.jobs.entry.Records); the result gets the stored
entry's id and the store's warnings. The one start function (app.core.launch.start)
calls it once a run, wherever the run was measured.

A job whose result holds parts worth keeping on their own (optimize's candidates, each a
conversion) lists them under ALSO: each {kind, facts, report, into}, stored as its own
entry, its id written into the result at the path `into` (e.g. ["candidates", 3])."""

from __future__ import annotations

from typing import Any, Callable

from app.core.jobs.entry import Records
from app.core.store.history import SAMPLES_KEY, History

ALSO = "history_also"


def keep(records: Records, params: Any, result: Any, warn: Callable[[str], None] | None = None) -> Any:
    """Store `result` as `records` say, unless its facts say this run is not kept. A result
    that names its model as a {path} gets the model's content hash beside it; the latencies
    a result carries for the chart go to the history and out of the result."""
    if not isinstance(result, dict):
        return result
    samples = result.pop(SAMPLES_KEY, None) or {}
    history = History(warn=warn)
    for part in result.pop(ALSO, None) or []:
        kept = _keep_one(history, part["kind"], part["facts"], part["report"], warn)
        place = result
        for step in part.get("into", [])[:-1]:
            place = place[step]
        if part.get("into"):
            place[part["into"][-1]]["history_id"] = kept.get("history_id")
    facts = records.facts(params, result)
    if facts is None:
        return result
    return _keep_one(history, records.kind, facts, result, warn, samples)


def _keep_one(history: History, kind: str, facts: dict, result: dict, warn, samples: dict | None = None) -> dict:
    samples = samples or {}
    try:
        identity = history.model_identity(facts["model"])
    except OSError as exc:                       # the model went while the job ran
        message = f"{facts['model']}: the model cannot be read ({exc.strerror or exc}); this result is not stored"
        history.warnings.append(message)
        if warn is not None:
            warn(message)
        result.update(history_id=None, history_warnings=history.warnings)
        return result
    if isinstance(result.get("model"), dict):
        result["model"] = {**result["model"], **identity}
    result["history_id"] = history.record(kind, result, samples.get("warmup_ms"), samples.get("samples_ms"),
                                          facts={**facts, "model": identity})
    result["history_warnings"] = history.warnings
    return result
