"""Published T_SOL beside solbench's: the ratio, the rules that say why they differ, and the sample data set."""

import json
from pathlib import Path

import pytest

from solbench.hardware import lookup
from solbench.sol.analysis import Coverage, WorkloadRef, WorkloadSol
from solbench.sol.published import disagreement

B200 = lookup("B200_1500MHz")
SAMPLE = Path(__file__).resolve().parents[3] / "shared" / "sol-execbench-sample"


def _result(t_sol_ms, bound, *, matrix=None, vector=None, special=0.0, bytes_=1000, output_bytes=0):
    return WorkloadSol(
        workload=WorkloadRef(uuid="w", axes={}),
        hardware=B200.id,
        flops=0.0,
        flops_by_class={"matrix": matrix or {}, "vector": vector or {}, "special": special},
        bytes=bytes_,
        output_bytes=output_bytes,
        unfused_bytes=bytes_,
        arithmetic_intensity=0.0,
        t_sol_ms=t_sol_ms,
        t_compute_ms={},
        t_memory_ms=0.0,
        bound=bound,
        coverage=Coverage(full=True, uncovered=[], execution="fake"),
    )


def test_agreement_within_a_factor_two_needs_no_explanation():
    assert disagreement(_result(1.0, "memory"), 0.6, B200) is None
    assert disagreement(_result(1.0, "memory"), 1.9, B200) is None


def test_a_published_figure_at_its_floor_is_named():
    assert disagreement(_result(0.00007, "memory"), 0.0005, B200).startswith("published floor")
    assert disagreement(_result(0.00007, "memory"), 0.0, B200).startswith("rounding")


def test_fp32_matrix_work_points_at_the_peak_used():
    flops = 1e12
    fp32_ms = flops / B200.matrix_rate("float32")[0] * 1e3
    bf16_ms = flops / B200.matrix_rate("bfloat16")[0] * 1e3
    why = disagreement(_result(fp32_ms, "matrix", matrix={"float32": flops}), bf16_ms, B200)
    assert why.startswith("peak used") and "ratio 1" in why


def test_outputs_written_whole_are_named_when_they_dominate():
    why = disagreement(_result(1.0, "memory", bytes_=10_000, output_bytes=9_000), 0.01, B200)
    assert why.startswith("bytes counted as compulsory: outputs are 90%")


def test_vector_bound_work_points_at_decomposed_ops_and_lower_ratios_at_the_published_count():
    assert disagreement(_result(1.0, "special", special=5e9), 0.1, B200).startswith("FLOPs of decomposed ops")
    assert disagreement(_result(0.1, "memory"), 1.0, B200).startswith("published counts more")


SAMPLE_PROBLEMS = [
    "L1/028_hybrid_attention_mask_preparation",
    "L1/058_moe_expert_token_radix_sort_with_prefix_sum",
    "L2/065_sparse_expert_dispatch_and_combine",
    "Quant/029_nvfp4_fused_mlp_silu_gating",
    "FlashInfer-Bench/004_gemm_n128_k2048",
]


@pytest.mark.slow
@pytest.mark.skipif(not SAMPLE.is_dir(), reason=f"{SAMPLE} is absent")
@pytest.mark.parametrize("name", SAMPLE_PROBLEMS)
def test_sample_problems_analyse_with_full_coverage_beside_the_published_figure(name):
    """The hard cases of the sample (a CUDA-naming reference, routing from real indices, NVFP4 block-scaled
    GEMMs): the first two workloads of each, with the published figure beside T_SOL."""
    from solbench.sol import analyze_problem
    from solbench.spec import load_problem
    from solbench.spec.inputs import inputs_for_analysis
    from solbench.spec.problem import Problem

    full = load_problem(SAMPLE / name)
    problem = Problem(root=full.root, definition=full.definition, workloads=full.workloads[:2])
    results = analyze_problem(problem, B200, make_inputs=inputs_for_analysis)
    assert all(r.coverage.full for r in results), [r.coverage for r in results]
    published = json.loads((SAMPLE / name / "metadata.json").read_text())["sol"]["per_workload"]
    from solbench.sol.published import published_sol

    assert published_sol(full)[full.workloads[0].uuid] == published[0]["sol_ms"]
    assert all(r.t_sol_ms > 0 for r in results)


@pytest.mark.skipif(not SAMPLE.is_dir(), reason=f"{SAMPLE} is absent")
def test_a_missing_flashinfer_trace_file_is_named(tmp_path):
    from solbench.errors import SolbenchError
    from solbench.sol import analyze_problem
    from solbench.spec import load_problem
    from solbench.spec.inputs import inputs_for_analysis
    from solbench.spec.problem import Problem

    full = load_problem(SAMPLE / "FlashInfer-Bench/018_mla_paged_decode_h16_ckv512_kpe64_ps1")
    problem = Problem(root=full.root, definition=full.definition, workloads=full.workloads[:1])
    with pytest.raises(SolbenchError, match=r"safetensors file not found: data/flashinfer-trace/.*\.safetensors"):
        analyze_problem(problem, B200, make_inputs=inputs_for_analysis)


def test_published_figures_come_from_metadata_or_a_baselines_file(tmp_path):
    from conftest import VECTOR_ADD, vector_workloads, write_problem
    from solbench.scoring.baselines import Baseline, Baselines
    from solbench.sol.published import PUBLISHED_HARDWARE, published_sol
    from solbench.spec.problem import load_problem

    folder = write_problem(tmp_path / "p", VECTOR_ADD, vector_workloads(8, 16))
    (folder / "metadata.json").write_text(json.dumps({"sol": {"per_workload": [{"sol_ms": 0.5}, {"sol_ms": 0.25}]}}))
    problem = load_problem(folder)
    assert published_sol(problem) == {"n8": 0.5, "n16": 0.25}
    assert published_sol(problem, hardware_id="H200") == {}  # the metadata's figures are for the published hardware
    baselines = Baselines(
        [
            Baseline(definition="vector_add", workload="n16", hardware=PUBLISHED_HARDWARE, latency_ms=1.0, sol_ms=0.75),
            Baseline(definition="vector_add", workload="n8", hardware="H200", latency_ms=1.0, sol_ms=2.0),
            Baseline(definition="vector_add", workload="n8", hardware="B200", latency_ms=1.0),
        ]
    )
    assert published_sol(problem, baselines) == {"n8": 0.5, "n16": 0.75}  # the file's figure wins
    assert published_sol(problem, baselines, "H200") == {"n8": 2.0}
    assert published_sol(problem, baselines, "B200") == {}  # an entry without sol_ms gives none


def test_with_op_rows_the_explanation_names_the_op_carrying_the_binding_count():
    from solbench.sol.analysis import OpRow

    def row(op, shapes, special):
        return OpRow(
            op=op,
            shapes=shapes,
            matrix_flops=0.0,
            vector_flops=0.0,
            special_ops=special,
            bytes=8,
            formula="1 per element",
            covered=True,
        )

    rows = [row("exp", "[1024]:float32", 3e9), row("exp", "[1024]:float32", 3e9), row("tanh", "[64]:float32", 1e9)]
    result = _result(1.0, "special", special=7e9).model_copy(update={"ops": rows})
    why = disagreement(result, 0.1, B200)
    assert why.startswith("FLOPs of decomposed ops")
    assert "op exp ([1024]:float32) x 2 calls carries 86% of the 7e+09 special ops (1 per element)" in why
    assert "op " not in disagreement(_result(1.0, "special", special=7e9), 0.1, B200)  # no rows: no op named
