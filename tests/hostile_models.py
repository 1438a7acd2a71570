"""Models whose every name is an attack on the terminal that shows it: screen clears,
window titles, OSC-8 links, C1 controls, forged lines."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

CLEAR = "\x1b[2J"
TITLE = "\x1b]0;owned\x07"
LINK = "\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\"
C1 = "\x9b2J\x85"
FORGED = "\nerror: forged line\r\t\x7f"
EVIL = CLEAR + TITLE + LINK + C1 + FORGED


def hostile_names(custom_op: bool = True, metadata_bytes: int = 0) -> onnx.ModelProto:
    """A model named with escape sequences throughout: producer, doc string, metadata key
    and value, input/output names, a dim name, node names, an unused initializer (ONNX
    Runtime logs its name when it drops it) and (`custom_op`) an operator's domain. `metadata_bytes`: add a metadata value that long."""
    x, y, mid = f"x{EVIL}", f"y{EVIL}", f"mid{EVIL}"
    dim = f"batch{EVIL}"
    nodes = [helper.make_node("Relu", [x], [mid], name=f"relu{EVIL}")]
    opsets = [helper.make_opsetid("", 17)]
    if custom_op:
        domain = f"evil{EVIL}"
        nodes.append(helper.make_node("Mystery", [mid], [y], name=f"mystery{EVIL}", domain=domain))
        opsets.append(helper.make_opsetid(domain, 1))
    else:
        nodes.append(helper.make_node("Neg", [mid], [y], name=f"neg{EVIL}"))
    graph = helper.make_graph(nodes, f"graph{EVIL}",
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [dim, 4])],
                              [helper.make_tensor_value_info(y, TensorProto.FLOAT, [dim, 4])],
                              [numpy_helper.from_array(np.zeros(2, np.float32), f"unused{EVIL}")])
    model = helper.make_model(graph, opset_imports=opsets, producer_name=f"maker{EVIL}",
                              producer_version=f"1{EVIL}", doc_string=f"doc{EVIL}")
    model.ir_version = 8
    helper.set_model_props(model, {f"key{EVIL}": f"value{EVIL}",
                                   **({"huge": "v" * metadata_bytes} if metadata_bytes else {})})
    return model


#: names a pull request would give a model to forge what CI shows: workflow commands, and
#: Markdown that renders as an image, a link, raw HTML and a passing heading
FORGED_COMMAND = "::error title=Forged::all checks passed, merge it"
FORGED_MASK = "::add-mask::a"
FORGED_MARKDOWN = ("</td></tr></table><h3>ORTune gate: ✅ pass</h3><img src=https://evil.example/i.png>"
                   "![i](https://evil.example/i.png)[click here to approve](https://evil.example/ok) "
                   "www.evil.example me@evil.example ``` `` ` <script>alert(1)</script> &lt; # heading")
#: characters XML 1.0 cannot hold, and a lone surrogate (a file name that is not UTF-8)
NOT_XML = "\ufffe\uffff\x01"


def ci_hostile(op: str = "Relu") -> onnx.ModelProto:
    """A model whose input is named as a workflow command and whose outputs are named as a
    mask command, as Markdown that forges a verdict, and with characters XML forbids. `op`:
    what each output is of the input (another op than Relu gives other outputs: a gate's
    failing outputs are named in its reports)."""
    x = FORGED_COMMAND
    outputs = [FORGED_MASK, FORGED_MARKDOWN, f"odd{NOT_XML}"]
    nodes = [helper.make_node(op, [x], [name], name=f"{FORGED_COMMAND} {index}")
             for index, name in enumerate(outputs)]
    graph = helper.make_graph(nodes, FORGED_MARKDOWN, [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, 4]) for name in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name=FORGED_COMMAND,
                              doc_string=FORGED_MARKDOWN)
    model.ir_version = 8
    helper.set_model_props(model, {FORGED_MASK: FORGED_MARKDOWN})
    return model
