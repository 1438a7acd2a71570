"""What ONNX Runtime itself says about a model: whether it loads it, and if not, why.

The intake asks these questions where the onnx package's answer could differ from ONNX
Runtime's (the newest versions each knows, the checker's stricter rules)."""

from __future__ import annotations

import functools
import re
from pathlib import Path

_LOAD_PREFIX = re.compile(r"^Load model from .*? failed:\s*")

#: versions every ONNX Runtime ORTune supports (1.20 and newer, see pyproject.toml) loads:
#: a model within them needs no question, which would cost importing ONNX Runtime (~0.4 s)
ALWAYS_LOADED_IR = 10
ALWAYS_LOADED_OPSETS = {"": 21, "ai.onnx": 21, "ai.onnx.ml": 4, "com.microsoft": 1}


def runtime_version_refusal(ir_version: int, opsets: tuple[tuple[str, int], ...]) -> str:
    """ONNX Runtime's reason for refusing a model of this IR version and these opsets, or ''.

    Asked of ONNX Runtime itself, on an empty model stamped with the same versions: the
    onnx package and ONNX Runtime each know their own newest versions, and only ONNX
    Runtime's count here."""
    if 0 <= ir_version <= ALWAYS_LOADED_IR and all(
            1 <= version <= ALWAYS_LOADED_OPSETS.get(domain, 0) for domain, version in opsets):
        return ""
    return _asked_version_refusal(ir_version, opsets)


@functools.lru_cache(maxsize=32)
def _asked_version_refusal(ir_version: int, opsets: tuple[tuple[str, int], ...]) -> str:
    import onnx
    from onnx import helper

    value = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1])
    probe = helper.make_model(helper.make_graph([], "versions", [value], [value]),
                              opset_imports=[helper.make_opsetid(domain, version) for domain, version in opsets])
    probe.ir_version = ir_version
    return runtime_load_refusal(probe.SerializeToString())


def runtime_load_refusal(model: bytes | Path) -> str:
    """ONNX Runtime's reason, in one line, for refusing to load a model (a file or its
    bytes) on the CPU without optimisations, or '' when it loads it."""
    import onnxruntime as ort

    from app.core.ort_messages import ort_text

    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    try:
        ort.InferenceSession(model if isinstance(model, bytes) else str(model), options,
                             providers=["CPUExecutionProvider"])
    except Exception as exc:  # noqa: BLE001 - ORT reports load failures as its own exception types
        return _LOAD_PREFIX.sub("", ort_text(str(exc)))
    return ""
