"""Accuracy beside latency: when a comparison is fed from the user's data folder, every
model also runs on every sample of it (untimed, before its timed blocks), and its answers
are scored against the reference model's, against the expected outputs the folder holds
and against its labels (see app.core.session.data_folder).

The reference writes each sample's feeds and its outputs to the comparison's folder, so
every later model runs on exactly the same arrays (cast to its own input types).

Scores: the mean absolute error over every element of the outputs compared; argmax
agreement on the first output, row by row along its last axis (for a classifier: the same
class); label accuracy, the first output's first row's argmax against the label."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

SAMPLES_FILE = "samples-{}.npz"
ANSWERS_FILE = "answers-{}.npz"


def _argmax_rows(value: np.ndarray) -> np.ndarray:
    value = np.asarray(value, dtype=np.float64)
    return value.reshape(-1, value.shape[-1]).argmax(axis=1) if value.ndim else value.reshape(1)


class Score:
    """Running sums of one comparison of answers (against the reference or the expected)."""

    def __init__(self):
        self.abs_sum, self.elements, self.agree, self.rows = 0.0, 0, 0, 0

    def add(self, got: dict, wanted: dict, first: str) -> None:
        for name, expected in wanted.items():
            if name in got and np.shape(got[name]) == np.shape(expected):
                a, b = np.asarray(got[name], np.float64), np.asarray(expected, np.float64)
                self.abs_sum += float(np.abs(a - b).sum())
                self.elements += a.size
        if first in wanted and first in got and np.shape(got[first]) == np.shape(wanted[first]):
            mine, theirs = _argmax_rows(got[first]), _argmax_rows(wanted[first])
            self.agree += int((mine == theirs).sum())
            self.rows += mine.size

    def result(self) -> dict | None:
        if not self.elements:
            return None
        return {"mean_abs_error": self.abs_sum / self.elements,
                "argmax_agreement": self.agree / self.rows if self.rows else None}


def _feeds_like(session, feeds: dict) -> dict:
    from app.core.session.inputs import numpy_dtype

    wanted = {arg.name: numpy_dtype(arg.type) for arg in session.get_inputs()}
    return {name: value.astype(wanted[name]) if name in wanted and value.dtype != wanted[name] else value
            for name, value in feeds.items() if name in wanted}


def score_samples(path, session, spec, folder: Path, is_reference: bool, ctx) -> dict:
    """Run `session` (the model at `path`) on every sample of the data folder `spec.data`
    and score its answers. The reference makes the feeds and keeps its answers in `folder`."""
    from app.core.session.data_folder import read_folder
    from app.core.session.graph_hints import read_hints
    from app.core.session.inputs import model_feeds

    data = read_folder(spec.data)        # once: every sample's feeds come from this reading
    hints = read_hints(path)
    names = [o.name for o in session.get_outputs()]
    first = names[0]
    against_reference, against_expected = Score(), Score()
    labelled = correct = 0
    for index in range(len(data.samples)):
        ctx.check_cancel()
        ctx.progress(None, f"accuracy: sample {index + 1} of {len(data.samples)}")
        if is_reference:
            feeds, _ = model_feeds(path, session, dataclasses.replace(spec, sample=index), hints, data)
            np.savez(folder / SAMPLES_FILE.format(index), **feeds)
        else:
            with np.load(folder / SAMPLES_FILE.format(index), allow_pickle=False) as saved:
                feeds = {name: saved[name] for name in saved.files}
        got = dict(zip(names, session.run(None, _feeds_like(session, feeds))))
        got = {name: value for name, value in got.items() if isinstance(value, np.ndarray)}
        if is_reference:
            np.savez(folder / ANSWERS_FILE.format(index), **got)
        else:
            with np.load(folder / ANSWERS_FILE.format(index), allow_pickle=False) as saved:
                against_reference.add(got, {name: saved[name] for name in saved.files}, first)
        expected = data.expected(index, names)
        if expected:
            against_expected.add(got, expected, first)
        label = data.label(index)
        if label is not None and first in got:
            labelled += 1
            correct += int(_argmax_rows(got[first])[0] == label)
    return {"samples": len(data.samples), "folder": str(data.path),
            "against_reference": None if is_reference else against_reference.result(),
            "against_expected": against_expected.result(),
            "label_accuracy": correct / labelled if labelled else None, "labelled": labelled}


def accuracy_text(accuracy: dict | None) -> str:
    """"labels 91.0 %; vs expected MAE 0.012, argmax 98.0 %; vs reference …": a model's scores in a line."""
    if accuracy is None:
        return "–"
    parts = [] if accuracy["label_accuracy"] is None else [f"labels {accuracy['label_accuracy']:.1%}"]
    for key, label in (("against_expected", "vs expected"), ("against_reference", "vs reference")):
        score = accuracy[key]
        if score is not None:
            agreement = "" if score["argmax_agreement"] is None else f", argmax {score['argmax_agreement']:.1%}"
            parts.append(f"{label} MAE {score['mean_abs_error']:.3g}{agreement}")
    return "; ".join(parts) or f"{accuracy['samples']} samples, nothing to score against"
