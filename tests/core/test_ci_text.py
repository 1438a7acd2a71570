"""The rule for each place a name from a file goes in CI: the lines a runner reads, Markdown
as GitHub renders it (cmark-gfm), and XML. Each is tried on the names a pull request would
give a model, and on any text hypothesis makes."""

import re
import xml.etree.ElementTree as ElementTree

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from hypothesis import given, settings, strategies as st

from app.core.ci_lines import command, runner_safe
from app.core.markdown_text import cell, code
from app.core.text import printable
from app.core.xml_text import XmlText
from tests.hostile_models import EVIL, FORGED_COMMAND, FORGED_MARKDOWN, FORGED_MASK, NOT_XML

HOSTILE = [FORGED_COMMAND, FORGED_MASK, FORGED_MARKDOWN, NOT_XML, EVIL, "  ::warning::x", "##[add-mask]b", "`", "` `",
           "a\\", "|", "\udcff.onnx", ""]
#: what a runner reads as a command: `::` or `##[` at a line's start, after blanks
COMMAND_LINE = re.compile(r"^\s*(::|##\[)")
#: characters Markdown, HTML and workflow commands give a meaning to
SPECIAL = st.lists(st.sampled_from(list("`|\\<>![]()#*_~&:;@.-/ \n\r\t%,=\ufffe\udcff")
                                   + ["www.", "a@b.co", "https://x.co", "<img src=x>", "::"])).map("".join)


def render(markdown: str) -> str:
    """As GitHub renders a step summary: cmark-gfm with its extensions; raw HTML is let through
    here, so that any the text holds shows."""
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


def test_a_line_a_runner_would_read_as_a_command_is_defused_and_reads_as_it_is():
    text = runner_safe(printable(FORGED_COMMAND) + "\n  ::add-mask::a\nok ::here\n##[error]x")
    assert not any(COMMAND_LINE.match(line) for line in text.splitlines())
    assert text.splitlines() == ["\\x3a:error title=Forged::all checks passed, merge it", "  \\x3a:add-mask::a",
                                 "ok ::here", "\\x23#[error]x"]


@pytest.mark.parametrize("name", HOSTILE)
def test_our_own_command_is_one_line_whatever_its_title_and_message_hold(name):
    line = command("error", {"title": f"ORTune gate: {name}"}, f"{name}: slower")
    assert line.startswith("::error title=ORTune gate%3A ") and "\n" not in line and "\r" not in line
    title, _, message = line[len("::error "):].partition("::")
    assert "," not in title.removeprefix("title=") and ":" not in title.removeprefix("title=")
    assert runner_safe(line) != line, "it is a command: ORTune's own"


@settings(max_examples=300, deadline=None)
@given(SPECIAL)
def test_no_printable_name_starts_a_command_line_once_made_runner_safe(name):
    shown = runner_safe(printable(name, None) + "\n" + printable(name, None))
    assert not any(COMMAND_LINE.match(line) for line in shown.splitlines())


def _code_text(html: str) -> list[str]:
    import html as html_module
    return [html_module.unescape(found) for found in re.findall(r"<code>(.*?)</code>", html, re.S)]


@pytest.mark.parametrize("name", HOSTILE)
def test_a_name_in_markdown_renders_as_its_text_and_nothing_else(name):
    shown = render(f"before {code(name)} after")
    assert shown.startswith("<p>before ") and shown.rstrip().endswith(" after</p>")
    assert not re.search(r"<(?!/?(p|code)>)", shown), f"markup from a name: {shown}"
    assert _code_text(shown) == ([printable(name)] if name else []), "the name as it is, escaped only as printable"


@settings(max_examples=300, deadline=None)
@given(SPECIAL)
def test_any_text_in_a_code_span_or_a_table_cell_stays_text(name):
    assert not re.search(r"<(?!/?(p|code)>)", render(f"x {code(name, None)} y"))
    table = render(f"| a | b |\n|---|---|\n| {cell(name, None)} | end |\n")
    assert table.count("<td>") == 2 and "<td>end</td>" in table, "the name stays in its cell"
    assert not re.search(r"<(?!/?(table|thead|tbody|tr|th|td|code)>)", table)
    if name and printable(name, None):
        assert _code_text(table) == [printable(name, None)]


def test_a_code_span_is_fenced_past_the_longest_backtick_run_it_holds():
    assert code("a``b") == "```a``b```" and code("`x") == "`` `x ``" and code("plain") == "`plain`"


def test_characters_xml_forbids_are_replaced_and_counted():
    xml = XmlText()
    text = xml(f"a{NOT_XML}b\udcff")
    assert text == "a\\ufffe\\uffff\\x01b\\udcff" and xml.replaced == 4
    element = ElementTree.Element("case", name=text)
    assert ElementTree.fromstring(ElementTree.tostring(element, encoding="utf-8")).get("name") == text
    assert xml("fine\ttext") == "fine\\x09text" and xml.replaced == 4, "printable, but nothing XML forbids"
