"""What a gate takes: the two sides (a model, or a folder `optimize` shipped), each with its
session, the measurement's start, pairs and cap, and the limits each criterion is judged by."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.core.measure.runs import RunSettings
from app.core.jobs.errors import UserError
from app.core.jobs.params import Params, setting
from app.core.session.config import SessionConfig
from app.core.session.fidelity_policy import GivenTolerance

MODEL_ENDINGS = (".onnx", ".ort")


@dataclass
class Side:
    """One side of a gate, as given: its model file and the preset that came with it (a
    shipped folder's preset.json), if any."""
    model: Path
    preset: Path | None = None


def read_side(given: str, what: str) -> Side:
    """A model file, or a folder `optimize` shipped (its model.onnx or model.ort and its
    preset.json); anything else is the user's mistake, said in one line."""
    from app.core.model.intake import check_name
    from app.core.optimize.ship import MODEL_STEM

    check_name(given)
    path = Path(given).expanduser()
    if path.is_dir():
        models = [path / f"{MODEL_STEM}{ending}" for ending in MODEL_ENDINGS if (path / f"{MODEL_STEM}{ending}").is_file()]
        if not models:
            raise UserError("not-found", f"{path}: {what} is a folder without {MODEL_STEM}.onnx or {MODEL_STEM}.ort "
                                         "(give a model, or a folder `ortune optimize` wrote)")
        preset = path / "preset.json"
        return Side(models[0].absolute(), preset.absolute() if preset.is_file() else None)
    if not path.exists():
        raise UserError("not-found", f"{path}: {what} not found")
    if not path.is_file() or path.suffix.lower() not in MODEL_ENDINGS:
        raise UserError("bad-model", f"{path}: {what} must be an .onnx or .ort file, or a folder `ortune optimize` wrote")
    return Side(path.absolute())


@dataclass
class GateParams(Params):
    new: str                                                # the model under test
    old: str                                                # the model it must not be worse than
    new_session: SessionConfig = setting(factory=SessionConfig)
    old_session: SessionConfig = setting(factory=SessionConfig)
    run: RunSettings = setting(factory=lambda: RunSettings(duration_s=2.0))   # the first stretch, per model
    new_label: str = ""
    old_label: str = ""
    max_slowdown: float = setting(0.05, minimum=0, flag="--max-slowdown", percent=True, metavar="PERCENT",
                                  help="slowdown that fails")
    max_seconds: float = setting(60.0, minimum=1, flag="--max-seconds", metavar="S",
                                 help="longest time the measuring may take, both models and their starts together; "
                                      "more pairs start only while one more fits")
    pairs: int = setting(4, minimum=1, maximum=1000, flag="--pairs", metavar="N",
                         help="pairs of fresh processes (one per model, taking turns) to measure in first; the "
                              "interval comes from the spread between the pairs")
    tolerance: GivenTolerance = setting(factory=GivenTolerance)   # over the policy's
    output_tolerance: dict[str, dict[str, float]] = setting(factory=dict)   # per output name, over `tolerance`
    max_accuracy_drop: float = setting(0.01, minimum=0, flag="--max-accuracy-drop", percent=True, metavar="POINTS",
                                       help="drop in label accuracy on --data, in percentage points, that fails")
    max_memory_growth: float = setting(0.10, minimum=0, flag="--max-memory-growth", percent=True, metavar="PERCENT",
                                       help="growth of the peak resident memory that fails")
    record: bool = True

    def validate(self) -> None:
        from app.core.session.outputs import Tolerance
        Tolerance.from_dict(self.tolerance)
        for own in self.output_tolerance.values():
            Tolerance.from_dict({**self.tolerance, **own})

    def labels(self) -> tuple[str, str]:
        """(new, old): the names the report gives the two sides; the file names, or, where
        those are the same, the folder too, and "old"/"new" where even that is."""
        new, old = Path(self.new), Path(self.old)
        labels = [self.new_label or new.name, self.old_label or old.name]
        if labels[0] == labels[1] and not (self.new_label or self.old_label):
            labels = [f"{new.parent.name}/{new.name}", f"{old.parent.name}/{old.name}"]
        if labels[0] == labels[1]:
            labels = [f"{labels[0]} (new)", f"{labels[1]} (old)"]
        return labels[0], labels[1]
