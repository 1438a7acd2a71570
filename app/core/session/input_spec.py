"""What inputs to feed a model (the settings only; app.core.session.inputs makes the arrays).

Kept apart from the arrays so that presets and the command line never import numpy."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.jobs.errors import UserError
from app.core.jobs.params import Params, setting

FEED_MODES = ("random", "zeros", "files")
DEFAULT_VOCAB = 1000
IMAGE_PRESETS = ("imagenet", "unit", "raw")         # see app.core.session.data_folder.PRESETS
IMAGE_LAYOUTS = ("auto", "NCHW", "NHWC")


#: the most elements an input may have: past it, the size is a typo, not a model's input
MAX_ELEMENTS = 2 ** 40
#: integer ids are drawn below the vocabulary size as int64
MAX_VOCAB = 2 ** 62


@dataclass
class FeedSpec(Params):
    mode: str = setting("random", choices=FEED_MODES)
    seed: int = setting(0, minimum=0)
    dims: dict[str, int] = setting(factory=dict)           # symbolic dim name -> value
    shapes: dict[str, list[int]] = setting(factory=dict)   # input name -> whole shape
    files: dict[str, str] = setting(factory=dict)          # input name -> .npy; "*" -> one .npz
    values: dict[str, float] = setting(factory=dict)       # input name -> one value for all its elements
    probed: dict[str, int] = setting(factory=dict)         # dim -> a size Find working inputs ran the model with
    vocab_size: int = setting(DEFAULT_VOCAB, minimum=1)    # upper bound for integer ids
    data: str = ""                                         # a folder of samples (app.core.session.data_folder)
    sample: int = setting(0, minimum=0)                    # the sample of `data` a single run is fed
    image_preset: str = setting("imagenet", choices=IMAGE_PRESETS)   # how images of `data` are normalised
    image_layout: str = setting("auto", choices=IMAGE_LAYOUTS)       # auto: from the input's channel axis

    def validate(self) -> None:
        """Checks of values; types and single ranges are checked as the fields are read."""
        if self.mode not in FEED_MODES:
            raise UserError("bad-option", f"input mode must be one of {', '.join(FEED_MODES)}, not {self.mode!r}")
        for name, value in self.dims.items():
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_ELEMENTS:
                raise UserError("bad-option", f"dimension {name} must be a whole number from 0 to 2^40, not {value!r}")
        for name, shape in self.shapes.items():
            if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
                raise UserError("bad-option", f"shape of {name} must be whole numbers ≥ 0, not {shape!r}")
            elements = 1
            for dim in shape:
                elements *= dim
            if elements > MAX_ELEMENTS:
                raise UserError("bad-option", f"shape of {name} {shape} has more than 2^40 elements")
        for name, value in self.probed.items():
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_ELEMENTS:
                raise UserError("bad-option", f"the probed size of {name} must be a whole number from 0 to 2^40, "
                                              f"not {value!r}")
        for name, value in self.values.items():
            if name in self.files:
                raise UserError("bad-option", f"input {name} has both a file and a value; give one")
        if not isinstance(self.vocab_size, int) or not 1 <= self.vocab_size <= MAX_VOCAB:
            raise UserError("bad-option", "the vocabulary size must be from 1 to 2^62")
