"""A repair step in words, as the command line and the Drift tab show it (no heavy imports:
the window reads it at start)."""

from __future__ import annotations


def added_text(step: dict) -> str:
    """What a step kept anew, each node the quantizer's pre-processing had folded away named
    with the node kept in its place: 'BatchNormalization_12 (in Conv_12)'."""
    instead = step.get("kept_instead") or {}
    return ", ".join(f"{name} (in {', '.join(instead[name])})" if instead.get(name) else name
                     for name in step["added"]) or "–"


def outputs_text(step: dict) -> str:
    """The step's outputs in a word: pass, why they fail, and 'as step N' when nothing moved."""
    text = "pass" if step["passed"] else (step.get("problem") or step["check"])
    return text + (f" (as step {step['same_as']})" if step.get("same_as") else "")
