"""What inputs to feed a model (the settings only; app.core.session.inputs makes the arrays).

Kept apart from the arrays so that presets and the command line never import numpy."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from app.core.jobs.errors import UserError

FEED_MODES = ("random", "zeros", "files")
DEFAULT_VOCAB = 1000


@dataclass
class FeedSpec:
    mode: str = "random"
    seed: int = 0
    dims: dict[str, int] = field(default_factory=dict)          # symbolic dim name -> value
    shapes: dict[str, list[int]] = field(default_factory=dict)  # input name -> whole shape
    files: dict[str, str] = field(default_factory=dict)         # input name -> .npy; "*" -> one .npz
    vocab_size: int = DEFAULT_VOCAB                             # upper bound for integer ids

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict | None) -> "FeedSpec":
        data = dict(data or {})
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise UserError("bad-config", f"unknown input setting(s): {', '.join(sorted(unknown))}")
        spec = cls(**data)
        spec.validate()
        return spec

    def validate(self) -> None:
        if self.mode not in FEED_MODES:
            raise UserError("bad-option", f"input mode must be one of {', '.join(FEED_MODES)}, not {self.mode!r}")
        for name, value in self.dims.items():
            if not isinstance(value, int) or value < 0:
                raise UserError("bad-option", f"dimension {name} must be a whole number ≥ 0, not {value!r}")
        for name, shape in self.shapes.items():
            if not all(isinstance(d, int) and d >= 0 for d in shape):
                raise UserError("bad-option", f"shape of {name} must be whole numbers ≥ 0, not {shape!r}")
        if self.vocab_size < 1:
            raise UserError("bad-option", "the vocabulary size must be at least 1")
