"""The worker protocol's framing: one JSON object a line, both ways.

JSON rather than pickle: neither side ever runs what the other sends, and a worker of
another version fails with a message, not a crash. Arrays travel as lists; a file travels
as base64 chunks (`put`, `chunk`, `end`).

Parent -> worker:  {"have": sha, "name"} | {"put": {"sha", "name", "files"}} ({"file": name} {"chunk": b64}...)...
                   {"end": true} | {"scratch": true} | {"get": path}
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
MAX_LINE_BYTES = 64 << 20        # a chunk's base64 is 1.4 MB; a job's parameters are far less
MAX_DEPTH = 64                   # ORTune's own messages nest a dozen deep at most


class ProtocolError(ValueError):
    """A line the other side sent that ORTune's protocol does not allow (too long, too deep,
    not a JSON object): the peer is not an ORTune worker or parent, or not a friendly one."""


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
    """The next message, or None at the end of the stream. A line longer than
    MAX_LINE_BYTES, nested deeper than MAX_DEPTH or not a JSON object raises ProtocolError,
    decided before the JSON parser recurses into it."""
    line = stream.readline(MAX_LINE_BYTES + 1)
    if not line:
        return None
    if len(line) > MAX_LINE_BYTES:
        raise ProtocolError(f"a line longer than {MAX_LINE_BYTES >> 20} MB")
    if line.count(b"[") + line.count(b"{") > MAX_DEPTH and _depth(line) > MAX_DEPTH:
        raise ProtocolError(f"a line nested deeper than {MAX_DEPTH} levels")
    try:
        message = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProtocolError(f"a line that is not JSON ({exc})") from None
    if not isinstance(message, dict):
        raise ProtocolError("a line that is not a JSON object")
    return message


def _depth(line: bytes) -> int:
    """How deep a JSON line nests its arrays and objects (brackets inside strings aside)."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in line:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:                     # backslash
                escaped = True
            elif byte == 0x22:                     # closing quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return deepest
