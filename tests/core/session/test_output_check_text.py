"""A failed output check writes its cosine as every panel does (app.core.units), so Convert's
verdict and the Drift tab quote one figure for one fact."""

import numpy as np

from app.core.session.outputs import Tolerance, compare_values
from app.core.units import cosine_text


def test_a_cosine_below_the_limit_is_written_with_the_panels_digits():
    source = np.array([1.0, 0.0, 0.0], np.float32)
    variant = np.array([0.0267663, 1.0, 0.0], np.float32)
    row = compare_values("y", source, variant, Tolerance(atol=10.0, rtol=0.0, min_cosine=0.99))
    assert not row["passed"]
    assert row["problem"] == f"cosine {cosine_text(row['cosine'])} below 0.99"
    assert cosine_text(row["cosine"]) == "0.0267567"    # six significant digits, not six decimals
