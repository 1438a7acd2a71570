"""A profile's tables as the Profile tab shows them and `ortune profile --csv` writes them:
per operator type and per node, figures as numbers (milliseconds where the column says ms)."""

from __future__ import annotations

SHARE = "% of node time"
OPERATOR_HEADERS = ["Op type", "Total ms", "Calls", "Avg µs per call", SHARE, "ms per run", "Nodes", "Provider"]
NODE_HEADERS = ["#", "Node", "Op type", "Total ms", "Calls", "Avg µs per call", SHARE, "Provider", "Inputs",
                "Outputs"]


def _ms(us: float | None) -> float | None:
    return None if us is None else us / 1000.0


def short_provider(provider: str) -> str:
    return provider.replace("ExecutionProvider", "")


def _average(include_first_run: bool) -> str:
    return "avg_all_us" if include_first_run else "avg_us"


def operator_table(info: dict, include_first_run: bool = False) -> tuple[list[str], list[list]]:
    average = _average(include_first_run)
    return list(OPERATOR_HEADERS), [
        [r["op_type"], _ms(r["total_us"]), r["count"], r[average], r["percent"], _ms(r["per_run_us"]), r["nodes"],
         ", ".join(short_provider(p) for p in r["providers"])] for r in info["by_op_type"]]


def node_table(nodes: list[dict], include_first_run: bool = False, needle: str = "",
               top: int | None = None) -> tuple[list[str], list[list]]:
    """The nodes in the profile's order, ranked from 1; `needle`: only those whose name holds
    it (any case); `top`: at most that many rows."""
    average, needle = _average(include_first_run), needle.strip().lower()
    rows = []
    for rank, node in enumerate(nodes, 1):
        if needle and needle not in node["name"].lower():
            continue
        rows.append([rank, node["name"], node["op_type"], _ms(node["total_us"]), node["count"], node[average],
                     node["percent"], short_provider(node["provider"]), "  ".join(node["input_shapes"]),
                     "  ".join(node["output_shapes"])])
        if top is not None and len(rows) >= top:
            break
    return list(NODE_HEADERS), rows
