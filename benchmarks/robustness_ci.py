"""Safe in CI (issue #38): what a model names, and what a pull request plants in a checkout,
tried as an attacker would against what CI reads of ORTune, each case run through
`python -m app` on files made here:

- a model whose input is named `::error title=Forged::…`, whose outputs are named
  `::add-mask::a`, Markdown that forges a passing verdict (HTML, an image, a link, a
  heading, backticks) and characters XML forbids, in a file whose own name holds `::`,
  backticks and HTML, through gate (text, JSON, JUnit, Markdown, GITHUB_STEP_SUMMARY and
  annotations under GITHUB_ACTIONS=true), optimize and history;
- a link, a folder and a FIFO planted where reports were once staged, a FIFO as the step
  summary, the model under test as the JUnit report (--force), two reports at one path;
- a 64 KiB output name, an id of 40 digits to history, and (on a plain model) optimize into
  a read-only file system (a mount of its own, as root) and with a 3 s budget, and bench on
  a file whose name is not UTF-8.

Each case is a try; it held when it met every condition it is tried for. Figures (all 0
when the product holds): forged `::` lines, markup from a name in the Markdown rendered as
GitHub does (cmark-gfm), writes outside the output, exit 1, hangs.

Run alone it prints one JSON object: python benchmarks/robustness_ci.py
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.robustness_cases import Tool  # noqa: E402

QUICK = ("--warmup", "2", "--duration", "0.1", "--pairs", "1", "--max-seconds", "2", "--threads", "1",
         "--max-slowdown", "50")
#: a line a runner reads as a workflow command: `::` or `##[` at its start, after blanks
COMMAND_LINE = re.compile(r"^\s*(::|##\[)")
OURS = ("::error title=ORTune gate%3A", "::warning title=ORTune gate%3A")
#: the tags the gate's own Markdown renders to
OUR_TAGS = {"p", "code", "strong", "table", "thead", "tbody", "tr", "th", "td", "ul", "li", "h3"}
HOSTILE_FILE = "new ::error::x ``` <img src=x> [a](javascript:alert(1)) www.evil.example.onnx"   # no "/" in a name


def forged_lines(*texts: str) -> int:
    return sum(1 for text in texts for line in text.splitlines()
               if COMMAND_LINE.match(line) and not line.startswith(OURS))


def markup_from_names(markdown: str) -> int:
    """Tags in the rendered Markdown that ORTune's own text does not make, and headings past
    its one: what a name made of it."""
    import cmarkgfm
    from cmarkgfm.cmark import Options

    html = cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)
    tags = re.findall(r"<\s*([a-zA-Z][a-zA-Z0-9]*)", html)
    return sum(1 for tag in tags if tag.lower() not in OUR_TAGS) + max(0, html.count("<h3>") - 1)


class Cases:
    """The tries and what each found."""

    def __init__(self, tool: Tool, folder: Path):
        self.tool, self.folder = tool, folder
        self.results: dict[str, dict] = {}

    def run(self, name: str, args, held, env: dict | None = None, timeout: float = 180, cwd: Path | None = None,
            prefix: tuple = ()) -> dict:
        """Run `ortune ARGS`; `held(run)` says whether the case held (given the run, which also
        counts as a failure when it exits 1 or hangs)."""
        saved = self.tool.env
        self.tool.env = dict(saved, **(env or {}))
        try:
            run = self.tool.run(args, cwd=cwd or self.folder, timeout=timeout, prefix=prefix)
        finally:
            self.tool.env = saved
        run["forged"] = forged_lines(run["stdout"], run["stderr"])
        ok = bool(held(run)) and run["code"] != 1 and not run["timed_out"] and not run["traceback"] \
            and run["forged"] == 0
        self.results[name] = {"held": ok, "code": run["code"], "seconds": run["seconds"], "forged_lines": run["forged"],
                              "hang": run["timed_out"], **({} if ok else {"stderr": run["stderr"][-300:]})}
        return run

    def note(self, name: str, **figures) -> None:
        self.results[name].update(figures)
        self.results[name]["held"] = self.results[name]["held"] and not any(
            figures.get(key) for key in ("markup_from_names", "writes_outside", "forged_lines"))


def _models(folder: Path) -> tuple[Path, Path]:
    import onnx

    from tests.hostile_models import ci_hostile

    old = folder / "old.onnx"
    onnx.save(ci_hostile(), str(old))
    new = folder / HOSTILE_FILE
    onnx.save(ci_hostile("Abs"), str(new))       # other outputs: the gate names them as failing
    return old, new


def _gate_reports(cases: Cases, old: Path, new: Path) -> None:
    folder = cases.folder
    summary = folder / "step-summary.md"
    actions = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    cases.run("gate text, JUnit, Markdown, step summary, annotations",
              ["gate", new.name, "--against", old.name, *QUICK, "--junit", "gate.xml", "--markdown", "gate.md"],
              lambda run: run["code"] == 5, env=actions)
    rendered = [p.read_text(encoding="utf-8") for p in (folder / "gate.md", summary) if p.exists()]
    try:
        suite = ElementTree.parse(folder / "gate.xml").getroot().find("testsuite")
        replaced = int(suite.find("properties/property[@name='characters_replaced']").get("value"))
        junit_parses = True
    except (OSError, ElementTree.ParseError, AttributeError, TypeError, ValueError):
        junit_parses, replaced = False, 0
    cases.note("gate text, JUnit, Markdown, step summary, annotations", reports_written=len(rendered) == 2,
               markup_from_names=sum(markup_from_names(text) for text in rendered), junit_parses=junit_parses,
               xml_characters_replaced=replaced)
    results = cases.results["gate text, JUnit, Markdown, step summary, annotations"]
    results["held"] = results["held"] and junit_parses and len(rendered) == 2

    run = cases.run("gate --json with annotations", ["gate", new.name, "--against", old.name, *QUICK, "--json"],
                    lambda run: run["code"] == 5, env=actions)
    from tests.hostile_models import FORGED_MASK

    try:
        exact = FORGED_MASK in [row["name"] for row in json.loads(run["stdout"])["criteria"][1]["figures"]["outputs"]]
    except (ValueError, KeyError, TypeError, IndexError):
        exact = False
    cases.note("gate --json with annotations", json_keeps_exact_names=exact)
    cases.results["gate --json with annotations"]["held"] &= exact


def _optimize_and_history(cases: Cases, new: Path) -> None:
    cases.run("optimize (text)", ["optimize", new.name, "-o", "ship", "--kinds", "ort", "--screen-seconds",
                                        "0.05", "--no-tune", "--budget-seconds", "30"], lambda run: run["code"] == 0)
    script = cases.folder / "ship" / "session.py"
    ran = subprocess.run([sys.executable, str(script)], capture_output=True, timeout=120) if script.exists() else None
    cases.note("optimize (text)", session_py_runs=bool(ran and ran.returncode == 0))
    cases.results["optimize (text)"]["held"] &= bool(ran and ran.returncode == 0)
    listed = cases.run("history (list)", ["history"], lambda run: run["code"] == 0)
    ids = [line.split()[0] for line in listed["stdout"].splitlines()[2:] if line.split() and line.split()[0].isdigit()]
    for entry in ids:
        cases.run(f"history --show {entry}", ["history", "--show", entry], lambda run: run["code"] == 0)
    for flag in ("--show", "--delete"):
        cases.run(f"history {flag} with a 40-digit id", ["history", flag, "1" + "0" * 39],
                  lambda run: run["code"] == 2 and run["error_lines"] == 1)


def _planted(cases: Cases, old: Path) -> int:
    """Links, folders and FIFOs where the reports were once staged; a FIFO as the step
    summary; the model under test as a report. Returns the writes outside the outputs."""
    written = 0
    for kind in ("link", "folder", "fifo"):
        place = cases.folder / f"planted-{kind}"
        place.mkdir()
        victim = place / "victim.txt"
        victim.write_text("keep me")
        for report in ("gate.xml", "gate.md"):
            staged = place / f".{report}.partial"
            {"link": lambda: staged.symlink_to(victim), "folder": staged.mkdir,
             "fifo": lambda: os.mkfifo(staged)}[kind]()
        shutil.copy(old, place / "m.onnx")
        cases.run(f"a {kind} planted where the reports were staged",
                  ["gate", "m.onnx", "--against", "m.onnx", *QUICK, "--junit", "gate.xml", "--markdown", "gate.md"],
                  lambda run: run["code"] in (0, 6) and (place / "gate.xml").is_file()
                  and not (place / "gate.xml").is_symlink(), cwd=place, timeout=120)
        outside = int(victim.read_text() != "keep me")
        cases.note(f"a {kind} planted where the reports were staged", writes_outside=outside)
        written += outside
    fifo = cases.folder / "summary-fifo"
    os.mkfifo(fifo)
    cases.run("GITHUB_STEP_SUMMARY is a FIFO", ["gate", old.name, "--against", old.name, *QUICK],
              lambda run: run["code"] in (0, 6) and "GITHUB_STEP_SUMMARY" in run["stderr"],
              env={"GITHUB_STEP_SUMMARY": str(fifo)}, timeout=120)
    before = old.read_bytes()
    copy = cases.folder / "against.onnx"
    shutil.copy(old, copy)
    cases.run("--junit NEW --force", ["gate", old.name, "--against", copy.name, "--junit", old.name, "--force", *QUICK],
              lambda run: run["code"] == 2)
    changed = int(old.read_bytes() != before)
    cases.note("--junit NEW --force", writes_outside=changed)
    cases.run("--junit X --markdown X", ["gate", old.name, "--against", old.name, "--junit", "x", "--markdown", "x",
                                         *QUICK], lambda run: run["code"] == 2 and not (cases.folder / "x").exists())
    return written + changed


def _edges(cases: Cases, old: Path) -> None:
    import onnx
    from onnx import TensorProto, helper

    name = "o" * 70_000
    graph = helper.make_graph([helper.make_node("Relu", ["x"], [name])], "long",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(cases.folder / "long.onnx"))
    cases.run("a 64 KiB output name", ["gate", "long.onnx", "--against", "long.onnx", *QUICK, "--junit", "long.xml",
                                       "--force"], lambda run: run["code"] in (0, 6))
    from tests import models

    plain = models.save(models.mlp(), cases.folder / "plain.onnx")    # what is tried here is the place, not the names
    read_only = cases.folder / "read-only"
    read_only.mkdir()
    if os.geteuid() == 0 and shutil.which("unshare"):
        prefix = ("unshare", "-m", "sh", "-c", 'mount -t tmpfs -o ro tmpfs "$0" && exec "$@"', str(read_only))
    else:
        read_only.chmod(0o555)
        prefix = ()
    cases.run("optimize -o on a read-only file system", ["optimize", plain.name, "-o", read_only / "ship",
                                                         "--budget-seconds", "300"],
              lambda run: run["code"] == 2 and run["error_lines"] == 1, prefix=prefix)
    cases.run("optimize --budget-seconds 3", ["optimize", plain.name, "-o", "tiny", "--budget-seconds", "3"],
              lambda run: run["code"] == 0)
    script = cases.folder / "tiny" / "session.py"
    ran = subprocess.run([sys.executable, str(script)], capture_output=True, timeout=120) if script.exists() else None
    cases.note("optimize --budget-seconds 3", session_py_runs=bool(ran and ran.returncode == 0))
    cases.results["optimize --budget-seconds 3"]["held"] &= bool(ran and ran.returncode == 0)
    bad = os.fsencode(cases.folder) + b"/bad\xff.onnx"
    with open(bad, "wb") as handle:
        handle.write(plain.read_bytes())
    cases.run("a file name not UTF-8", ["bench", os.fsdecode(bad), "--iterations", "3"],
              lambda run: run["code"] == 2 and "not valid UTF-8" in run["stderr"] and run["error_lines"] == 1)


def ci(tool: Tool) -> dict:
    folder = tool.folder / "ci"
    folder.mkdir()
    cases = Cases(tool, folder)
    old, new = _models(folder)
    _gate_reports(cases, old, new)
    _optimize_and_history(cases, new)
    outside = _planted(cases, old)
    _edges(cases, old)
    results = cases.results
    return {"cases": results, "tries": len(results), "held": sum(1 for r in results.values() if r["held"]),
            "forged_command_lines": sum(r["forged_lines"] for r in results.values()),
            "markup_from_names": sum(r.get("markup_from_names", 0) for r in results.values()),
            "writes_outside_the_output": outside,
            "exit_1": sum(1 for r in results.values() if r["code"] == 1),
            "hangs": sum(1 for r in results.values() if r["hang"])}


def figures(report: dict) -> dict:
    return {key: report[key] for key in ("tries", "held", "forged_command_lines", "markup_from_names",
                                         "writes_outside_the_output", "exit_1", "hangs")}


if __name__ == "__main__":
    started = time.monotonic()
    with Tool() as tool:
        found = ci(tool)
    print(json.dumps({"figures": figures(found), "ci": found, "seconds": round(time.monotonic() - started, 1)},
                     indent=2))
