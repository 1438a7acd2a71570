"""The reference's feeds and answers for every sample of a data folder, kept for the later
models of a comparison (each in a process of its own) in a few files instead of two per
sample: consecutive samples whose arrays have the same names, types and shapes are stacked
into one chunk (`samples-K.npz`, up to CHUNK_BYTES), listed in `samples.json`.

Arrays are stored under positional keys (`f0`, `a0` …; their names are in the list), so a
name from a model never becomes a key or a path inside the archive. String tensors are kept
as fixed-width text; other object values (sequences, maps) are left out."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from app.core.session.inputs import storable

INDEX_FILE = "samples.json"
CHUNK_FILE = "samples-{}.npz"
#: a chunk is written once its arrays take this much
CHUNK_BYTES = 16 << 20


def _signature(arrays: dict) -> tuple:
    return tuple((name, array.dtype.str, array.shape) for name, array in arrays.items())


class SampleWriter:
    """Feeds and answers added sample by sample; `close` writes what is left and the list."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.chunks: list[dict] = []
        self._pending: list[tuple[dict, dict]] = []
        self._signature: tuple | None = None
        self._bytes = 0

    def add(self, feeds: dict, answers: dict) -> None:
        feeds, answers = storable(feeds), storable(answers)
        signature = (_signature(feeds), _signature(answers))
        if self._pending and (signature != self._signature or self._bytes >= CHUNK_BYTES):
            self._flush()
        self._signature = signature
        self._pending.append((feeds, answers))
        self._bytes += sum(a.nbytes for a in feeds.values()) + sum(a.nbytes for a in answers.values())

    def _flush(self) -> None:
        if not self._pending:
            return
        first_feeds, first_answers = self._pending[0]
        arrays = {f"f{i}": np.stack([feeds[name] for feeds, _ in self._pending])
                  for i, name in enumerate(first_feeds)}
        arrays |= {f"a{i}": np.stack([answers[name] for _, answers in self._pending])
                   for i, name in enumerate(first_answers)}
        np.savez(self.folder / CHUNK_FILE.format(len(self.chunks)), **arrays)
        self.chunks.append({"count": len(self._pending), "feeds": list(first_feeds), "answers": list(first_answers)})
        self._pending, self._bytes = [], 0

    def close(self) -> None:
        self._flush()
        (self.folder / INDEX_FILE).write_text(json.dumps(self.chunks), encoding="utf-8")


def read_samples(folder: Path):
    """(feeds, answers) of every sample the reference kept in `folder`, in order."""
    folder = Path(folder)
    chunks = json.loads((folder / INDEX_FILE).read_text(encoding="utf-8"))
    for number, chunk in enumerate(chunks):
        with np.load(folder / CHUNK_FILE.format(number), allow_pickle=False) as saved:
            feeds = {name: saved[f"f{i}"] for i, name in enumerate(chunk["feeds"])}
            answers = {name: saved[f"a{i}"] for i, name in enumerate(chunk["answers"])}
        for row in range(chunk["count"]):
            # array[row, ...], not array[row]: a scalar input's row stays a 0-d array (ONNX Runtime
            # takes no numpy scalar)
            yield ({name: array[row, ...] for name, array in feeds.items()},
                   {name: array[row, ...] for name, array in answers.items()})
