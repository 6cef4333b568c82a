"""L1 recipe and extracted problems carry both tiers: a GPU tier at upstream's scale and a small CPU tier."""

import statistics
from pathlib import Path

import pytest

from solbench.spec.definition import tag_value
from solbench.spec.problem import find_problem_folders, load_problem
from solbench.spec.tiers import CPU_WORKLOAD_FILE

SUITE = Path(__file__).resolve().parents[2] / "problems"
MB = 10**6


def _tiered_problems():
    """L1 problems (recipes and extractions) and the extracted L2 ones: this issue's tiers cover them."""
    out = []
    for folder in find_problem_folders(SUITE):
        problem = load_problem(folder, tier="gpu")
        origin = tag_value(problem.definition.tags, "origin")
        if folder.parent.name == "L1" or origin == "extract":
            out.append(problem)
    return out


@pytest.fixture(scope="module")
def tiered():
    return _tiered_problems()


def test_every_gpu_tier_has_16_distinct_workloads_under_16_gb(tiered):
    assert len(tiered) >= 70
    for problem in tiered:
        axes = {tuple(sorted(w.axes.items())) for w in problem.workloads}
        assert len(axes) == len(problem.workloads) >= 16, problem.name
        assert max(problem.tensor_bytes(dict(w.axes)) for w in problem.workloads) <= 16 * 10**9, problem.name


def test_the_median_largest_gpu_workload_moves_400_mb(tiered):
    largest = [max(p.tensor_bytes(dict(w.axes)) for w in p.workloads) for p in tiered]
    assert statistics.median(largest) >= 400 * MB, statistics.median(largest) / MB


def test_every_problem_keeps_a_small_cpu_tier(tiered):
    for problem in tiered:
        assert (problem.root / CPU_WORKLOAD_FILE).exists(), problem.name
        cpu = load_problem(problem.root, tier="cpu")
        assert len(cpu.workloads) >= 8, problem.name
        largest = max(cpu.tensor_bytes(dict(w.axes)) for w in cpu.workloads)
        assert largest <= 300 * MB, (problem.name, largest / MB)


def test_whisper_and_vision_extractions_run_at_their_native_lengths(tiered):
    by_name = {p.name: p for p in tiered}
    whisper = by_name["whisper-large-v3_hf_encoder_layer"]
    assert {w.axes["seq_len"] for w in whisper.workloads} == {1500}
    vit = by_name["vit-b-16_hf_encoder_layer"]
    assert {w.axes["seq_len"] for w in vit.workloads} == {197, 577}
    clip = by_name["clip-vit-l-14_hf_norm_bwd"]
    assert all(w.axes["num_tokens"] % 257 == 0 or w.axes["num_tokens"] % 577 == 0 for w in clip.workloads)
