"""Fresh addresses: every correctness or timed call finds its inputs and DPS buffers where no earlier call did."""

from __future__ import annotations

import pytest
import torch

from solbench.guard.runtime import GuardViolation
from solbench.sandbox.addresses import FRESH_SLOTS, SHIFT, WARMUP_SLOTS, ReturnedStorages, ShiftingSlab
from solbench.sandbox.rotation import InputRotation
from solbench.spec.dtypes import same_bits


def _pointers(views) -> tuple[int, ...]:
    return tuple(v.data_ptr() for v in views if isinstance(v, torch.Tensor))


def test_no_fresh_placement_repeats_an_address_even_past_a_slab_and_none_is_a_warm_up_one():
    templates = [torch.zeros(3, 5), torch.zeros(7, dtype=torch.int64), 4, torch.zeros(2, 4).t()]
    slab = ShiftingSlab(templates, fresh_slots=16)
    warmups = {p for _ in range(3 * WARMUP_SLOTS) for p in _pointers(slab.warmup())}
    assert len(warmups) == WARMUP_SLOTS * 3  # the warm-up slots cycle: three tensors in eight slots
    seen: set[int] = set()
    for _ in range(40):  # 16 in the first slab, the rest in the next
        views = slab.fresh()
        pointers = _pointers(views)
        assert not seen & set(pointers) and not warmups & set(pointers)
        seen |= set(pointers)
        assert all(p % SHIFT == 0 for p in pointers)
        assert views[2] == 4
        assert [(v.shape, v.stride(), v.dtype) for v in (views[0], views[1], views[3])] == [
            (t.shape, t.clone().stride(), t.dtype) for t in (templates[0], templates[1], templates[3])
        ]
    assert len(slab.storages) == 2


def test_reserve_gives_a_timed_loop_one_slab_so_nothing_is_allocated_between_its_calls():
    slab = ShiftingSlab([torch.zeros(10)], fresh_slots=8)
    slab.reserve(100)
    storages = slab.storages
    for _ in range(100):
        slab.fresh()
    assert slab.storages == storages
    slab.reserve(FRESH_SLOTS)
    assert len(slab.storages) == 3


@pytest.mark.parametrize(
    "template",
    [
        torch.zeros(5, dtype=torch.bool),
        torch.zeros(6, dtype=torch.uint8).view(torch.float8_e4m3fn),
        torch.zeros(4, dtype=torch.uint8).view(torch.float4_e2m1fn_x2),
        torch.zeros(3, 1).expand(3, 4),  # overlapping strides: laid out as a copy would be, densely
        torch.zeros(0, 3),
        torch.tensor(2.5),
    ],
    ids=["bool", "fp8", "fp4x2", "expanded", "empty", "scalar"],
)
def test_every_kind_of_input_can_be_placed_and_loaded(template):
    rotation = InputRotation([[template]], ["keep"])
    rotation.prepare(0)
    (live,) = rotation.live
    assert live.shape == template.shape and live.dtype == template.dtype
    assert same_bits(live, template)
    assert rotation.mutated(0) == []


def test_rotation_moves_the_inputs_on_every_call_and_loads_each_variants_content():
    pool = [[torch.full((64,), float(v)), torch.arange(8) + v] for v in range(3)]
    rotation = InputRotation(pool, ["multiply", "keep"])
    seen: set[tuple[int, ...]] = set()
    for iteration in range(12):
        rotation.prepare(iteration)
        pointers = _pointers(rotation.live)
        assert pointers not in seen
        seen.add(pointers)
        assert all(torch.equal(a, b) for a, b in zip(rotation.live, pool[iteration % 3]))
        assert rotation.live[0].untyped_storage().data_ptr() in rotation.storages


def _output(value: float) -> torch.Tensor:
    return torch.full((16,), value)


def test_an_output_returned_again_is_refused_while_fresh_ones_and_reused_freed_memory_pass():
    returned = ReturnedStorages()
    for _ in range(5):  # honest: a new tensor every call, memory the allocator may reuse once freed
        returned.check([_output(1.0)])
    kept = _output(2.0)
    returned.check([kept])
    returned.check([_output(3.0)])
    with pytest.raises(GuardViolation) as refused:
        returned.check([kept])  # two calls later, still alive because the solution kept it
    assert refused.value.rule == "output_replay"


def test_a_new_view_of_the_last_calls_output_is_refused():
    returned = ReturnedStorages()
    workspace = torch.zeros(32)
    returned.check([workspace[:16].clone()])
    first = workspace[16:]
    returned.check([first])
    del first  # only the solution's workspace keeps that memory; the check holds the last call's outputs
    with pytest.raises(GuardViolation, match="earlier call"):
        returned.check([workspace[16:].view(4, 4)])


def test_buffers_kept_and_returned_in_turn_are_refused_through_any_view():
    """Two kept buffers handed back alternately, as new views each time: the second return of either is refused."""
    returned = ReturnedStorages()
    first, second = torch.zeros(16), torch.zeros(16)
    returned.check([first.view(4, 4)])
    returned.check([second.view(4, 4)])
    with pytest.raises(GuardViolation, match="earlier call"):
        returned.check([first[:8]])
