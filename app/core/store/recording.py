"""The one place a finished job's result is kept in the history: its entry's Records say
under which kind and file it (app.core.jobs.entry.Records); the result gets the stored
entry's id and the store's warnings. The one start function (app.core.targets.start)
calls it once a run, wherever the run was measured."""

from __future__ import annotations

from typing import Any, Callable

from app.core.jobs.entry import Records
from app.core.store.history import SAMPLES_KEY, History


def keep(records: Records, params: Any, result: Any, warn: Callable[[str], None] | None = None) -> Any:
    """Store `result` as `records` say, unless its facts say this run is not kept. A result
    that names its model as a {path} gets the model's content hash beside it; the latencies
    a result carries for the chart go to the history and out of the result."""
    if not isinstance(result, dict):
        return result
    samples = result.pop(SAMPLES_KEY, None) or {}
    facts = records.facts(params, result)
    if facts is None:
        return result
    history = History(warn=warn)
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
    result["history_id"] = history.record(records.kind, result, samples.get("warmup_ms"), samples.get("samples_ms"),
                                          facts={**facts, "model": identity})
    result["history_warnings"] = history.warnings
    return result
