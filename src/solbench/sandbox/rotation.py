"""Input rotation for timing: every timed call sees content no earlier call saw, in the same buffers.

Iteration i copies input set i mod N into the live buffers (pointers stay fixed) and, with a
perturbation seed, makes the content unique to (seed, i): inputs of 16 bits or more are multiplied
elementwise by factors in [0.75, 1.25); fp8 and packed fp4 inputs the parent marks as data (not
scales) get the sign of a random half of their nonzero elements flipped, bit-exactly. No content
ever repeats, so a cache keyed by pointer, shape or content misses. Zeros, scales, e8m0 (no sign
bit) and integer inputs (indices, offsets, int8 codes) keep their values, so inputs stay valid.
The trusted parent rebuilds the same content with `perturbed_inputs` to check captured outputs.
"""

from __future__ import annotations

from solbench.spec.dtypes import same_bits

PERTURBATION = 0.25

# Per byte of each sign-flippable format: (sign bit, the magnitude bits that bit belongs to). Zeros keep
# their encoding, as the fnuz formats have no -0 (0x80 is their NaN). float8_e8m0fnu has no sign bit.
_SIGN_FIELDS = {
    "float8_e4m3fn": ((0x80, 0x7F),), "float8_e5m2": ((0x80, 0x7F),),
    "float8_e4m3fnuz": ((0x80, 0x7F),), "float8_e5m2fnuz": ((0x80, 0x7F),),
    "float4_e2m1fn_x2": ((0x08, 0x07), (0x80, 0x70)),  # two values per byte, one sign bit each
}


def _generator(iteration: int, seed: int):
    import torch

    return torch.Generator().manual_seed((seed + 7919 * iteration) % (1 << 63))


def _perturb(tensor, iteration: int, seed: int, flip_signs: bool) -> None:
    import torch

    if tensor.numel() == 0:
        return
    fields = _SIGN_FIELDS.get(str(tensor.dtype).removeprefix("torch."))
    if fields is not None:
        if flip_signs:
            _flip_signs(tensor.view(torch.uint8), fields, _generator(iteration, seed))
        return
    if not tensor.dtype.is_floating_point or tensor.dtype.itemsize < 2:
        return  # integers and e8m0 scales keep their exact values
    factors = torch.rand(tensor.shape, generator=_generator(iteration, seed))
    factors.mul_(2 * PERTURBATION).add_(1 - PERTURBATION)
    tensor.copy_((tensor.float() * factors.to(tensor.device)).to(tensor.dtype))


def _flip_signs(bits, fields: tuple[tuple[int, int], ...], generator) -> None:
    """XOR a random subset of the sign bits of nonzero values into `bits` (a uint8 view)."""
    import torch

    random = torch.randint(0, 256, bits.shape, dtype=torch.uint8, generator=generator).to(bits.device)
    signs = torch.zeros_like(bits)
    for sign, magnitude in fields:
        signs |= ((bits & magnitude) != 0).to(torch.uint8).mul_(sign)
    bits.bitwise_xor_(random & signs)


def _checked_flags(sign_flips, count: int) -> list[bool]:
    if not (isinstance(sign_flips, (list, tuple)) and len(sign_flips) == count
            and all(isinstance(f, bool) for f in sign_flips)):
        raise ValueError(f"sign_flips must be one bool per input ({count}), got {sign_flips!r}")
    return list(sign_flips)


def perturbed_inputs(inputs: list, iteration: int, seed: int, sign_flips: list[bool]) -> list:
    """The content iteration `iteration` of a timed loop sees, from that iteration's input set.

    `sign_flips[i]`: input i is fp8/fp4 data whose signs may be flipped (the parent decides by name).
    """
    import torch

    flags = _checked_flags(sign_flips, len(inputs))
    copies = [v.clone() if isinstance(v, torch.Tensor) else v for v in inputs]
    for index, value in enumerate(copies):
        if isinstance(value, torch.Tensor):
            _perturb(value, iteration, seed + index, flags[index])
    return copies


class InputRotation:
    def __init__(self, pool: list[list], sign_flips: list[bool], perturb_seed: int | None = None):
        import torch

        self.pool = pool
        self.sign_flips = _checked_flags(sign_flips, len(pool[0]))
        self.perturb_seed = perturb_seed
        self.live = [v.clone() if isinstance(v, torch.Tensor) else v for v in pool[0]]
        self.storages = frozenset(v.untyped_storage().data_ptr() for v in self.live
                                  if isinstance(v, torch.Tensor) and v.numel())
        """Data pointers of the live buffers' storages: fixed, since every iteration copies into the same buffers."""

    def __len__(self) -> int:
        return len(self.pool)

    def prepare(self, iteration: int) -> None:
        """Load set `iteration mod N`; for timed loops (a perturbation seed given) make it unique to `iteration`."""
        import torch

        for index, (live, pristine) in enumerate(zip(self.live, self.pool[iteration % len(self.pool)])):
            if isinstance(live, torch.Tensor):
                live.copy_(pristine)
                if self.perturb_seed is not None:
                    _perturb(live, iteration, self.perturb_seed + index, self.sign_flips[index])

    def mutated(self, index: int) -> list[int]:
        """Positions of inputs whose live content no longer equals (unperturbed) variant `index`."""
        import torch

        return [i for i, (live, pristine) in enumerate(zip(self.live, self.pool[index]))
                if isinstance(live, torch.Tensor) and not same_bits(live, pristine)]

