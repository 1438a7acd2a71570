from app.core.diagnose import rules

SUMMARY = {"op_counts": {"MatMul": 3, "Add": 3}, "initializers_as_inputs": []}


def profile(rows, by_provider=None):
    total = sum(r["total_us"] for r in rows)
    for row in rows:
        row.setdefault("percent", 100 * row["total_us"] / total)
        row.setdefault("count", 1)
        row.setdefault("provider", "CPUExecutionProvider")
    return {"by_op_type": rows, "total_node_us": total,
            "by_provider": by_provider or {"CPUExecutionProvider": total}}


def test_cpu_fallback_and_memcpy_under_a_gpu_provider():
    prof = profile([{"op_type": "Conv", "total_us": 700, "provider": "CUDAExecutionProvider"},
                    {"op_type": "NonMaxSuppression", "total_us": 200},
                    {"op_type": "MemcpyToHost", "total_us": 100, "count": 10, "provider": "CUDAExecutionProvider"}],
                   {"CUDAExecutionProvider": 800, "CPUExecutionProvider": 200})
    found = {f["id"]: f for f in rules.placement_findings(prof, ["CUDAExecutionProvider", "CPUExecutionProvider"])}
    assert set(found) == {"cpu-fallback", "memcpy-nodes"}
    assert "NonMaxSuppression" in found["cpu-fallback"]["evidence"]
    assert "10 Memcpy" in found["memcpy-nodes"]["evidence"]
    # asked for the CPU alone, nothing falls back from a GPU; the copies the trace holds are still named
    assert [f["id"] for f in rules.placement_findings(prof, ["CPUExecutionProvider"])] == ["memcpy-nodes"]
    cpu_only = profile([{"op_type": "Conv", "total_us": 100}])
    assert rules.placement_findings(cpu_only, ["CPUExecutionProvider"]) == []


def test_quantized_rules_need_quantized_ops_and_evidence():
    quantized = {"op_counts": {"QLinearConv": 4, "QuantizeLinear": 1}}
    on_cuda = rules.quantization_findings(quantized, None, ["CUDAExecutionProvider"], "x", [], True)
    assert [f["id"] for f in on_cuda] == ["quantized-on-cuda"]
    no_vnni = rules.quantization_findings(quantized, None, ["CPUExecutionProvider"], "Old CPU", [], True)
    assert [f["id"] for f in no_vnni] == ["int8-without-vnni"] and "Old CPU" in no_vnni[0]["evidence"]
    assert rules.quantization_findings(quantized, None, ["CPUExecutionProvider"], "x", ["avx512_vnni"], True) == []
    assert rules.quantization_findings(quantized, None, ["CPUExecutionProvider"], "x", [], False) == []
    assert rules.quantization_findings(SUMMARY, None, ["CUDAExecutionProvider"], "x", [], True) == []


def test_fp16_initializers_variance_threads_spinning_hot_ops():
    assert rules.fp16_findings(SUMMARY, 5, None, ["CPUExecutionProvider"])[0]["id"] == "fp16-on-cpu"
    assert rules.fp16_findings(SUMMARY, 5, None, ["CUDAExecutionProvider"]) == []
    assert rules.fp16_findings(SUMMARY, 0, None, ["CPUExecutionProvider"]) == []
    assert rules.initializer_findings({"initializers_as_inputs": ["w"]})[0]["id"] == "initializers-as-inputs"
    noisy = {"mean": 2.0, "std": 1.0, "p50": 1.5, "p99": 6.0, "runs": 100}
    steady = {"mean": 1.0, "std": 0.05, "p50": 1.0, "p99": 1.2, "runs": 100}
    assert rules.variance_findings(noisy, {})[0]["setting"] == {"dynamic_block_base": 4}
    assert rules.variance_findings(noisy, {"dynamic_block_base": 4})[0]["setting"] is None
    assert rules.variance_findings(steady, {}) == []
    assert rules.thread_findings({"intra_op_num_threads": 8}, 4, 8)[0]["setting"] == {"intra_op_num_threads": 4}
    assert rules.thread_findings({"intra_op_num_threads": 4}, 4, 8) == []
    spin = {"gap_ms": 10, "cpu_ms_spin": 6.0, "cpu_ms_nospin": 1.0, "latency_spin_ms": 1.0, "latency_nospin_ms": 1.1}
    assert rules.spinning_findings(spin)[0]["id"] == "spinning"
    assert rules.spinning_findings(dict(spin, cpu_ms_spin=1.2)) == []
    hot = rules.hot_op_findings(profile([{"op_type": "MatMul", "total_us": 80}, {"op_type": "Add", "total_us": 15},
                                         {"op_type": "Relu", "total_us": 5}]))
    assert [f["title"].split()[0] for f in hot] == ["MatMul", "Add"]
    assert "transformer optimizer" in hot[0]["fix"]


def test_symbolic_rule_needs_a_faster_verdict_and_shows_its_interval():
    probe = {"overrides": {"batch": 1}, "nodes_symbolic": 6, "nodes_fixed": 3, "latency_symbolic_ms": 1.5,
             "latency_fixed_ms": 1.0, "speedup": 1.5, "speedup_ci": [1.4, 1.6], "verdict": "faster", "rounds": 12}
    found = rules.symbolic_findings(probe)
    assert found[0]["setting"] == {"free_dimension_overrides": {"batch": 1}}
    assert "×1.50 as fast (95 % interval 1.40–1.60, 12 rounds in alternation" in found[0]["evidence"]
    assert "3 nodes instead of 6" in found[0]["evidence"] and found[0]["cost"] == "≈33% of the latency"
    assert "Apply this setting" in found[0]["fix"]
    for verdict in ("no-difference", "slower"):
        assert rules.symbolic_findings(dict(probe, verdict=verdict)) == [], "a smaller graph alone is no finding"
    assert rules.symbolic_findings(None) == []


def test_profile_times_read_in_the_unit_their_size_reads_best_in():
    profile = {"total_node_us": 400_000, "by_provider": {"CPUExecutionProvider": 294_851},
               "by_op_type": [{"op_type": "Conv", "percent": 74.0, "count": 30, "total_us": 294_851}]}
    evidence = rules.hot_op_findings(profile)[0]["evidence"]
    assert "295 ms" in evidence and "µs" not in evidence


def test_advice_never_suggests_the_optimisation_level_already_set():
    conv = profile([{"op_type": "Conv", "total_us": 90}, {"op_type": "Relu", "total_us": 10}])
    assert "'all'" not in rules.hot_op_findings(conv, {"graph_optimization_level": "all"})[0]["fix"]
    assert "'all' optimisation level" in rules.hot_op_findings(conv, {"graph_optimization_level": "basic"})[0]["fix"]
    found = [rules._finding("a", "low", "t", "e", "f", setting={"dynamic_block_base": 4}),
             rules._finding("b", "low", "t", "e", "f", setting={"session_config": {"k": "1"}}),
             rules._finding("c", "low", "t", "e", "f")]
    kept = rules.without_what_is_set(found, {"dynamic_block_base": 4, "session_config": {"k": "0"}})
    assert [f["id"] for f in kept] == ["b", "c"]


def test_a_share_keeps_its_first_decimal_as_the_profile_tab_shows_it():
    hot = rules.hot_op_findings(profile([{"op_type": "Conv", "total_us": 587}, {"op_type": "Add", "total_us": 413}]))
    assert hot[0]["title"] == "Conv takes 58.7% of node time" and hot[0]["cost"] == "58.7% of node time"


def test_a_busy_machine_is_a_finding_of_its_own():
    quiet = {"seconds": 5.0, "other_cores": 0.1, "own_cores": 1.0, "cores": 4, "busy": False}
    assert rules.busy_findings(quiet) == [] and rules.busy_findings(None) == []
    busy = rules.busy_findings(dict(quiet, other_cores=1.6, busy=True))[0]
    assert busy["id"] == "busy-machine" and busy["severity"] == "high" and "1.6 of 4" in busy["evidence"]
    assert "disturbed" in busy["title"]
