import re

import pytest

from app.core.jobs.errors import UserError
from app.core.jobs.protocol import JobContext
from app.core.session.config import SessionConfig
from app.core.tune.confirm import NOTHING_FASTER_LABEL
from app.core.tune.jobs import TUNE
from app.core.tune.tune import Contender, distinct, prune
from app.core.tune.space import describe
from tests import models

QUICK = {"block_runs": 3, "warmup": 1, "finalists": 1, "confirm_seconds": 0.1}


def _candidate(level="all", mode="sequential", intra=1, provider="CPUExecutionProvider", **extra):
    return {"provider": provider, "graph_optimization_level": level, "execution_mode": mode,
            "intra_op_num_threads": intra, "inter_op_num_threads": 1 if mode == "parallel" else 0,
            "intra_op_allow_spinning": None, "dynamic_block_base": 0, "io_binding": False, **extra}


def test_prune_drops_clearly_worse_then_halves():
    base = SessionConfig()
    contenders = [Contender(i, f"c{i}", base) for i in range(8)]
    for i, contender in enumerate(contenders):
        contender.ratios = [1.0 + i * 0.1 + d for d in (-0.001, 0.0, 0.001)]
    prune(contenders, 0, eta=4)
    assert [c.label for c in contenders if c.alive] == ["c0"]
    assert all(c.eliminated_in_round == 0 for c in contenders[1:])


def test_the_race_leaves_out_settings_that_run_alike():
    candidates = [_candidate(intra=2, intra_op_allow_spinning=True), _candidate(level="basic"),
                  _candidate(level="basic", intra_op_allow_spinning=False),
                  _candidate(level="basic", dynamic_block_base=4), _candidate(level="basic", intra=2),
                  _candidate(intra=2)]
    contenders, merged = distinct(SessionConfig(), candidates, cores=2)     # yours: ORT's default, 2 threads
    # labelled in words, as what each changes in your settings
    assert [c.label for c in contenders] == ["basic optimisation, 1 thread", "basic optimisation, 2 threads"]
    assert [c.index for c in contenders] == [0, 1]
    # with one thread, spinning and the block base do nothing: those settings read as what they run as
    assert merged == [{"label": "2 threads", "same_as": "your settings"},
                      {"label": "basic optimisation, 1 thread", "same_as": "basic optimisation, 1 thread"},
                      {"label": "basic optimisation, 1 thread", "same_as": "basic optimisation, 1 thread"},
                      {"label": "2 threads", "same_as": "your settings"}]


@pytest.fixture
def small_model(tmp_path):
    return str(models.save(models.mlp(width=32, depth=2), tmp_path / "mlp.onnx"))


def _params(path, **extra):
    # Your settings (basic, one thread) are none of the six candidates.
    limits = {"max_threads": 1, "opt_levels": ["disable", "extended", "all"]}
    return {"path": path, "session": {"graph_optimization_level": "basic", "intra_op_num_threads": 1},
            "limits": limits, **QUICK, **extra}


def _check_offer(result):
    """The promise: best is a finalist found faster alone, or your own settings."""
    if result["best"]["label"] == NOTHING_FASTER_LABEL:
        assert result["best"]["session"] == result["default"]["session"]
        assert (result["speedup"], result["verdict"]) == (1.0, "reference") and not result["clearly_faster"]
    else:
        trial = next(t for t in result["trials"] if t["label"] == result["best"]["label"])
        assert trial["remeasured"] and trial["verdict"] == result["verdict"] == "faster"
        assert result["speedup"] == trial["speedup"] and result["speedup_ci"][0] > 1.0
    SessionConfig.from_dict(result["best"]["session"])        # a preset --config accepts


def test_race_spends_fewer_trials_than_the_grid(small_model):
    grid = TUNE(_params(small_model, strategy="grid", grid_blocks=3), JobContext())
    race = TUNE(_params(small_model, final_blocks=2), JobContext())
    assert grid["space_size"] == race["space_size"] == 6
    assert grid["trials_used"] == 6 * 3
    assert all(t["blocks"] == 3 for t in grid["trials"])
    assert race["trials_used"] < grid["trials_used"]
    for result in (grid, race):
        _check_offer(result)
        assert result["default"]["latency_ms"] > 0 and result["alternation"]["rounds_run"] >= 10
        latencies = [t["latency_ms"] for t in result["trials"]]
        assert latencies == sorted(latencies)                 # the race's own figures, as it ranked them
        assert sum(t["remeasured"] for t in result["trials"]) == 1


def test_a_setting_slower_alone_is_not_offered_and_a_faster_one_is(tmp_path):
    path = str(models.save(models.foldable(), tmp_path / "foldable.onnx"))
    slower = TUNE({"path": path, "session": {"intra_op_num_threads": 1}, "candidates": [_candidate(level="disable")],
                   **QUICK}, JobContext())
    assert slower["trials"][0]["verdict"] == "slower"
    assert slower["best"]["label"] == NOTHING_FASTER_LABEL and "Nothing measured was faster" in slower["note"]
    faster = TUNE({"path": path, "session": {"graph_optimization_level": "disable", "intra_op_num_threads": 1},
                   "candidates": [_candidate()], **QUICK}, JobContext())
    assert faster["best"]["label"] == "all optimisations" and faster["verdict"] == "faster"
    assert faster["speedup"] > 1.5 and faster["speedup_ci"][0] > 1.02
    assert faster["best"]["session"]["graph_optimization_level"] == "all"
    assert faster["trials"][0]["outputs_match"] is True


def test_budget_in_trials_is_respected(small_model):
    result = TUNE(_params(small_model, budget_trials=5), JobContext())
    assert result["trials_used"] == 5
    assert result["stop_reason"].startswith("The budget of 5 trials was spent")


def test_a_race_that_ends_before_its_budget_says_why(small_model):
    # 25 s: the race (a few blocks of 3 runs per setting, 0.3 s) ends long before its 10 s share;
    # what is left goes to measuring the finalists precisely, which took 433 s of a 600 s budget
    result = TUNE(_params(small_model, final_blocks=2, budget_seconds=25), JobContext())
    assert result["race_seconds"] < 10
    reason = result["stop_reason"]
    assert reason.startswith("Stopped after") and "of the 25 s budget" in reason
    assert "all settings but one were eliminated" in reason
    dropped = [t for t in result["trials"] if not t["alive"]]
    assert dropped and all(t["dropped_because"] for t in dropped)


def test_cancel_keeps_what_was_learned_and_offers_nothing(small_model):
    ctx = JobContext()
    seen = []

    def emit(kind, payload):
        if kind == "data" and payload["kind"] == "leaderboard":
            seen.append(payload)
            if len(seen) == 2:
                ctx.cancel()

    ctx._emit = emit
    result = TUNE(_params(small_model, strategy="grid", grid_blocks=10), ctx)
    assert result["cancelled"] is True
    assert 0 < result["trials_used"] < 60
    assert result["trials"] and result["best"]["label"] == NOTHING_FASTER_LABEL
    assert result["alternation"] is None and "stopped" in result["note"]


def test_settings_that_cannot_start_are_dropped_not_fatal(small_model):
    candidates = [_candidate(level="basic"), _candidate(level="basic", provider="DmlExecutionProvider")]
    result = TUNE({"path": small_model, "session": {"intra_op_num_threads": 1}, "candidates": candidates,
                   "strategy": "grid", "grid_blocks": 2, **QUICK}, JobContext())
    yours = SessionConfig(intra_op_num_threads=1)           # labels say what a setting changes in yours
    assert [f["label"] for f in result["failed"]] == [describe(candidates[1], yours)] == ["DirectML, basic optimisation"]
    assert "DirectML" in result["failed"][0]["error"] or "Dml" in result["failed"][0]["error"]
    assert [t["label"] for t in result["trials"] if t["remeasured"]] == [describe(candidates[0], yours)]
    _check_offer(result)


def test_empty_space_is_a_user_error(small_model):
    with pytest.raises(UserError, match="empty"):
        TUNE({"path": small_model, "candidates": []}, JobContext())
    with pytest.raises(UserError, match="same as your settings"):
        TUNE({"path": small_model, "session": {"intra_op_num_threads": 1}, "candidates": [_candidate()]},
             JobContext())


def _picked(speedup):
    default = {"label": "default (your session settings)", "session": {}, "latency_ms": 2.0}
    best = {"label": "cpu all seq 1t", "session": {}, "latency_ms": 2.0 / speedup}
    return {"speedup": speedup, "speedup_ci": [speedup - 0.05, speedup + 0.05], "verdict": "faster",
            "best": best, "default": default, "clearly_faster": True, "note": "", "trials": []}


def test_a_winner_picked_among_several_is_claimed_at_its_fresh_figure():
    from app.core.tune.confirm import confirm

    result = confirm(_picked(1.30), {"speedup": 1.12, "speedup_ci": [1.08, 1.16], "verdict": "faster"},
                     {"latency_ms": {"p50": 1.79}})
    assert (result["speedup"], result["speedup_ci"], result["best"]["latency_ms"]) == (1.12, [1.08, 1.16], 1.79)
    assert result["confirmation"]["picked_on"]["speedup"] == 1.30 and "measured again" in result["note"]


def test_a_winner_the_fresh_measurement_does_not_confirm_is_not_offered():
    from app.core.tune.confirm import confirm

    result = confirm(_picked(1.30), {"speedup": 1.01, "speedup_ci": [0.97, 1.05], "verdict": "no-difference"},
                     {"latency_ms": {"p50": 1.98}})
    assert result["best"]["label"] == NOTHING_FASTER_LABEL and result["clearly_faster"] is False
    assert result["speedup"] == 1.0 and result["verdict"] == "reference"
    assert "picked at ×1.30" in result["note"] and "×1.01" in result["note"]


def test_with_several_finalists_the_winner_is_measured_once_more(tmp_path):
    path = str(models.save(models.foldable(), tmp_path / "foldable.onnx"))
    result = TUNE({"path": path, "session": {"graph_optimization_level": "disable", "intra_op_num_threads": 1},
                   "candidates": [_candidate(), _candidate(level="extended")], **QUICK, "finalists": 2},
                  JobContext())
    assert result["verdict"] == "faster" and result["best"]["session"]["graph_optimization_level"] != "disable"
    assert result["confirmation"]["fresh"]["speedup"] == result["speedup"]
    row = next(t for t in result["trials"] if t["label"] == result["best"]["label"])
    assert (row["speedup"], row["speedup_ci"], row["remeasured_ms"]) == \
        (result["speedup"], result["speedup_ci"], result["best"]["latency_ms"]), "the table shows the summary's figures"


def test_the_confirmed_figures_replace_the_winners_row_and_the_default_latency():
    from app.core.tune.confirm import confirm

    picked = _picked(3.39)
    picked["trials"] = [{"label": "cpu all seq 1t", "speedup": 3.39, "speedup_ci": [1.648, 4.14],
                         "remeasured_ms": 23.5, "verdict": "faster"}, {"label": "other", "speedup": 1.5}]
    result = confirm(picked, {"speedup": 2.82, "speedup_ci": [1.59, 3.78], "verdict": "faster"},
                     {"latency_ms": {"p50": 29.94}}, {"latency_ms": {"p50": 84.4}})
    row = result["trials"][0]
    assert (row["speedup"], row["speedup_ci"], row["remeasured_ms"]) == (2.82, [1.59, 3.78], 29.94)
    assert row["picked_on"]["speedup"] == 3.39 and result["trials"][1] == {"label": "other", "speedup": 1.5}
    assert result["default"]["latency_ms"] == 84.4 and result["best"]["latency_ms"] == 29.94


def test_a_time_budget_is_shared_between_the_race_and_the_remeasurement(tmp_path):
    path = str(models.save(models.foldable(), tmp_path / "foldable.onnx"))
    result = TUNE({"path": path, "session": {"graph_optimization_level": "disable", "intra_op_num_threads": 1},
                   "candidates": [_candidate(), _candidate(level="extended")], **QUICK, "budget_seconds": 20},
                  JobContext())
    from app.core.tune.jobs import TuneParams
    from app.core.tune.plan import race_seconds

    share = race_seconds(20, TuneParams(path=path).start_s, 1, 0.1)   # planned on the first guess of a start
    assert f"The race had {share:.0f} s of the 20 s budget" in result["stop_reason"]
    assert f"{share:.0f} s budget" not in result["stop_reason"], "the race's share is not called the budget"
    assert "measuring its best again alone" in result["stop_reason"], "one finalist: not 'its best 1'"
    assert result["plan"]["race_s"] == share
    stopped = re.search(r"Stopped after (\d+) s", result["stop_reason"])
    if stopped and int(stopped[1]) > round(share):      # past its share by the round it finished: said so
        assert f"ran {stopped[1]} s, as a round under way is finished" in result["stop_reason"]


def test_a_race_whose_setup_outlasts_its_budget_still_measures_a_setting(small_model):
    """Its budget counts from the end of its setup (a start its caller plans apart): a race
    given less than its sessions take to create had nothing but 'no setting could be measured'."""
    from app.core.tune.jobs import TuneParams
    from app.core.tune.tune import Race

    params = TuneParams.from_dict(_params(small_model, budget_seconds=0.001))
    race = Race(params, JobContext())
    result = race.run()
    assert result["trials"] and result["trials"][0]["blocks"] >= 1
    assert race.setup_seconds > 0 and "The time budget of 0.001 s was spent" in result["stop_reason"]


def test_a_race_cut_short_in_its_first_round_has_measured_the_single_changes_first(small_model):
    from app.core.tune.jobs import TuneParams
    from app.core.tune.tune import Race

    params = TuneParams.from_dict(_params(small_model, budget_trials=3, seed=7))
    race = Race(params, JobContext())
    assert len(race.contenders) == 6 and sum(", " not in c.label for c in race.contenders) == 3
    result = race.run()
    measured = [t["label"] for t in result["trials"]]
    assert len(measured) == 3 and all(", " not in label for label in measured), measured


def test_a_change_is_counted_as_ort_runs_it():
    from app.core.tune.tune import changes

    yours = SessionConfig()         # a thread per core: two here
    assert changes(SessionConfig(graph_optimization_level="extended", intra_op_num_threads=2), yours, 2) == 1
    assert changes(SessionConfig(intra_op_num_threads=1), yours, 2) == 1          # no pool left to spin
    assert changes(SessionConfig(intra_op_allow_spinning=False), yours, 2) == 1
    assert changes(SessionConfig(intra_op_num_threads=1, execution_mode="parallel", inter_op_num_threads=2),
                   yours, 2) == 3


def test_a_budget_too_small_to_measure_the_best_alone_offers_nothing_and_says_what_it_needs(tmp_path):
    # a race of its least (2 s) is past a 0.05 s budget already: measuring alone would run further past it.
    # (At 0.5 s a quiet machine, whose job children had started in 0.1 s, rightly found time for it.)
    path = str(models.save(models.foldable(), tmp_path / "foldable.onnx"))
    result = TUNE({"path": path, "session": {"graph_optimization_level": "disable", "intra_op_num_threads": 1},
                   "candidates": [_candidate(), _candidate(level="extended")], **QUICK, "budget_seconds": 0.05},
                  JobContext())
    assert not result["clearly_faster"] and result["plan"]["finalists"] == 0
    assert not any(t["remeasured"] for t in result["trials"]), "nothing was measured past the budget"
    assert result["note"].startswith("Nothing is offered: the race ended with 0 s of the 0.05 s budget left")
    assert "a budget of about" in result["note"] and "Your settings stay." in result["note"]
    assert "no time was left to measure its best alone" in result["stop_reason"]


def test_what_the_least_remeasurement_needs_against_what_is_left():
    from app.core.tune.plan import out_of_time
    assert out_of_time(None, 60.0, 1.0, 100.0) == ""                     # no budget: as long as it takes
    assert out_of_time(20.0, 30.0, 1.0, 10.0) == ""                      # 2 × (1 + 0.5) s fits in 20 s
    assert out_of_time(0.0, 15.0, 1.0, 10.0) == ""                       # 3 s fits in the 20 % (3 s) past 15 s
    why = out_of_time(1.0, 15.0, 1.0, 138.0)                             # BERT's 138 ms runs: 2 × (1 + 6.9) s
    assert "needs about 16 s here" in why and "runs of 138 ms" in why and "a budget of about 30 s" in why


def test_a_winner_that_runs_more_threads_than_yours_says_what_cores_its_gain_rests_on(monkeypatch):
    """Two threads over one gain only while a second core is free: the claim says how many
    cores were free while it was measured (the load's other programs, in cores)."""
    import psutil

    from app.core.tune.confirm import confirm, rests_on_cores

    monkeypatch.setattr(psutil, "cpu_count", lambda logical=True: 2)
    picked = _picked(1.30)
    picked["default"]["session"] = {"intra_op_num_threads": 1}
    picked["best"]["session"] = {"intra_op_num_threads": 2}
    result = confirm(picked, {"speedup": 1.28, "speedup_ci": [1.25, 1.31], "verdict": "faster"},
                     {"latency_ms": {"p50": 1.5}}, load={"others_cores_p50": 0.1})
    rests = result["rests_on"]
    assert (rests["threads"], rests["your_threads"], rests["cores"], rests["free_cores"]) == (2, 1, 2, 1.9)
    assert "1.9 of the 2 cores were free" in result["note"] and result["note"].count("Mind:") == 1
    assert rests_on_cores({"intra_op_num_threads": 2}, {"intra_op_num_threads": 2}, None) is None
    assert rests_on_cores({}, {"intra_op_num_threads": 2}, None) is None, "0 is ORT's one thread per core: 2 here"
    assert rests_on_cores({"intra_op_num_threads": 1}, {}, None)["text"].endswith(
        "measure where and as the model will run")
    plain = confirm(_picked(1.30), {"speedup": 1.12, "speedup_ci": [1.08, 1.16], "verdict": "faster"},
                    {"latency_ms": {"p50": 1.79}})
    assert plain["rests_on"] is None and "Mind" not in plain["note"]


def _resting_on_two_threads(monkeypatch):
    import psutil

    from app.core.tune.confirm import confirm

    monkeypatch.setattr(psutil, "cpu_count", lambda logical=True: 2)
    picked = _picked(1.30)
    picked["default"]["session"] = {"intra_op_num_threads": 1}
    picked["best"]["session"] = {"intra_op_num_threads": 2}
    picked["trials"] = [{"label": "cpu all seq 1t", "speedup": 1.30, "speedup_ci": [1.25, 1.35]}]
    return confirm(picked, {"speedup": 1.20, "speedup_ci": [1.17, 1.24], "verdict": "faster"},
                   {"latency_ms": {"p50": 1.6}}, load={"others_cores_p50": 0.0})


def test_a_gain_on_more_threads_that_fails_in_a_second_set_of_processes_is_not_offered(monkeypatch):
    from app.core.tune.confirm import hold_up

    result = hold_up(_resting_on_two_threads(monkeypatch),
                     {"speedup": 0.81, "speedup_ci": [0.75, 0.87], "verdict": "slower"})
    assert result["clearly_faster"] is False and result["best"]["label"] == NOTHING_FASTER_LABEL
    assert result["speedup"] == 1.0 and result["rests_on"] is None and result["did_not_hold"]["threads"] == 2
    assert "×1.20 in one set of fresh processes and ×0.81 in another" in result["note"]
    assert result["confirmation"]["second_set"]["speedup"] == 0.81


def test_a_gain_on_more_threads_that_holds_in_a_second_set_is_claimed_at_the_lower_figure(monkeypatch):
    from app.core.tune.confirm import hold_up

    result = hold_up(_resting_on_two_threads(monkeypatch),
                     {"speedup": 1.15, "speedup_ci": [1.10, 1.20], "verdict": "faster"})
    assert result["clearly_faster"] and (result["speedup"], result["speedup_ci"]) == (1.15, [1.10, 1.20])
    assert result["best"]["speedup"] == 1.15 and result["trials"][0]["speedup"] == 1.15
    assert "the lower is claimed" in result["note"] and result["note"].count("Mind:") == 1
    assert result["rests_on"]["threads"] == 2


def test_a_gain_on_more_threads_that_moves_between_sets_is_too_busy_to_tell(monkeypatch):
    from app.core.tune.confirm import hold_up

    result = hold_up(_resting_on_two_threads(monkeypatch),
                     {"speedup": 1.12, "speedup_ci": [1.08, 1.16], "verdict": "faster"})
    assert result["clearly_faster"] is False and result["best"]["label"] == NOTHING_FASTER_LABEL
    assert result["did_not_hold"]["threads"] == 2 and result["rests_on"] is None
    assert "moved by 7% between them" in result["note"] and "too busy to tell" in result["note"]
