"""A tuning race spread over a Ray cluster (app.core.targets.cluster).

Each task tunes its share of the settings (every n-th, from its own start) against its own
copy of the user's settings on one worker, with the whole method of a local run: the race,
its finalists measured again alone, the winner confirmed fresh. So every speedup is formed
on one machine. The task whose winner its worker found fastest gives the answer: valid when
the workers are alike, which is when spreading is valid at all. Each trial says which
worker measured it. This is the entry's `spread` (app.core.tune.jobs), started as every
job is (app.core.launch.start)."""

from __future__ import annotations

import time

from app.core.jobs.entry import Job
from app.core.targets.cluster import connect, run_spread, workers

NOTE = ("each task raced its share of the settings against its own copy of yours on one worker, then measured "
        "its finalists and its winner alone there; speedups are never formed across workers")


def spread_tune(job: Job, params, address: str, tasks: int | None = None, ctx=None) -> dict:
    """`job`: the tuning entry; `params`: its TuneParams."""
    count = max(1, tasks or len(workers(connect(address))))
    parts = [params.to_dict() | {"share": [index, count]} for index in range(count)]
    answers, cluster = run_spread(address, job, parts, ctx)
    shares = []
    for answer in answers:
        where = {"node": answer["node"], "host": answer["host"]}
        result = answer["result"]
        for trial in result["trials"]:
            trial["measured_on"] = where
        shares.append({**where, "offered": result["clearly_faster"], "best": result["best"]["label"],
                       "speedup": result["speedup"], "speedup_ci": result["speedup_ci"], "verdict": result["verdict"],
                       "space_size": result["space_size"], "trials_used": result["trials_used"]})
    offered = [a for a in answers if a["result"]["clearly_faster"]]
    chosen = max(offered, key=lambda a: a["result"]["speedup"]) if offered else answers[0]
    result = dict(chosen["result"])
    result["trials"] = [t for a in answers for t in a["result"]["trials"]]
    result["failed"] = [f for a in answers for f in a["result"]["failed"]]
    result["merged"] = chosen["result"]["merged"]
    for key in ("space_size", "trials_used"):
        result[key] = sum(a["result"][key] for a in answers)
    result["best"] = dict(result["best"], measured_on={"node": chosen["node"], "host": chosen["host"]})
    result["cluster"] = cluster | {"tasks": shares, "note": NOTE}
    result["created"] = time.time()
    return result
