"""The answer is measured again before it is claimed (app.core.optimize.confirm), with the
speed check replaced by figures given here: no model runs."""

import contextlib
from types import SimpleNamespace

import pytest

from app.core.optimize import confirm
from app.core.optimize.rows import choose, source_row
from tests.optimize_results import row


class _Budget:
    def __init__(self, left):
        self._left = left
        self.ctx = SimpleNamespace(cancelled=False)
        self.start_s = 1.0

    def left(self):
        return self._left

    @contextlib.contextmanager
    def sub(self, _label):
        yield None


def _search(tmp_path, speedups, left=100.0):
    model = tmp_path / "m.onnx"
    model.write_bytes(b"x")
    rows = [source_row(model)]
    for kind, speedup in speedups.items():
        rows.append({**row(kind, "passed", speedup, 1.0), "verdict": "faster",
                     "speedup_ci": [speedup - 0.1, speedup + 0.1]})
    return SimpleNamespace(params=SimpleNamespace(budget_seconds=100.0, screen_seconds=0.5), rows=rows,
                           budget=_Budget(left), reserve=0.0, tune_reserve=0.0, scratch=tmp_path, source=model,
                           made={k: str(tmp_path / f"{k}.onnx") for k in speedups}, config=None, sessions={})


@pytest.fixture
def measured(monkeypatch):
    """kind -> the (ratio, interval, verdict) its confirmation finds; the kinds confirmed, in order."""
    figures, asked = {}, []

    def fake(source, variant, config, seconds, folder, ctx, variant_config=None):
        kind = variant.rsplit("/", 1)[-1][:-5]
        asked.append(kind)
        figures.setdefault("sessions", {})[kind] = variant_config
        ratio, interval, verdict = figures[kind]
        return {"ratio": ratio, "ratio_ci": interval, "verdict": verdict, "variant_p50_ms": 1.0,
                "source_p50_ms": ratio}

    monkeypatch.setattr("app.core.convert.speed.measure_speed", fake)
    return figures, asked


def test_a_screened_winner_that_is_not_faster_alone_gives_way_to_the_next(tmp_path, measured):
    figures, asked = measured
    figures.update(optimize=(1.01, [0.97, 1.05], "no-difference"), ort=(1.3, [1.2, 1.4], "faster"))
    search = _search(tmp_path, {"optimize": 2.69, "ort": 1.5})
    best = confirm.confirm_best(search, None)
    assert asked == ["optimize", "ort"] and best["kind"] == "ort" and best["speedup"] == 1.3
    first = search.rows[1]
    assert first["verdict"] == "no-difference" and first["screened"]["speedup"] == 2.69
    assert "measured again alone (screened at ×2.69 [2.59–2.79])" in first["reason"]


def test_when_no_confirmed_candidate_stays_faster_the_source_is_kept(tmp_path, measured):
    figures, asked = measured
    figures.update(a=(1.0, [0.9, 1.1], "no-difference"), b=(1.0, [0.9, 1.1], "no-difference"))
    search = _search(tmp_path, {"a": 3.0, "b": 2.0, "c": 1.5})
    best = confirm.confirm_best(search, None)
    assert asked == ["a", "b"] and best["kind"] == "source"
    assert search.rows[3]["unconfirmed"] and choose(search.rows, None)["kind"] == "source"


def test_without_time_to_confirm_the_row_says_its_figure_is_the_screening(tmp_path, measured):
    _, asked = measured
    search = _search(tmp_path, {"optimize": 1.5}, left=1.0)
    best = confirm.confirm_best(search, None)
    assert asked == [] and best["kind"] == "optimize" and "no time left to measure it again" in best["reason"]


def test_the_confirmation_takes_a_share_of_the_budget_within_bounds():
    assert confirm.confirm_seconds(20, 0.3) == confirm.CONFIRM_MIN_S
    assert confirm.confirm_seconds(1000, 0.3) == confirm.CONFIRM_MAX_S
    assert confirm.confirm_seconds(100, 5.0) == 5.0


def test_a_win_measured_on_a_busy_machine_is_taken_at_its_lower_figure(tmp_path, measured):
    """A tenfold int8 win beside a core burner was thrown away as "too busy to tell": the
    verdict rule widens its interval instead, and the claim is the lower figure."""
    from app.core.verdict import judge_speed

    figures, _ = measured
    judged = judge_speed(10.59, 6.36, 21.67, 1.0)
    figures.update(optimize=(10.59, [6.36, 21.67], judged.verdict))
    search = _search(tmp_path, {"optimize": 9.0})
    best = confirm.confirm_best(search, None)
    assert best["kind"] == "optimize" and best["verdict"] == "faster" and not best.get("unconfirmed")


def test_a_busy_machines_claim_is_lower_than_the_figure_measured_and_says_why():
    from app.core.verdict import judge_speed
    from app.core.optimize.rows import speed_reason

    judged = judge_speed(10.59, 6.36, 21.67, 1.0)
    reason = speed_reason({"ratio": 10.59, "ratio_ci": [6.36, 21.67], "verdict": judged.verdict,
                           "claim": judged.claim, "why_verdict": judged.why})
    assert reason.startswith("faster than the source (×10.59 [6.36–21.67])")
    assert f"claimed at ×{judged.claim:.2f}" in reason and "busy" in reason


def test_the_source_row_gets_the_median_it_was_timed_at_beside_the_chosen_candidate(tmp_path):
    from app.core.optimize.rows import explain
    (tmp_path / "m.onnx").write_bytes(b"x")
    rows = [source_row(tmp_path / "m.onnx"),
             {**row("optimize", "passed", 1.3, 1.0), "verdict": "faster", "source_latency_ms": 2.6, "finalist": True},
             {**row("ort", "passed", 1.5, 1.0), "verdict": "faster", "source_latency_ms": 3.0, "finalist": True},
             {**row("fp16", "failed-check", 0.5, 0.2), "latency_ms": None}]
    assert rows[0]["latency_ms"] is None
    best = choose(rows, None)
    explain(rows, best, None)
    assert best["kind"] == "ort" and rows[0]["latency_ms"] == 3.0 and "beside ort" in rows[0]["reason"]
    kept = [source_row(tmp_path / "m.onnx"), {**rows[1], "verdict": "slower"}, rows[3]]
    explain(kept, choose(kept, None), None)        # the source kept: the median a finalist timed it at
    assert kept[0]["latency_ms"] == 2.6 and "beside optimize" in kept[0]["reason"]
    alone = [source_row(tmp_path / "m.onnx"), rows[3]]
    explain(alone, alone[0], None)
    assert alone[0]["latency_ms"] is None       # timed beside nothing: no figure made up


def test_a_finalist_is_measured_again_and_claimed_at_the_fresh_figure(tmp_path, measured):
    """A finalist's precise figure leans high too (it was picked for coming out fastest):
    the claim is a fresh one, with the finalist's figure kept beside it."""
    figures, asked = measured
    figures.update(ort=(1.04, [1.02, 1.06], "faster"))
    search = _search(tmp_path, {"ort": 1.10})
    search.rows[1]["finalist"] = True
    best = confirm.confirm_best(search, None)
    assert asked == ["ort"] and best["kind"] == "ort" and best["speedup"] == 1.04
    assert best["as_finalist"]["speedup"] == 1.10 and "screened" not in best
    assert "measured again alone (as a finalist at ×1.10 [1.00–1.20])" in best["reason"]


def test_without_time_a_finalists_precise_figure_stands(tmp_path, measured):
    _, asked = measured
    search = _search(tmp_path, {"ort": 1.10}, left=1.0)
    search.rows[1]["finalist"] = True
    best = confirm.confirm_best(search, None)
    assert asked == [] and best["kind"] == "ort" and best["speedup"] == 1.10 and best["confirmed"]
    assert "its finalist figure stands" in best["reason"]


def test_a_provider_candidate_is_measured_again_on_its_own_session(tmp_path, measured):
    from app.core.optimize.provider_kinds import session_for
    from app.core.session.config import SessionConfig

    figures, asked = measured
    figures.update(openvino=(2.0, [1.8, 2.2], "faster"))
    search = _search(tmp_path, {"openvino": 2.1})
    search.sessions = {"openvino": session_for("openvino", SessionConfig())}
    best = confirm.confirm_best(search, None)
    assert best["kind"] == "openvino" and best["speedup"] == 2.0
    assert figures["sessions"]["openvino"].provider_names() == ["OpenVINOExecutionProvider"], \
        "the source on the user's provider against the source on OpenVINO, not against itself"
