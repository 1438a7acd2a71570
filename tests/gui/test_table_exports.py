"""The window's Compare and Profile tables export the rows the command line's --csv writes."""

from app.core.bench.compare import compare_table
from app.core.profile.tables import operator_table
from app.core.tables import rows_to_csv


def _row(label, speedup, verdict, ci):
    return {"label": label, "path": f"/{label}", "size_bytes": 2048, "speedup": speedup, "speedup_ci": ci,
            "verdict": verdict, "latency_ms": {"p50": 1.5, "p90": 1.75, "p99": 2.0}, "throughput_per_s": 600.0,
            "providers": ["CPUExecutionProvider"], "fidelity": None if verdict == "reference" else
            {"max_abs_diff": 1e-6, "min_cosine": 1.0}, "rounds": 10}


def test_the_compare_tab_exports_the_rows_of_compare_csv(window, tmp_path):
    panel = window.panel("Compare")
    panel.ensure_built()
    result = {"baseline": "a.onnx", "models": [_row("a.onnx", 1.0, "reference", [1.0, 1.0]),
                                               _row("b.onnx", 1.25, "faster", [1.125, 1.375])],
              "inputs": [], "created": 0.0,
              "alternation": {"rounds_run": 30, "block_runs": 5, "verdict_rule": "the one rule"}}
    panel.show_result(result)
    exported = panel.table.export_csv(str(tmp_path / "window.csv"))
    assert open(exported, encoding="utf-8").read() == rows_to_csv(*compare_table(result))


def test_the_profile_tab_exports_the_rows_of_profile_csv(qtbot, tmp_path):
    from app.gui.panels.profile.views import OperatorsView

    view = OperatorsView()
    qtbot.addWidget(view)
    info = {"by_op_type": [{"op_type": "Conv", "total_us": 1120.0, "count": 6, "avg_us": 186.7, "avg_all_us": 190.0,
                            "percent": 58.7, "per_run_us": 373.3, "nodes": 2, "providers": ["CPUExecutionProvider"]}]}
    view.show_profile(info, False)
    exported = view.table.export_csv(str(tmp_path / "window.csv"))
    assert open(exported, encoding="utf-8").read() == rows_to_csv(*operator_table(info))
