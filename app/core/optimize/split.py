"""The user's data folder split in two for optimize: one half calibrates the int8-static
candidate, the other checks every candidate (fidelity, and accuracy where labels are given),
so no verdict rests on samples a candidate was calibrated on. Samples alternate between the
halves (a folder sorted by class still gives both halves every class); each half is a
folder of links (copies where links are not allowed) with its own labels and expected
outputs."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from app.core.session.data_folder import ARRAY_SUFFIXES, EXPECTED_FOLDER, read_folder


def _place(source: Path, target: Path) -> None:
    try:
        os.symlink(source, target)
    except OSError:          # Windows without the right to make links
        shutil.copyfile(source, target)


def split_data(folder: str | Path, scratch: Path) -> dict:
    """{"calibrate", "check"}: the two folders, with "samples" counts and a note; a folder of
    one sample is used whole for both, and the note says so."""
    data = read_folder(folder)
    if len(data.samples) < 2:
        return {"calibrate": str(data.path), "check": str(data.path), "samples": len(data.samples),
                "calibrate_samples": 1, "check_samples": 1,
                "note": "the data folder holds one sample: it both calibrates and checks"}
    halves = {"calibrate": data.samples[0::2], "check": data.samples[1::2]}
    made = {}
    for name, samples in halves.items():
        target = scratch / f"data-{name}"
        target.mkdir()
        for sample in samples:
            _place(sample, target / sample.name)
        labelled = [s for s in samples if s.stem in data.labels]
        if labelled:
            (target / "labels.csv").write_text("".join(f"{s.name},{data.labels[s.stem]}\n" for s in labelled),
                                              encoding="utf-8")
        expected = data.path / EXPECTED_FOLDER
        if expected.is_dir():
            (target / EXPECTED_FOLDER).mkdir()
            for sample in samples:
                for suffix in ARRAY_SUFFIXES:
                    if (expected / f"{sample.stem}{suffix}").is_file():
                        _place(expected / f"{sample.stem}{suffix}", target / EXPECTED_FOLDER / f"{sample.stem}{suffix}")
        made[name] = str(target)
        made[f"{name}_samples"] = len(samples)
    made["samples"] = len(data.samples)
    made["note"] = (f"{made['calibrate_samples']} samples calibrate, the other {made['check_samples']} check; no "
                    "candidate is judged on a sample it was calibrated on")
    return made
