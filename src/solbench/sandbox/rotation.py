"""Input rotation for timing: every timed call sees content and addresses no earlier call saw.

Iteration i copies input set i mod N into the live buffers, which every correctness or timed call
finds at new addresses (addresses.py), and, with a perturbation seed, makes the content unique to
(seed, i). The parent names one perturbation per
input (it knows from the names which inputs are data, see evaluation/roles.py); all but `multiply`
are bit-exact and map the format's domain onto itself, so every variant is a valid input:

- `multiply`: floats of 16 bits or more, times elementwise factors in [0.75, 1.25);
- `flip_signs`: fp8 / packed fp4 data, the sign of a random half of the nonzero values flipped;
- `negate`: int8 codes, a random half negated (0 and -128, which has no positive twin, stay);
- `complement_nibbles`: packed 4-bit codes in any integer word, a random half of the nibbles q
  replaced by 15 - q (bitwise NOT of the nibble: unsigned 0..15 and signed -8..7 both stay in range);
- `keep`: everything else (indices, offsets, lengths, zero points, fp8 scales, e8m0) keeps its bits.

No content ever repeats, so a cache keyed by pointer, shape or content misses. The trusted parent
rebuilds the same content with `perturbed_inputs` to check captured outputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from solbench.sandbox.addresses import ShiftingSlab
from solbench.spec.dtypes import same_bits

PERTURBATION = 0.25

Perturbation = Literal["keep", "multiply", "flip_signs", "negate", "complement_nibbles"]
PERTURBATIONS: tuple[Perturbation, ...] = ("keep", "multiply", "flip_signs", "negate", "complement_nibbles")

# Per byte of each sign-flippable format: (sign bit, the magnitude bits that bit belongs to). Zeros keep
# their encoding, as the fnuz formats have no -0 (0x80 is their NaN). float8_e8m0fnu has no sign bit.
_SIGN_FIELDS = {
    "float8_e4m3fn": ((0x80, 0x7F),),
    "float8_e5m2": ((0x80, 0x7F),),
    "float8_e4m3fnuz": ((0x80, 0x7F),),
    "float8_e5m2fnuz": ((0x80, 0x7F),),
    "float4_e2m1fn_x2": ((0x08, 0x07), (0x80, 0x70)),  # two values per byte, one sign bit each
}
_INTEGER_TYPES = ("int8", "int16", "int32", "int64")


def has_sign_bits(torch_dtype_name: str) -> bool:
    """Whether `flip_signs` applies to this torch dtype (fp8 and packed fp4, not e8m0)."""
    return torch_dtype_name in _SIGN_FIELDS


def applies_to(perturbation: str, torch_dtype_name: str, floating: bool, itemsize: int) -> bool:
    """Whether `perturbation` is defined for tensors of this dtype."""
    if perturbation == "multiply":
        return floating and itemsize >= 2
    if perturbation == "flip_signs":
        return has_sign_bits(torch_dtype_name)
    if perturbation == "negate":
        return torch_dtype_name == "int8"
    if perturbation == "complement_nibbles":
        return torch_dtype_name in _INTEGER_TYPES
    return perturbation == "keep"


def _generator(iteration: int, seed: int):
    import torch

    return torch.Generator().manual_seed((seed + 7919 * iteration) % (1 << 63))


def _perturb(tensor, iteration: int, seed: int, perturbation: str) -> None:
    import torch

    if perturbation == "keep" or tensor.numel() == 0:
        return
    generator = _generator(iteration, seed)
    if perturbation == "multiply":
        factors = torch.rand(tensor.shape, generator=generator)
        factors.mul_(2 * PERTURBATION).add_(1 - PERTURBATION)
        tensor.copy_((tensor.float() * factors.to(tensor.device)).to(tensor.dtype))
    elif perturbation == "flip_signs":
        _flip_signs(tensor.view(torch.uint8), _SIGN_FIELDS[str(tensor.dtype).removeprefix("torch.")], generator)
    elif perturbation == "negate":
        _negate_codes(tensor, generator)
    elif perturbation == "complement_nibbles":
        _complement_nibbles(tensor, generator)


def _flip_signs(bits, fields: tuple[tuple[int, int], ...], generator) -> None:
    """XOR a random subset of the sign bits of nonzero values into `bits` (a uint8 view)."""
    import torch

    random = torch.randint(0, 256, bits.shape, dtype=torch.uint8, generator=generator).to(bits.device)
    signs = torch.zeros_like(bits)
    for sign, magnitude in fields:
        signs |= ((bits & magnitude) != 0).to(torch.uint8).mul_(sign)
    bits.bitwise_xor_(random & signs)


def _negate_codes(codes, generator) -> None:
    """Negate a random half of int8 `codes`; -128 stays (its negation would wrap to itself anyway)."""
    import torch

    chosen = torch.randint(0, 2, codes.shape, dtype=torch.uint8, generator=generator).to(codes.device).bool()
    chosen &= codes != -128
    codes.copy_(torch.where(chosen, codes.neg(), codes))


def _complement_nibbles(words, generator) -> None:
    """Replace a random half of the 4-bit fields q of integer `words` by 15 - q, i.e. XOR 0xF per nibble.

    Works on the bytes, so the word size and the order of nibbles inside a word do not matter."""
    import torch

    bits = words.contiguous().reshape(-1).view(torch.uint8)
    random = torch.randint(0, 256, bits.shape, dtype=torch.uint8, generator=generator).to(bits.device)
    masks = (random & 0x11).mul_(0x0F)  # bit 0 picks the low nibble (0x0F), bit 4 the high one (0xF0)
    words.copy_(bits.bitwise_xor(masks).view(words.dtype).reshape(words.shape))


def _checked_perturbations(perturbations, inputs: list) -> list[str]:
    """The parent's per-input perturbations, refused unless each is known and defined for its input's dtype."""
    import torch

    if not (
        isinstance(perturbations, (list, tuple))
        and len(perturbations) == len(inputs)
        and all(isinstance(p, str) and p in PERTURBATIONS for p in perturbations)
    ):
        raise ValueError(
            f"perturbations must be one of {PERTURBATIONS} per input ({len(inputs)}), got {perturbations!r}"
        )
    for index, (perturbation, value) in enumerate(zip(perturbations, inputs)):
        if isinstance(value, torch.Tensor):
            name = str(value.dtype).removeprefix("torch.")
            if not applies_to(perturbation, name, value.dtype.is_floating_point, value.dtype.itemsize):
                raise ValueError(f"perturbations[{index}]: {perturbation!r} is not defined for a {name} input")
    return list(perturbations)


def perturbed_inputs(inputs: list, iteration: int, seed: int, perturbations: Sequence[Perturbation]) -> list:
    """The content iteration `iteration` of a timed loop sees, from that iteration's input set.

    `perturbations[i]`: what happens to input i (one of PERTURBATIONS; the parent decides by name and dtype).
    """
    import torch

    kinds = _checked_perturbations(perturbations, inputs)
    copies = [v.clone() if isinstance(v, torch.Tensor) else v for v in inputs]
    for index, value in enumerate(copies):
        if isinstance(value, torch.Tensor):
            _perturb(value, iteration, seed + index, kinds[index])
    return copies


class InputRotation:
    def __init__(self, pool: list[list], perturbations: Sequence[Perturbation], perturb_seed: int | None = None):
        self.pool = pool
        self.perturbations = _checked_perturbations(perturbations, pool[0])
        self.perturb_seed = perturb_seed
        self.slab = ShiftingSlab(pool[0])
        self.live = self.slab.warmup()
        """The inputs the next call gets: views that `prepare` moves to new addresses."""
        for live, pristine in zip(self.live, pool[0]):
            if live is not pristine:
                live.copy_(pristine)

    def __len__(self) -> int:
        return len(self.pool)

    @property
    def storages(self) -> frozenset[int]:
        """Data pointers of the live buffers' storages: a returned tensor with one of them is a view of an input."""
        return self.slab.storages

    def reserve(self, calls: int) -> None:
        """Room for `calls` more calls at fresh addresses without allocating between them."""
        self.slab.reserve(calls)

    def prepare(self, iteration: int, seed: int | None = None) -> None:
        """Load set `iteration mod N` at fresh addresses (negative iterations, warm-up calls, at recycled ones); for
        timed loops make the content unique to `iteration` and its perturbation `seed` (drawn for this iteration
        alone: sandbox/measure.py), or to the rotation's `perturb_seed` where none is given."""
        import torch

        seed = self.perturb_seed if seed is None else seed
        self.live = self.slab.warmup() if iteration < 0 else self.slab.fresh()
        for index, (live, pristine) in enumerate(zip(self.live, self.pool[iteration % len(self.pool)])):
            if isinstance(live, torch.Tensor):
                live.copy_(pristine)
                if seed is not None:
                    _perturb(live, iteration, seed + index, self.perturbations[index])

    def mutated(self, index: int) -> list[int]:
        """Positions of inputs whose live content no longer equals (unperturbed) variant `index`."""
        import torch

        return [
            i
            for i, (live, pristine) in enumerate(zip(self.live, self.pool[index]))
            if isinstance(live, torch.Tensor) and not same_bits(live, pristine)
        ]
