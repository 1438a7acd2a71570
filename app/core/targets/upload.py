"""What a job needs copied to a target: the local files its parameters name (a model with
its external-data files, an input array), and the folders its entry says it reads (a data
folder, Job.folders), grouped and keyed by content hash so each is copied once, however
often it is used."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MODEL_ENDINGS = (".onnx", ".ort")
#: a folder's bundle: the list of its files, its main file (the far side names the folder by it)
FOLDER_MAIN = "ortune-folder.json"


@dataclass
class Bundle:
    """One local file and the files beside it that it needs, as sent to a target."""
    main: Path
    files: list[tuple[str, Path, str]]       # (name relative to the main file's folder, local path, sha256)
    sha: str

    @property
    def size(self) -> int:
        return sum(path.stat().st_size for _, path, _ in self.files)


def file_sha(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def external_data(path: Path) -> list[str]:
    """The external-data locations a model names (relative to its folder), read without
    loading the weights; none for an .ort file or a model that cannot be read (the job
    itself will say what is wrong with it)."""
    if path.suffix.lower() != ".onnx":
        return []
    try:
        import onnx
        from onnx.external_data_helper import _get_all_tensors

        model = onnx.load(str(path), load_external_data=False)
    except Exception:        # the job reports the model's fault in its own words
        return []
    found = []
    for tensor in _get_all_tensors(model):
        for entry in tensor.external_data:
            if entry.key == "location" and entry.value not in found:
                found.append(entry.value)
    return found


def content_key(files: list[tuple[str, str]]) -> str:
    """A bundle's key from its (name, sha256) pairs, the main file first: its content and
    kind (suffix), not its name, so two copies of one model under two names are one entry;
    the files beside it keep their names, which the model refers to."""
    (main, main_sha), rest = files[0], files[1:]
    lines = [f"{Path(main).suffix.lower()} {main_sha}"] + [f"{name} {sha}" for name, sha in rest]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def bundle(path: Path) -> Bundle:
    folder = path.parent
    names = [path.name] + [name for name in external_data(path)
                           if (folder / name).resolve().is_relative_to(folder.resolve())
                           and (folder / name).is_file()]
    files = [(name, folder / name, file_sha(folder / name)) for name in names]
    return Bundle(path, files, content_key([(name, sha) for name, _, sha in files]))


def folder_bundle(files: list[tuple[str, Path]], scratch: Path) -> Bundle:
    """A folder's files (name in it, local file) as one bundle, sent and cached as a model
    with its data files is: its main file, the list of them, is written in `scratch`; the
    far side's folder is the one that main file lands in."""
    listed = [(name, path, file_sha(path)) for name, path in files]
    scratch.mkdir(parents=True, exist_ok=True)
    main = scratch / FOLDER_MAIN
    main.write_text(json.dumps([[name, sha] for name, _, sha in listed]), encoding="utf-8")
    entries = [(FOLDER_MAIN, main, file_sha(main))] + listed
    return Bundle(main, entries, content_key([(name, sha) for name, _, sha in entries]))


def local_files(value: Any, text: tuple[str, ...] = (), found: list[str] | None = None) -> list[str]:
    """Every string in a job's parameters (as a dict) that names an existing local file,
    but those under the keys in `text` (labels: never paths, see Job.text)."""
    found = [] if found is None else found
    if isinstance(value, dict):
        for key, item in value.items():
            if key not in text:
                local_files(item, text, found)
    elif isinstance(value, list):
        for item in value:
            local_files(item, text, found)
    elif isinstance(value, str) and value and len(value) < 4096 and value not in found:
        try:
            if Path(value).is_file():
                found.append(value)
        except (OSError, ValueError):
            pass
    return found


def replaced(value: Any, paths: dict[str, str], text: tuple[str, ...] = (),
             folders: dict[str, str] | None = None) -> Any:
    """The parameters with each local path in `paths` swapped for the target's copy (but
    under the keys in `text`); `folders`: folders sent, whose path is also swapped where a
    string holds it (a file in it, a line naming it)."""
    if isinstance(value, dict):
        return {key: item if key in text else replaced(item, paths, text, folders) for key, item in value.items()}
    if isinstance(value, list):
        return [replaced(item, paths, text, folders) for item in value]
    if isinstance(value, str) and value in paths:
        return paths[value]
    if isinstance(value, str):
        for there, here in (folders or {}).items():
            value = value.replace(there, here)
    return value
