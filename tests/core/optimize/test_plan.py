"""The search's phases plan against what is left of the budget at what the work is seen to
cost (a fake clock and made-up alternations: no timing is asserted)."""

from app.core.jobs.protocol import JobContext
from app.core.optimize.budget import START_GUESS_S, Budget
from app.core.optimize.plan import least_to_measure, nothing_measured, tune_keep, tune_least, tune_needs
from app.core.optimize.rows import answer, answer_text, failed_row, source_row


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_the_budget_learns_what_a_process_start_costs_from_an_alternation():
    clock = Clock()
    budget = Budget(150.0, JobContext(), clock)
    assert budget.start_s == START_GUESS_S, "the first guess until something is measured"
    started = budget.elapsed()
    clock.now += 20.0                                   # 5 members, 6 s of blocks: 14 s of starts and stops
    budget.note_alternation(started, 6.0, 5)
    assert budget.start_s == 14.0 / 5
    started = budget.elapsed()
    clock.now += 10.0
    budget.note_alternation(started, 4.0, 3)            # 2 s each this time: the mean of what was seen
    assert abs(budget.start_s - (2.8 + 2.0) / 2) < 1e-9


def test_the_last_seconds_are_kept_for_writing_the_folder():
    clock = Clock()
    budget = Budget(150.0, JobContext(), clock)
    clock.now += 100.0
    assert budget.left() == 150.0 - 100.0 - budget.finish and 2.0 <= budget.finish <= 5.0


def test_the_eta_never_passes_the_budget_and_follows_the_work_planned():
    clock = Clock()
    budget = Budget(60.0, JobContext(), clock)
    budget.expect(200.0)
    assert budget.eta() == 60.0
    clock.now += 10.0
    budget.expect(20.0)
    assert budget.eta() == 20.0


def test_tuning_keeps_its_share_raised_to_what_it_needs_or_nothing():
    least = tune_needs(3.0)
    assert tune_keep(150.0, 3.0) == 0.35 * 150.0
    assert tune_keep(0.9 * least / 0.35, 3.0) == least, "a share a little short is raised to the least"
    assert tune_keep(30.0, 3.0) == 0.0, "a share far below the least tune needs keeps nothing: screening has it"
    assert tune_keep(60.0, 6.0) == 0.0 < tune_keep(60.0, 2.0), "slower starts need a bigger budget"


def test_a_budget_that_measured_nothing_says_so_and_names_one_that_would():
    rows = [{"kind": "source", "status": "passed", "speedup": 1.0, "reason": ""},
            failed_row("optimize", "skipped", "the budget was spent before its speed could be measured"),
            failed_row("ort", "skipped", "the budget was spent before it could be made"),
            failed_row("fp16", "skipped", "float16 on the CPU provider")]
    least = least_to_measure(45.0, 3.0)
    assert least - tune_least(least, 3.0) >= 45.0 and least % 10 == 0, "the work besides what tuning keeps fits"
    text = nothing_measured(rows, 30.0, least)
    assert "30 s budget was too small to measure any candidate" in text and "optimize, ort" in text
    assert f"raise the budget to about {least:.0f} s" in text
    rows[1] = {**rows[1], "speedup": 1.1}
    assert nothing_measured(rows, 30.0, least) == "", "one candidate measured: the ordinary answer stands"


def test_the_answer_says_nothing_was_measured_instead_of_nothing_was_faster(tmp_path):
    model = tmp_path / "m.onnx"
    model.write_bytes(b"x")
    why = "the 30 s budget was too small to measure any candidate (ort skipped for time): raise the budget to about 60 s"
    choice = answer(source_row(model), {"skipped": True}, model, tmp_path / "preset.json", {}, why)
    assert choice["note"].endswith(why) and choice["unmeasured"] == why
    assert "nothing was measured" in answer_text(choice) and "faster" not in answer_text(choice).split(":")[0]
    plain = answer(source_row(model), {"skipped": True}, model, tmp_path / "preset.json", {})
    assert "nothing measured was faster" in answer_text(plain)


def test_the_answer_carries_what_the_tuned_settings_gain_rests_on(tmp_path):
    model = tmp_path / "m.onnx"
    model.write_bytes(b"x")
    rests_on = {"threads": 2, "your_threads": 1, "cores": 2, "free_cores": 1.0, "text": "the gain rests on 2 …"}
    tune = {"kind": "source", "clearly_faster": True, "session": {"intra_op_num_threads": 2}, "speedup": 1.2,
            "speedup_ci": [1.15, 1.25], "verdict": "faster", "rests_on": rests_on}
    choice = answer(source_row(model), tune, model, tmp_path / "preset.json", {"intra_op_num_threads": 1})
    assert choice["tuned"] and choice["rests_on"] == rests_on and answer_text(choice).endswith(rests_on["text"])
    untuned = answer(source_row(model), {**tune, "clearly_faster": False}, model, tmp_path / "p.json", {})
    assert "rests_on" not in untuned


def test_what_a_tuned_claim_rests_on_reaches_the_answer_from_the_tune_result(tmp_path):
    """Tuning inside optimize kept the claim but dropped its rests_on: the answer said
    nothing of the second core a 2-thread preset needs."""
    from app.core.optimize.rows import tune_summary

    model = tmp_path / "m.onnx"
    model.write_bytes(b"x")
    rests_on = {"threads": 2, "your_threads": 1, "cores": 2, "free_cores": 2.0, "text": "the gain rests on 2 …"}
    result = {"clearly_faster": True, "speedup": 1.2, "speedup_ci": [1.17, 1.24], "verdict": "faster",
              "note": "…", "best": {"session": {"intra_op_num_threads": 2}}, "seconds": 30.0, "rests_on": rests_on}
    tune = tune_summary("source", result)
    choice = answer(source_row(model), tune, model, tmp_path / "preset.json", {"intra_op_num_threads": 1})
    assert choice["rests_on"] == rests_on and answer_text(choice).endswith(rests_on["text"])
