"""onnxruntime-genai's model folders: a decoder file beside a genai_config.json that names it
(and its sizes, see app.core.session.cache_dims). Such a folder opens as its decoder."""

from __future__ import annotations

import json
from pathlib import Path

GENAI_CONFIG = "genai_config.json"


def model_file(path) -> Path:
    """The decoder file a genai folder's config names, else `path` as it is (a file, or a
    folder that is no genai model, which the caller refuses)."""
    path = Path(path)
    if not path.is_dir():
        return path
    try:
        name = json.loads((path / GENAI_CONFIG).read_text(encoding="utf-8"))["model"]["decoder"]["filename"]
    except (OSError, ValueError, KeyError, TypeError):
        return path
    if not isinstance(name, str) or not name or Path(name).name != name:
        return path                  # a name that would leave the folder is not followed
    return path / name
