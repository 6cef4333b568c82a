"""Every upstream problem analyses with full coverage, or names what is uncovered and why."""

import pytest

from conftest import UPSTREAM
from solbench.hardware import lookup
from solbench.sol import analyze_problem
from solbench.spec import MissingDataError, load_problem
from solbench.spec.inputs import inputs_for_analysis

PROBLEMS = sorted(p.name for p in UPSTREAM.iterdir() if (p / "definition.json").exists()) if UPSTREAM.is_dir() else []
EXPECTED_GAPS = {"triton_ref_vecadd": "written outside ATen"}  # its output comes from a Triton kernel


@pytest.mark.upstream
@pytest.mark.parametrize("name", [p for p in PROBLEMS if p != "gqa_paged_decode"])
def test_upstream_problem_coverage(name):
    results = analyze_problem(load_problem(UPSTREAM / name), lookup("B200_1500MHz"), make_inputs=inputs_for_analysis)
    for result in results:
        assert result.t_sol_ms > 0 and result.bytes > 0
        if name in EXPECTED_GAPS:
            assert not result.coverage.full
            assert EXPECTED_GAPS[name] in result.coverage.uncovered[0].reason
        else:
            assert result.coverage.full, result.coverage.uncovered
            assert result.coverage.execution == "fake"


@pytest.mark.upstream
def test_gemm_on_b200_is_compute_bound_at_the_locked_fp32_rate():
    [small, _, large] = analyze_problem(load_problem(UPSTREAM / "gemm"), lookup("B200_1500MHz"))
    assert large.flops == 2 * 2048 * 4096 * 4096 and large.bound == "matrix"
    assert small.bound == "memory"  # M=16: the 64 MiB weight read dominates


@pytest.mark.upstream
def test_problem_whose_data_is_missing_says_so():
    with pytest.raises(MissingDataError, match="safetensors file not found"):
        analyze_problem(load_problem(UPSTREAM / "gqa_paged_decode"), lookup("H200"), make_inputs=inputs_for_analysis)
