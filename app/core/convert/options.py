"""The conversion kinds and the options a user can set for each: one table that the
command line turns into flags, the Convert panel into a form (with these help texts as
tooltips), and the job uses to check and complete what it was given.

Imports nothing heavy: the command line builds its parser from it at every start."""

from __future__ import annotations

import platform
from dataclasses import dataclass
from pathlib import Path

from app.core.jobs.errors import UserError
from app.core.session.fields import OPT_LEVELS

QUANT_TYPES = ("QInt8", "QUInt8")
#: how int4 finds each block's scale: ONNX Runtime's matmul_nbits_quantizer's algorithms that run here
INT4_METHODS = ("rtn", "k_quant", "hqq")
TRANSFORMER_TYPES = ("bert", "bart", "clip", "conformer", "gpt2", "gpt_neox", "mmdit", "phi", "sam2", "swin",
                     "t5", "tnlr", "unet", "vae", "vit")
#: fusions FusionOptions enables by default, by their names without "enable_"
TRANSFORMER_FUSIONS = ("attention", "bias_gelu", "bias_skip_layer_norm", "embed_layer_norm", "gelu", "layer_norm",
                       "qordered_matmul", "rotary_embeddings", "shape_inference", "skip_layer_norm")
OPT_TARGETS = ("cpu", "cuda", "tensorrt", "dml", "openvino")
#: the session's levels that optimise something (all but "disable"), in order
OPTIMISING = tuple(OPT_LEVELS)[1:]
#: the platforms an ORT-format model is made for; this machine's by default (see the ort kind)
ORT_PLATFORMS = ("amd64", "arm", "any")
THIS_PLATFORM = "arm" if platform.machine().lower().startswith(("arm", "aarch")) else "amd64"


@dataclass(frozen=True)
class Option:
    name: str
    kind: str               # bool | int | float | choice | list | path
    default: object
    help: str
    label: str = ""
    choices: tuple = ()
    minimum: float | None = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def title(self) -> str:
        return self.label or self.name.replace("_", " ").capitalize()


@dataclass(frozen=True)
class Kind:
    name: str
    title: str
    summary: str
    suffix: str                     # the output file's ending
    options: tuple[Option, ...]
    needs_gpu: bool = False


def _list(name, help_text, default=(), label="", choices=()):
    return Option(name, "list", tuple(default), help_text, label, tuple(choices))



_KEEP_IO = Option("keep_io_types", "bool", True,
                  "Keep the model's float32 inputs and outputs (casts are added inside), so code that feeds "
                  "it float32 keeps working. Off: inputs and outputs become float16 too.")
_PER_CHANNEL = Option("per_channel", "bool", False,
                      "One scale per output channel of each weight instead of one per tensor: usually more "
                      "accurate, especially for convolutions; a little larger.")
_REDUCE_RANGE = Option("reduce_range", "bool", False,
                       "Quantize weights to 7 bits. Avoids saturation on x86 CPUs without VNNI "
                       "(AVX2 and older AVX-512); costs some accuracy elsewhere.")
_OP_TYPES = _list("op_types", "Only quantize these operator types (e.g. MatMul,Conv); empty: every type the "
                              "quantizer supports.", label="Op types to quantize")
_EXCLUDE = _list("nodes_to_exclude", "Node names to leave in float32 (e.g. a sensitive last layer).",
                 label="Nodes to exclude")
_EXCLUDE_OPS = _list("exclude_op_types", "Operator types to leave in float32 (e.g. Add,Mul); every other type "
                                         "the quantizer takes is quantized.", label="Op types to exclude")

KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("fp16", "Float16", "All float32 weights and activations become float16: half the size; fast on "
         "GPUs with float16 units, slow on CPUs.", ".onnx", (
             _KEEP_IO,
             _list("op_block_list", "Operator types kept in float32, on top of the converter's own list "
                                    "(Resize, TopK, Range, NonMaxSuppression, Min, Max …).", label="Op block list"),
             _list("node_block_list", "Node names kept in float32.", label="Node block list"),
             Option("min_positive_val", "float", 1e-7, "Weights closer to zero than this are raised to it "
                                                       "(float16 cannot hold smaller magnitudes).",
                    "Min positive value", minimum=0),
             Option("max_finite_val", "float", 1e4, "Weights larger than this are clipped to it "
                                                    "(float16 ends at 65504).", "Max finite value", minimum=0),
             Option("disable_shape_infer", "bool", False,
                    "Skip ONNX shape inference before converting. Needed for some models it fails on; without "
                    "it, tensors whose type it cannot see may stay float32."),
         )),
    Kind("mixed", "Auto mixed precision", "Float16 wherever the results stay within rtol/atol of the float32 "
         "model on the fidelity inputs; the nodes that would break them stay float32. Needs a GPU provider.",
         ".onnx", (
             Option("rtol", "float", 0.01, "Relative tolerance each trial conversion must meet on the fidelity "
                                           "inputs.", minimum=0),
             Option("atol", "float", 0.001, "Absolute tolerance each trial conversion must meet.", minimum=0),
             _KEEP_IO,
         ), needs_gpu=True),
    Kind("int8-dynamic", "Int8, dynamic", "Weights stored as int8; activations quantized on the fly at run "
         "time. No calibration data needed; best for MatMul-heavy models (transformers, RNNs) on CPUs.", ".onnx", (
             Option("weight_type", "choice", "QInt8", "Signed (QInt8) or unsigned (QUInt8) 8-bit weights. "
                                                      "QInt8 suits most CPUs.", choices=QUANT_TYPES),
             _PER_CHANNEL, _REDUCE_RANGE, _OP_TYPES, _EXCLUDE, _EXCLUDE_OPS,
         )),
    Kind("int8-static", "Int8, static", "Weights and activations int8, with activation ranges measured on "
         "calibration data. Best for CNNs; QDQ also suits TensorRT.", ".onnx", (
             Option("calibration", "path", "", "A folder of .npy/.npz files, one sample each (loaded without "
                                               "pickle), or of images as --data takes; empty: the data folder's "
                                               "samples (--data), else seeded random inputs.",
                    "Calibration data"),
             Option("calibration_count", "int", 16, "How many random samples to calibrate on (without a folder).",
                    minimum=1),
             Option("calibrate_method", "choice", "MinMax", "How activation ranges are chosen: MinMax (whole "
                                                            "range), Entropy (KL divergence), Percentile "
                                                            "(clips outliers).",
                    choices=("MinMax", "Entropy", "Percentile")),
             Option("quant_format", "choice", "QDQ", "QDQ: QuantizeLinear/DequantizeLinear pairs around float "
                                                     "ops (portable, what TensorRT needs); QOperator: "
                                                     "integer operators such as QLinearConv.",
                    choices=("QDQ", "QOperator")),
             Option("activation_type", "choice", "QInt8", "Type of quantized activations.", choices=QUANT_TYPES),
             Option("weight_type", "choice", "QInt8", "Type of quantized weights.", choices=QUANT_TYPES),
             _PER_CHANNEL, _REDUCE_RANGE,
             Option("activation_symmetric", "bool", False, "Symmetric activation ranges (zero point 0)."),
             Option("weight_symmetric", "bool", True, "Symmetric weight ranges (zero point 0)."),
             Option("preprocess", "bool", True, "Run ONNX Runtime's quantization pre-processing first (shape "
                                                "inference, graph optimisation, constants folded into weights)."),
             _OP_TYPES, _EXCLUDE, _EXCLUDE_OPS,
         )),
    Kind("int4", "Int4 weights (MatMulNBits)", "MatMul (and optionally Gather) weights packed as 4-bit blocks; "
         "for large language and embedding models.", ".onnx", (
             Option("block_size", "int", 32, "Weights per quantization block (a power of two, at least 16). "
                                             "Smaller: more accurate, larger file.", minimum=16),
             Option("symmetric", "bool", True, "Symmetric blocks (no zero point)."),
             Option("accuracy_level", "int", 0, "Precision of the compute: 0 unset, 1 fp32, 2 fp16, 3 bf16, "
                                                "4 int8 (fastest on CPU, least accurate).", minimum=0),
             _list("op_types", "Operator types whose weights are packed: MatMul, Gather.", ("MatMul",),
                   label="Op types", choices=("MatMul", "Gather")),
             Option("method", "choice", "rtn", "How each block's scale is found. rtn: round to nearest (ONNX "
                                               "Runtime's default, fastest to make); k_quant: a search over "
                                               "scales for the least error in each block (slower to make, often "
                                               "closer to the source); hqq: half-quadratic quantization (needs "
                                               "PyTorch). k_quant and hqq pack MatMul weights only.",
                    choices=INT4_METHODS),
         )),
    Kind("ort", "ORT format", "The .ort flatbuffer format for ONNX Runtime Mobile and minimal builds, with the "
         "required-operators config for a reduced build.", ".ort", (
             Option("optimization_style", "choice", "Fixed", "Fixed: optimise fully now, for the CPU provider. "
                                                             "Runtime: save optimisations to replay at load time "
                                                             "(for NNAPI/CoreML).",
                    choices=("Fixed", "Runtime")),
             Option("type_reduction", "bool", False, "Also record the data types each operator needs, so a "
                                                     "minimal build can leave the others out."),
             Option("target_platform", "choice", THIS_PLATFORM,
                    "The CPU the model will run on (this machine's by default). amd64: keeps x86's blocked "
                    "(NCHWc) layout for convolutions, as a session of the .onnx model applies it; the model then "
                    "runs only on x86-64. arm: for Arm devices (int8 QDQ nodes stay fusable). any: no "
                    "platform-specific layout, so it runs everywhere, but convolutions are slower on x86-64.",
                    choices=ORT_PLATFORMS),
         )),
    Kind("optimize", "Offline optimisation", "ONNX Runtime's graph optimisations applied once and saved, so "
         "sessions start faster. The result fits only the provider and machine class it was made for.",
         ".onnx", (
             Option("level", "choice", OPTIMISING[1], "basic: constant folding and redundant-node removal; "
                                                     "extended: fusions; all: also layout changes for this CPU.",
                    choices=OPTIMISING),
             Option("target_provider", "choice", "cpu", "The execution provider the model is optimised for; it must "
                                                 "start on this machine.", choices=OPT_TARGETS),
         )),
    Kind("compiled", "Compiled EP context", "The parts of the graph a compiling provider (OpenVINO, TensorRT, "
         "QNN …) takes, compiled once and saved in the model (EPContext nodes), so sessions start without "
         "compiling them. Made for the session's provider (--provider) and device, and runs only there.",
         ".onnx", ()),
    Kind("transformers", "Transformer fusions", "Fuses attention, LayerNorm, Gelu … into single contrib "
         "operators (ONNX Runtime's transformer optimizer and onnxscript's ORT fusions); a Llama-style "
         "decoder's attention and rotary embeddings into GroupQueryAttention.", ".onnx", (
             Option("model_type", "choice", "auto", "The architecture, which decides the fusions tried; auto: "
                                                   "gpt2 where the attention has a causal mask, else bert.",
                    choices=("auto",) + TRANSFORMER_TYPES),
             Option("num_heads", "int", 0, "Attention heads; 0: detect from the graph.", minimum=0),
             Option("hidden_size", "int", 0, "Hidden size; 0: detect from the graph.", minimum=0),
             Option("fp16", "bool", False, "Also convert the fused model to float16 (inputs and outputs stay "
                                           "float32)."),
             _list("disable_fusions", "Fusions to leave out.", label="Disable fusions", choices=TRANSFORMER_FUSIONS),
             Option("fuser", "choice", "best", "Who fuses: best tries ONNX Runtime's optimizer and onnxscript's ORT "
                                               "fusions (which know today's PyTorch exports) and keeps the result "
                                               "that fuses more and passes its check.",
                    choices=("best", "onnxruntime", "onnxscript")),
         )),
)}


def default_tolerance(kind: str, options: dict) -> dict:
    """The fidelity tolerance a variant is held to by default: its kind's policy's
    (app.core.session.fidelity_policy), float16's for transformer fusions that also convert
    to float16."""
    from app.core.session.fidelity_policy import for_kind
    return for_kind(kind, options).tolerance()


def kind_info(name: str) -> Kind:
    try:
        return KINDS[name]
    except KeyError:
        raise UserError("bad-option", f"unknown conversion {name!r}; choose one of {', '.join(KINDS)}") from None


def _split(value) -> tuple:
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    return tuple(str(v).strip() for v in (value or ()) if str(v).strip())


def _coerce(option: Option, value, kind: str):
    where = f"{kind} option {option.name}"
    if option.kind == "bool":
        if isinstance(value, str):
            if value.lower() in ("1", "true", "yes", "on"):
                return True
            if value.lower() in ("0", "false", "no", "off"):
                return False
        if isinstance(value, bool):
            return value
        raise UserError("bad-option", f"{where} is on or off, not {value!r}")
    if option.kind in ("int", "float"):
        try:
            number = int(value) if option.kind == "int" else float(value)
        except (TypeError, ValueError):
            raise UserError("bad-option", f"{where} expects a {'whole ' if option.kind == 'int' else ''}"
                                          f"number, not {value!r}") from None
        if option.kind == "int" and isinstance(value, float) and value != int(value):
            raise UserError("bad-option", f"{where} expects a whole number, not {value!r}")
        if option.minimum is not None and number < option.minimum:
            raise UserError("bad-option", f"{where} must be at least {option.minimum:g}, not {number}")
        return number
    if option.kind == "choice":
        text = str(value)
        match = next((c for c in option.choices if c.lower() == text.lower()), None)
        if match is None:
            raise UserError("bad-option", f"{where} must be one of {', '.join(option.choices)}, not {text!r}")
        return match
    if option.kind == "list":
        items = _split(value)
        if option.choices:
            wrong = [i for i in items if i not in option.choices]
            if wrong:
                raise UserError("bad-option", f"{where}: unknown {', '.join(wrong)} "
                                              f"(choose from {', '.join(option.choices)})")
        return list(items)
    text = str(value or "").strip()
    if option.kind == "path" and text:
        # the libraries run with the staging folder as their working folder (see conversions)
        return str(Path(text).expanduser().absolute())
    return text


def parse_options(kind: str, given: dict | None) -> dict:
    """The complete, checked options of `kind`: the user's values over the defaults."""
    info = kind_info(kind)
    given = dict(given or {})
    known = {o.name: o for o in info.options}
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise UserError("bad-option", f"{', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} not "
                                      f"{'an option' if len(unknown) == 1 else 'options'} of {kind} "
                                      f"(its options: {', '.join(known)})")
    options = {}
    for name, option in known.items():
        value = given.get(name)
        options[name] = _coerce(option, option.default if value is None else value, kind)
    if kind == "int4":
        size = options["block_size"]
        if size & (size - 1):
            raise UserError("bad-option", f"int4 option block_size must be a power of two (16, 32, 64, 128 …), "
                                          f"not {size}")
        if options["accuracy_level"] > 4:
            raise UserError("bad-option", "int4 option accuracy_level runs from 0 to 4")
        if not options["op_types"]:
            raise UserError("bad-option", "int4 needs at least one op type (MatMul, Gather)")
        if options["method"] != "rtn" and "Gather" in options["op_types"]:
            raise UserError("bad-option", f"int4 method {options['method']} packs MatMul weights only; leave Gather "
                                          "out of op_types or use the rtn method")
    return options


def default_output(source: str | Path, kind: str) -> Path:
    """Where a variant goes unless the user says otherwise: beside the source."""
    source = Path(source)
    if kind == "ort":
        return source.with_suffix(".ort")
    return source.with_name(f"{source.stem}.{kind}{kind_info(kind).suffix}")


def options_for_flags() -> dict[str, list[tuple[str, Option]]]:
    """Every option name with the kinds that use it (the command line has one flag per name)."""
    table: dict[str, list[tuple[str, Option]]] = {}
    for kind in KINDS.values():
        for option in kind.options:
            table.setdefault(option.name, []).append((kind.name, option))
    return table


def unavailable_reason(kind: str, probe: dict | None) -> str:
    """'' when `kind` can run here; otherwise why not (from the provider probe's result)."""
    if not kind_info(kind).needs_gpu:
        return ""
    if probe is None:
        return "checking which execution providers start here…"
    gpus = [p for p in probe.get("providers", []) if p.get("gpu")]
    if any(p["available"] for p in gpus):
        return ""
    reasons = [f"{p['name']}: {p['reason'].rstrip('.')}" for p in gpus if p.get("in_build")] or \
              [f"{p['name']}: {p['reason'].rstrip('.')}" for p in gpus[:2]]
    return f"{kind_info(kind).title} needs a GPU provider, and none starts here ({'; '.join(reasons)})"
