"""Measurements laid on the drawn graph: for each drawn node, the value an overlay colours
it by, from a result ORTune made elsewhere (a profile, a placement, the node details'
cost, a drift run, a diff). Results name nodes (and drift names tensors); the drawing
knows nodes by id, so each function matches names to ids and says how many it could
not place: ONNX Runtime's optimiser fuses and renames nodes, and a profile or placement
of an optimised session names the nodes it made.

Names ONNX Runtime made are traced back to the source nodes by app.core.graph.ort_names:
a fusion's time is its kept node's, the nodes it absorbed say where their time went.

Every function returns {"values": {id: value}, "unmatched": n, "total": n} (profile_times
also "absorbed")."""

from __future__ import annotations

from app.core.graph.ort_names import NodeNames as _Names


def _result(values: dict, unmatched: int, total: int) -> dict:
    return {"values": values, "unmatched": unmatched, "total": total}


def profile_times(nodes: list[dict], profile: dict) -> dict:
    """µs per run of each node the profile timed, as the Profile tab counts it (its node
    time in the steady runs over their number); `absorbed`: of the top-level nodes ORT
    did not run under their own name, id -> the node it fused them into ("": removed)."""
    ids = _Names(nodes)
    rows = profile.get("by_node", [])
    runs = max(1, profile.get("runs", 1))
    values, missing = {}, 0
    for row, node_id in zip(rows, ids.match(rows)):
        if node_id is None:
            missing += 1
        else:
            per_run = row.get("per_run_us", row["avg_us"] * row["count"] / runs)
            values[node_id] = values.get(node_id, 0.0) + per_run
    found = _result(values, missing, len(rows))
    found["absorbed"] = ids.absorbed(set(values)) if rows else {}
    return found


def providers(nodes: list[dict], placement: dict) -> dict:
    """The execution provider that runs each node."""
    rows = placement.get("nodes", [])
    values, missing = {}, 0
    for row, node_id in zip(rows, _Names(nodes).match(rows)):
        if node_id is None:
            missing += 1
        else:
            values[node_id] = row["provider"]
    return _result(values, missing, len(placement.get("nodes", [])))


def fallbacks(placement: dict) -> set[str]:
    """Providers that mean a fallback here: CPU when another provider was asked for first."""
    asked = placement.get("providers", [])
    return {"CPUExecutionProvider"} if asked and asked[0] != "CPUExecutionProvider" else set()


def flops(details: dict) -> dict:
    """FLOPs of each node whose cost is counted (app.core.graph.details)."""
    return _result(dict(details.get("flops", {})), 0, len(details.get("nodes", {})))


def drift(nodes: list[dict], result: dict) -> dict:
    """Per node, the drift of the tensor it writes (the worst one, by SQNR in dB, where it
    writes several): {sqnr_db, passed, tensor}."""
    writer = {t: n["id"] for n in nodes for t in n["outputs"]}
    values, missing = {}, 0
    for row in result.get("tensors", []):
        node_id = writer.get(row["name"])
        if node_id is None:
            missing += 1
            continue
        sqnr = row.get("sqnr_db")
        seen = values.get(node_id)
        if seen is None or (sqnr is not None and (seen["sqnr_db"] is None or sqnr < seen["sqnr_db"])):
            values[node_id] = {"sqnr_db": sqnr, "passed": row.get("passed"), "tensor": row["name"]}
    return _result(values, missing, len(result.get("tensors", [])))


def diff_states(nodes: list[dict], diff: dict) -> dict:
    """added or changed, for the nodes of the diff's second model (B) drawn here; what B
    lacks (removed) cannot be drawn on B and stays in the diff's list."""
    ids = {n["name"]: n["id"] for n in nodes if n["kind"] == "op" and not n["owner"]}
    values, missing = {}, 0
    for state in ("added", "changed"):
        for row in diff.get(state, []):
            node_id = ids.get(row["name"])
            if node_id is None:
                missing += 1
            else:
                values[node_id] = state
    return _result(values, missing, len(diff.get("added", [])) + len(diff.get("changed", [])))


def achieved(nodes: list[dict], profile: dict, details: dict) -> dict:
    """FLOP/s each timed and counted node reached: its FLOPs over its time per run."""
    times = profile_times(nodes, profile)["values"]
    counted = details.get("flops", {})
    values = {i: counted[i] / (us * 1e-6) for i, us in times.items() if us > 0 and counted.get(i)}
    return _result(values, 0, len(times))


def achieved_by_type(nodes: list[dict], profile: dict, details: dict) -> dict[str, float]:
    """FLOP/s each operator type reached over its timed and counted nodes: their FLOPs over
    their time per run, summed per type (a type whose FLOPs are not counted is left out)."""
    times = profile_times(nodes, profile)["values"]
    counted = details.get("flops", {})
    kinds = {n["id"]: n["op_type"] for n in nodes}
    work: dict[str, list[float]] = {}
    for node_id, us in times.items():
        if us > 0 and counted.get(node_id) and node_id in kinds:
            totals = work.setdefault(kinds[node_id], [0.0, 0.0])
            totals[0] += counted[node_id]
            totals[1] += us
    return {kind: flops / (us * 1e-6) for kind, (flops, us) in work.items()}
