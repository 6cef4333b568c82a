"""Timing's input rotation: every timed iteration sees unique content, and the parent can rebuild it exactly."""

import pytest
import torch

from solbench.evaluation.roles import is_scale
from solbench.sandbox.rotation import InputRotation, perturbed_inputs

SEED = 12345


def _bytes(tensor):
    return tensor.view(torch.uint8)


def _fp8(dtype=torch.float8_e4m3fn, n=4096):
    values = torch.randn(n, generator=torch.Generator().manual_seed(0)).to(dtype)
    values[:64] = 0  # zeros must keep their encoding
    return values


def _timed(inputs, perturbations, iteration):
    rotation = InputRotation([inputs], perturbations, perturb_seed=SEED)
    rotation.prepare(iteration)
    return rotation.live


@pytest.mark.parametrize(
    "dtype", [torch.float8_e4m3fn, torch.float8_e5m2, torch.float8_e4m3fnuz, torch.float8_e5m2fnuz]
)
def test_fp8_data_gets_random_sign_flips_and_nothing_else(dtype):
    data = _fp8(dtype)
    live = _timed([data], ["flip_signs"], 3)[0]
    changed = _bytes(live) ^ _bytes(data)
    assert set(changed.unique().tolist()) == {0, 0x80}
    assert 0.4 < (changed != 0).float().mean() < 0.6
    assert torch.equal(_bytes(live)[:64], _bytes(data)[:64])  # no -0, which is NaN in the fnuz formats
    assert not live.float().isnan().any()


def test_packed_fp4_flips_each_nibble_sign_independently():
    packed = torch.randint(0, 256, (2048,), dtype=torch.uint8, generator=torch.Generator().manual_seed(1))
    data = packed.view(torch.float4_e2m1fn_x2)
    changed = _bytes(_timed([data], ["flip_signs"], 0)[0]) ^ packed
    assert set(changed.unique().tolist()) == {0, 0x08, 0x80, 0x88}
    zero_low, zero_high = (packed & 0x07) == 0, (packed & 0x70) == 0
    assert not (changed[zero_low] & 0x08).any() and not (changed[zero_high] & 0x80).any()


def test_every_iteration_is_unique_and_the_parent_rebuilds_it_bit_exactly():
    inputs = [_fp8(), torch.rand(8), torch.randint(0, 256, (64,), dtype=torch.uint8).view(torch.float4_e2m1fn_x2)]
    inputs += [
        torch.randint(-128, 128, (64,), dtype=torch.int8),
        torch.randint(-(2**31), 2**31 - 1, (8, 8), dtype=torch.int32),
    ]
    kinds = ["flip_signs", "multiply", "flip_signs", "negate", "complement_nibbles"]
    rotation = InputRotation([inputs], kinds, perturb_seed=SEED)
    seen = set()
    for iteration in range(4):
        rotation.prepare(iteration)
        rebuilt = perturbed_inputs(inputs, iteration, SEED, kinds)
        for live, expected in zip(rotation.live, rebuilt):
            assert torch.equal(_bytes(live), _bytes(expected))
        seen.add(tuple(bytes(_bytes(live.reshape(-1)).tolist()) for live in rotation.live))
    assert all(len({variant[position] for variant in seen}) == 4 for position in range(len(inputs)))


def test_kept_inputs_keep_their_bits():
    scale = _fp8()
    e8m0 = torch.full((256,), 3.0).to(torch.float8_e8m0fnu)
    codes = torch.randint(-128, 127, (256,), dtype=torch.int8)
    offsets = torch.arange(8, dtype=torch.int32)
    inputs = [scale, e8m0, codes, offsets, torch.rand(8)]
    live = _timed(inputs, ["keep"] * 5, 5)
    for before, after in zip(inputs, live):
        assert torch.equal(_bytes(before), _bytes(after))


def test_int8_codes_negate_a_random_half_and_stay_in_range():
    codes = torch.arange(-128, 128, dtype=torch.int8).repeat(16)
    live = _timed([codes], ["negate"], 4)[0]
    negated = live != codes
    assert torch.equal(live[negated], -codes[negated])
    assert not negated[(codes == 0) | (codes == -128)].any()  # no positive twin for -128: it stays
    assert 0.4 < negated.float().mean() < 0.6
    symmetric = codes.clamp(-127, 127)  # symmetric quantization's range is kept
    assert _timed([symmetric], ["negate"], 4)[0].min() >= -127


def test_packed_int4_complements_a_random_half_of_the_nibbles():
    words = torch.randint(-(2**31), 2**31 - 1, (512, 8), dtype=torch.int32, generator=torch.Generator().manual_seed(2))
    live = _timed([words], ["complement_nibbles"], 1)[0]
    shifts = torch.arange(0, 32, 4, dtype=torch.int32)
    nibbles, after = ((words.unsqueeze(-1) >> shifts) & 15), ((live.unsqueeze(-1) >> shifts) & 15)
    changed = nibbles != after
    assert torch.equal(after[changed], 15 - nibbles[changed])  # q -> 15 - q, in 0..15 like any nibble
    assert 0.45 < changed.float().mean() < 0.55
    assert changed.reshape(-1, 8).float().mean(0).min() > 0.4  # every nibble position, the sign nibble too


def test_non_contiguous_words_are_complemented_in_place():
    words = torch.randint(0, 2**31 - 1, (64, 32), dtype=torch.int32).t()
    live = _timed([words], ["complement_nibbles"], 2)[0]
    rebuilt = perturbed_inputs([words], 2, SEED, ["complement_nibbles"])[0]
    assert torch.equal(live, rebuilt) and not torch.equal(live, words)
    assert set(((live ^ words).reshape(-1, 1) >> torch.arange(0, 32, 4)).bitwise_and(15).unique().tolist()) <= {0, 15}


def test_wide_floats_are_still_scaled_not_sign_flipped():
    data = torch.rand(1024) + 1
    live = _timed([data], ["multiply"], 2)[0]
    ratio = live / data
    assert (ratio >= 0.75).all() and (ratio < 1.25).all() and not torch.equal(live, data)


@pytest.mark.parametrize(
    "perturbations", [["flip_signs"], ["flip_signs", True], None, ["flip_signs"] * 3, ["flip_signs", "shuffle"]]
)
def test_perturbations_must_be_one_known_kind_per_input(perturbations):
    with pytest.raises(ValueError, match="perturbations"):
        InputRotation([[_fp8(), torch.rand(2)]], perturbations)
    with pytest.raises(ValueError, match="perturbations"):
        perturbed_inputs([_fp8(), torch.rand(2)], 0, SEED, perturbations)


@pytest.mark.parametrize(
    "value,perturbation",
    [
        (torch.rand(2), "negate"),
        (torch.rand(2), "flip_signs"),
        (torch.zeros(2, dtype=torch.int32), "negate"),
        (torch.zeros(2, dtype=torch.int8), "multiply"),
        (torch.full((2,), 1.0).to(torch.float8_e8m0fnu), "flip_signs"),
        (_fp8(), "complement_nibbles"),
        (_fp8(), "multiply"),
    ],
)
def test_a_perturbation_the_dtype_has_no_meaning_for_is_refused(value, perturbation):
    with pytest.raises(ValueError, match=r"perturbations\[0\]: .* is not defined for"):
        InputRotation([[value]], [perturbation])


@pytest.mark.parametrize(
    "name,scale",
    [
        ("a_scale", True),
        ("w_scales", True),
        ("x_scale_inv", True),
        ("q_descale", True),
        ("a_sf", True),
        ("b_sf", True),
        ("a", False),
        ("w_blocks", False),
        ("key_cache", False),
        ("grad_output", False),
    ],
)
def test_scales_are_recognised_by_name(name, scale):
    assert is_scale(name) is scale
