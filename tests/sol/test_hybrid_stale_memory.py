"""A small real tensor written in place with shape-only values is stale through every view of its memory
(sol/hybrid.py `HybridMode.is_stale`): the base a slice of it was written through, and views made before the write,
no longer read as real data, nor stand as values a routing slice recomputes from."""

import types

import pytest
import torch

from solbench.sol.analysis import _run_recorded
from solbench.sol.errors import ValuesNeeded
from solbench.sol.hybrid import HybridMode, NativeSmallOps
from solbench.sol.recorder import total_cost


def _module(source: str) -> types.ModuleType:
    module = types.ModuleType("stale_memory_reference")
    exec(source, module.__dict__)
    return module


THROUGH_A_SLICE = """
import torch

def run(x):
    counts = torch.zeros(4)
    counts[1] = x.sum()  # a value without data written through a view of a small real tensor
    if counts.sum() == 0:  # read through the base
        return x * 2
    return x @ x.T
"""

THROUGH_THE_BASE = """
import torch

def run(x):
    counts = torch.zeros(4)
    tail = counts[2:]  # a view made before the write
    counts.add_(x.sum())
    if tail.sum() == 0:
        return x * 2
    return x @ x.T
"""


@pytest.mark.parametrize("source", [THROUGH_A_SLICE, THROUGH_THE_BASE], ids=["base-of-a-written-slice", "older-view"])
def test_a_branch_on_memory_written_without_values_is_assumed_not_read_from_stale_data(source):
    """Read as real, the zeros say the sum is 0, and the analysis follows the cheap branch that the real run (a
    nonzero sum) never takes, without saying so. Stale, the branch is an assumption the analysis reports (a
    comparison taken as false: here the branch the real run takes)."""
    mode = HybridMode()
    recording = _run_recorded(_module(source), [torch.empty(256, 256, device="meta")], values=mode)
    assert mode.assumed == ["torch.bool scalar"]
    assert total_cost(recording).matrix_flops == {"float32": 2 * 256**3}


def test_the_generator_fast_path_does_not_read_a_view_of_memory_written_without_values():
    with torch.no_grad():
        mode = HybridMode()
        with mode, NativeSmallOps(mode):
            counts = torch.zeros(4)
            counts[1] = torch.empty(64, device="meta").sum()
            assert mode.is_stale(counts)
            assert counts[0:2].is_meta  # through the mode (a shape-only view), not natively of the stale data


def test_a_routing_slice_does_not_recompute_from_memory_written_through_another_view():
    """A twin made before the write holds the data of then; after a write through a slice of the same memory
    those are not its values, and a slice must refuse rather than answer from them."""
    with torch.no_grad():
        mode = HybridMode(slices=True)
        with mode:
            counts = torch.arange(4.0)
            product = torch.mv(torch.empty(3, 4, device="meta"), counts)  # makes `counts`'s twin: today's values
            assert product.is_meta and id(counts) in mode._twins
            counts[1] = torch.empty(64, device="meta").sum()
        assert mode.slices is not None
        with pytest.raises(ValuesNeeded):
            mode.slices.values([mode.fake(counts)], "item")


WRITTEN_WITH_BF16_VALUES = """
import torch

def run(x, w):
    acc = torch.zeros(64, 64)  # small and real
    acc.add_(x[:64, :64].float())  # now holds bf16 values, without data
    return acc @ w.float()
"""


def test_a_real_tensor_written_with_shape_only_values_carries_their_precision():
    """As a real run would carry it: the product of bf16 values is charged at the bf16 rate, not fp32's."""
    x = torch.empty(512, 512, dtype=torch.bfloat16, device="meta")
    w = torch.empty(64, 64, dtype=torch.bfloat16, device="meta")
    recording = _run_recorded(_module(WRITTEN_WITH_BF16_VALUES), [x, w], values=HybridMode())
    assert total_cost(recording).matrix_flops == {"bfloat16": 2 * 64**3}
