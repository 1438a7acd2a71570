"""`ortune history --show` prints a result stored by an older ORTune as its command prints a
new one, and refuses one from a newer ORTune (or a damaged one) in one line, exit 2."""

import json

import pytest

from app.core.store.history import History
from app.core.store.migrations import REPORT_VERSION, VERSION_KEY
from tests import models, old_reports


@pytest.fixture(autouse=True)
def own_history(tmp_path, monkeypatch):
    monkeypatch.setenv("ORTUNE_DATA_DIR", str(tmp_path / "data"))


def test_a_benchmark_stored_before_versions_shows_as_it_did(ortune, tmp_path):
    # the shape this ORTune stores, without the version: what every earlier one kept
    path = models.save(models.mlp(), tmp_path / "mlp.onnx")
    done = ortune("bench", path, "--iterations", "5", "--warmup", "1", "--json")
    assert done.code == 0, done.stderr
    assert done.json()[VERSION_KEY] == REPORT_VERSION
    stored = History().get(done.json()["history_id"])["report"]
    shown = ortune("history", "--show", done.json()["history_id"]).stdout
    unversioned = {key: value for key, value in stored.items() if key != VERSION_KEY}
    old = ortune("history", "--show", old_reports.store_unversioned("bench", unversioned))
    assert old.code == 0, old.stderr
    def without_id(text):
        return [line for line in text.splitlines() if not line.startswith("stored as result")]
    assert without_id(old.stdout) == without_id(shown) and "p50" in shown


@pytest.mark.parametrize("kind, report, shows", [
    ("compare", old_reports.compare_before_alternation(), "one after the other"),
    ("sweep", old_reports.sweep_before_alternation(), "one-after-the-other"),
    ("convert", old_reports.conversion_before_the_verdict_rule(), "slower than the source on this machine"),
])
def test_a_result_stored_before_versions_shows(ortune, kind, report, shows):
    done = ortune("history", "--show", old_reports.store_unversioned(kind, report))
    assert done.code == 0, done.stderr
    assert shows in done.stdout
    listed = ortune("history", "--json")
    assert listed.code == 0 and [r["kind"] for r in listed.json()["results"]] == [kind]


def test_a_result_from_a_newer_ortune_is_refused_in_one_line(ortune):
    newer = old_reports.store_raw("compare", json.dumps({VERSION_KEY: REPORT_VERSION + 1, "models": "changed"}))
    damaged = old_reports.store_raw("compare", "{\"models\": [")
    for entry_id, words in ((newer, "was stored by a newer ORTune"), (damaged, "is damaged")):
        done = ortune("history", "--show", entry_id)
        assert done.code == 2 and done.stdout == ""
        assert done.stderr.count("\n") == 1 and words in done.stderr and "Traceback" not in done.stderr
        as_json = ortune("history", "--show", entry_id, "--json")
        assert as_json.code == 2 and as_json.json()["error"]["kind"] in ("newer-result", "damaged-result")
    assert ortune("history", "--delete", newer, damaged).code == 0, "what cannot be read can still be deleted"
    assert ortune("history", "--json").json()["results"] == []
