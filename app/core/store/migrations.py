"""Stored results carry the version of their shape, and one stored by an older ORTune is
brought to this shape once, where it is read (app.core.store.history.History.get): the
renderers, in the window and on the command line, read one shape only and never branch on
the age of a result.

Every result the history keeps, and every optimize.json, holds `report_version`. A
result without one was stored before results were versioned (version 0). Each Migration
takes a result from one version to the next; they run in turn, as napari's settings
migrators do. A result from a newer ORTune, or one whose text is not a result, is refused
with one line that says so (a UserError), never a traceback.

To change the shape of a stored result: raise REPORT_VERSION and add the step from the
version before it here."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable

from app.core.jobs.errors import UserError
from app.core.verdict import REFERENCE, SEQUENTIAL, judge_speed

REPORT_VERSION = 1
VERSION_KEY = "report_version"


@dataclass(frozen=True)
class Migration:
    """One step: `run` takes a result of version `from_` and returns it in version `to`."""
    from_: int
    to: int
    run: Callable[[dict], dict]


def stamp(report: dict) -> dict:
    """`report` marked with this version (in place), as it is stored or written."""
    report[VERSION_KEY] = REPORT_VERSION
    return report


# version 0 -> 1 -------------------------------------------------------------------------
#: how version 0 began the reason of the candidate it chose (app.core.optimize.rows.CHOSEN then)
_V0_CHOSEN = "chosen: the fastest candidate that passed its check — "


def _v0_speed(block: dict) -> None:
    """A conversion's speed check stored before the one verdict rule (no `why_verdict`) is
    judged by it from its figures; one stored before `too_busy` and `conclusive` were kept
    gets them."""
    if block.get("skipped"):
        return
    ci = block.get("ratio_ci")
    block.setdefault("too_busy", False)
    block.setdefault("conclusive", True)
    if "why_verdict" in block or not ci or None in ci or block.get("ratio") is None:
        return
    judged = judge_speed(block["ratio"], *ci, 1.0 if block["too_busy"] else 0.0)
    block.update(verdict=judged.verdict, conclusive=judged.answered, why_verdict=judged.why)


def _v0_step_speed(block: dict) -> None:
    """A repair step's speed (judged when the step was made) stored before `too_busy` and
    `conclusive` were kept."""
    if not block.get("skipped"):
        block.setdefault("too_busy", False)
        block.setdefault("conclusive", True)


def _v0_one_after_the_other(rows: list[dict], ratio: str, interval: str) -> None:
    """Rows (a comparison's models, a sweep's cells) stored before they were timed in
    alternation have no interval and no verdict: the first is the reference, the others were
    measured one after the other (a sweep's have no ratio either)."""
    for index, row in enumerate(rows):
        if "verdict" in row:
            continue
        if index == 0 and ratio in row:
            row.update({interval: [1.0, 1.0], "verdict": REFERENCE})
        else:
            row.setdefault(ratio, None)
            row.update({interval: None, "verdict": SEQUENTIAL})


def _v0_kept_row(row: dict) -> None:
    """A candidate kept for reuse before its measured reason was kept apart from the words of
    its search's answer: the reason without them."""
    if "measured_reason" in row or row.get("status") != "passed" or row.get("kind") == "source":
        return
    reason = row["reason"]
    while reason.startswith(_V0_CHOSEN):
        reason = reason[len(_V0_CHOSEN):]
    row["measured_reason"] = reason


def _from_unversioned(report: dict) -> dict:
    """Version 0: every shape stored before results carried a version, told by its fields."""
    if isinstance(report.get("speed"), dict):                     # a conversion's speed check
        _v0_speed(report["speed"])
    for step in (report.get("repair") or {}).get("steps", []):     # the repair loop's steps
        if isinstance(step.get("speed"), dict):
            _v0_step_speed(step["speed"])
    if "alternation" not in report:             # a comparison or a sweep from before they alternated
        if isinstance(report.get("models"), list):
            _v0_one_after_the_other(report["models"], "speedup", "speedup_ci")
            report["alternation"] = None
        if isinstance(report.get("cells"), list):
            _v0_one_after_the_other(report["cells"], "ratio", "ratio_ci")
            report["alternation"] = None
    if isinstance((report.get("optimize_candidate") or {}).get("row"), dict):           # a kept candidate
        _v0_kept_row(report["optimize_candidate"]["row"])
    return report


MIGRATIONS = (Migration(0, 1, _from_unversioned),)


def migrated(report, where: str) -> dict:
    """`report` (a stored result, decoded) in this version's shape; `where` names it in the
    message that refuses one from a newer ORTune or one that is damaged."""
    if not isinstance(report, dict):
        raise UserError("damaged-result", f"{where} is damaged: it holds {type(report).__name__}, not a result")
    version = report.get(VERSION_KEY, 0)
    if not isinstance(version, int) or isinstance(version, bool) or version < 0:
        shown = json.dumps(version)[:40]
        raise UserError("damaged-result", f"{where} is damaged: its version {shown} is not a version")
    if version > REPORT_VERSION:
        raise UserError("newer-result", f"{where} was stored by a newer ORTune (result version {version}; this one "
                                        f"reads up to {REPORT_VERSION}): open it with that version or a later one")
    for step in MIGRATIONS:
        if step.from_ != version:
            continue
        try:
            report = step.run(report)
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise UserError("damaged-result", f"{where} is damaged: a version {version} result lacks what it "
                                              f"should hold ({type(exc).__name__}: {exc})") from None
        version = step.to
    report[VERSION_KEY] = version
    return report


def decoded(text: str, where: str) -> dict:
    """A stored result's JSON text, decoded and migrated (`where` names it in a refusal)."""
    try:
        report = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise UserError("damaged-result", f"{where} is damaged: its text is not JSON ({exc})") from None
    return migrated(report, where)
