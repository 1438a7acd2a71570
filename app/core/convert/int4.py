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
    quantizer = MatMulNBitsQuantizer(model, bits=4, block_size=options["block_size"],
                                     is_symmetric=options["symmetric"],
                                     accuracy_level=options["accuracy_level"] or None,
                                     nodes_to_exclude=exclusions(work),
                                     op_types_to_quantize=tuple(options["op_types"]),
                                     algo_config=_int4_method(options, model))
    quantizer.process()
    quantizer.model.save_model_to_file(str(work.target), work.large)
    require_quantized(work)


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
