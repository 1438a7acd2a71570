"""Reading an ONNX Runtime profile trace into columns, fast, and as much of a broken one as can be read.

ORT writes its Chrome-trace JSON as a `[` line, one event per line, and a `]` line. That
layout is read with one regular expression per chunk of the file: no Python object is made
per JSON value, only a handful per event, which is what makes traces of millions of events
quick. A line the expression does not match (an escaped quote in a name, keys in another
order) is decoded on its own; a file in any other layout is decoded whole. A file that ends
early keeps every complete event and says so.

The result is columnar: per event its thread, start, duration and a key; per key (an event
name and operator type) its category and the arguments of its first event."""

from __future__ import annotations

import gc
import json
import mmap
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from app.core.jobs.errors import UserError

try:
    import orjson

    _loads = orjson.loads
    _DecodeError: type[Exception] = orjson.JSONDecodeError
except ImportError:  # the optional `fast` extra; json is slower but equal
    _loads = json.loads
    _DecodeError = ValueError

CHUNK_BYTES = 16 << 20
KERNEL_SUFFIX = "_kernel_time"
FENCE_SUFFIXES = ("_fence_before", "_fence_after")
_LARGEST = 2**62          # µs; anything beyond is a broken number, not a time

# One event as ORT writes it: fixed top-level key order, a plain name, args up to the line end.
_EVENT_LINE = re.compile(
    rb'^\{"cat" ?: ?"(\w*)", ?"pid" ?: ?-?\d+, ?"tid" ?: ?(-?\d{1,18}), ?"dur" ?: ?(\d{1,18}), ?"ts" ?: ?(\d{1,18}),'
    rb' ?"ph" ?: ?"X", ?"name" ?: ?"([^"\\\n]*)", ?"args" ?: ?\{([^\n]*)\}\},?\r?$', re.M)
_ORT_LAYOUT = re.compile(rb'\[[ \t\r]*\n\{"')     # "[", then the first event at the start of a line
_OP_NAME = re.compile(rb'"op_name" ?: ?"([^"\\]*)"')


@dataclass
class EventKey:
    """What all events with one name and operator type share."""
    category: str          # Node | Session | Kernel | Fence | …
    name: str              # the node name without ORT's suffix, or the session phase
    op_type: str
    args: dict = field(default_factory=dict)   # the first event's arguments (shapes, provider)


@dataclass
class TraceData:
    path: Path
    size_bytes: int
    keys: list[EventKey]
    key: np.ndarray        # per event: index into keys
    tid: np.ndarray
    ts: np.ndarray         # µs since the session started
    dur: np.ndarray        # µs
    unreadable: int = 0    # lines or elements that could not be decoded
    truncated: bool = False

    @property
    def problem(self) -> str | None:
        """One sentence on what was wrong with the file, or None when it was whole."""
        name, count = self.path.name, len(self.ts)
        if self.truncated:
            return f"{name} ends early (truncated): read the {count:,} complete events before the cut"
        if self.unreadable:
            return f"{name} has {self.unreadable:,} unreadable part(s), skipped: read the other {count:,} events"
        return None


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class _Collector:
    """Accumulates events from both the fast and the general path."""

    def __init__(self):
        self.keys: list[EventKey] = []
        self.by_name: dict[tuple[str, str], int] = {}      # (event name, op type) -> key
        self.by_raw: dict[tuple[bytes, bytes], int] = {}   # the same, undecoded, for the fast path
        self.pending_args: dict[int, bytes] = {}           # key -> raw args text, decoded at the end
        self.columns: list[tuple[np.ndarray, ...]] = []
        self.unreadable = 0

    def _key(self, category: str, name: str, op_type: str) -> int:
        index = self.by_name.get((name, op_type))
        if index is None:
            index = self.by_name[(name, op_type)] = len(self.keys)
            if category == "Node":
                if name.endswith(KERNEL_SUFFIX):
                    name = name[: -len(KERNEL_SUFFIX)]
                elif name.endswith(FENCE_SUFFIXES):
                    category = "Fence"
            self.keys.append(EventKey(category, name, op_type))
        return index

    def add_rows(self, rows: list[tuple]) -> None:
        """Rows of the fast expression: (cat, tid, dur, ts, name, args) as bytes."""
        if not rows:
            return
        ids = []
        get = self.by_raw.get
        search = _OP_NAME.search
        for cat, _tid, _dur, _ts, name, args in rows:
            found = search(args) if args else None
            raw = (name, found.group(1) if found else b"")
            index = get(raw)
            if index is None:
                index = self.by_raw[raw] = self._key(cat.decode("ascii"), name.decode("utf-8", "replace"),
                                                     raw[1].decode("utf-8", "replace"))
                if not self.keys[index].args:
                    self.pending_args.setdefault(index, args)
            ids.append(index)
        self.columns.append((np.array(ids, dtype=np.int32),
                             np.array([r[1] for r in rows]).astype(np.int64),
                             np.array([r[3] for r in rows]).astype(np.int64),
                             np.array([r[2] for r in rows]).astype(np.int64)))

    def add_events(self, events: list) -> None:
        """Decoded events (dicts); one without a numeric start and duration is not a timed event."""
        ids, tids, starts, durations = [], [], [], []
        for event in events:
            if not isinstance(event, dict):
                continue
            dur, ts = event.get("dur"), event.get("ts")
            if not _is_number(dur) or not _is_number(ts):
                continue
            if not (0 <= dur < _LARGEST and abs(ts) < _LARGEST):    # NaN fails both
                self.unreadable += 1
                continue
            args = event.get("args") if isinstance(event.get("args"), dict) else {}
            index = self._key(str(event.get("cat", "")), str(event.get("name", "")), str(args.get("op_name", "")))
            if not self.keys[index].args and index not in self.pending_args:
                self.keys[index].args = args
            ids.append(index)
            tid = event.get("tid", 0)
            tids.append(tid if isinstance(tid, int) and abs(tid) < _LARGEST else 0)
            starts.append(int(ts))
            durations.append(int(dur))
        if ids:
            self.columns.append((np.array(ids, dtype=np.int32), np.array(tids, dtype=np.int64),
                                 np.array(starts, dtype=np.int64), np.array(durations, dtype=np.int64)))

    def finish(self, path: Path, size: int, truncated: bool) -> TraceData:
        for index, raw in self.pending_args.items():
            if self.keys[index].category in ("Node", "Kernel"):
                try:
                    self.keys[index].args = _loads(b"{" + raw + b"}")
                except _DecodeError:
                    self.keys[index].args = {}
        self.pending_args.clear()
        if self.columns:
            key, tid, ts, dur = (np.concatenate(c) for c in zip(*self.columns))
        else:
            key = np.zeros(0, np.int32)
            tid = ts = dur = np.zeros(0, np.int64)
        return TraceData(path, size, self.keys, key, tid, ts, dur, self.unreadable, truncated)


_UNREADABLE = object()


def _decode_line(line: bytes):
    """One line of the ORT layout decoded on its own: an event, None (no event), or _UNREADABLE."""
    text = line.strip().rstrip(b",")
    if not text or text in (b"[", b"]"):
        return None
    for candidate in (text, text.rstrip(b"]").rstrip().rstrip(b",")):
        try:
            return _loads(candidate)
        except _DecodeError:
            continue
    return _UNREADABLE


def _scan_lines(data, size: int, collector: _Collector, progress: Callable[[float], None]) -> None:
    """The ORT layout: fast expression per chunk; a chunk with events it missed is read line by line."""
    position = 0
    while position < size:
        end = min(size, position + CHUNK_BYTES)
        if end < size:
            newline = data.find(b"\n", end)
            end = size if newline < 0 else newline + 1
        chunk = data[position:end]
        rows = _EVENT_LINE.findall(chunk)
        if len(rows) == chunk.count(b'"ph"'):
            collector.add_rows(rows)
        else:
            matched, decoded = [], []
            for line in chunk.split(b"\n"):
                match = _EVENT_LINE.match(line)
                if match:
                    matched.append(match.groups())
                    continue
                event = _decode_line(line)
                if event is _UNREADABLE:
                    collector.unreadable += 1
                elif event is not None:
                    decoded.append(event)
            collector.add_rows(matched)
            collector.add_events(decoded)
        position = end
        progress(position / size)


def _salvage(text: str, collector: _Collector) -> bool:
    """Decode a broken document element by element up to the first broken one.

    Returns True when a list of events was found (however short)."""
    marker = text.find('"traceEvents"')
    start = text.find("[", marker + 1 if marker >= 0 else 0)
    if start < 0:
        return False
    decoder = json.JSONDecoder()
    position, events, length = start + 1, [], len(text)
    while position < length:
        while position < length and text[position] in " \t\r\n,":
            position += 1
        if position >= length or text[position] == "]":
            break
        try:
            event, position = decoder.raw_decode(text, position)
        except ValueError:
            collector.unreadable += 1
            break
        events.append(event)
    collector.add_events(events)
    return True


def _scan_document(data: bytes, collector: _Collector, name: str) -> bool:
    """Any other layout: the whole document at once. Returns True when it is cut short or broken."""
    try:
        document = _loads(data)
    except _DecodeError:
        if not _salvage(data.decode("utf-8", "replace"), collector):
            raise UserError("bad-trace", f"{name} is not a profiling trace: it is not valid JSON") from None
        return True
    if isinstance(document, dict):
        document = document.get("traceEvents")
    if not isinstance(document, list):
        raise UserError("bad-trace", f"{name} is JSON but not a profiling trace (no list of trace events)")
    collector.add_events(document)
    return False


def read_trace(path: str | Path, progress: Callable[[float], None] | None = None) -> TraceData:
    """Read a trace file; raises UserError when not a single event could be read."""
    path = Path(path)
    progress = progress or (lambda fraction: None)
    if not path.is_file():
        raise UserError("not-found", f"{path}: no such trace file")
    size = path.stat().st_size
    if size == 0:
        raise UserError("bad-trace", f"{path.name} is empty")
    collector = _Collector()
    gc_was_enabled = gc.isenabled()
    gc.disable()   # millions of short-lived tuples; the collector would only walk them in vain
    try:
        with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            head = data[:4096].lstrip()
            tail = data[max(0, size - 4096):].rstrip()
            if _ORT_LAYOUT.match(head):
                _scan_lines(data, size, collector, progress)
                truncated = not tail.endswith(b"]")
            elif head[:1] in (b"[", b"{"):
                truncated = _scan_document(data[:], collector, path.name)
            else:
                raise UserError("bad-trace", f"{path.name} is not a profiling trace: it does not start "
                                             "like a JSON document")
    except OSError as exc:
        raise UserError("not-readable", f"{path}: cannot read the trace ({exc.strerror})") from None
    finally:
        if gc_was_enabled:
            gc.enable()
    trace = collector.finish(path, size, truncated)
    if len(trace.ts) == 0:
        detail = " (it ends early and no event is complete)" if truncated else ""
        raise UserError("bad-trace", f"{path.name} holds no profiling events{detail}")
    return trace
