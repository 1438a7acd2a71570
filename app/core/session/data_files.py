"""The files of a data folder that travel with a job to a target or a cluster's workers:
only those its loader reads (app.core.session.data_folder: the samples, the labels file,
the `expected/` answers of those samples), never through a link that leads out of the
folder, and at most MAX_FILES files and MAX_BYTES in all."""

from __future__ import annotations

import os
from pathlib import Path

from app.core.jobs.errors import UserError
from app.core.session.data_folder import EXPECTED_FOLDER, LABEL_FILES, read_folder
from app.core.formatting import human_bytes

MAX_FILES = 20_000
MAX_BYTES = 1 << 30


def folder_files(path: str | os.PathLike) -> list[tuple[str, Path]]:
    """(name in the folder, the file to read it from) for each file the loader reads; a
    folder that is not one, a file that leads out of it, or one too large is refused in one line."""
    data = read_folder(path)
    names = [sample.name for sample in data.samples]
    names += [name for name in LABEL_FILES if (data.path / name).is_file()][:1]
    stems = {sample.stem for sample in data.samples}
    names += [f"{EXPECTED_FOLDER}/{answer.name}" for stem, answer in sorted(data.answers.items()) if stem in stems]
    if len(names) > MAX_FILES:
        raise UserError("bad-input-file", f"{data.path}: the data folder holds {len(names):,} files to send; at most "
                                          f"{MAX_FILES:,} travel to a target or a cluster")
    root = Path(os.path.realpath(data.path))
    files, total = [], 0
    for name in names:
        real = Path(os.path.realpath(data.path / name))
        if not real.is_relative_to(root) or not real.is_file():
            raise UserError("bad-input-file", f"{data.path / name}: is a link that leads out of the data folder; a "
                                              "folder sent to a target holds its own files (copy the file in)")
        total += real.stat().st_size
        files.append((name, real))
    if total > MAX_BYTES:
        raise UserError("bad-input-file", f"{data.path}: the data folder's samples take {human_bytes(total)}; at most "
                                          f"{human_bytes(MAX_BYTES)} travel to a target or a cluster (use fewer "
                                          "samples there)")
    return files
