"""The shared GPU-tier sweeps: sizes, byte targeting and the move of recipe workloads to the CPU tier."""

import pytest

from solbench.suite.draft import ModelRef, ProblemDraft
from suite_recipes import sweeps

_MODEL = ModelRef("Test", None, "language", {})


def _draft(width: int = 4096, workloads=None) -> ProblemDraft:
    """One bf16 input and one bf16 output of num_tokens x width: 4 * width bytes per token."""
    return ProblemDraft(
        set="L1",
        name="test_op",
        op_type="x",
        description="d",
        model=_MODEL,
        axes={"num_tokens": {"type": "var"}, "width": {"type": "const", "value": width}},
        inputs={"x": {"shape": ["num_tokens", "width"], "dtype": "bfloat16"}},
        outputs={"y": {"shape": ["num_tokens", "width"], "dtype": "bfloat16"}},
        reference="def run(x):\n    return x\n",
        workloads=workloads or [{"num_tokens": t} for t in (1, 2, 3, 4, 5, 6, 7, 8)],
    )


def test_every_sweep_has_16_distinct_values():
    for values in (
        sweeps.TRAIN_TOKENS,
        sweeps.LONG_TOKENS,
        sweeps.WIDE_TOKENS,
        sweeps.DECODE_BATCHES,
        sweeps.PREFILL_SEQUENCES,
        sweeps.DECODE_CONTEXTS,
        sweeps.IMAGES,
        sweeps.CLIPS,
    ):
        assert len(set(values)) == len(values) == 16
    assert max(sweeps.TRAIN_TOKENS) == 65536 and 1000 in sweeps.TRAIN_TOKENS
    assert {c for _, c in sweeps.DECODE_CONTEXTS} <= set(range(1024, 32769))
    assert sweeps.whisper_frames((1, 2)) == [1500, 3000]
    assert len(sweeps.image_tokens((197, 577))) == 16
    assert {t for _, t in sweeps.image_tokens((197, 577))} == {197, 577}


def test_draft_bytes_counts_inputs_and_outputs():
    assert sweeps.draft_bytes(_draft(), {"num_tokens": 10}) == 10 * 4096 * 2 * 2


def test_fit_keeps_the_largest_workload_under_the_ceiling():
    draft = _draft(width=152064)  # a vocabulary row: 608 KB per token
    chosen = sweeps.fit(sweeps.per("num_tokens", sweeps.WIDE_TOKENS), draft, count=12, high=16 * sweeps.GB)
    largest = max(sweeps.draft_bytes(draft, w) for w in chosen)
    assert len(chosen) == 12 and sweeps.TARGET_LOW <= largest <= 16 * sweeps.GB
    assert chosen[0] == {"num_tokens": 1}
    with pytest.raises(ValueError, match="only"):
        sweeps.fit(sweeps.per("num_tokens", sweeps.WIDE_TOKENS), draft, count=16, high=sweeps.GB)


def test_tokens_upto_reaches_the_byte_target():
    draft = _draft(width=256)  # 1 KB per token: 64k tokens move only 67 MB
    chosen = sweeps.tokens_upto(draft)
    sizes = [sweeps.draft_bytes(draft, w) for w in chosen]
    assert len({w["num_tokens"] for w in chosen}) == 16 and sizes == sorted(sizes)
    assert sweeps.TARGET_LOW <= sizes[-1] <= sweeps.TARGET_HIGH


def test_tiered_moves_recipe_workloads_to_the_cpu_tier_without_overlap():
    draft = _draft(workloads=[{"num_tokens": t} for t in (1, 16, 128, 200, 300, 400, 500, 600)])
    out = sweeps.tiered(draft, sweeps.per("num_tokens", sweeps.TRAIN_TOKENS))
    assert out.workloads == sweeps.per("num_tokens", sweeps.TRAIN_TOKENS)
    gpu = {w["num_tokens"] for w in out.workloads}
    cpu = [w["num_tokens"] for w in out.cpu_workloads]
    assert len(cpu) == 8 and not gpu & set(cpu) and cpu[3:] == [200, 300, 400, 500, 600]
    with pytest.raises(ValueError, match="at least 16"):
        sweeps.tiered(draft, sweeps.per("num_tokens", (1, 2, 3)))
    with pytest.raises(ValueError, match="over 16 GB"):
        sweeps.tiered(_draft(width=1 << 20), sweeps.per("num_tokens", sweeps.TRAIN_TOKENS))
