"""Input rotation for timing: every timed call sees content no earlier call saw, in the same buffers.

Iteration i copies input set i mod N into the live buffers (pointers stay fixed) and, with a
perturbation seed, multiplies every floating-point input elementwise by factors in [0.75, 1.25)
drawn from (seed, i). No content ever repeats, so a cache keyed by pointer, shape or content
misses; signs, zeros and integer inputs (indices, offsets) are untouched, so inputs stay valid.
The trusted parent rebuilds the same content with `perturbed_inputs` to check captured outputs.
"""

from __future__ import annotations

PERTURBATION = 0.25


def _perturb(tensor, iteration: int, seed: int) -> None:
    import torch

    if not tensor.dtype.is_floating_point or tensor.dtype.itemsize < 2 or tensor.numel() == 0:
        return  # fp8/fp4 bit patterns and integers keep their exact values
    generator = torch.Generator().manual_seed((seed + 7919 * iteration) % (1 << 63))
    factors = torch.rand(tensor.shape, generator=generator).mul_(2 * PERTURBATION).add_(1 - PERTURBATION)
    tensor.copy_((tensor.float() * factors.to(tensor.device)).to(tensor.dtype))


def perturbed_inputs(inputs: list, iteration: int, seed: int) -> list:
    """The content iteration `iteration` of a timed loop sees, from that iteration's input set."""
    import torch

    copies = [v.clone() if isinstance(v, torch.Tensor) else v for v in inputs]
    for index, value in enumerate(copies):
        if isinstance(value, torch.Tensor):
            _perturb(value, iteration, seed + index)
    return copies


class InputRotation:
    def __init__(self, pool: list[list], perturb_seed: int | None = None):
        import torch

        self.pool = pool
        self.perturb_seed = perturb_seed
        self.live = [v.clone() if isinstance(v, torch.Tensor) else v for v in pool[0]]

    def __len__(self) -> int:
        return len(self.pool)

    def prepare(self, iteration: int) -> None:
        """Load set `iteration mod N`; for timed loops (a perturbation seed given) make it unique to `iteration`."""
        import torch

        for index, (live, pristine) in enumerate(zip(self.live, self.pool[iteration % len(self.pool)])):
            if isinstance(live, torch.Tensor):
                live.copy_(pristine)
                if self.perturb_seed is not None:
                    _perturb(live, iteration, self.perturb_seed + index)

    def mutated(self, index: int) -> list[int]:
        """Positions of inputs whose live content no longer equals (unperturbed) variant `index`."""
        import torch

        return [i for i, (live, pristine) in enumerate(zip(self.live, self.pool[index]))
                if isinstance(live, torch.Tensor) and not _same_bits(live, pristine)]


def _same_bits(a, b) -> bool:
    """Bitwise equality: defined for every dtype (packed fp4 has no comparison kernel) and NaN-safe."""
    import torch

    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return torch.equal(a.contiguous().reshape(-1).view(torch.uint8), b.contiguous().reshape(-1).view(torch.uint8))
