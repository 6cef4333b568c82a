"""Routing decided by shape-only floating-point data: the values come from a slice of the reference run for real."""

import shutil

import pytest

from conftest import write_problem
from solbench.hardware import lookup
from solbench.sol import AnalysisError, analyze_problem
from solbench.sol.analysis import HYBRID, REAL, RecordingPlan, analyze_workload
from solbench.spec import load_problem
from solbench.spec.inputs import inputs_for_analysis
from solbench.spec.reference_code import import_reference

EXPERTS, GROUPS, TOPK_GROUPS, TOPK = 8, 4, 2, 2

# DeepSeek-style: sigmoid router with grouped top-k (a write in place: scatter_ on a zeros mask), a shared expert,
# token counts per expert read into Python, then a loop over the routed experts. (Not `one_hot`: PyTorch decomposes
# it one way on real tensors and another on shape-only ones, a few vector FLOPs that would hide what is compared.)
REFERENCE = f"""import torch
import torch.nn.functional as F

def run(x, router, bias, w1, w2, shared1, shared2):
    tokens = x.shape[0]
    scores = torch.sigmoid((x @ router.t()).float())
    biased = scores + 0.01 * bias
    group_scores = biased.view(tokens, {GROUPS}, -1).topk(2, dim=-1)[0].sum(dim=-1)
    group_idx = torch.topk(group_scores, k={TOPK_GROUPS}, dim=-1)[1]
    group_mask = torch.zeros_like(group_scores)
    group_mask.scatter_(1, group_idx, 1)
    allowed = group_mask.unsqueeze(-1).expand(-1, -1, {EXPERTS // GROUPS}).reshape(tokens, -1)
    chosen = torch.topk(biased.masked_fill(allowed == 0, float("-inf")), k={TOPK}, dim=-1)[1]
    weights = scores.gather(1, chosen)
    weights = weights / weights.sum(-1, keepdim=True)
    y = F.silu(x @ shared1.t()) @ shared2.t()
    counts = (chosen.flatten()[:, None] == torch.arange({EXPERTS})).sum(0).tolist()
    for e in range({EXPERTS}):
        if counts[e] == 0:
            continue
        token, slot = torch.where(chosen == e)
        h = F.silu(x[token] @ w1[e].t()) @ w2[e].t()
        y.index_add_(0, token, (h * weights[token, slot, None]).to(y.dtype))
    return y
"""


def _definition(hidden: int, inter: int) -> dict:
    return {
        "name": "float_routed_moe",
        "axes": {
            "tokens": {"type": "var"},
            "experts": {"type": "const", "value": EXPERTS},
            "hidden": {"type": "const", "value": hidden},
            "inter": {"type": "const", "value": inter},
        },
        "inputs": {
            "x": {"shape": ["tokens", "hidden"], "dtype": "bfloat16"},
            "router": {"shape": ["experts", "hidden"], "dtype": "bfloat16"},
            "bias": {"shape": ["experts"], "dtype": "float32"},
            "w1": {"shape": ["experts", "inter", "hidden"], "dtype": "bfloat16"},
            "w2": {"shape": ["experts", "hidden", "inter"], "dtype": "bfloat16"},
            "shared1": {"shape": ["inter", "hidden"], "dtype": "bfloat16"},
            "shared2": {"shape": ["hidden", "inter"], "dtype": "bfloat16"},
        },
        "outputs": {"y": {"shape": ["tokens", "hidden"], "dtype": "bfloat16"}},
        "reference": REFERENCE,
    }


def _problem(tmp_path, hidden: int, inter: int, tokens: int):
    definition = _definition(hidden, inter)
    workload = {
        "uuid": "w",
        "axes": {"tokens": tokens},
        "inputs": {n: {"type": "random"} for n in definition["inputs"]},
    }
    return load_problem(write_problem(tmp_path / f"moe_{hidden}_{inter}_{tokens}", definition, [workload]))


def _analysed_from(problem, stage: int):
    """The workload recorded starting at `stage` (REAL: the whole reference on real inputs)."""
    module, folder = import_reference(problem.definition, "cpu")
    try:
        return analyze_workload(
            problem,
            problem.workloads[0],
            lookup("B200_1500MHz"),
            module,
            make_inputs=inputs_for_analysis,
            plan=RecordingPlan(stage=stage),
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_routing_from_a_router_over_gib_sized_inputs_runs_only_the_router_for_real(tmp_path):
    """Experts' weights of 0.5 GiB (a whole real run is refused) and hidden states above REAL_LIMIT elements (shape
    only): the router's slice runs for real, one matrix product of it, and the analysis has full coverage."""
    tokens, hidden, inter = 4104, 1024, 16384
    [result] = analyze_problem(
        _problem(tmp_path, hidden, inter, tokens), lookup("B200_1500MHz"), make_inputs=inputs_for_analysis
    )
    coverage = result.coverage
    assert (
        coverage.full
        and coverage.execution.startswith("hybrid (")
        and "from a slice run for real" in coverage.execution
    )
    ran = coverage.real_slice
    assert ran is not None
    assert ran.ops["mm"] == 1 and ran.ops["randn"] == 1  # the router's GEMM over the hidden states drawn once
    assert ran.values_for == {"tolist": 1, "nonzero": EXPERTS}
    router_flops = 2 * tokens * hidden * EXPERTS
    assert router_flops <= ran.flops < 1.5 * router_flops
    assert ran.peak_bytes < 64 << 20  # the hidden states and the router's small results, not the experts
    expert_flops = 2 * 2 * hidden * inter  # per token: two matrix products, hidden x inter each
    matrix = result.flops_by_class["matrix"]["bfloat16"]
    assert matrix == router_flops + tokens * (TOPK + 1) * expert_flops  # each token: its experts and the shared one


def test_the_slice_path_counts_what_a_whole_real_run_counts(tmp_path):
    """The same small instance recorded two ways: the whole reference on real inputs, and hybrid values with every
    floating-point tensor above 64 elements shape-only (so its routing needs a slice)."""
    import solbench.sol.hybrid as hybrid
    from solbench.torch_threads import at_most_threads

    problem = _problem(tmp_path, hidden=32, inter=16, tokens=64)
    with at_most_threads(1):  # tiny ops: OpenMP's fork and join would cost more than they do
        real = _analysed_from(problem, REAL)
    assert real.coverage.execution.startswith("real (")
    limit = hybrid.REAL_LIMIT
    hybrid.REAL_LIMIT = 64
    try:
        sliced = _analysed_from(problem, HYBRID)
    finally:
        hybrid.REAL_LIMIT = limit
    assert sliced.coverage.real_slice is not None and sliced.coverage.full
    assert sliced.flops_by_class == real.flops_by_class
    assert (sliced.bytes, sliced.output_bytes, sliced.unfused_bytes) == (
        real.bytes,
        real.output_bytes,
        real.unfused_bytes,
    )


def test_routing_values_from_a_slice_are_those_of_the_program_run_for_real():
    """Under hybrid values with every floating-point factory shape-only, the routing a slice recomputes (through a
    write in place, a one-hot mask, `tolist`, `nonzero`) is exactly what the same code computes for real: each random
    factory is replayed from its generator's state."""
    import torch

    from solbench.sol.hybrid import hybrid_values

    def routing():
        x = torch.randn(64, 32, generator=torch.Generator().manual_seed(1))
        router = torch.randn(EXPERTS, 32, generator=torch.Generator().manual_seed(2))
        scores = torch.sigmoid(x @ router.t())
        group_scores = scores.view(64, GROUPS, -1).amax(dim=-1)
        group_mask = torch.zeros_like(group_scores)
        group_mask.scatter_(1, torch.topk(group_scores, k=TOPK_GROUPS, dim=-1)[1], 1)
        allowed = group_mask.repeat_interleave(EXPERTS // GROUPS, dim=1)
        chosen = torch.topk(scores.masked_fill(allowed == 0, 0.0), k=TOPK, dim=-1)[1]
        mask = torch.nn.functional.one_hot(chosen, num_classes=EXPERTS).permute(2, 1, 0)
        return mask.sum(dim=(1, 2)).tolist(), [torch.where(mask[e])[1].tolist() for e in range(EXPERTS)]

    expected = routing()
    with hybrid_values(float_factory_limit=0, slices=True) as mode:
        found = routing()
    assert mode.slices is not None and mode.slices.cost.ops["randn"] == 2
    assert found == expected


def test_a_slice_never_recomputes_from_a_real_tensor_written_since_it_was_read():
    """A routing bias updated in place after the router read it: recomputing the router's logits from its current
    values would route differently from the run, so the slice says it cannot."""
    import torch

    from solbench.sol.errors import ValuesNeeded
    from solbench.sol.hybrid import hybrid_values

    bias = torch.zeros(EXPERTS)  # real: made before the hybrid run
    with hybrid_values(float_factory_limit=0, slices=True), pytest.raises(ValuesNeeded, match="written in place"):
        x = torch.randn(64, 32)
        router = torch.randn(EXPERTS, 32)
        scores = x @ router.t() + bias
        bias.add_(1.0)  # after the router read it
        torch.topk(scores, k=TOPK, dim=-1)[1].tolist()


def test_a_slice_over_its_budget_is_refused_with_its_size(tmp_path):
    """Hidden states of 40,000 x 8,192 bf16 (625 MiB): the router's slice is above the memory budget, and so are the
    inputs for a whole real run. Nothing is drawn: the slice is sized before it runs."""
    problem = _problem(tmp_path, hidden=8192, inter=64, tokens=40000)
    with pytest.raises(AnalysisError) as refused:
        analyze_problem(problem, lookup("B200_1500MHz"), make_inputs=inputs_for_analysis)
    message = str(refused.value)
    assert "cannot be analysed without running its floating-point work" in message
    assert (
        "tolist needs come from a slice of" in message and "above the slice budget of 20 GFLOP and 256 MiB" in message
    )
