"""A set of problems analysed in one process: each outcome kept apart, and the summary of the whole."""

from pathlib import Path

import pytest

from solbench.hardware import lookup
from solbench.sol.analysis import Coverage, Published, WorkloadRef, WorkloadSol
from solbench.sol.problem_set import ProblemSol, analyze_set, summarize

SAMPLE = Path(__file__).resolve().parents[3] / "shared" / "sol-execbench-sample"


def _published(ratio):
    """A workload's result whose T_SOL is `ratio` times a published 1 ms."""
    return WorkloadSol(
        workload=WorkloadRef(uuid="w", axes={}),
        hardware="B200_1500MHz",
        flops=0.0,
        flops_by_class={"matrix": {}, "vector": {}, "special": 0.0},
        bytes=1000,
        unfused_bytes=1000,
        arithmetic_intensity=0.0,
        t_sol_ms=ratio,
        t_compute_ms={},
        t_memory_ms=ratio,
        bound="memory",
        coverage=Coverage(full=True, uncovered=[], execution="fake"),
        published=Published(sol_ms=1.0, ratio=ratio, disagreement=None if 0.5 <= ratio <= 2 else "peak used: x"),
    )


def test_the_summary_counts_ratios_within_agreement_and_lists_failures_and_slow_problems():
    analyses = [
        ProblemSol(folder="L1/a", problem="a", seconds=0.2, workloads=[_published(1.0), _published(3.0)]),
        ProblemSol(folder="L1/b", problem="b", seconds=4.0, workloads=[_published(0.9)]),
        ProblemSol(folder="FIB/c", seconds=0.1, error="data file missing"),
    ]
    summary = summarize(analyses)
    assert (summary.problems, summary.analysed, summary.workloads) == (3, 2, 3)
    assert summary.failed == ["FIB/c: data file missing"]
    assert summary.slowest == [("L1/b", 4.0)] and summary.seconds_median == 0.2
    assert summary.seconds_p90 == 4.0  # nearest rank: of three, the 90th percentile is the largest
    assert summary.published_workloads == 3 and summary.ratio_median == 1.0
    assert summary.within_agreement == pytest.approx(2 / 3) and summary.disagreements == {"peak used": 1}


@pytest.mark.skipif(not SAMPLE.is_dir(), reason="needs ../shared/sol-execbench-sample")
def test_the_sample_analyses_beside_its_published_figures_and_a_missing_data_file_is_one_failure():
    names = [
        "FlashInfer-Bench/021_rmsnorm_h128",
        "FlashInfer-Bench/018_mla_paged_decode_h16_ckv512_kpe64_ps1",
        "L1/006_hyena_depthwise_conv1d_split_gate",
    ]
    folders = [SAMPLE / name for name in names]
    analyses = list(analyze_set(folders, SAMPLE, lookup("B200_1500MHz")))
    assert [a.folder for a in analyses] == names
    assert "safetensors file not found" in analyses[1].error and analyses[1].problem is not None
    assert [len(a.ratios) for a in analyses] == [14, 0, 16]
    summary = summarize(analyses)
    assert summary.analysed == 2 and summary.published_workloads == 30


def test_a_set_analysed_at_the_cpu_tier_says_which_problems_stand_in_with_their_published_workloads(tmp_path):
    from conftest import VECTOR_ADD, vector_workloads, write_problem
    from solbench.cli.render import set_progress_line

    folder = write_problem(tmp_path / "set" / "vector_add", VECTOR_ADD, vector_workloads(1000))
    (analysis,) = analyze_set([folder], tmp_path / "set", lookup("B200_1500MHz"), tier="cpu")
    assert analysis.error is None and "no CPU tier needed" in analysis.tier_note
    assert "(published: no CPU tier needed)" in set_progress_line(1, 1, analysis)
