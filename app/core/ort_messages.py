"""ONNX Runtime's messages as people read them: one line, without error codes, source
locations and C++ signatures; and what a refusal is about (the sizes of the inputs or their
values), which decides the hint a message gets."""

from __future__ import annotations

import re

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_ORT_CODE = re.compile(r"^(\[ONNXRuntimeError\] : )?\d+ : [A-Z_]+ : ")
_SOURCE = re.compile(r"(?<![\w./\\+-])(?:[A-Za-z]:)?[\w./\\+-]{0,300}?\.(?:h|hpp|cc|cpp|c|cu|cuh):\d+\s*")
#: a C++ function's signature ORT puts before its check ("void onnxruntime::f(const Tensor*) [with T = float]"),
#: and the C++ condition that failed after it ("size != 0 && (a % b) == 0 was false."): the words after
#: those say it plainly
_SIGNATURE = re.compile(r"(?:(?<=\s)|^)(?:[\w<>*&]+(?:::[\w<>*&]+)*\s+){0,3}(?:onnxruntime|onnx)::[\w:~<>,]+"
                        r"(?:\((?:[^()]|\([^()]*\))*\))?\s*(?:const\s*)?(?:\[with [^\]]*\]\s*)?"
                        r"(?:.{0,200}? was false\.\s*)?")
_CHECK = re.compile(r"^[^.]{0,200}? was false\.\s*")
_SHAPE_WORDS = re.compile(r"shape|dimension|\bdims?\b|\brank\b|broadcast|reshape", re.I)
_VALUE_WORDS = re.compile(r"indices|index|out of (range|bounds?)|must be (positive|non-?negative)|"
                          r"invalid (value|argument)s?\b(?! for input)|depth|divide by zero", re.I)


def first_line(text: str, limit: int = 300) -> str:
    """The first line of a message, its spaces collapsed, at most `limit` characters."""
    line = " ".join(str(text).strip().split("\n")[0].split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def strip_ansi(text: str) -> str:
    """Text without terminal colour codes (ONNX Runtime colours its log lines)."""
    return _ANSI.sub("", text)


def ort_text(text: str) -> str:
    """ONNX Runtime's message in one line, whole: without its error code, its source
    locations and C++ signatures and the C++ condition that failed, which only push the
    reason out of sight; nothing is cut from the end."""
    text = " ".join(strip_ansi(str(text)).split("Stacktrace:")[0].split())
    text = _ORT_CODE.sub("", text)
    text = _CHECK.sub("", _SIGNATURE.sub("", _SOURCE.sub("", text)))
    return " ".join(text.split())


def is_shape_problem(text: str) -> bool:
    """A refusal about sizes (the --dim/--shape hint helps), not about values."""
    return bool(_SHAPE_WORDS.search(text or "")) and not is_value_problem(text)


def is_value_problem(text: str) -> bool:
    """A refusal about an input's values (indices out of range …): --input helps, not --dim."""
    return bool(_VALUE_WORDS.search(text or ""))
