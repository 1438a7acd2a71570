"""Tables as plain rows: the window's tables and the command line's `--csv` files are made
from the same headers and rows (app.core.bench.compare.compare_table,
app.core.profile.tables), and written as CSV one way (`rows_to_csv`)."""

from __future__ import annotations

import csv
import io
import math
from typing import Any, Sequence


def csv_cell(value: Any) -> Any:
    """A cell as a CSV file holds it: numbers exact, nothing (or not a number) empty, yes/no for a flag."""
    if value is None or isinstance(value, float) and math.isnan(value):
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return value


def rows_to_csv(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(headers)
    writer.writerows([csv_cell(value) for value in row] for row in rows)
    return buffer.getvalue()
