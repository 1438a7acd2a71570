"""What inputs to feed a model (the settings only; app.core.session.inputs makes the arrays).

Kept apart from the arrays so that presets and the command line never import numpy."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.jobs.errors import UserError
from app.core.jobs.params import Params
from app.core.session.fields import MAX_ELEMENTS, described


@dataclass
class FeedSpec(Params):
    """Each field as app.core.session.fields describes "inputs.<name>"."""

    mode: str = described("inputs.mode")
    seed: int = described("inputs.seed")
    dims: dict[str, int] = described("inputs.dims")            # symbolic dim name -> value
    shapes: dict[str, list[int]] = described("inputs.shapes")  # input name -> whole shape
    files: dict[str, str] = described("inputs.files")          # input name -> .npy; "*" -> one .npz
    values: dict[str, float] = described("inputs.values")      # input name -> one value for all its elements
    probed: dict[str, int] = described("inputs.probed")        # dim -> a size Find working inputs ran the model with
    vocab_size: int = described("inputs.vocab_size")           # upper bound for integer ids
    data: str = described("inputs.data")                       # a folder of samples (app.core.session.data_folder)
    sample: int = described("inputs.sample")                   # the sample of `data` a single run is fed
    image_preset: str = described("inputs.image_preset")       # how images of `data` are normalised
    image_layout: str = described("inputs.image_layout")       # auto: from the input's channel axis
    phase: str = described("inputs.phase")                     # a decoder's step: decode or prefill
    past_length: int = described("inputs.past_length")         # decode: the tokens already in the cache
    prompt_length: int = described("inputs.prompt_length")     # prefill: the prompt's tokens

    def validate(self) -> None:
        """Checks across values; types and ranges are checked as the fields are read."""
        for name, shape in self.shapes.items():
            elements = 1
            for dim in shape:
                elements *= dim
            if elements > MAX_ELEMENTS:
                raise UserError("bad-option", f"shape of {name} {shape} has more than 2^40 elements")
        for name in self.values:
            if name in self.files:
                raise UserError("bad-option", f"input {name} has both a file and a value; give one")
