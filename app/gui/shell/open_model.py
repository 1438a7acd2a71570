"""An open model or variant as the window tracks it (no Qt here: cheap to import)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(eq=False)
class OpenModel:
    path: str
    label: str = ""
    kind: str = "source"               # "source", or the variant kind (fp16, int8-dynamic, ort …)
    parent: "OpenModel | None" = None
    summary: dict | None = None        # the inspection result, once read
    extra: dict = field(default_factory=dict)  # what made the variant (conversion report …)

    def __post_init__(self):
        self.path = str(Path(self.path).resolve())
        if not self.label:
            self.label = Path(self.path).name

    @property
    def loading(self) -> bool:
        return self.summary is None
