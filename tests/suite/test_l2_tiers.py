"""The L2 problems' two workload tiers (docs/tiers.md): GPU-scale sweeps in workload.jsonl, the small sizes in
workload.cpu.jsonl, and the sweep helpers of suite_recipes/l2.py that make them."""

from statistics import median

import pytest

from solbench.spec.problem import load_problem
from suite_recipes import l2, template

from .suite_folders import made_by

GPU_LIMIT = 16 * 10**9
"""No GPU workload's tensors (inputs + outputs) above this: the evaluator keeps golden copies beside them."""
BELOW_400MB = {"qwen3-30b-a3b_moe_ep16_e8of128_top8_i768"}
"""Its GPU tier stops at 32k tokens so `solbench sol` can follow its routing over 128 experts: 361 MB at most."""


def _key(workload: dict) -> tuple:
    return tuple(sorted(workload.items()))


def test_spread_keeps_both_ends_and_refuses_too_few_values():
    values = list(range(40))
    picked = l2.spread(values, 16)
    assert len(set(picked)) == 16 and picked[0] == 0 and picked[-1] == 39 and picked == sorted(picked)
    assert l2.spread(values[:16], 16) == values[:16]
    with pytest.raises(ValueError, match="15 candidates for 16"):
        l2.spread(values[:15], 16)


@pytest.mark.parametrize("heads", [8, 16, 28, 32])
def test_prefill_sizes_fit_the_golden_score_bound(heads):
    workloads = l2.prefill(heads)
    shapes = [(w["batch_size"], w["seq_len"]) for w in workloads]
    assert len(set(shapes)) == 16
    assert all(l2.score_bytes(b, heads, s, s) <= l2.SCORE_BYTES_LIMIT for b, s in shapes)
    tokens = [b * s for b, s in shapes]
    assert tokens == sorted(tokens) and tokens[0] < 1024 and tokens[-1] >= 32768
    # more heads, shorter sequences: the longest prompt shrinks as the score matrix grows
    assert max(s for _, s in shapes) == (8192 if heads <= 28 else 6144)


def test_per_image_and_batches_spell_workloads():
    assert l2.per_image({197: (1, 2), 577: (4,)}) == [{"num_tokens": 197}, {"num_tokens": 394}, {"num_tokens": 2308}]
    assert l2.batches({(64, 64): (1, 2), (32, 48): (3,)}, ("height", "width")) == [
        {"batch_size": 1, "height": 64, "width": 64},
        {"batch_size": 2, "height": 64, "width": 64},
        {"batch_size": 3, "height": 32, "width": 48},
    ]


def test_draft_with_a_gpu_tier_keeps_the_recipe_sizes_as_the_cpu_tier(tmp_path, monkeypatch):
    monkeypatch.setattr(template, "TEMPLATES", tmp_path)
    template.template_text.cache_clear()
    (tmp_path / "l2").mkdir()
    (tmp_path / "l2" / "add.py").write_text("import torch\n\n\n__MAKE_INPUTS__\n\n\ndef run(x):\n    return x + 1\n")
    cpu, gpu = l2._tok(range(1, 9)), l2._tok(range(8, 24))
    args = (
        l2.QWEN3_8B,
        "x_add",
        "add",
        "x + 1",
        {"num_tokens": None, "hidden_size": 8},
        {"x": (["num_tokens", "hidden_size"], "float32", 1.0)},
        {"y": (["num_tokens", "hidden_size"], "float32")},
        "l2/add.py",
        cpu,
    )
    plain = l2.draft(*args)
    assert plain.workloads == cpu and plain.cpu_workloads is None
    tiered = l2.draft(*args, gpu=gpu)
    assert tiered.workloads == gpu and tiered.cpu_workloads == cpu
    gpu_uuids = {r["uuid"] for r in tiered.workload_records("gpu")}
    assert not gpu_uuids & {r["uuid"] for r in tiered.workload_records("cpu")}  # the shared size gets two uuids
    with pytest.raises(ValueError, match="duplicate"):
        l2.draft(*args, gpu=gpu[:-1] + gpu[:1])
    with pytest.raises(ValueError, match="at least 16"):
        l2.draft(*args, gpu=gpu[:8])
    assert "def make_inputs(axes_and_scalars, device):" in plain.reference
    template.template_text.cache_clear()


def test_every_l2_problem_has_a_gpu_tier_at_upstreams_scale():
    """The problems the l2 recipes generate or first made."""
    largest = {}
    for draft in made_by("l2"):
        assert len({_key(w) for w in draft.workloads}) == len(draft.workloads) >= 16, draft.name
        assert len({_key(w) for w in draft.cpu_workloads or []}) >= 8, draft.name
        problem = load_problem(draft.folder, "gpu")
        sizes = [problem.tensor_bytes(dict(w.axes)) for w in problem.workloads]
        assert max(sizes) <= GPU_LIMIT, (draft.name, max(sizes))
        assert min(sizes) <= max(sizes) / 4, (draft.name, min(sizes))  # a spread of sizes, not only large ones
        largest[draft.name] = max(sizes)
    assert {n for n, s in largest.items() if s < 400e6} == BELOW_400MB
    assert median(largest.values()) >= 400e6
