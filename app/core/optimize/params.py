"""The optimize job's parameters."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.jobs.errors import UserError
from app.core.jobs.params import Params, setting
from app.core.session.config import SessionConfig
from app.core.session.fidelity_policy import GivenBounds

#: the seconds each screened candidate and its source are timed for, in all, at most
SCREEN_S = 2.0


@dataclass
class OptimizeParams(Params):
    model: str
    out_dir: str
    kinds: list[str] = setting(factory=list)                  # candidate kinds to try; empty: every kind
    objective: str = setting("latency", choices=("latency", "throughput"), flag="--objective",
                             help="what the chosen candidate is best at")
    latency_limit_ms: float | None = setting(None, minimum=0.001, flag="--latency-limit", metavar="MS",
                                             help="only a candidate whose median latency is at most MS milliseconds "
                                                  "is chosen")
    budget_seconds: float = setting(300.0, minimum=1, flag="--budget-seconds", metavar="S",
                                    help="the whole search's time")
    tolerance: GivenBounds = setting(factory=GivenBounds)     # over each kind's policy
    session: SessionConfig = setting(factory=SessionConfig)   # the user's settings: every ratio's baseline
    data: str = ""                                            # a data folder (calibration and checks); "": none
    force: bool = setting(False, flag="--force", help="replace the files already in DIR")
    screen_seconds: float = setting(SCREEN_S, minimum=0.05, flag="--screen-seconds", metavar="S",
                                    help="how long each candidate and the source are timed, at most")
    tune: bool = setting(True, flag="--tune", help="tune the session of the best candidate (--no-tune: keep yours)")
    keep_candidates: bool = setting(False, flag="--keep-candidates",
                                    help="also keep every candidate made, in DIR/candidates (to compare, drift or "
                                         "draw later)")
    fresh: bool = setting(False, flag="--fresh",
                          help="make and measure every candidate anew, even one measured before with the same model, "
                               "inputs, settings and ONNX Runtime (by default those are reused from the history)")
    try_expected_slower: bool = setting(False, flag="--try-expected-slower",
                                        help="also make the kinds this machine is expected to run slower (int8 "
                                             "without VNNI or dot-product instructions, float16 on the CPU "
                                             "provider), to see them measured; by default they are skipped, with "
                                             "the reason")

    def validate(self) -> None:
        from app.core.optimize.candidates import ALL_KINDS
        from app.core.text import printable

        for kind in self.kinds:
            if kind not in ALL_KINDS:
                raise UserError("bad-option", f"unknown candidate kind {printable(kind, 40)!r}; choose among "
                                              f"{', '.join(ALL_KINDS)}")
        if not self.out_dir.strip():
            raise UserError("bad-option", "optimize needs an output folder (-o DIR)")

