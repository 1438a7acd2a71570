"""Accuracy beside latency: when a comparison is fed from the user's data folder, every
model also runs on every sample of it (untimed, before its timed blocks), and its answers
are scored against the reference model's, against the expected outputs the folder holds
and against its labels (see app.core.session.data_folder).

The reference keeps each sample's feeds and its outputs in the comparison's folder
(app.core.bench.sample_log), so every later model runs on exactly the same arrays (cast to
its own input types).

Scores: the mean absolute error over every element of the outputs compared; argmax
agreement on the first output, row by row along its last axis (for a classifier: the same
class); label accuracy, the first output's first row's argmax against the label. Answers
are scored in batches: those of one output and one shape stacked and compared at once."""

from __future__ import annotations

import dataclasses
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from app.core.bench.sample_log import SampleWriter, read_samples

#: answers held before they are scored together
BATCH_SAMPLES, BATCH_BYTES = 1024, 32 << 20
#: seconds between two progress lines
PROGRESS_EVERY_S = 0.25


def _scorable(value) -> bool:
    return isinstance(value, np.ndarray) and value.dtype.kind in "biuf"


def _argmax_rows(stacked: np.ndarray, shape: tuple) -> np.ndarray:
    """Per sample of `stacked` (samples of `shape` along its first axis), each row's argmax
    along the last axis, (samples, rows); a scalar answer stands for itself."""
    if not shape:
        return stacked.reshape(-1, 1)
    return stacked.reshape(len(stacked), -1, shape[-1]).argmax(axis=2)


class Score:
    """Running sums of one comparison of answers (against the reference or the expected)."""

    def __init__(self, first: str):
        self.first = first
        self.abs_sum, self.elements, self.agree, self.rows = 0.0, 0, 0, 0
        self._pending: dict[tuple, tuple[list, list]] = defaultdict(lambda: ([], []))
        self._held = self._bytes = 0

    def add(self, got: dict, wanted: dict) -> None:
        for name, expected in wanted.items():
            mine = got.get(name)
            if _scorable(mine) and _scorable(expected) and mine.shape == expected.shape:
                pair = self._pending[(name, mine.shape)]
                pair[0].append(mine)
                pair[1].append(expected)
                self._bytes += mine.nbytes + expected.nbytes
        self._held += 1
        if self._held >= BATCH_SAMPLES or self._bytes >= BATCH_BYTES:
            self.flush()

    def flush(self) -> None:
        for (name, shape), (mine, theirs) in self._pending.items():
            a, b = np.stack(mine).astype(np.float64), np.stack(theirs).astype(np.float64)
            self.abs_sum += float(np.abs(a - b).sum())
            self.elements += a.size
            if name == self.first and (not shape or shape[-1]):
                rows_a, rows_b = _argmax_rows(a, shape), _argmax_rows(b, shape)
                self.agree += int((rows_a == rows_b).sum())
                self.rows += rows_a.size
        self._pending.clear()
        self._held = self._bytes = 0

    def result(self) -> dict | None:
        self.flush()
        if not self.elements:
            return None
        return {"mean_abs_error": self.abs_sum / self.elements,
                "argmax_agreement": self.agree / self.rows if self.rows else None}


class LabelScore:
    """How often the first output's first row's argmax is the sample's label."""

    def __init__(self, first: str):
        self.first, self.labelled, self.correct = first, 0, 0
        self._pending: dict[tuple, tuple[list, list]] = defaultdict(lambda: ([], []))
        self._held = 0

    def add(self, got: dict, label: int | None) -> None:
        answer = got.get(self.first)
        if label is None or not isinstance(answer, np.ndarray):
            return
        self.labelled += 1
        if not _scorable(answer) or (answer.shape and not answer.shape[-1]):
            return                        # nothing an argmax could name: not correct
        pair = self._pending[answer.shape]
        pair[0].append(answer)
        pair[1].append(label)
        self._held += 1
        if self._held >= BATCH_SAMPLES:
            self.flush()

    def flush(self) -> None:
        for shape, (answers, labels) in self._pending.items():
            rows = _argmax_rows(np.stack(answers).astype(np.float64), shape)
            self.correct += int((rows[:, 0] == np.asarray(labels)).sum())
        self._pending.clear()
        self._held = 0

    def result(self) -> float | None:
        self.flush()
        return self.correct / self.labelled if self.labelled else None


def _cast_to(session):
    """A function giving feeds in the session's own input types (the reference's may differ)."""
    from app.core.session.inputs import numpy_dtype

    wanted = {arg.name: numpy_dtype(arg.type) for arg in session.get_inputs()}

    def cast(feeds: dict) -> dict:
        return {name: value.astype(wanted[name]) if value.dtype != wanted[name] else value
                for name, value in feeds.items() if name in wanted}
    return cast


def _reference_samples(path, session, spec, data):
    """(feeds, None) of every sample, made from the folder."""
    from app.core.session.graph_hints import read_hints
    from app.core.session.inputs import model_feeds

    hints = read_hints(path)
    for index in range(len(data.samples)):
        feeds, _ = model_feeds(path, session, dataclasses.replace(spec, sample=index), hints, data)
        yield feeds, None


def score_samples(path, session, spec, folder: Path, is_reference: bool, ctx) -> dict:
    """Run `session` (the model at `path`) on every sample of the data folder `spec.data`
    and score its answers. The reference makes the feeds and keeps its answers in `folder`."""
    from app.core.session.data_folder import read_folder

    data = read_folder(spec.data)        # once: every sample's feeds come from this reading
    names = [o.name for o in session.get_outputs()]
    first, cast, total = names[0], _cast_to(session), len(data.samples)
    against_reference, against_expected, labels = Score(first), Score(first), LabelScore(first)
    writer = SampleWriter(folder) if is_reference else None
    samples = _reference_samples(path, session, spec, data) if is_reference else read_samples(folder)
    shown = 0.0
    for index, (feeds, reference) in enumerate(samples):
        ctx.check_cancel()
        if time.monotonic() - shown >= PROGRESS_EVERY_S or index + 1 == total:
            ctx.progress(None, f"accuracy: sample {index + 1} of {total}")
            shown = time.monotonic()
        got = {name: value for name, value in zip(names, session.run(None, cast(feeds)))
               if isinstance(value, np.ndarray)}
        if writer is not None:
            writer.add(feeds, got)
        else:
            against_reference.add(got, reference)
        expected = data.expected(index, names)
        if expected:
            against_expected.add(got, expected)
        labels.add(got, data.label(index))
    if writer is not None:
        writer.close()
    return {"samples": total, "folder": str(data.path),
            "against_reference": None if is_reference else against_reference.result(),
            "against_expected": against_expected.result(),
            "label_accuracy": labels.result(), "labelled": labels.labelled}


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
