"""Workload sweeps shared by recipes: decode and prefill token counts, with odd sizes mixed in.

Sizes are real serving shapes, capped so that every workload of the suite runs through the
evaluator on a 2-core CPU in seconds (the suite is validated and run in CI).
"""

from __future__ import annotations

DECODE_BATCHES = (1, 2, 8, 32, 64)
"""Tokens in a decode step: one per sequence."""
TOKEN_SWEEP = (1, 7, 32, 128, 255, 512, 1024, 2048)
"""Flattened token counts from decode through prefill, including sizes that are not powers of two."""
SMALL_TOKEN_SWEEP = (1, 3, 16, 64, 100, 128, 255, 512)
"""For problems whose weights make each token expensive on a CPU (wide GEMMs)."""


def tokens(values=TOKEN_SWEEP, axis: str = "num_tokens") -> list[dict[str, int]]:
    return [{axis: v} for v in values]


def grid(**axes: tuple[int, ...]) -> list[dict[str, int]]:
    """Workloads that zip the given sequences (all of the same length), not their product."""
    lengths = {len(v) for v in axes.values()}
    if len(lengths) != 1:
        raise ValueError(f"grid: sequences of different lengths {sorted(lengths)}")
    return [dict(zip(axes, values)) for values in zip(*axes.values())]
