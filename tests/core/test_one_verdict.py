"""One verdict rule: no function but app.core.verdict's decides faster / slower / no
difference, and every place that writes a speed verdict for a person writes the rule's words."""

import ast
from pathlib import Path

import app
from app.core.verdict import COULD_NOT_TELL, FASTER, NO_DIFFERENCE, SLOWER, judge_speed

WORDS = {FASTER, SLOWER, NO_DIFFERENCE, COULD_NOT_TELL, "no difference", "could not tell"}


def _deciders(tree: ast.AST) -> list[str]:
    """Functions that return a verdict word they chose themselves (a literal in a return or a
    conditional expression returned)."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for child in ast.walk(node):
            if isinstance(child, ast.Return) and child.value is not None:
                literals = [c.value for c in ast.walk(child.value) if isinstance(c, ast.Constant)]
                if any(value in WORDS for value in literals if isinstance(value, str)):
                    found.append(node.name)
    return found


def test_no_second_verdict_function_anywhere():
    root = Path(app.__file__).parent
    deciders = {}
    for path in root.rglob("*.py"):
        if path.name == "verdict.py" and path.parent.name == "core":
            continue
        names = _deciders(ast.parse(path.read_text(encoding="utf-8")))
        if names:
            deciders[str(path.relative_to(root))] = names
    assert deciders == {}


def test_every_renderer_of_a_speed_writes_the_rules_words():
    from app.cli.repair_steps import _speed as repair_cell
    from app.core.bench.compare import compare_table
    from app.core.convert.speed import speed_sentence
    from app.core.optimize.rows import answer_text, speed_reason

    judged = judge_speed(1.1, 0.8, 1.6)
    assert judged.verdict == COULD_NOT_TELL
    speed = {"ratio": 1.1, "ratio_ci": [0.8, 1.6], "verdict": judged.verdict, "why_verdict": judged.why,
             "source_p50_ms": 1.0, "variant_p50_ms": 0.9, "rounds": 30}
    assert "— could not tell (" in speed_sentence(speed)
    assert speed_reason(speed).startswith("could not tell (×1.10 [0.80–1.60])")
    assert repair_cell(speed).endswith("could not tell")
    row = {"label": "v", "speedup": 1.1, "speedup_ci": [0.8, 1.6], "verdict": judged.verdict, "fidelity": None,
           "latency_ms": {"p50": 1.0, "p90": 1.0, "p99": 1.0}, "throughput_per_s": 1.0, "size_bytes": 1,
           "providers": [], "accuracy": None}
    assert compare_table({"models": [row]})[1][0][3] == "could not tell"
    choice = {"kind": "int8-dynamic", "speedup": 10.59, "speedup_ci": [6.36, 21.67], "verdict": FASTER,
              "claim": judge_speed(10.59, 6.36, 21.67, 1.0).claim, "tuned": False}
    assert "(faster), claimed at ×" in answer_text(choice)
