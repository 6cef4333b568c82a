"""Quant, FIB and DLRM problems: two workload tiers each, forward-only Quant and FIB, and appends that return the
slots they write (issue 13 items 2-4)."""

import pytest

from suite_recipes import fib
from suite_recipes.sweeps import with_gpu_tier

from .suite_folders import made_by

GB = 1e9


@pytest.fixture(scope="module")
def drafts():
    """The problems the quant, fib and dlrm recipes generate or first made."""
    return made_by("quant", "fib", "dlrm")


REAL_RUN_SIZED = {"llama-3-1-70b_chain_speculative_sampling_v128256"}
"""Problems whose T_SOL needs a real run (the work depends on values): their GPU tier stops at 256 MiB of inputs."""


def _bytes(draft, axes):
    from solbench.spec.definition import Definition
    from solbench.spec.problem import Problem

    definition = Definition.model_validate(draft.definition())
    return Problem(root=None, definition=definition, workloads=()).tensor_bytes(axes)


@pytest.mark.slow
def test_every_problem_has_a_gpu_tier_at_scale_and_keeps_its_small_workloads_for_the_cpu(drafts):
    large = 0
    for d in drafts:
        assert len(d.workloads) >= 16 and len(d.cpu_workloads) >= 8, d.name
        for tier in (d.workloads, d.cpu_workloads):
            assert len({tuple(sorted(w.items())) for w in tier}) == len(tier), d.name
        biggest = max(_bytes(d, w) for w in d.workloads)
        assert biggest < 16 * GB, d.name
        if d.name not in REAL_RUN_SIZED:
            assert biggest > 10 * max(_bytes(d, w) for w in d.cpu_workloads) or biggest >= 0.4 * GB, d.name
        large += biggest >= 0.4 * GB
    assert large >= 0.85 * len(drafts)  # routers and the bottom MLP are small at any real batch


def test_quant_and_fib_hold_forward_problems_only(drafts):
    for d in drafts:
        if d.backward:
            assert d.set not in ("Quant", "FIB"), d.name
    assert {d.set for d in drafts if d.backward} == {"L1", "DLRM"}


def test_with_gpu_tier_refuses_few_repeated_or_differently_named_workloads():
    draft = fib.softmax_topk(fib.MIXTRAL, "x_router", [1, 2, 3, 4, 5, 6, 7, 8])
    with pytest.raises(ValueError, match="at least 16"):
        with_gpu_tier(draft, [{"num_tokens": t} for t in range(1, 9)])
    with pytest.raises(ValueError, match="duplicate"):
        with_gpu_tier(draft, [{"num_tokens": 1}] * 16)
    with pytest.raises(ValueError, match="differ"):
        with_gpu_tier(draft, [{"tokens": t} for t in range(16)])
    tiered = with_gpu_tier(draft, [{"num_tokens": 2**i} for i in range(16)])
    # The CPU tier keeps the recipe's sizes, those the GPU tier also has included (constraints stay true).
    assert tiered.cpu_workloads == draft.workloads and len(tiered.workloads) == 16


def _module(problem):
    from solbench.evaluation.reference import ReferenceProgram
    from solbench.spec.problem import load_problem

    return ReferenceProgram(load_problem(problem.folder, tier="cpu").definition, "cpu").module


@pytest.mark.slow
def test_paged_append_returns_the_written_slots_that_rebuild_the_whole_cache_update(drafts):
    import torch

    draft = next(d for d in drafts if d.name.startswith("qwen2-5-7b_append_paged_kv_cache"))
    assert set(draft.outputs) == {"slot_indices", "k_rows", "v_rows"}
    assert not {"k_cache", "v_cache"} & set(draft.inputs)
    module = _module(draft)
    torch.manual_seed(0)
    axes = {
        "batch_size": 3,
        "nnz": 40,
        "num_kv_indices": 12,
        "num_pages": 20,
        "num_kv_heads": 4,
        "head_dim": 128,
        "page_size": 16,
    }
    x = module.make_inputs(axes, "cpu")
    slots, k_rows, v_rows = module.run(
        x["append_key"], x["append_value"], x["batch_indices"], x["positions"], x["kv_indices"], x["kv_indptr"]
    )
    # The whole-cache append, written independently: token by token into a [pages, 16, H, D] cache.
    cache = torch.zeros(20, 16, 4, 128, dtype=torch.bfloat16)
    for i in range(40):
        b, pos = int(x["batch_indices"][i]), int(x["positions"][i])
        page = int(x["kv_indices"][int(x["kv_indptr"][b]) + pos // 16])
        cache[page, pos % 16] = x["append_key"][i]
    rebuilt = torch.zeros_like(cache).view(-1, 4, 128)
    rebuilt[slots] = k_rows
    assert torch.equal(rebuilt.view_as(cache), cache)
    assert len(set(slots.tolist())) == 40 and torch.equal(v_rows, x["append_value"])
