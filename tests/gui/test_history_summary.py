"""A stored result reads in words and tables: no float noise, one unit and format per column."""

import re

from app.core.session.config import SessionConfig
from app.gui.panels.history.summary import summary_html
from app.gui.widgets.table import DataTable


def _bench_entry():
    latency = {"mean": 19.219351698, "p50": 16.8895025, "p90": 33.2241479, "p95": 40.63337314999999,
               "p99": 53.44679143, "p999": 64.67908942300056, "min": 3.549304, "max": 125.174488,
               "std": 11.149651156874853}
    report = {"latency_ms": latency, "throughput_per_s": 50.10187484949999, "iterations": 1500, "measure_s": 29.9,
              "session_create_ms": 115.5, "first_run_ms": 14.48, "peak_rss_bytes": 138_600_000,
              "providers": ["CPUExecutionProvider"]}
    return {"kind": "bench", "report": report, "session": SessionConfig(intra_op_num_threads=2).to_dict(),
            "run": {"warmup": 10, "iterations": 1500, "duration_s": None, "concurrency": 1}}


def test_bench_summary_reads_in_words_without_float_noise():
    html = summary_html(_bench_entry())
    assert "CPU, all optimisations, 2 threads, sequential" in html
    assert "10 warm-up runs, then 1,500 runs, concurrency 1" in html
    assert "0.0187484" not in html and "999999" not in html
    assert "16.89" in html and "125.17" in html and "3.55" in html   # one unit, decimals set by the fastest
    assert "50.10 runs/s" in html and "116 ms" in html and "29.9 s" in html


def test_compare_summary_gives_each_column_one_unit():
    model = {"size_bytes": 585_532, "throughput_per_s": 944.7470001, "speedup": 1.0, "speedup_ci": [1.0, 1.0],
             "verdict": "reference", "fidelity": None, "latency_ms": {"p50": 0.95, "p99": 1.3}}
    other = dict(model, label="b", throughput_per_s=2767.2, speedup=1.0187484949999999, speedup_ci=[0.98, 1.05],
                 verdict="no-difference", fidelity={"max_abs_diff": 1.2e-7}, latency_ms={"p50": 0.35, "p99": 0.5})
    entry = {"kind": "compare", "session": None, "run": None,
             "report": {"baseline": "a", "models": [dict(model, label="a"), other]}}
    html = summary_html(entry)
    assert "p50 µs" in html and "950" in html and "350" in html
    assert "945" in html and "2,767" in html and "944.7470" not in html
    assert "×1.02" in html and "1.0187" not in html


def test_a_table_column_has_one_number_format(qtbot):
    table = DataTable(["runs/s", "ms"])
    qtbot.addWidget(table)
    table.decimals = 4
    table.set_rows([[944.747, 0.3612], [2767.2, 1.0594]])
    texts = [[table.cell(r, c) for c in range(2)] for r in range(2)]
    assert texts == [["945", "0.361"], ["2,767", "1.059"]]
    assert all(len(re.sub(r".*\.", "", t[1])) == 3 for t in texts)
