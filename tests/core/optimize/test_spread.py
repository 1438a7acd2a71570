"""The spreading of optimize's candidates over Ray workers (app.core.optimize.spread)."""

from app.core.optimize.spread import merge, shares


def test_shares_deal_the_kinds_out_round_robin():
    kinds = ["optimize", "ort", "int8-dynamic", "int8-static", "int4"]
    assert shares(kinds, 2) == [["optimize", "int8-dynamic", "int4"], ["ort", "int8-static"]]
    assert shares(kinds, 8) == [[k] for k in kinds], "never an empty share"
    assert shares(kinds, 1) == [kinds] and shares([], 3) == []
    assert sorted(k for share in shares(kinds, 3) for k in share) == sorted(kinds)


def _row(kind):
    return {"kind": kind, "status": "passed", "speedup": 1.3, "speedup_ci": [1.2, 1.4], "reason": "faster"}


def test_merge_keeps_the_plans_order_and_names_each_rows_worker():
    plan = [("optimize", ""), ("ort", ""), ("fp16", "float16 is slower on the CPU"), ("int4", "")]
    answers = [{"node": "a", "host": "h1", "result": {"rows": [_row("int4"), _row("optimize")]}},
               {"node": "b", "host": "h2", "result": {"rows": [_row("ort")]}}]
    rows = merge(plan, answers)
    assert [r["kind"] for r in rows] == ["optimize", "ort", "fp16", "int4"]
    assert [r.get("measured_on", {}).get("node") for r in rows] == ["a", "b", None, "a"]
    assert rows[2]["status"] == "skipped" and rows[2]["reason"] == "float16 is slower on the CPU"


def test_merge_says_when_a_worker_left_a_kind_out():
    rows = merge([("optimize", "")], [{"node": "a", "host": "h", "result": {"rows": []}}])
    assert rows[0]["status"] == "skipped" and "no worker" in rows[0]["reason"]


def test_merge_says_which_kinds_a_cancel_left_unmeasured():
    answers = [{"node": "a", "host": "h", "result": {"rows": [_row("optimize")]}}]
    rows = merge([("optimize", ""), ("ort", "")], answers, cancelled=True)
    assert rows[0]["status"] == "passed" and rows[0]["measured_on"] == {"node": "a", "host": "h"}
    assert rows[1]["status"] == "skipped" and "cancelled before a worker measured it" in rows[1]["reason"]
