"""DLRM-Bench (problems/DLRM): the set the issue asks for, and references checked against independent forms.

Each reference is compared on small inputs with a second way of computing the same thing
(torch's own EmbeddingBag, a per-row optimizer loop, per-sample copies), so a wrong reference
cannot hide behind `solbench validate`, which only checks that it is self-consistent.
"""

from pathlib import Path

import pytest

from solbench.evaluation.reference import ReferenceProgram
from solbench.spec.problem import find_problem_folders, load_problem

SET = Path(__file__).resolve().parents[2] / "problems" / "DLRM"
OP_TYPES = {
    "embedding_bag",
    "embedding_bag_backward",
    "jagged_to_padded",
    "padded_to_jagged",
    "feature_interaction",
    "feature_interaction_backward",
    "dcn_cross",
    "dcn_cross_backward",
    "mlp",
    "mlp_backward",
    "dcn_interaction_top_mlp",
}


@pytest.fixture(scope="module")
def problems():
    """DLRM-Bench's problems (catalog/dlrm.py); the set also holds DLRM on Criteo Kaggle (catalog/dlrm_kaggle.py)."""
    loaded = (load_problem(folder) for folder in find_problem_folders(SET))
    return {p.name: p for p in loaded if not p.definition.tag("model").startswith("dlrm_criteo_kaggle")}


def _reference(problems, name):
    program = ReferenceProgram(problems[name].definition, "cpu")
    return program.module


def test_the_set_has_twelve_problems_or_more_tagged_for_reach(problems):
    assert len(problems) >= 12
    for problem in problems.values():
        tags = problem.definition.tags
        assert {"set:DLRM", "domain:recommender", "origin:recipe", "domain:recsys"} <= set(tags), problem.name
        assert {"model:dlrm-dcnv2", "model:dlrm-v1"} & set(tags), problem.name
        assert problem.definition.op_type in OP_TYPES, problem.definition.op_type
        backward = problem.definition.op_type.endswith("_backward")
        assert problem.definition.tag("pass") == ("backward" if backward else "forward"), problem.name
    assert {p.definition.op_type for p in problems.values()} == OP_TYPES


def test_pooling_matches_torch_embedding_bag(problems):
    import torch
    import torch.nn.functional as F

    module = _reference(problems, "dlrm-dcnv2_embedding_bag_sum_t20_h100")
    torch.manual_seed(0)
    inputs = module.make_inputs({"batch_size": 5, "hotness": 100, "num_embeddings": 300, "embedding_dim": 128}, "cpu")
    expected = F.embedding_bag(inputs["indices"], inputs["weight"], mode="sum")
    torch.testing.assert_close(module.run(inputs["indices"], inputs["weight"]), expected, rtol=1e-5, atol=1e-5)


def test_fused_tables_pool_each_table_from_its_own_rows(problems):
    import torch
    import torch.nn.functional as F

    module = _reference(problems, "dlrm-dcnv2_fused_embedding_bags_26t_d128")
    torch.manual_seed(0)
    total = sum(min(r, 64) for r in module.ROWS)
    inputs = module.make_inputs({"batch_size": 3, "total_rows": total, "embedding_dim": 128}, "cpu")
    offsets, weights, values = inputs["table_offsets"], inputs["weights"], inputs["values"]
    assert int(offsets[-1]) == total and values.shape[0] == 3 * sum(module.HOTNESS)
    pooled = module.run(values, offsets, weights)
    start = 0
    for table, hot in enumerate(module.HOTNESS):
        ids = values[start : start + 3 * hot].view(3, hot)
        assert int(ids.max()) < int(offsets[table + 1] - offsets[table])  # ids are local to their table
        table_weights = weights[int(offsets[table]) : int(offsets[table + 1])]
        torch.testing.assert_close(pooled[:, table], F.embedding_bag(ids, table_weights, mode="sum"))
        start += 3 * hot


def test_rowwise_adagrad_is_one_update_per_touched_row(problems):
    import torch

    module = _reference(problems, "dlrm-dcnv2_embedding_bag_backward_rowwise_adagrad_t20_h100")
    torch.manual_seed(0)
    inputs = module.make_inputs(
        {"batch_size": 4, "hotness": 100, "num_embeddings": 50, "embedding_dim": 128}, "cpu"
    )  # 400 ids over 50 rows: many repeats
    rows, state = module.run(
        inputs["indices"], inputs["grad_pooled"], inputs["weight"], inputs["momentum"], 0.005, 1e-8
    )
    expected_weight, expected_momentum = inputs["weight"].clone(), inputs["momentum"].clone()
    for row in range(50):
        hits = (inputs["indices"] == row).sum(dim=1).to(torch.float32)  # occurrences per sample
        if hits.sum() == 0:
            continue
        grad = (hits[:, None] * inputs["grad_pooled"]).sum(dim=0)
        expected_momentum[row] += grad.pow(2).mean()
        expected_weight[row] -= 0.005 * grad / (expected_momentum[row].sqrt() + 1e-8)
    # The outputs are the written rows, one per lookup: the updated table gathered at the ids.
    torch.testing.assert_close(state, expected_momentum[inputs["indices"]])
    torch.testing.assert_close(rows, expected_weight[inputs["indices"]])
    assert not torch.equal(rows, inputs["weight"][inputs["indices"]])


def test_jagged_and_padded_are_inverse_per_sample_copies(problems):
    import torch

    to_padded = _reference(problems, "dlrm-dcnv2_jagged_to_padded_l100_d128")
    to_jagged = _reference(problems, "dlrm-dcnv2_padded_to_jagged_l100_d128")
    torch.manual_seed(0)
    axes = {"batch_size": 6, "total_values": 230, "max_len": 100, "embedding_dim": 128}
    inputs = to_padded.make_inputs(axes, "cpu")
    values, lengths = inputs["values"], inputs["lengths"]
    assert int(lengths.sum()) == 230 and int(lengths.max()) <= 100
    padded = to_padded.run(values, lengths)
    start = 0
    for sample, length in enumerate(lengths.tolist()):
        assert torch.equal(padded[sample, :length], values[start : start + length])
        assert not padded[sample, length:].any()
        start += length
    assert torch.equal(to_jagged.run(padded, lengths), values)


def test_top_mlp_backward_returns_the_bias_gradient_it_takes_no_input_for(problems):
    import torch

    module = _reference(problems, "dlrm-dcnv2_top_mlp_backward_3456_1024_1024_512_256_1")
    assert "b4" not in problems["dlrm-dcnv2_top_mlp_backward_3456_1024_1024_512_256_1"].definition.inputs
    torch.manual_seed(0)
    inputs = module.make_inputs({"batch_size": 3}, "cpu")
    grads = module.run(*inputs.values())
    assert grads[-1].shape == (1,)
    torch.testing.assert_close(grads[-1], inputs["grad_output"].sum(dim=0))
