"""The findings of a diagnosis: each one reads evidence measured or read from this
model and says what it likely costs and how to fix it. No rule fires on a rule of
thumb alone: without evidence there is no finding."""

from __future__ import annotations

from app.core.session.providers import GPU_PROVIDERS
from app.core.formatting import duration_text

QUANTIZED_OPS = {"QLinearConv", "QLinearMatMul", "MatMulInteger", "ConvInteger", "DynamicQuantizeLinear",
                 "QuantizeLinear", "DequantizeLinear", "QLinearAdd", "QLinearMul", "QGemm",
                 "com.microsoft.QLinearAdd", "com.microsoft.QLinearMul", "com.microsoft.QGemm",
                 "com.microsoft.DynamicQuantizeMatMul", "com.microsoft.MatMulIntegerToFloat",
                 "com.microsoft.QAttention", "com.microsoft.MatMulNBits"}
MEMCPY_OPS = {"MemcpyToHost", "MemcpyFromHost"}
HOT_OP_ADVICE = {
    "MatMul": "fuse attention and MLP blocks with the transformer optimizer, or try int8-dynamic / int4 weights",
    "Gemm": "int8-dynamic quantisation, or fp16 on a GPU with Tensor Cores",
    "FusedGemm": "already fused by ORT; int8-dynamic quantisation or fp16 on a GPU is the next step",
    "FusedMatMul": "already fused by ORT; int8-dynamic or int4 weights are the next step",
    "FusedConv": "already fused by ORT; int8-static quantisation (CPU with VNNI) or fp16 on a GPU",
    "QLinearConv": "integer convolution: it gains only on CPUs with VNNI; compare against the fp32 model",
    "QLinearMatMul": "integer matmul: it gains only on CPUs with VNNI; compare against the fp32 model",
    "MatMulInteger": "integer matmul: it gains only on CPUs with VNNI; compare against the fp32 model",
    "Attention": "the transformer optimizer's fused attention (with fp16 on GPU)",
    "Softmax": "the transformer optimizer fuses Softmax into its Attention kernel",
    "LayerNormalization": "the transformer optimizer turns Add + LayerNorm into SkipLayerNormalization",
    "Gelu": "the transformer optimizer fuses Gelu with its bias (BiasGelu / FastGelu)",
    "Erf": "Erf usually belongs to an unfused Gelu: the transformer optimizer fuses it",
    "Conv": "int8-static quantisation on CPUs with VNNI, fp16 on GPUs" + "{all_level}",
    "Add": "bias and residual Adds: the transformer optimizer folds them into SkipLayerNormalization, BiasGelu "
           "and fused attention" + "{add_level}",
    "Mul": "scaling Muls: the transformer optimizer folds attention scaling into its Attention kernel",
    "Transpose": "layout changes around the model: an NCHW export" + "{transpose_level}" + " removes many",
    "Cast": "casts between fp16 and fp32: keep IO types, or run the fp16 model on a GPU",
    "LSTM": "int8-dynamic quantisation suits recurrent layers",
    "GRU": "int8-dynamic quantisation suits recurrent layers",
}


#: what the advice adds about the 'all' optimisation level where it is not set already
LEVEL_ADVICE = {"all_level": ", or the 'all' optimisation level (NCHWc)",
                "add_level": "; in CNNs the 'all' level fuses them into convolutions",
                "transpose_level": ", or the 'all' level,"}


def advice(op_type: str, settings: dict) -> str:
    """What to try for a hot operator, leaving out what the session has already."""
    level_set = settings.get("graph_optimization_level", "all") == "all"
    text = HOT_OP_ADVICE.get(op_type, "look at this operator's nodes in the Profile tab (shapes, provider)")
    return text.format(**{key: "" if level_set else value for key, value in LEVEL_ADVICE.items()})


def _finding(id_: str, severity: str, title: str, evidence: str, fix: str, cost: str = "",
             setting: dict | None = None, nodes: list[str] | None = None) -> dict:
    """nodes: the nodes the finding is about, the most telling first (the Graph tab shows them)."""
    return {"id": id_, "severity": severity, "title": title, "evidence": evidence, "cost": cost, "fix": fix,
            "setting": setting, "nodes": nodes or []}


def _hottest(profile: dict, test, limit: int = 5) -> list[str]:
    """The names of the profile's slowest nodes that pass `test`."""
    return [row["name"] for row in profile.get("by_node", []) if test(row)][:limit]


def _us(microseconds: float) -> str:
    """A profile's microseconds in the unit their size reads best in (295 ms, not 294,851 µs)."""
    return duration_text(microseconds / 1000)


def _severity(percent: float) -> str:
    return "high" if percent >= 30 else "medium" if percent >= 10 else "low"


def placement_findings(profile: dict, providers: list[str]) -> list[dict]:
    findings = []
    gpu = [p for p in providers if p in GPU_PROVIDERS]
    total = max(1, profile.get("total_node_us", 0))
    by_provider = profile.get("by_provider", {})
    cpu_us = by_provider.get("CPUExecutionProvider", 0)
    if gpu and cpu_us and len(by_provider) > 1:
        cpu_ops = sorted({row["op_type"] for row in profile["by_op_type"] if row.get("provider") == "CPUExecutionProvider"})
        percent = 100 * cpu_us / total
        findings.append(_finding(
            "cpu-fallback", _severity(percent), f"{percent:.0f}% of node time runs on the CPU under {gpu[0]}",
            f"the profile puts {_us(cpu_us)} of {_us(total)} on CPUExecutionProvider: {', '.join(cpu_ops[:8])}",
            "these operators have no kernel for the GPU provider (or ORT judged the CPU faster); an opset or "
            "dtype the provider supports, or the TensorRT provider, can move them", f"≈{percent:.0f}% of node time",
            nodes=_hottest(profile, lambda row: row["provider"] == "CPUExecutionProvider")))
    memcpy = [row for row in profile.get("by_op_type", []) if row["op_type"] in MEMCPY_OPS]
    if memcpy:
        us = sum(row["total_us"] for row in memcpy)
        count = sum(row["count"] for row in memcpy)
        findings.append(_finding(
            "memcpy-nodes", _severity(100 * us / total), "copies between devices inside the graph",
            f"{count} Memcpy node runs took {_us(us)} ({100 * us / total:.1f}% of node time)",
            "each Memcpy marks a boundary between providers; fewer CPU fallbacks (see above) and IO binding for "
            "the inputs and outputs remove them", f"{_us(us)} per profile"))
    return findings


def quantization_findings(summary: dict, profile: dict | None, providers: list[str], cpu_name: str,
                          int8_flags: list[str], flags_known: bool) -> list[dict]:
    quantized = {op: n for op, n in summary["op_counts"].items() if op in QUANTIZED_OPS}
    if not quantized:
        return []
    listing = ", ".join(f"{op} ×{n}" for op, n in sorted(quantized.items()))
    findings = []
    if "CUDAExecutionProvider" in providers:
        where = ""
        if profile:
            cpu_ops = {row["op_type"] for row in profile["by_op_type"] if row.get("provider") == "CPUExecutionProvider"}
            moved = sorted(cpu_ops & set(quantized))
            where = f"; the profile shows {', '.join(moved)} running on the CPU" if moved else ""
        findings.append(_finding(
            "quantized-on-cuda", "high", "a quantised model on the CUDA provider",
            f"the model holds integer operators ({listing}){where}",
            "the CUDA provider has few int8 kernels, so these run on the CPU with copies around them: use the "
            "fp32 or fp16 model on CUDA, or TensorRT with a static, symmetric QDQ model"))
    if "CPUExecutionProvider" in providers and providers[0] == "CPUExecutionProvider" and flags_known and not int8_flags:
        share = ""
        if profile:
            us = sum(row["total_us"] for row in profile["by_op_type"] if row["op_type"] in QUANTIZED_OPS)
            share = f"; integer operators take {100 * us / max(1, profile['total_node_us']):.0f}% of node time"
        findings.append(_finding(
            "int8-without-vnni", "medium", "int8 on a CPU without int8 dot-product instructions",
            f"{cpu_name} reports none of AVX512-VNNI, AVX-VNNI, AMX or Arm dot-product; the model holds {listing}{share}",
            "without VNNI int8 kernels gain little and can be slower than fp32: compare the fp32 model "
            "(Compare tab), or deploy on a CPU with VNNI"))
    return findings


def fp16_findings(summary: dict, fp16_tensors: int, profile: dict | None, providers: list[str]) -> list[dict]:
    if providers[0] != "CPUExecutionProvider" or not fp16_tensors:
        return []
    cast = ""
    if profile:
        cast_us = sum(row["total_us"] for row in profile["by_op_type"] if row["op_type"] == "Cast")
        cast = f"; Cast nodes take {100 * cast_us / max(1, profile['total_node_us']):.0f}% of node time"
    return [_finding(
        "fp16-on-cpu", "medium", "an fp16 model on the CPU provider",
        f"{fp16_tensors} tensors of the model are float16{cast}",
        "the CPU provider has few fp16 kernels and converts around the rest: run the fp32 model on the CPU, "
        "and keep fp16 for GPUs with Tensor Cores")]


def initializer_findings(summary: dict) -> list[dict]:
    names = summary.get("initializers_as_inputs") or []
    if not names:
        return []
    shown = ", ".join(names[:5]) + (" …" if len(names) > 5 else "")
    return [_finding(
        "initializers-as-inputs", "medium" if len(names) > 3 else "low",
        f"{len(names)} initializers are also graph inputs",
        f"inputs that are initializers: {shown}; ORT must treat them as overridable, so it cannot fold or fuse them",
        "remove them from the inputs (python -m onnxruntime.tools.remove_initializer_from_input --input "
        "model.onnx --output fixed.onnx), or re-export with a current exporter")]


def symbolic_findings(probe: dict | None) -> list[dict]:
    """Fixing the symbolic dims at the plan's sizes, judged by its alternating measurement
    (diagnose.symbolic.measure_overrides): a finding only when the verdict is faster."""
    if not probe or probe.get("verdict") != "faster":
        return []
    speedup, (low, high) = probe["speedup"], probe["speedup_ci"]
    dims = ", ".join(f"{k}={v}" for k, v in probe["overrides"].items())
    nodes = (f"; the optimised graph has {probe['nodes_fixed']} nodes instead of {probe['nodes_symbolic']}"
             if probe.get("nodes_fixed") is not None and probe["nodes_fixed"] != probe["nodes_symbolic"] else "")
    return [_finding(
        "symbolic-dims", "medium" if low >= 1.10 else "low", "symbolic dimensions hold back optimisation",
        f"with {dims} fixed as free dimension overrides, the model ran ×{speedup:.2f} as fast (95 % interval "
        f"{low:.2f}–{high:.2f}, {probe['rounds']} rounds in alternation, each session in its own process): "
        f"p50 {duration_text(probe['latency_fixed_ms'])} instead of {duration_text(probe['latency_symbolic_ms'])}"
        + nodes,
        "if these sizes are fixed in deployment, set them as free dimension overrides (Apply this setting puts "
        "them in the Session tab)",
        f"≈{100 * (1 - 1 / speedup):.0f}% of the latency", {"free_dimension_overrides": probe["overrides"]})]


def variance_findings(stats: dict, config: dict) -> list[dict]:
    if not stats or not stats.get("mean"):
        return []
    cv = stats["std"] / stats["mean"]
    tail = stats["p99"] / stats["p50"] if stats["p50"] else 1.0
    if cv < 0.15 and tail < 2.0:
        return []
    evidence = (f"over {stats['runs']} runs: p50 {duration_text(stats['p50'])}, p99 {duration_text(stats['p99'])} "
                f"(×{tail:.1f}), std/mean {cv:.2f}")
    if not config.get("dynamic_block_base"):
        return [_finding("high-variance", "medium", "latency varies a lot from run to run", evidence,
                         "a dynamic cost model balances work between threads: session.dynamic_block_base=4",
                         f"p99 is ×{tail:.1f} the median", {"dynamic_block_base": 4})]
    return [_finding("high-variance", "medium", "latency varies a lot from run to run", evidence,
                     "dynamic_block_base is already set: fewer threads than cores, or thread affinities, keep "
                     "other work off the inference threads", f"p99 is ×{tail:.1f} the median")]


def thread_findings(config: dict, physical_cores: int, logical_cores: int) -> list[dict]:
    intra, inter = config.get("intra_op_num_threads", 0), config.get("inter_op_num_threads", 0)
    total = intra + (inter if config.get("execution_mode") == "parallel" else 0)
    if not physical_cores or total <= physical_cores:
        return []
    return [_finding(
        "threads-over-cores", "medium", "more threads than physical cores",
        f"the session asks for {intra} intra-op" + (f" + {inter} inter-op" if inter else "")
        + f" threads; this machine has {physical_cores} physical cores ({logical_cores} logical)",
        "threads beyond the physical cores share execution units and wait on each other: use at most "
        f"{physical_cores}", setting={"intra_op_num_threads": min(intra, physical_cores) or physical_cores})]


def spinning_findings(probe: dict | None) -> list[dict]:
    if not probe:
        return []
    ratio = probe["cpu_ms_spin"] / probe["cpu_ms_nospin"] if probe["cpu_ms_nospin"] else 1.0
    slower = probe["latency_nospin_ms"] / probe["latency_spin_ms"] - 1 if probe["latency_spin_ms"] else 0.0
    if ratio < 1.5:
        return []
    return [_finding(
        "spinning", "low", "idle threads spin and burn CPU between requests",
        f"with requests {duration_text(probe['gap_ms'])} apart, each request cost {duration_text(probe['cpu_ms_spin'])} of CPU with "
        f"spinning and {duration_text(probe['cpu_ms_nospin'])} without; latency {duration_text(probe['latency_spin_ms'])} vs "
        f"{duration_text(probe['latency_nospin_ms'])}",
        "when throughput is not the goal (a service with gaps between requests), turn spinning off: "
        "session.intra_op.allow_spinning=0" + (f" (latency rises {100 * slower:.0f}%)" if slower > 0.02 else ""),
        f"×{ratio:.1f} CPU per request", {"intra_op_allow_spinning": False, "inter_op_allow_spinning": False})]


def hot_op_findings(profile: dict | None, settings: dict | None = None, limit: int = 3) -> list[dict]:
    """The operator types that take the most node time, with advice that leaves out what
    the session (`settings`, a preset) has already."""
    if not profile:
        return []
    findings = []
    for row in profile["by_op_type"][:limit]:
        if row["percent"] < 10:
            break
        name = row["op_type"].split(".")[-1]
        findings.append(_finding(
            "hot-op-types", _severity(row["percent"]), f"{row['op_type']} takes {row['percent']:.1f}% of node time",
            f"{row['count']} runs of {row['op_type']} took {_us(row['total_us'])} in the profile",
            advice(name, settings or {}), f"{row['percent']:.1f}% of node time",
            nodes=_hottest(profile, lambda node, op=row["op_type"]: node["op_type"] == op)))
    return findings


def busy_findings(load: dict | None) -> list[dict]:
    """A machine other processes kept busy while the diagnosis measured (app.core.diagnose.load)."""
    if not load or not load["busy"]:
        return []
    return [_finding(
        "busy-machine", "high", "the machine was busy while it was measured: the figures are disturbed",
        f"other processes used {load['other_cores']:.1f} of {load['cores']} logical cores on average over the "
        f"{load['seconds']:.0f} s of profiling and timing (this diagnosis used {load['own_cores']:.1f})",
        "diagnose again on a quiet machine (or on a target): operator shares and run-to-run variation measured "
        "now say more about the other programs than about the model, so no operator or setting is blamed here")]


def without_what_is_set(findings: list[dict], settings: dict) -> list[dict]:
    """The findings less those whose only offer is a setting the session has already."""
    def already(setting: dict) -> bool:
        return all(settings.get(key) == value if not isinstance(value, dict)
                   else all((settings.get(key) or {}).get(k) == v for k, v in value.items())
                   for key, value in setting.items())

    return [f for f in findings if not (f.get("setting") and already(f["setting"]))]
