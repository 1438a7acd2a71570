from app.core.optimize.candidates import ALL_KINDS, plan, skip_reason
from app.core.session.config import ProviderSpec, SessionConfig

CPU = SessionConfig()
CUDA = SessionConfig(providers=[ProviderSpec("CUDAExecutionProvider")])
MATMUL = {"hidden_size": 64, "num_heads": 0}


def test_int8_is_skipped_on_a_cpu_without_int8_dot_products():
    assert "no int8 dot-product instructions" in skip_reason("int8-dynamic", CPU, MATMUL, {"avx2", "fma"})
    assert skip_reason("int8-static", CPU, MATMUL, {"avx2", "avx512_vnni"}) == ""
    assert skip_reason("int8-dynamic", CPU, MATMUL, set()) == ""         # the CPU did not say: try it


def test_float16_is_skipped_on_the_cpu_provider_only():
    assert "CPU provider" in skip_reason("fp16", CPU, MATMUL, set())
    assert "CPU provider" in skip_reason("mixed", CPU, MATMUL, set())
    assert skip_reason("fp16", CUDA, MATMUL, set()) == ""


def test_int4_and_transformers_need_what_they_work_on():
    assert "MatMul" in skip_reason("int4", CPU, {"hidden_size": 0, "num_heads": 0}, set())
    assert skip_reason("int4", CPU, MATMUL, set()) == ""
    assert "attention" in skip_reason("transformers", CPU, MATMUL, set())
    assert skip_reason("transformers", CPU, {"hidden_size": 64, "num_heads": 4}, set()) == ""


def test_the_plan_names_every_kind_and_the_narrowed_ones():
    rows = dict(plan(["ort"], CPU, MATMUL, set()))
    assert list(rows) == list(ALL_KINDS) and rows["ort"] == ""
    assert all("not asked for" in why for kind, why in rows.items() if kind != "ort")


def test_kinds_expected_to_be_slower_are_made_when_asked_and_the_rest_still_skip():
    no_vnni = {"avx2", "fma"}
    default = dict(plan([], CPU, {"hidden_size": 0, "num_heads": 0}, no_vnni))
    assert all(default[kind] for kind in ("int8-dynamic", "int8-static", "fp16", "mixed"))
    tried = dict(plan([], CPU, {"hidden_size": 0, "num_heads": 0}, no_vnni, try_expected_slower=True))
    assert all(tried[kind] == "" for kind in ("int8-dynamic", "int8-static", "fp16", "mixed"))
    assert "MatMul" in tried["int4"] and "attention" in tried["transformers"], "what cannot be made is still skipped"
    narrowed = dict(plan(["int8-static"], CPU, MATMUL, no_vnni, try_expected_slower=True))
    assert narrowed["int8-static"] == "" and "not asked for" in narrowed["fp16"]


def test_candidates_are_made_in_parallel_within_the_memory_budget():
    from app.core.optimize.candidates import parallel_makes

    mib = 1 << 20
    assert parallel_makes(10 * mib, 16_000 * mib, 4, 6) == 4          # the cores bound it
    assert parallel_makes(500 * mib, 5_000 * mib, 8, 6) == 2          # the memory bounds it: 2.4 GB each
    assert parallel_makes(10 * mib, 16_000 * mib, 8, 3) == 3          # no more than there are to make
    assert parallel_makes(4_000 * mib, 1_000 * mib, 8, 6) == 1        # too big for two: one at a time


def test_the_eta_never_passes_the_budget_and_the_bar_never_goes_back():
    from app.core.jobs.protocol import JobContext
    from app.core.optimize.budget import Budget

    shown = []
    budget = Budget(100.0, JobContext(lambda kind, payload: shown.append(payload)))
    assert 99.0 < budget.eta() <= 100.0
    budget.expect(10.0)
    assert budget.eta() <= 10.0
    budget.progress()
    budget.expect(500.0)                      # more work planned than the budget holds
    assert budget.eta() <= 100.0
    budget.progress()
    assert shown[1]["fraction"] >= shown[0]["fraction"] and "s left" in shown[1]["message"]
