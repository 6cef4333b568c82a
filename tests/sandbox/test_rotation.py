"""Timing's input rotation: every timed iteration sees unique content, and the parent can rebuild it exactly."""

import pytest
import torch

from solbench.evaluate.roles import is_scale
from solbench.sandbox.rotation import InputRotation, perturbed_inputs

SEED = 12345


def _bytes(tensor):
    return tensor.view(torch.uint8)


def _fp8(dtype=torch.float8_e4m3fn, n=4096):
    values = torch.randn(n, generator=torch.Generator().manual_seed(0)).to(dtype)
    values[:64] = 0  # zeros must keep their encoding
    return values


def _timed(inputs, flags, iteration):
    rotation = InputRotation([inputs], flags, perturb_seed=SEED)
    rotation.prepare(iteration)
    return rotation.live


@pytest.mark.parametrize("dtype", [torch.float8_e4m3fn, torch.float8_e5m2, torch.float8_e4m3fnuz,
                                   torch.float8_e5m2fnuz])
def test_fp8_data_gets_random_sign_flips_and_nothing_else(dtype):
    data = _fp8(dtype)
    live = _timed([data], [True], 3)[0]
    changed = _bytes(live) ^ _bytes(data)
    assert set(changed.unique().tolist()) == {0, 0x80}
    assert 0.4 < (changed != 0).float().mean() < 0.6
    assert torch.equal(_bytes(live)[:64], _bytes(data)[:64])  # no -0, which is NaN in the fnuz formats
    assert not live.float().isnan().any()


def test_packed_fp4_flips_each_nibble_sign_independently():
    packed = torch.randint(0, 256, (2048,), dtype=torch.uint8, generator=torch.Generator().manual_seed(1))
    data = packed.view(torch.float4_e2m1fn_x2)
    changed = _bytes(_timed([data], [True], 0)[0]) ^ packed
    assert set(changed.unique().tolist()) == {0, 0x08, 0x80, 0x88}
    zero_low, zero_high = (packed & 0x07) == 0, (packed & 0x70) == 0
    assert not (changed[zero_low] & 0x08).any() and not (changed[zero_high] & 0x80).any()


def test_every_iteration_is_unique_and_the_parent_rebuilds_it_bit_exactly():
    inputs = [_fp8(), torch.rand(8), torch.randint(0, 256, (64,), dtype=torch.uint8).view(torch.float4_e2m1fn_x2)]
    flags = [True, False, True]
    rotation = InputRotation([inputs], flags, perturb_seed=SEED)
    seen = set()
    for iteration in range(4):
        rotation.prepare(iteration)
        rebuilt = perturbed_inputs(inputs, iteration, SEED, flags)
        for live, expected in zip(rotation.live, rebuilt):
            assert torch.equal(_bytes(live), _bytes(expected))
        seen.add(bytes(_bytes(rotation.live[0]).tolist()))
    assert len(seen) == 4


def test_scales_e8m0_and_integers_keep_their_bits():
    scale = _fp8()
    e8m0 = torch.full((256,), 3.0).to(torch.float8_e8m0fnu)
    codes = torch.randint(-128, 127, (256,), dtype=torch.int8)
    offsets = torch.arange(8, dtype=torch.int32)
    inputs = [scale, e8m0, codes, offsets]
    live = _timed(inputs, [False, True, True, True], 5)
    for before, after in zip(inputs, live):
        assert torch.equal(_bytes(before), _bytes(after))


def test_wide_floats_are_still_scaled_not_sign_flipped():
    data = torch.rand(1024) + 1
    live = _timed([data], [True], 2)[0]
    ratio = live / data
    assert (ratio >= 0.75).all() and (ratio < 1.25).all() and not torch.equal(live, data)


@pytest.mark.parametrize("flags", [[True], [True, 1], None, [True, True, True]])
def test_flags_must_be_one_bool_per_input(flags):
    with pytest.raises(ValueError, match="sign_flips"):
        InputRotation([[_fp8(), torch.rand(2)]], flags)
    with pytest.raises(ValueError, match="sign_flips"):
        perturbed_inputs([_fp8(), torch.rand(2)], 0, SEED, flags)


@pytest.mark.parametrize("name,scale", [("a_scale", True), ("w_scales", True), ("x_scale_inv", True),
                                        ("q_descale", True), ("a_sf", True), ("b_sf", True), ("a", False),
                                        ("w_blocks", False), ("key_cache", False), ("grad_output", False)])
def test_scales_are_recognised_by_name(name, scale):
    assert is_scale(name) is scale
