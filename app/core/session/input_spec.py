"""What inputs to feed a model (the settings only; app.core.session.inputs makes the arrays).

Kept apart from the arrays so that presets and the command line never import numpy."""

from __future__ import annotations

from app.core.jobs.errors import UserError
from app.core.jobs.params import Params
from app.core.session.fields import MAX_ELEMENTS, from_table


@from_table("inputs.")
class FeedSpec(Params):
    """A field for each "inputs.<name>" setting of app.core.session.fields, in its order."""

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
