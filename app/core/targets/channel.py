"""The worker protocol's framing: one JSON object a line, both ways.

JSON rather than pickle: neither side ever runs what the other sends, and a worker of
another version fails with a message, not a crash. Arrays travel as lists; a file travels
as base64 chunks (`put`, `chunk`, `end`).

Parent -> worker:  {"have": sha} | {"put": {"sha", "name"}} {"chunk": b64}... {"end": true}
                   | {"job": name, "params": {...}, "memory_limit": str|null} | {"cancel": true}
                   | {"message": payload}
Worker -> parent:  {"hello": {"version", "ort", "machine"}} first, then
                   {"have": sha, "path": str|null} | {"stored": sha, "path": str}
                   | {"event": [kind, payload]} | {"result": value} | {"error": {...}}
"""

from __future__ import annotations

import json
from typing import IO, Any

CHUNK_BYTES = 1 << 20


def _plain(value: Any) -> Any:
    """Numpy values and other non-JSON types as their nearest JSON form."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def encode(message: dict) -> bytes:
    return (json.dumps(message, default=_plain, allow_nan=True) + "\n").encode("utf-8")


def write(stream: IO[bytes], message: dict) -> None:
    stream.write(encode(message))
    stream.flush()


def read(stream: IO[bytes]) -> dict | None:
    """The next message, or None at the end of the stream. A line that is not a JSON
    object raises ValueError (the other side is not an ORTune worker)."""
    line = stream.readline()
    if not line:
        return None
    message = json.loads(line.decode("utf-8"))
    if not isinstance(message, dict):
        raise ValueError("not a message")
    return message
