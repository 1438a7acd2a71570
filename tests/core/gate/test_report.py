"""What CI systems read from a gate: JUnit read back by a JUnit library, Markdown, and GitHub
annotation lines that no name from a file can break."""

from app.core.gate import judge
from app.core.gate.report import annotations, junit_xml, markdown
from tests.gate_results import gate_result

HOSTILE = "evil\x1b]0;owned\x07\n::error::%0A|.onnx"


def test_the_junit_file_reads_back_one_case_per_criterion(tmp_path):
    from junitparser import Error, Failure, JUnitXml, Skipped

    path = tmp_path / "gate.xml"
    path.write_text(junit_xml(gate_result(judge.REGRESSION)), encoding="utf-8")
    suites = JUnitXml.fromfile(str(path))
    suite = next(iter(suites))
    cases = {case.name: case for case in suite}
    assert list(cases) == ["speed", "outputs", "accuracy", "memory"]
    assert suite.tests == 4 and suite.failures == 1 and suite.skipped == 1
    (failure,) = cases["speed"].result
    assert isinstance(failure, Failure) and "slowdown" in failure.message and failure.type == "regression"
    assert cases["outputs"].is_passed and isinstance(cases["accuracy"].result[0], Skipped)
    assert "peak RSS" in cases["memory"].system_out
    undecided = JUnitXml.fromstring(junit_xml(gate_result(judge.UNDECIDED)).encode())
    speed = next(case for case in next(iter(undecided)) if case.name == "speed")
    assert isinstance(speed.result[0], Error) and speed.result[0].type == "undecided"


def test_the_junit_file_keeps_hostile_names_as_escaped_text():
    from junitparser import JUnitXml

    text = junit_xml(gate_result(judge.REGRESSION, new_label=HOSTILE))
    suite = next(iter(JUnitXml.fromstring(text.encode())))
    assert "\x1b" not in text and "\\x1b" in suite.name


def test_markdown_is_a_table_a_name_cannot_break():
    text = markdown(gate_result(judge.REGRESSION, new_label=HOSTILE))
    lines = text.splitlines()
    assert lines[0] == "### ORTune gate: ❌ regression"
    table = [line for line in lines if line.startswith("|")]
    assert table[:2] == ["| criterion | verdict | figures |", "|---|---|---|"] and len(table) == 6
    assert all(line.count("|") - line.count("\\|") == 4 for line in table)
    assert "\x1b" not in text and "\x07" not in text
    assert "sha256 `abababababab`" in text


def test_annotations_are_one_line_each_an_error_per_regression_a_warning_when_undecided():
    failing = annotations(gate_result(judge.REGRESSION, new_label=HOSTILE))
    assert len(failing) == 1 and failing[0].startswith("::error title=ORTune gate%3A speed regression::")
    assert "\n" not in failing[0] and "\x1b" not in failing[0] and "\x07" not in failing[0]
    # one line: the name's "::error::" sits inside the message, where GitHub reads no command
    assert "%250A" in failing[0]                 # a literal %0A in a name is not read as a new line
    (warning,) = annotations(gate_result(judge.UNDECIDED))
    assert warning.startswith("::warning title=ORTune gate%3A speed undecided::")
    assert annotations(gate_result(judge.PASS)) == []


def test_the_junit_file_validates_against_the_common_junit_schema():
    from pathlib import Path

    import xmlschema

    schema = xmlschema.XMLSchema(str(Path(__file__).with_name("junit.xsd")))
    for verdict in (judge.PASS, judge.REGRESSION, judge.UNDECIDED):
        schema.validate(junit_xml(gate_result(verdict)))
    broken = junit_xml(gate_result(judge.REGRESSION)).replace('classname="ortune.gate" ', "", 1)
    assert not schema.is_valid(broken)      # the schema can say no


def test_markdown_from_names_that_forge_a_verdict_renders_no_markup_of_theirs():
    import re

    from tests.core.test_ci_text import render
    from tests.hostile_models import FORGED_MARKDOWN

    result = gate_result(judge.REGRESSION, new_label=FORGED_MARKDOWN, old_label="old`` ` .onnx")
    failed = {"name": FORGED_MARKDOWN, "max_abs_diff": 2.0, "cosine": 0.5, "passed": False}
    result["criteria"][1] = judge.output_criterion(
        {"outputs": [failed], "max_abs_diff": 2.0, "min_cosine": 0.5, "passed": False,
         "tolerance": {"atol": 1e-4, "rtol": 1e-3, "min_cosine": 0.9999}},
        {"first_drift": {"node": FORGED_MARKDOWN, "op_type": "Relu", "tensor": FORGED_MARKDOWN}}, None)
    html = render(markdown(result))
    assert re.findall(r"<h\d>(.*?)</h\d>", html) == ["ORTune gate: ❌ regression"], "one heading: ours"
    for tag in ("<img", "<a ", "<script", "<h3>ORTune gate: ✅"):
        assert tag not in html, f"{tag} from a name"
    assert html.count("<table>") == 1 and html.count("<tr>") == 5


def test_junit_with_characters_xml_forbids_parses_and_counts_them():
    import xml.etree.ElementTree as ElementTree

    from tests.hostile_models import NOT_XML

    text = junit_xml(gate_result(judge.REGRESSION, new_label=f"new{NOT_XML}\udcff.onnx"))
    suite = ElementTree.fromstring(text.encode("utf-8")).find("testsuite")
    replaced = suite.find("properties/property[@name='characters_replaced']").get("value")
    assert int(replaced) >= 4 and "\\ufffe\\uffff\\x01\\udcff" in suite.get("name")
