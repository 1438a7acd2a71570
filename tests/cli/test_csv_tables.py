"""`--csv FILE` on `ortune profile` and `ortune compare`: the table the window exports, as a file."""

import csv

from app.core.formatting import interval_text
from app.core.verdict import verdict_words
from app.core.bench.compare import COMPARE_HEADERS
from app.core.profile.tables import NODE_HEADERS, OPERATOR_HEADERS
from tests import models
from tests.traces import handmade_nodes, write_trace


def read(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def test_profile_writes_the_operator_table_and_on_request_the_node_table(ortune, tmp_path):
    trace = write_trace(tmp_path / "t.json", handmade_nodes(), runs=3)
    done = ortune("profile", trace, "--csv", tmp_path / "ops.csv", "--json")
    assert done.code == 0, done.stderr
    info = done.json()
    header, *rows = read(tmp_path / "ops.csv")
    assert header == OPERATOR_HEADERS
    assert [row[0] for row in rows] == [r["op_type"] for r in info["by_op_type"]]
    conv = next(row for row in rows if row[0] == "Conv")
    assert float(conv[1]) == 1.12 and conv[2] == "6", "milliseconds and whole counts, as numbers"
    nodes = ortune("profile", trace, "--csv", tmp_path / "nodes.csv", "--csv-nodes", "--top", "2")
    assert nodes.code == 0, nodes.stderr
    header, *rows = read(tmp_path / "nodes.csv")
    assert header == NODE_HEADERS and [row[0] for row in rows] == ["1", "2"]


def test_an_existing_csv_is_kept_without_force(ortune, tmp_path):
    trace = write_trace(tmp_path / "t.json", handmade_nodes(), runs=3)
    (tmp_path / "ops.csv").write_text("mine")
    done = ortune("profile", trace, "--csv", tmp_path / "ops.csv")
    assert done.code == 2 and "--force" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert (tmp_path / "ops.csv").read_text() == "mine"
    assert ortune("profile", trace, "--csv", tmp_path / "ops.csv", "--force").code == 0
    assert read(tmp_path / "ops.csv")[0] == OPERATOR_HEADERS
    missing = ortune("profile", trace, "--csv", tmp_path / "no" / "ops.csv")
    assert missing.code == 2 and "does not exist" in missing.stderr
    alone = ortune("profile", trace, "--csv-nodes")
    assert alone.code == 2 and "--csv FILE" in alone.stderr


def test_compare_writes_its_table_with_interval_and_verdict(ortune, tmp_path):
    first = models.save(models.mlp(width=16, depth=1), tmp_path / "a.onnx")
    second = models.save(models.mlp(width=16, depth=2), tmp_path / "b.onnx")
    out = tmp_path / "compare.csv"
    done = ortune("compare", first, second, "--iterations", "20", "--max-seconds", "5", "--no-history", "--csv", out, "--json")
    assert done.code == 0, done.stderr
    result = done.json()
    header, *rows = read(out)
    assert header == COMPARE_HEADERS
    assert [row[0] for row in rows] == ["a.onnx", "b.onnx"]
    other = result["models"][1]
    low, high = other["speedup_ci"]
    assert rows[1][1:4] == [str(other["speedup"]), interval_text((low, high)), verdict_words(other["verdict"])]  # as the tab
    assert rows[0][3] == "reference" and rows[0][9] == "reference"
