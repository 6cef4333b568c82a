import pytest

from solbench.spec.expressions import ExpressionError, evaluate, evaluate_axis_expression


def test_axis_arithmetic():
    assert evaluate_axis_expression("head_dim // 2", {"head_dim": 128}) == 64
    assert evaluate_axis_expression("(a + b) * 2 - a % 3", {"a": 7, "b": 1}) == 15
    assert evaluate_axis_expression("cdiv(n, 16)", {"n": 33}) == 3
    assert evaluate_axis_expression("n / 2", {"n": 8}) == 4


def test_axis_expression_must_be_a_non_negative_integer():
    with pytest.raises(ExpressionError, match="not an integer"):
        evaluate_axis_expression("n / 3", {"n": 8})
    with pytest.raises(ExpressionError, match="negative"):
        evaluate_axis_expression("n - 9", {"n": 8})


@pytest.mark.parametrize(
    "source, reason",
    [
        ("__import__('os').system('true')", "call not allowed"),
        ("n.__class__", "attribute '.__class__'"),
        ("[n for n in range(3)]", "ListComp"),
        ("lambda: 1", "Lambda"),
        ("open('x')", "function 'open'"),
        ("m", "unknown name 'm'"),
        ("n ** 1000", "exponent too large"),
        ("n // 0", "division by zero"),
    ],
)
def test_rejects_everything_outside_the_subset(source, reason):
    with pytest.raises(ExpressionError, match=reason):
        evaluate(source, {"n": 4})


def test_constraints_read_tensor_values():
    import torch

    names = {"len_indptr": 3, "batch_size": 2, "kv_indptr": torch.tensor([0, 4, 9]), "num_kv_indices": 9}
    assert evaluate("len_indptr == batch_size + 1", names) is True
    assert evaluate("num_kv_indices == kv_indptr[-1].item()", names) is True
    assert evaluate("kv_indptr.shape[0] == 3 and batch_size < 5", names) is True
    assert evaluate("num_kv_indices == kv_indptr[1].item()", names) is False
