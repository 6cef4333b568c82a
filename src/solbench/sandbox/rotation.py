"""Input rotation for timing: a pool of distinct input sets copied into the same live buffers.

Copying (rather than switching buffers) keeps pointers fixed while content changes, so neither a
pointer-keyed nor a stale-content cache can replay an earlier result.
"""

from __future__ import annotations


class InputRotation:
    def __init__(self, pool: list[list]):
        import torch

        self.pool = pool
        self.live = [v.clone() if isinstance(v, torch.Tensor) else v for v in pool[0]]

    def __len__(self) -> int:
        return len(self.pool)

    def prepare(self, index: int) -> None:
        import torch

        for live, pristine in zip(self.live, self.pool[index]):
            if isinstance(live, torch.Tensor):
                live.copy_(pristine)

    def mutated(self, index: int) -> list[int]:
        """Positions of inputs whose live content no longer equals variant `index`."""
        import torch

        return [i for i, (live, pristine) in enumerate(zip(self.live, self.pool[index]))
                if isinstance(live, torch.Tensor) and not torch.equal(live, pristine)]
