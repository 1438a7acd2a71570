"""session.py of the shipped folder: plain onnxruntime and numpy, no ORTune, that builds the
session with exactly the chosen settings (app.core.session.create.to_python) and runs it
once on inputs of the planned shapes."""

from __future__ import annotations

from app.core.session.config import SessionConfig
from app.core.session.create import plugin_requirements, to_python

_HEADER = '''"""Runs the model this folder ships with the settings ORTune chose, once.

Needs {needs}. Replace the inputs below with real data."""
import os

import numpy as np

os.chdir(os.path.dirname(os.path.abspath(__file__)))   # the model sits beside this script
'''


def _feed_line(row: dict) -> str:
    shape = tuple(int(d) for d in row["shape"])
    dtype = row["dtype"]
    if dtype.startswith("float"):
        value = f"rng.standard_normal({shape!r}).astype(np.{dtype})"
    elif dtype == "bool":
        value = f"np.zeros({shape!r}, dtype=np.bool_)"
    else:     # integers feed indices, sizes and ids: zeros are valid for any of them
        value = f"np.zeros({shape!r}, dtype=np.{dtype})"
    return f"    {row['name']!r}: {value},"


#: feeds from the session's own inputs, where no plan was made (the model's inputs could not be
#: found): each input's shape, 1 for a dimension it leaves open, zeros of its type
_UNPLANNED = """# the inputs were not planned: zeros of each input's type and shape (1 for an open dimension)
feeds = {}
for meta in session.get_inputs():
    shape = tuple(d if isinstance(d, int) and d > 0 else 1 for d in meta.shape)
    kind = meta.type[len("tensor("):-1]
    feeds[meta.name] = np.zeros(shape, dtype={"float": np.float32, "double": np.float64}.get(kind, kind))"""


def session_script(config: SessionConfig, model_name: str, inputs: list[dict]) -> str:
    """The script; its feeds are the input plan's (`inputs`, the rows a result names)."""
    code = to_python(config, model_name)
    feeds = ["rng = np.random.default_rng(0)", "feeds = {", *map(_feed_line, inputs), "}"] if inputs else [_UNPLANNED]
    run = ["outputs = session.run(None, feeds)",
           "for meta, value in zip(session.get_outputs(), outputs):",
           "    print(meta.name, value.shape, value.dtype)"]
    plugins = plugin_requirements(config)
    needs = ", ".join(["onnxruntime", *plugins]) + " and numpy" + ("" if plugins else " only")
    return "\n".join([_HEADER.format(needs=needs), code, *feeds, "", *run]) + "\n"
