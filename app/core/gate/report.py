"""What CI systems read from a gate: a JUnit file (one test case per criterion, with its
figures), a Markdown summary table (for a pull request or GitHub's job summary) and GitHub
Actions annotation lines (`::error::` for a regression, `::warning::` for an undecided one).

Names come from the user's files, and each format has its one rule for them: the Markdown
shows them as code spans (app.core.markdown_text), the annotations escape what a workflow
command reads (app.core.ci_lines), and the JUnit file replaces, and counts, what XML cannot
hold (app.core.xml_text) before an XML library escapes the rest."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree

from app.core.ci_lines import command
from app.core.gate.judge import PASS, REGRESSION, SKIPPED, UNDECIDED
from app.core.markdown_text import cell, code
from app.core.xml_text import XmlText

SUITE = "ortune gate"
MARKS = {PASS: "✅ pass", REGRESSION: "❌ regression", UNDECIDED: "⚠️ undecided", SKIPPED: "➖ skipped"}


def title(result: dict) -> str:
    return f"{result['new']['label']} against {result['old']['label']}"


def _seconds(result: dict) -> float:
    speed = next((c for c in result["criteria"] if c["name"] == "speed"), None)
    return float(speed["figures"].get("seconds", 0.0)) if speed else 0.0


def junit_xml(result: dict) -> str:
    """A JUnit report: one <testsuite> holding one <testcase> per criterion; a regression is a
    <failure>, an undecided criterion an <error> (neither passed nor failed: the run could
    not tell), a criterion not judged <skipped>; each case's figures as <properties> and
    its summary line as <system-out>. The suite's `characters_replaced` property counts the
    characters of names that XML cannot hold, written as escapes."""
    criteria = result["criteria"]
    xml = XmlText()
    suites = ElementTree.Element("testsuites", name=SUITE)
    suite = ElementTree.SubElement(
        suites, "testsuite", name=f"{SUITE}: {xml(title(result))}", tests=str(len(criteria)),
        failures=str(sum(c["verdict"] == REGRESSION for c in criteria)),
        errors=str(sum(c["verdict"] == UNDECIDED for c in criteria)),
        skipped=str(sum(c["verdict"] == SKIPPED for c in criteria)), time=f"{_seconds(result):.3f}")
    properties = ElementTree.SubElement(suite, "properties")
    for key, value in (("new", result["new"]["path"]), ("new_sha256", result["new"].get("sha256", "")),
                       ("old", result["old"]["path"]), ("old_sha256", result["old"].get("sha256", "")),
                       ("verdict", result["verdict"]), ("ort_version", result.get("ort_version", ""))):
        ElementTree.SubElement(properties, "property", name=key, value=xml(value))
    for criterion in criteria:
        case = ElementTree.SubElement(suite, "testcase", classname="ortune.gate", name=criterion["name"],
                                      time=f"{_seconds(result) if criterion['name'] == 'speed' else 0:.3f}")
        figures = ElementTree.SubElement(case, "properties")
        for key, value in _flat(criterion["figures"]).items():
            ElementTree.SubElement(figures, "property", name=xml(key), value=xml(value))
        summary = xml(criterion["summary"])
        if criterion["verdict"] == REGRESSION:
            ElementTree.SubElement(case, "failure", message=summary, type="regression").text = summary
        elif criterion["verdict"] == UNDECIDED:
            ElementTree.SubElement(case, "error", message=summary, type="undecided").text = summary
        elif criterion["verdict"] == SKIPPED:
            ElementTree.SubElement(case, "skipped", message=summary)
        ElementTree.SubElement(case, "system-out").text = summary
    ElementTree.SubElement(properties, "property", name="characters_replaced", value=str(xml.replaced))
    ElementTree.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(suites, encoding="unicode") + "\n"


def _flat(figures: dict) -> dict[str, str]:
    """A criterion's figures as property values: numbers and text as they are, lists and
    tables as JSON."""
    return {key: value if isinstance(value, str) else json.dumps(value, default=str)
            for key, value in figures.items() if value is not None}


def markdown(result: dict) -> str:
    """A summary for a pull request: the verdict, the two models (with their hashes) and one
    table row per criterion."""
    verdict = result["verdict"]
    lines = [f"### ORTune gate: {MARKS[verdict]}", "",
             f"**{code(result['new']['label'], 300)}** against **{code(result['old']['label'], 300)}**", "",
             "| criterion | verdict | figures |", "|---|---|---|"]
    lines += [f"| {criterion['name']} | {MARKS[criterion['verdict']]} | {cell(criterion['summary'], 2000)} |"
              for criterion in result["criteria"]]
    lines.append("")
    for key in ("new", "old"):
        sha = result[key].get("sha256")
        lines.append(f"- {key}: {code(result[key]['path'])}" + (f" (sha256 {code(sha[:12])})" if sha else ""))
    plan = result.get("alternation") or {}
    lines += [f"- measured in alternation: {plan.get('rounds_run', 0)} rounds of {plan.get('block_runs', 0)} runs "
              f"per model, ONNX Runtime {code(result.get('ort_version', '?'), 80)}",
              "- speed: a regression only when the whole 95 % interval of the slowdown lies beyond the limit"]
    load = plan.get("load")
    if load:
        others = load.get("others_cores_p50")
        lines.append(f"- machine: judged on {load['rounds_judged']} of {plan.get('rounds_run', 0)} rounds"
                     + (f", other processes used {others:.1f} cores (median)" if others is not None else "")
                     + ("; too busy to tell" if load.get("too_busy") else ""))
    lines.append("")
    return "\n".join(lines)


def annotations(result: dict) -> list[str]:
    """GitHub Actions workflow commands: an error for each regression, a warning for each
    undecided criterion."""
    lines = []
    for criterion in result["criteria"]:
        level = {REGRESSION: "error", UNDECIDED: "warning"}.get(criterion["verdict"])
        if level:
            lines.append(command(level, {"title": f"ORTune gate: {criterion['name']} {criterion['verdict']}"},
                                 f"{title(result)}: {criterion['summary']}"))
    return lines
