"""Stored results carry their version; an older one is brought to this shape once, where the
history reads it; a newer or damaged one is refused in one line."""

import json

import pytest

from app.core.jobs.errors import UserError
from app.core.store.history import History
from app.core.store.migrations import MIGRATIONS, REPORT_VERSION, VERSION_KEY, migrated
from app.core.verdict import REFERENCE, SEQUENTIAL
from tests import old_reports


@pytest.fixture
def history(tmp_path):
    return History(tmp_path / "h.sqlite")


def test_a_result_is_stored_with_its_version_and_keeps_it(history):
    report = dict(old_reports.conversion_before_the_verdict_rule(), speed={"skipped": True, "why": "off"})
    entry_id = history.record("convert", report)
    assert report[VERSION_KEY] == REPORT_VERSION, "the result the job returns says its version too"
    assert history.get(entry_id)["report"] == report


def test_the_steps_lead_from_every_version_to_this_one():
    assert [(m.from_, m.to) for m in MIGRATIONS] == [(v, v + 1) for v in range(REPORT_VERSION)]


def test_a_comparison_stored_before_alternation_reads_as_timed_one_after_the_other(history):
    entry_id = old_reports.store_unversioned("compare", old_reports.compare_before_alternation(), history)
    report = history.get(entry_id)["report"]
    reference, other = report["models"]
    assert (reference["verdict"], reference["speedup_ci"]) == (REFERENCE, [1.0, 1.0])
    assert (other["verdict"], other["speedup_ci"], other["speedup"]) == (SEQUENTIAL, None, 1.5)
    assert report["alternation"] is None and report[VERSION_KEY] == REPORT_VERSION


def test_a_sweep_stored_before_alternation_has_cells_without_ratios(history):
    entry_id = old_reports.store_unversioned("sweep", old_reports.sweep_before_alternation(), history)
    report = history.get(entry_id)["report"]
    assert [(c["ratio"], c["ratio_ci"], c["verdict"]) for c in report["cells"]] == [(None, None, SEQUENTIAL)] * 2
    assert report["alternation"] is None


def test_a_speed_check_stored_before_the_verdict_rule_is_judged_by_it(history):
    # a narrow interval wholly below ×1 was "could not tell" on a busy machine; the one rule says slower
    entry_id = old_reports.store_unversioned("convert", old_reports.conversion_before_the_verdict_rule(), history)
    speed = history.get(entry_id)["report"]["speed"]
    assert speed["verdict"] == "slower" and speed["why_verdict"].startswith("slower: the 95 % interval")
    assert speed["too_busy"] is False and speed["conclusive"] is True


def test_a_repair_step_keeps_its_verdict_and_gets_the_fields_added_since():
    step = {"ratio": 0.46, "ratio_ci": [0.5, 1.4], "verdict": "no-difference", "rounds": 30}
    report = migrated({"repair": {"steps": [{"step": 1, "speed": dict(step)}]}}, "a result")
    assert report["repair"]["steps"][0]["speed"] == step | {"too_busy": False, "conclusive": True}


def test_a_kept_candidate_gets_its_reason_without_the_answers_words(history):
    entry_id = old_reports.store_unversioned("convert", old_reports.candidate_before_its_measured_reason(), history)
    row = history.get(entry_id)["report"]["optimize_candidate"]["row"]
    assert row["measured_reason"] == "faster than the source (×1.20)"


def test_a_result_of_this_version_is_read_as_it_was_stored(history):
    report = old_reports.compare_before_alternation()
    migrated(report, "a result")
    again = json.loads(json.dumps(report))
    assert migrated(again, "a result") == report, "migrated once: reading it again changes nothing"


@pytest.mark.parametrize("text, words", [
    (json.dumps({VERSION_KEY: REPORT_VERSION + 1, "models": []}), "stored by a newer ORTune (result version 2"),
    ("{\"model\": ", "is damaged: its text is not JSON"),
    ("[1, 2]", "is damaged: it holds list, not a result"),
    (json.dumps({VERSION_KEY: "one"}), "is damaged: its version \"one\" is not a version"),
    (json.dumps({"models": [7]}), "is damaged: a version 0 result lacks what it should hold"),
])
def test_a_newer_or_damaged_result_is_refused_in_one_line(history, text, words):
    entry_id = old_reports.store_raw("compare", text, history)
    with pytest.raises(UserError) as refused:
        history.get(entry_id)
    assert refused.value.message.startswith(f"stored result {entry_id} ") and words in refused.value.message
    assert "\n" not in refused.value.message
    assert [e["id"] for e in history.entries()] == [entry_id], "listed, and the listing still works"
    history.require(entry_id)       # still there, and it can be deleted
    history.delete(entry_id)
    with pytest.raises(UserError, match="no stored result number"):
        history.require(entry_id)
