"""The repair loop keeps what drift points at, converts again, and stops once the outputs pass."""

import math

import pytest

from app.core.convert.jobs import CONVERT
from app.core.drift.blame import added_noise, next_to_keep
from app.core.drift.jobs import REPAIR
from app.core.jobs.errors import UserError
from app.core.jobs.protocol import JobContext
from tests import drift_models, models


def _repair(source, kind, tmp_path, speed_s=0.0, **extra):
    convert = {"kind": kind, "input": str(source), "output": str(tmp_path / "repaired.onnx"), "speed_s": speed_s}
    return REPAIR({"convert": convert, **extra}, JobContext())


def test_fp16_repair_passes_with_only_the_matmul_whose_weights_were_clipped_kept(tmp_path):
    source = models.save(drift_models.fp16_clip_trap(), tmp_path / "trap.onnx")
    result = _repair(source, "fp16", tmp_path, speed_s=0.2)
    steps = result["repair"]["steps"]
    assert [s["kept"] for s in steps] == [[], ["layer2"]]
    assert steps[0]["first_drift"]["node"] == "layer2" and not steps[0]["passed"]
    assert steps[1]["passed"] and steps[1]["first_drift"] is None
    assert steps[1]["cosine"] > steps[0]["cosine"]
    assert result["repair"]["passed"] and result["repair"]["stopped"] == "the outputs pass"
    assert result["check"] == "passed" and result["options"]["node_block_list"] == ["layer2"]
    for step in steps:
        assert step["speed"]["verdict"] in ("faster", "slower", "no-difference", "could-not-tell")
        low, high = step["speed"]["ratio_ci"]
        assert low <= step["speed"]["ratio"] <= high


def _int8_dot_products() -> bool:
    from app.core.session.machine_cpu import cpu_description, int8_acceleration

    return int8_acceleration(cpu_description()[1])


@pytest.mark.xfail(not _int8_dot_products(), strict=True,
                   reason="on a CPU without int8 dot-product instructions (every ONNX Runtime from 1.23 to 1.31): "
                   "with layer1, act1 and layer2 left out (h1 then stays in float32), layer0's int8 kernels still "
                   "round the output past the element-wise tolerance (max |diff| 0.21 at cosine 0.9995), and keeping "
                   "layer0 too would leave nothing to quantize; with VNNI/AMX kernels it passes. Left open")
def test_int8_repair_first_leaves_the_dominating_layer_unquantized(tmp_path):
    source = models.save(drift_models.int8_wide_layer(), tmp_path / "wide.onnx")
    result = _repair(source, "int8-static", tmp_path)
    steps = result["repair"]["steps"]
    assert steps[0]["first_drift"]["node"] == "act1"
    # the MatMul behind its Relu's output, and the reader that would have h1 quantized all the same
    assert set(steps[1]["added"]) == {"layer1", "act1", "layer2"}
    assert steps[1]["cosine"] > steps[0]["cosine"]
    assert result["repair"]["passed"] and "layer0" not in result["repair"]["kept"]
    assert result["options"]["nodes_to_exclude"] == result["repair"]["kept"]


def test_a_repair_that_would_leave_nothing_to_quantize_stops_with_the_last_variant(tmp_path):
    source = models.save(drift_models.int8_wide_layer(), tmp_path / "wide.onnx")
    result = _repair(source, "int8-static", tmp_path, max_steps=8)
    steps = result["repair"]["steps"]
    assert steps[0]["first_drift"]["node"] == "act1" and set(steps[1]["added"]) == {"layer1", "act1", "layer2"}
    assert steps[1]["cosine"] > steps[0]["cosine"]
    if not result["repair"]["passed"]:       # it stops by saying why, with the variant of its last step
        assert result["repair"]["stopped"] and "Traceback" not in result["repair"]["stopped"]
        assert result["repair"]["kept"] == steps[-1]["kept"] and (tmp_path / "repaired.onnx").is_file()


def test_a_constant_past_float16_is_kept_with_its_reader_and_reaches_it_in_float32(tmp_path):
    source = models.save(drift_models.fp16_constant_overflow(), tmp_path / "overflow.onnx")
    result = _repair(source, "fp16", tmp_path)
    steps = result["repair"]["steps"]
    assert steps[0]["first_drift"]["node"] == "Constant_0"       # named as the converter names it
    assert steps[1]["kept"] == ["Constant_0"] and steps[1]["first_nonfinite"]["tensor"] == "variance"
    assert steps[2]["kept"] == ["Constant_0", "root"] and steps[2]["passed"]
    assert steps[2]["max_abs_diff"] == 0                          # no float16 round trip between the two


def test_the_loop_stops_at_its_step_bound_and_says_so(tmp_path):
    source = models.save(drift_models.int8_wide_layer(), tmp_path / "wide.onnx")
    result = _repair(source, "int8-static", tmp_path, max_steps=1)
    assert len(result["repair"]["steps"]) == 1 and not result["repair"]["passed"]
    assert result["repair"]["stopped"] == "1 step done"
    assert result["repair"]["steps"][0]["first_drift"]["node"] == "act1"


def test_one_click_keeps_the_given_node_from_the_first_step(tmp_path):
    source = models.save(drift_models.fp16_clip_trap(), tmp_path / "trap.onnx")
    result = _repair(source, "fp16", tmp_path, keep=["layer2"], max_steps=1)
    assert result["repair"]["steps"][0]["kept"] == ["layer2"] and result["repair"]["passed"]
    with pytest.raises(UserError, match="nowhere: no node of that name"):
        _repair(source, "fp16", tmp_path, keep=["nowhere"])


def test_kinds_without_a_keep_list_are_refused(tmp_path):
    source = models.save(models.mlp(width=4, depth=1), tmp_path / "mlp.onnx")
    with pytest.raises(UserError, match="works on fp16, int8-dynamic, int8-static conversions, not ort"):
        REPAIR({"convert": {"kind": "ort", "input": str(source), "output": str(tmp_path / "m.ort")}}, JobContext())


def _row(index, name, sqnr, loss=None, nonfinite=0):
    return {"index": index, "name": name, "sqnr_db": sqnr, "sqnr_loss_db": loss, "nonfinite": nonfinite,
            "source_nonfinite": 0}


def test_blame_goes_to_the_node_that_added_the_most_noise_before_the_first_drift():
    model = drift_models.mlp_with_weights([drift_models.np.eye(4)] * 3, "chain")
    rows = [_row(0, "mm0", 40.0), _row(1, "h0", 40.0, 0.0), _row(2, "mm1", 20.0, 20.0), _row(3, "h1", 19.0, 1.0),
            _row(4, "mm2", 5.0, 14.0), _row(5, "y", 1.0, 4.0)]
    result = {"tensors": rows, "first_drift": {"index": 3}, "first_nonfinite": None}
    choice = next_to_keep(result, model, [])
    assert choice["nodes"] == ["layer1"] and choice["tensor"] == "mm1"  # 20 dB lost there; mm2 lies past the drift
    assert next_to_keep(result, model, ["layer1"])["nodes"] == ["act1"]  # kept: its reader is next
    assert added_noise(_row(0, "t", 30.0, nonfinite=2)) == math.inf
    assert added_noise(_row(0, "t", None)) == 0


def test_in_a_qdq_variant_a_tensor_is_left_unquantized_with_its_maker_and_readers():
    # the quantizer puts a Q/DQ pair on h1 while act1 or layer2 is quantized: both are kept at once
    model = drift_models.mlp_with_weights([drift_models.np.eye(4)] * 3, "chain")
    rows = [_row(0, "mm0", 40.0), _row(1, "h0", 40.0, 0.0), _row(2, "mm1", 30.0, 10.0), _row(3, "h1", 12.0, 18.0),
            _row(4, "mm2", 11.0, 1.0)]
    for row in rows:
        row["quantized"] = True
    result = {"tensors": rows, "first_drift": {"index": 3}, "first_nonfinite": None}
    assert next_to_keep(result, model, [])["nodes"] == ["act1", "layer2"]
    # a QDQ variant that leaves act1 in float32 still feeds it mm1 dequantized: keeping act1 and
    # its reader changed nothing there, keeping layer1, whose output is quantized, does
    rows[3]["quantized"] = False
    choice = next_to_keep(result, model, ["act1", "layer2"])
    assert choice["nodes"] == ["layer1"] and "reads mm1 quantized" in choice["why"]
    choice = next_to_keep(result, model, ["act1", "layer1", "layer2"])     # h1's causes all kept: mm1's next
    assert choice["nodes"] == ["act0"] and choice["tensor"] == "mm1" and "reads h0 quantized" in choice["why"]


def test_a_node_the_conversion_never_changes_is_not_blamed():
    # int8-dynamic rewrites MatMul, not Relu: the error seen after act1 came through layer1, and
    # keeping act1 out of int8 would change nothing
    from app.core.drift.repair import changed_ops
    model = drift_models.mlp_with_weights([drift_models.np.eye(4)] * 3, "chain")
    rows = [_row(0, "mm0", 40.0), _row(1, "h0", 40.0, 0.0), _row(2, "mm1", 36.0, 4.0), _row(3, "h1", 20.0, 16.0),
            _row(4, "mm2", 5.0, 15.0)]
    result = {"tensors": rows, "first_drift": {"index": 3}, "first_nonfinite": None}
    assert next_to_keep(result, model, [])["nodes"] == ["act1"], "float16 changes every node: the Relu is blamed"
    dynamic = changed_ops("int8-dynamic", {})
    assert "MatMul" in dynamic and "Relu" not in dynamic
    choice = next_to_keep(result, model, [], dynamic)
    assert choice["nodes"] == ["layer1"] and choice["tensor"] == "mm1"
    assert next_to_keep(result, model, ["layer1"], dynamic)["nodes"] == ["layer0"], \
        "layer1 kept, its reader is a Relu: the next MatMul that added error is"
    assert changed_ops("fp16", {}) is None
    assert changed_ops("int8-static", {"op_types": ["MatMul", "Conv"], "exclude_op_types": ["Conv"]}) == {"MatMul"}


def test_op_types_can_be_left_out_of_quantization(tmp_path):
    import onnx

    source = models.save(models.cnn(), tmp_path / "cnn.onnx")
    out = tmp_path / "cnn_int8.onnx"
    result = CONVERT({"kind": "int8-static", "input": str(source), "output": str(out), "speed_s": 0,
                      "options": {"exclude_op_types": ["Conv"], "preprocess": False}}, JobContext())
    assert result["kept_in_fp32"][0]["what"] == "every Conv"
    model = onnx.load(str(out))
    made_by = {o: n.op_type for n in model.graph.node for o in n.output}
    weights_of = {n.op_type: made_by.get(n.input[1], "initializer") for n in model.graph.node
                  if n.op_type in ("Conv", "Gemm")}
    assert weights_of == {"Conv": "initializer", "Gemm": "DequantizeLinear"}
    with pytest.raises(UserError, match="leaves no operator type to quantize"):
        CONVERT({"kind": "int8-dynamic", "input": str(source), "output": str(tmp_path / "none.onnx"),
                 "options": {"op_types": ["Conv"], "exclude_op_types": ["Conv"]}}, JobContext())
