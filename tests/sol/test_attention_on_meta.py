"""Scaled-dot-product attention on meta tensors is recorded as the CPU runs it (sol/composites.py): the same ops, the
same FLOPs and bytes, for every case PyTorch's CPU kernel choice tells apart."""

from __future__ import annotations

import types

import pytest
import torch
import torch.nn.functional as F

from solbench.sol.analysis import _run_recorded
from solbench.sol.hybrid import HybridMode

B, H, L, D = 2, 4, 16, 8


def _query(dtype=torch.float32, heads=H, length=L, dim=D):
    return torch.randn(B, heads, length, dim).to(dtype)


CASES = {
    "plain": (lambda: (_query(), _query(), _query()), {}),
    "bfloat16 causal": (
        lambda: (_query(torch.bfloat16), _query(torch.bfloat16), _query(torch.bfloat16)),
        {"is_causal": True},
    ),
    "boolean mask": (lambda: (_query(), _query(), _query()), {"attn_mask": torch.rand(L, L) > 0.5}),
    "additive mask": (lambda: (_query(), _query(), _query()), {"attn_mask": torch.randn(B, 1, L, L)}),
    "mask that requires grad (math path)": (  # a learnt bias: the CPU's fused kernel takes no such mask
        lambda: (_query(), _query(), _query()),
        {"attn_mask": torch.randn(B, 1, L, L).requires_grad_()},
    ),
    "float32 mask, bfloat16 query": (
        lambda: (_query(torch.bfloat16), _query(torch.bfloat16), _query(torch.bfloat16)),
        {"attn_mask": torch.randn(L, L)},
    ),
    "grouped query": (lambda: (_query(), _query(heads=2), _query(heads=2)), {"enable_gqa": True}),
    "scale": (lambda: (_query(), _query(), _query()), {"scale": 0.5}),
    "three dimensions (math path)": (lambda: (_query()[0], _query()[0], _query()[0]), {}),
    "value head size differs (recorded whole)": (lambda: (_query(), _query(), _query(dim=4)), {}),
    "query laid out by token": (lambda: (torch.randn(B, L, H, D).transpose(1, 2), _query(), _query()), {}),
    "query with every other element": (lambda: (_query(dim=2 * D)[..., ::2], _query(), _query()), {}),
    "transposed boolean mask": (lambda: (_query(), _query(), _query()), {"attn_mask": (torch.rand(L, L) > 0.5).t()}),
}


def _recorded(call, tensors, kwargs, on_meta: bool):
    module = types.SimpleNamespace(run=lambda q, k, v: call(q, k, v, **kwargs))
    if not on_meta:
        return _run_recorded(module, list(tensors))
    kwargs = {k: _on_meta(v) if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
    return _run_recorded(module, [_on_meta(t) for t in tensors], values=HybridMode(shape_only=True))


def _on_meta(tensor):
    """With `tensor`'s strides, also where they are not dense (`to` would make those contiguous)."""
    made = torch.empty_strided(tensor.shape, tensor.stride(), dtype=tensor.dtype, device="meta")
    return made.requires_grad_(tensor.requires_grad)


@pytest.mark.parametrize("call", [F.scaled_dot_product_attention, torch.ops.aten.scaled_dot_product_attention.default])
@pytest.mark.parametrize("case", CASES)
def test_attention_on_meta_tensors_is_recorded_as_on_the_cpu(case, call):
    make, kwargs = CASES[case]
    torch.manual_seed(0)
    tensors = make()
    on_cpu = _recorded(call, tensors, kwargs, on_meta=False)
    on_meta = _recorded(call, tensors, kwargs, on_meta=True)
    assert [op.name for op in on_meta.ops] == [op.name for op in on_cpu.ops]
    assert on_meta.totals() == on_cpu.totals()


def test_a_stand_in_holds_at_most_two_rows_whatever_the_last_stride():
    from solbench.sol.composites import _stand_in

    mask = torch.empty(1 << 20, 1 << 20, device="meta").t()  # last stride 1 Mi: a 4 TiB stand-in without the cap
    assert mask.stride(-1) == 1 << 20
    assert _stand_in(mask).untyped_storage().nbytes() <= 2 * (1 << 20) * 4


def test_the_cpu_picks_its_fused_kernel_where_it_can():
    """The cases above would pass if neither side used the fused kernel: they do, where PyTorch can."""
    torch.manual_seed(0)
    fused = "_scaled_dot_product_flash_attention_for_cpu"
    for case, expected in [("plain", True), ("grouped query", True), ("three dimensions (math path)", False)]:
        make, kwargs = CASES[case]
        names = [op.name for op in _recorded(F.scaled_dot_product_attention, make(), kwargs, on_meta=True).ops]
        assert (fused in names) is expected, (case, names)


def test_a_query_laid_out_head_dimension_outermost_needs_no_memory_to_choose():
    """The stand-ins the CPU's choice reads span one row: a shape-only query whose last dimension is its outermost
    in memory (stride 2**30 here) would otherwise need hundreds of GB for that row."""
    query = torch.empty(D, 1, 1, 2**30, device="meta").permute(1, 2, 3, 0)  # (1, 1, 2**30, D), last stride 2**30
    key = torch.empty(1, 1, L, D, device="meta")
    module = types.SimpleNamespace(run=lambda q, k, v: F.scaled_dot_product_attention(q, k, v))
    recording = _run_recorded(module, [query, key, key.clone()], values=HybridMode(shape_only=True))
    assert "_scaled_dot_product_flash_attention_for_cpu" not in [op.name for op in recording.ops]  # stride != 1


@pytest.mark.parametrize("mask_dtype", [torch.float16, torch.int32])
def test_a_mask_the_cpu_rejects_is_rejected_on_meta_tensors(mask_dtype):
    """PyTorch validates the mask's dtype (bool, float32 or the query's) before choosing a kernel: no fused kernel
    on meta tensors for a call that raises on the CPU."""
    tensors = (_query(), _query(), _query())
    kwargs = {"attn_mask": torch.zeros(L, L, dtype=mask_dtype)}
    for on_meta in (False, True):
        with pytest.raises(RuntimeError, match="attn_mask dtype"):
            _recorded(F.scaled_dot_product_attention, tensors, kwargs, on_meta=on_meta)
