"""Int4 weight packing (MatMulNBits) with onnxruntime.quantization's MatMulNBitsQuantizer: the
weights of MatMul (and Gather) nodes packed four bits to a value in blocks, by round to
nearest, k-quant's search or HQQ; the activations stay float. It shares the int8 kinds'
steps and repairs (app.core.convert.quantize)."""

from __future__ import annotations

from app.core.convert.quantize import amended, begin, exclusions, repair_quantized, require_quantized
from app.core.convert.work import Handler, Work
from app.core.jobs.errors import UserError
from app.core.model.output import load_model


def produce_int4(work: Work) -> None:
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    options = work.options
    begin(work)
    source = amended(work)
    model = work.take_model() if source == work.source else load_model(source)
    if "MatMul" in options["op_types"]:
        work.details["gemm_as_matmul"] = gemm_as_matmul(model.graph)
    quantizer = MatMulNBitsQuantizer(model, bits=4, block_size=options["block_size"],
                                     is_symmetric=options["symmetric"],
                                     accuracy_level=options["accuracy_level"] or None,
                                     nodes_to_exclude=exclusions(work),
                                     op_types_to_quantize=tuple(options["op_types"]),
                                     algo_config=_int4_method(options, model))
    quantizer.process()
    quantizer.model.save_model_to_file(str(work.target), work.large)
    require_quantized(work)


def gemm_as_matmul(graph) -> int:
    """Rewrite each Gemm whose second operand is a float weight (alpha 1, A not transposed) as
    MatMul, plus Add for its bias, in place; the count rewritten. The int4 packing takes MatMul
    weights only, and exporters write a linear layer as Gemm (GPT-2's Conv1D through TorchScript:
    every layer's projection but the head), so those stayed float."""
    from onnx import TensorProto, helper, numpy_helper

    weights = {tensor.name: tensor for tensor in graph.initializer}
    floats = (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16)
    rewritten, nodes, transposed = 0, [], set()
    for node in graph.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        weight = weights.get(node.input[1]) if node.op_type == "Gemm" and len(node.input) > 1 else None
        bias = node.input[2] if len(node.input) > 2 else ""
        if (weight is None or weight.data_type not in floats or len(weight.dims) != 2 or attrs.get("alpha", 1.0) != 1.0
                or attrs.get("transA", 0) or (bias and attrs.get("beta", 1.0) != 1.0)):
            nodes.append(node)
            continue
        name = node.name or f"Gemm_{rewritten}"
        matrix = weight.name
        if attrs.get("transB", 0):
            transposed.add(weight.name)
            matrix = f"{weight.name}_transposed"
            if matrix not in weights:
                weights[matrix] = numpy_helper.from_array(numpy_helper.to_array(weight).T.copy(), matrix)
                graph.initializer.append(weights[matrix])
        product = f"{node.output[0]}_matmul" if bias else node.output[0]
        nodes.append(helper.make_node("MatMul", [node.input[0], matrix], [product], name=f"{name}_MatMul"))
        if bias:
            nodes.append(helper.make_node("Add", [product, bias], [node.output[0]], name=f"{name}_Add"))
        rewritten += 1
    if rewritten:
        del graph.node[:]
        graph.node.extend(nodes)
        read = {name for node in graph.node for name in node.input} | {value.name for value in graph.output}
        unread = [tensor for tensor in graph.initializer if tensor.name in transposed and tensor.name not in read]
        for tensor in unread:          # only its transposed copy is read now
            graph.initializer.remove(tensor)
    return rewritten


def gemm_text(report: dict) -> str:
    """"Gemm ×16 rewritten as MatMul + Add, whose weights int4 packs"; '' where none was."""
    count = report.get("gemm_as_matmul")
    return f"Gemm ×{count} rewritten as MatMul + Add, whose weights int4 packs" if count else ""


def _int4_method(options: dict, model):
    """The algorithm config of `method` (None: the quantizer's default, round to nearest)."""
    from onnxruntime.quantization import matmul_nbits_quantizer as nbits

    method, types = options["method"], tuple(options["op_types"])
    if method == "rtn":
        return None
    if method == "hqq":
        import importlib.util

        if importlib.util.find_spec("torch") is None:
            raise UserError("bad-option", "int4 method hqq needs PyTorch, which is not installed here: install "
                                          "torch, or choose the rtn or k_quant method")
        return nbits.HQQWeightOnlyQuantConfig(block_size=options["block_size"], bits=4, op_types_to_quantize=types)
    # k-quant's quantizer sorts the graph by node name: an unnamed node would be lost
    for index, node in enumerate(model.graph.node):
        node.name = node.name or f"{node.op_type}_{index}"
    return nbits.KQuantWeightOnlyQuantConfig(op_types_to_quantize=types)


HANDLERS = {"int4": Handler(produce_int4, repair_quantized)}
