"""Calibration samples for static quantization, one at a time: a folder of .npy/.npz files
(the calibration option), the user's data folder, the user's own fidelity inputs, or seeded
random inputs from the input plan."""

from __future__ import annotations

from pathlib import Path

from app.core.convert.work import Work
from app.core.jobs.errors import UserError
from app.core.session.inputs import FeedSpec, make_feeds


class FeedReader:
    """Calibration samples for quantize_static, made or loaded one at a time."""

    def __init__(self, work: Work, inputs: list[dict]):
        self.work = work
        self.inputs = inputs
        spec: FeedSpec = work.config.inputs
        self.base = spec
        self.data = ""               # a data folder of images given as the calibration folder
        folder = work.options["calibration"]
        if folder:
            path = Path(folder).expanduser()
            if not path.is_dir():
                raise UserError("not-found", f"{path}: the calibration folder does not exist")
            self.files = sorted(p for p in path.iterdir() if p.suffix.lower() in (".npy", ".npz") and p.is_file())
            if not self.files:        # a data folder of images, as --data takes
                from app.core.session.data_folder import read_folder

                self.data = str(path)
                self.count = len(read_folder(path).samples)
            else:
                self.count = len(self.files)
        elif spec.data:              # the user's data folder: every sample of it
            from app.core.session.data_folder import read_folder

            self.files = []
            self.count = len(read_folder(spec.data).samples)
        else:
            self.files = []
            # The user's own fidelity inputs beat random ones (random ids or flags can break a model).
            self.count = 1 if spec.mode == "files" else work.options["calibration_count"]
        self.index = 0

    def get_next(self) -> dict | None:
        self.work.ctx.check_cancel()
        if self.index >= self.count:
            return None
        if self.files:
            spec = FeedSpec(mode="files", files={"*": str(self.files[self.index])}, dims=dict(self.base.dims),
                            shapes=dict(self.base.shapes), vocab_size=self.base.vocab_size)
        elif self.data or self.base.data:
            spec = FeedSpec.from_dict({**self.base.to_dict(), "data": self.data or self.base.data,
                                       "sample": self.index})
        elif self.base.mode == "files":
            spec = self.base
        else:
            spec = FeedSpec(seed=self.base.seed + 1000 + self.index, dims=dict(self.base.dims),
                            shapes=dict(self.base.shapes), vocab_size=self.base.vocab_size)
        feeds, _ = make_feeds(self.inputs, spec)
        self.index += 1
        self.work.ctx.progress(None, f"calibrating: sample {self.index} of {self.count}")
        return feeds

    def __iter__(self):
        return self

    def __next__(self) -> dict:
        item = self.get_next()
        if item is None:
            raise StopIteration
        return item
