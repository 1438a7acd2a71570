"""The optimize job's parameters."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.core.jobs.errors import UserError
from app.core.jobs.params import Params, setting
from app.core.session.config import SessionConfig

#: the seconds each screened candidate and its source are timed for, in all, at most
SCREEN_S = 2.0


@dataclass
class OptimizeParams(Params):
    model: str
    out_dir: str
    kinds: list[str] = setting(factory=list)                  # candidate kinds to try; empty: every kind
    objective: str = setting("latency", choices=("latency", "throughput"), flag="--objective")
    latency_limit_ms: float | None = setting(None, minimum=0.001, flag="--latency-limit")
    budget_seconds: float = setting(300.0, minimum=1, flag="--budget-seconds")
    tolerance: dict[str, Any] = setting(factory=dict)         # atol, rtol, min_cosine (missing: each kind's)
    session: SessionConfig = setting(factory=SessionConfig)   # the user's settings: every ratio's baseline
    data: str = ""                                            # a data folder (calibration and checks); "": none
    force: bool = False
    screen_seconds: float = setting(SCREEN_S, minimum=0.05, flag="--screen-seconds")
    tune: bool = True                                         # tune the session of the best candidate
    keep_candidates: bool = setting(False, flag="--keep-candidates")  # every candidate made, in DIR/candidates
    fresh: bool = setting(False, flag="--fresh")              # measure every candidate anew: reuse none from history
    # also make the kinds this machine is expected to run slower (int8 without VNNI, float16 on the CPU)
    try_expected_slower: bool = setting(False, flag="--try-expected-slower")

    def validate(self) -> None:
        from app.core.optimize.candidates import ALL_KINDS
        from app.core.text import printable

        for kind in self.kinds:
            if kind not in ALL_KINDS:
                raise UserError("bad-option", f"unknown candidate kind {printable(kind, 40)!r}; choose among "
                                              f"{', '.join(ALL_KINDS)}")
        if not self.out_dir.strip():
            raise UserError("bad-option", "optimize needs an output folder (-o DIR)")
        unknown = set(self.tolerance) - {"atol", "rtol", "min_cosine"}
        if unknown:
            raise UserError("bad-option", f"unknown tolerance(s): {', '.join(sorted(unknown))}")

