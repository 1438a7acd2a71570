"""A model's first run, and the probe that finds inputs it accepts.

Every job that runs a model starts here (`prepare_feeds`): it plans the inputs
(app.core.session.inputs), runs the model once and, when ONNX Runtime refuses that run
(a shape or a value it cannot take) or the run goes past the job's memory budget, tries
other values for the dimensions the plan only guessed: the sizes the refusal names first,
then larger and smaller ones, at most CANDIDATES_PER_DIM per dimension and PROBE_SECONDS in
all; and zeros, then ones, where the plan drew random integer ids (first, when the refusal
is about a value). A dimension found this way has the source "probed" and a reason that says
what was refused, e.g. "probed: 256 (128 was refused: Reshape: …)". When nothing works, the
refusal names the flag or field that fixes it."""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from app.core.jobs.errors import UserError, is_runtime_error
from app.core.jobs.memory import gib, over_budget_message, rss_bytes
from app.core.jobs.protocol import JobContext
from app.core.session.graph_hints import read_hints
from app.core.session.inputs import FeedSpec, make_feeds, session_inputs
from app.core.ort_messages import is_shape_problem, is_value_problem, ort_text

PROBE_SECONDS = 20.0
CANDIDATES_PER_DIM = 8
#: the probe calls a run too big at this share of the budget, before the parent has to end the job
SOFT_SHARE = 0.9
LARGEST_CANDIDATE = 1 << 20
_NODE = re.compile(r"^Non-zero status code returned while running (\w+) node\. Name:'([^']*)' Status Message: ")
#: a size in a refusal; not a position ("axis 2", "index 1", "input 0")
_NUMBER = re.compile(r"(?<!axis )(?<!index )(?<!input )(?<!dimension )(?<![\w.:/\[-])\d+(?![\w.\]])", re.I)


@dataclass
class Attempt:
    dims: dict[str, int]
    error: str | None = None          # one line; None when it ran
    too_big: bool = False             # past the memory budget, or past the probe's time
    values: str = ""                  # what replaced the random integer ids ("zeros", "ones"), if anything

    def to_dict(self) -> dict:
        return {"dims": self.dims, "error": self.error, **({"values": self.values} if self.values else {})}


@dataclass
class FirstRun:
    """The outcome of planning the inputs and running the model once."""
    feeds: dict
    info: dict                        # as make_feeds returns it
    outputs: list | None = None       # the run's outputs, when one worked
    run_ns: int = 0                   # how long the run that worked took
    tried: list[Attempt] = field(default_factory=list)
    message: str = ""                 # why nothing worked, and what fixes it

    @property
    def worked(self) -> bool:
        return self.outputs is not None


def refusal_text(exc: BaseException) -> str:
    """ONNX Runtime's refusal in one readable line: the node, then what it said."""
    text = ort_text(str(exc))
    where = ""
    node = _NODE.match(text)
    while node:         # a node inside a subgraph (If, Loop) is the one that refused
        where = f"{node.group(1)} {node.group(2)}: " if node.group(2) else f"{node.group(1)}: "
        text = text[node.end():]
        node = _NODE.match(text)
    return where + text


def _numbers(error: str | None) -> list[int]:
    """The sizes a refusal names (a shape it wanted, the size it compared against)."""
    if not error:
        return []
    said = error.split(": ", 1)[-1]
    return list(dict.fromkeys(int(n) for n in _NUMBER.findall(said) if 2 <= int(n) <= LARGEST_CANDIDATE))


def _candidates(value: int, error: str | None) -> list[int]:
    """Sizes to try for a dimension the plan set to `value`: those the refusal names, then
    larger and smaller ones, none far below the plan's (a 2×2 image runs, but says nothing)."""
    floor = min(value, 16)
    return [v for v in _numbers(error) + _ladder(value) if v >= floor]


def _ladder(value: int) -> list[int]:
    """Other sizes to try for a dimension the plan set to `value`: larger first, then smaller."""
    if value <= 1:
        return [4, 16, 64, 256, 1024, 2, 8, 32]
    up = [value * 2 ** k for k in range(1, 6)]
    down = [value >> k for k in range(1, 6) if value >> k >= 1]
    mixed = [v for pair in zip(up, down + [None] * len(up)) for v in pair if v is not None]
    return [v for v in mixed if v <= LARGEST_CANDIDATE]


class _Guard:
    """One run that cancel, the memory budget or the probe's deadline can stop
    (through RunOptions.terminate); `stopped` says which of the last two did."""

    def __init__(self, ctx: JobContext, deadline: float | None):
        self.ctx, self.deadline = ctx, deadline
        self.stopped = ""

    def run(self, session, feeds: dict) -> tuple[list, int]:
        import onnxruntime as ort

        options = ort.RunOptions()
        remove = self.ctx.on_cancel(lambda: setattr(options, "terminate", True))
        done = threading.Event()
        watcher = None
        if self.ctx.memory_budget or self.deadline:
            watcher = threading.Thread(target=self._watch, args=(options, done), daemon=True)
            watcher.start()
        try:
            started = time.perf_counter_ns()
            outputs = session.run(None, feeds, options)
            return outputs, time.perf_counter_ns() - started
        finally:
            done.set()
            remove()
            if watcher is not None:
                watcher.join()

    def _watch(self, options, done: threading.Event) -> None:
        budget = self.ctx.memory_budget
        limit = None
        if budget:
            start = rss_bytes() or 0
            # Memory ORT's arena kept from an earlier, larger run is reused: then only growth stops this one.
            limit = max(budget * SOFT_SHARE, start + budget * (1 - SOFT_SHARE))
        while not done.wait(0.01):
            if limit is not None and (rss_bytes() or 0) > limit:
                self.stopped = "memory"
            elif self.deadline is not None and time.monotonic() > self.deadline:
                self.stopped = "time"
            if self.stopped:
                options.terminate = True
                return


class _Prober:
    def __init__(self, path, session, spec: FeedSpec, ctx: JobContext):
        self.path, self.session, self.ctx = path, session, ctx
        self.spec = spec
        self.inputs = session_inputs(session)
        self.hints = read_hints(path)
        self.deadline: float | None = None

    def attempt(self, found: dict[str, tuple[int, str]], ids: tuple[int, str] | None = None,
                word: str = "") -> tuple[FirstRun, Attempt]:
        """Plan with `found` dims (and `ids` for the random integer ids, `word` naming them) and run once."""
        try:
            feeds, info = make_feeds(self.inputs, self.spec, self.hints, found=found,
                                     budget=self.ctx.memory_budget, ids=ids)
        except UserError as exc:
            if exc.kind != "over-memory-budget" or not found:
                raise
            return FirstRun({}, {}), Attempt({k: v for k, (v, _) in found.items()}, exc.message, True, word)
        dims = {label: info["dims"][label] for label in info["guessed"]}
        result = self._run(feeds, info, dims)
        result[1].values = word
        return result

    def _run(self, feeds: dict, info: dict, dims: dict[str, int]) -> tuple[FirstRun, Attempt]:
        self.ctx.data("inputs", {key: info[key] for key in ("inputs", "dims", "guessed")})
        guard = _Guard(self.ctx, self.deadline)
        try:
            outputs, run_ns = guard.run(self.session, feeds)
        except Exception as exc:  # ORT raises its own types; anything else is a bug and goes on up
            self.ctx.check_cancel()
            if guard.stopped == "memory" or is_runtime_error(exc) and "alloc" in str(exc).lower():
                budget = self.ctx.memory_budget
                error = f"needed more than {gib(budget * SOFT_SHARE)} of memory" if budget else refusal_text(exc)
                return FirstRun(feeds, info), Attempt(dims, error, True)
            if guard.stopped == "time":
                return FirstRun(feeds, info), Attempt(dims, f"took longer than the probe's {PROBE_SECONDS:g} s", True)
            if not is_runtime_error(exc):
                raise
            return FirstRun(feeds, info), Attempt(dims, refusal_text(exc))
        return FirstRun(feeds, info, outputs, run_ns), Attempt(dims)

    def run(self) -> FirstRun:
        first, attempt = self.attempt({})
        tried = [attempt]
        if first.worked:
            return self._done(first, tried)
        self.deadline = time.monotonic() + PROBE_SECONDS
        plan = {label: first.info["dims"][label] for label in first.info["guessed"]}
        steps = [self._probe_dims, self._probe_values]
        if is_value_problem(attempt.error):
            steps.reverse()
        for step in steps:
            outcome = step(first.info, plan, tried)
            if outcome is not None:
                return self._done(outcome, tried)
        return self._done(first, tried)

    def _probe_values(self, info: dict, plan: dict[str, int], tried: list[Attempt]) -> FirstRun | None:
        """Zeros, then ones, where the plan drew random integer ids (indices, counts, divisors)."""
        if tried[0].too_big or not any(row["values"].startswith("random ids") for row in info["inputs"]):
            return None
        for value, word in ((0, "zeros"), (1, "ones")):
            if time.monotonic() > self.deadline:
                return None
            outcome, attempt = self.attempt({}, (value, f"probed: {word} (random ids were refused: "
                                                       f"{tried[0].error[:100]})"), word)
            tried.append(attempt)
            if outcome.worked:
                return outcome
        return None

    def _probe_dims(self, info: dict, plan: dict[str, int], tried: list[Attempt]) -> FirstRun | None:
        for group in self._groups(plan):
            if time.monotonic() > self.deadline:
                return None
            outcome = self._probe_group(group, plan, tried)
            if outcome is not None:
                return outcome
        return None

    @staticmethod
    def _groups(plan: dict[str, int]) -> list[tuple[str, ...]]:
        """Dims that share a planned value move together first (an image's height and width),
        then each alone, the largest first."""
        together = {}
        for label, value in plan.items():
            together.setdefault(value, []).append(label)
        groups = [tuple(labels) for labels in together.values() if len(labels) > 1]
        return groups + [(label,) for label in sorted(plan, key=lambda k: -plan[k])]

    def _probe_group(self, group: tuple[str, ...], plan: dict[str, int], tried: list[Attempt]) -> FirstRun | None:
        start = plan[group[0]]
        refused = [start]
        ceiling = start if tried[0].too_big else None
        last = tried[0].error
        for _ in range(CANDIDATES_PER_DIM):
            if time.monotonic() > self.deadline:
                return None
            value = next((v for v in _candidates(start, last)
                          if v not in refused and (ceiling is None or v < ceiling)), None)
            if value is None:
                return None
            first_error = next(a.error for a in tried if a.error)
            shown = " and ".join(map(str, refused[:3])) + (" …" if len(refused) > 3 else "")
            reason = (f"probed: {value} ({shown} {'was' if len(refused) == 1 else 'were'} refused: "
                      f"{first_error[:100]})")
            outcome, attempt = self.attempt({label: (value, reason) for label in group})
            tried.append(attempt)
            if outcome.worked:
                return outcome
            refused.append(value)
            last = attempt.error
            if attempt.too_big:
                ceiling = value if ceiling is None else min(ceiling, value)
        return None

    def _done(self, outcome: FirstRun, tried: list[Attempt]) -> FirstRun:
        outcome.tried = tried
        if not outcome.worked:
            outcome.message = refusal_message(self.path, tried, outcome.info, self.ctx.memory_budget)
        return outcome


def refusal_message(path, tried: list[Attempt], info: dict, budget: int | None) -> str:
    """Why no inputs worked, pointing to the flag or field that fixes it."""
    first = tried[0]
    if first.too_big and budget:
        return over_budget_message(budget, info.get("inputs"))
    text = f"{Path(path).name}: ONNX Runtime refused to run it: {first.error}"
    if len(tried) > 1:
        text += f" (and {len(tried) - 1} other sizes of {', '.join(info['guessed'])})"
    rows = info.get("inputs") or []
    if is_value_problem(first.error):
        # the input whose values are to blame: random ids, or one the refusal names; where
        # none is, the value is the model's own (a constant), and no flag helps
        name = next((r["name"] for r in rows if r["values"].startswith("random") and "int" in r["dtype"]),
                    next((r["name"] for r in rows if re.search(rf"\b{re.escape(r['name'])}\b", first.error)), None))
        if name is None:
            return text
        return text + (f"; give that input's values with --value {name}=V or --input {name}=FILE.npy "
                       "(or in the Session tab's Inputs table)")
    if not is_shape_problem(first.error) and len(tried) == 1:
        return text
    label = (info.get("guessed") or list(info.get("dims") or {}) or ["NAME"])[0]
    shaped = rows[0] if rows else {"name": "INPUT", "shape": ["D1", "D2"]}
    return (text + f"; set the inputs' sizes with --dim {label}=N or --shape {shaped['name']}="
            + ",".join(map(str, shaped["shape"])) + " (or in the Session tab's Inputs table)")


def first_run(path, session, spec: FeedSpec | None = None, ctx: JobContext | None = None) -> FirstRun:
    """Plan the inputs of the model at `path`, loaded in `session`, and run it once,
    probing the guessed dims when that run is refused (see the module docstring)."""
    return _Prober(path, session, spec or FeedSpec(), ctx or JobContext()).run()


def prepare_feeds(path, session, spec: FeedSpec | None = None, ctx: JobContext | None = None) -> FirstRun:
    """As first_run, but a run that nothing made work ends the job with its refusal."""
    outcome = first_run(path, session, spec, ctx)
    if not outcome.worked:
        kind = "over-memory-budget" if outcome.tried[0].too_big and (ctx and ctx.memory_budget) else "runtime-error"
        raise UserError(kind, outcome.message)
    return outcome
